"""The bootstrap's config: pydantic models over the `gke-ai-batch-bootstrap:*` keys (and
gcp:project), with the main program's conventions (gke_ai_batch/config/base.py: camelCase keys,
unknown keys refused, no silent coercion) and its error reporting (every problem at once, each
with its stack-file key path). Validated before anything is registered."""

from __future__ import annotations

import re
from typing import Annotated, Any, Iterator, Literal, Mapping

from pydantic import AfterValidator, Field, ValidationError, model_validator

from gke_ai_batch.config import ConfigError, decode, gcp_project_problem
from gke_ai_batch.config.base import Model, RuleError, raise_all
from gke_ai_batch.config.checkpoints import BUCKET_SUFFIX, bucket_name_problem
from gke_ai_batch.config.cluster import check_kms_key_name
from gke_ai_batch.config.errors import NAMESPACE as MAIN_NAMESPACE
from gke_ai_batch.config.errors import at_key, from_validation_error
from gke_ai_batch.domain.findings import Finding

NAMESPACE = "gke-ai-batch-bootstrap"
MAIN_PROJECT = "gke-ai-batch"
"""The main program's Pulumi project name (../Pulumi.yaml): its state objects are under
.pulumi/*/gke-ai-batch/<stack> in a self-managed backend."""


def _pattern(rx: str, what: str, rule: str):
    compiled = re.compile(rx, re.ASCII)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"{value!r} is not a valid {what}: {rule}")
        return value

    return check


# Workload identity pool and provider ids: 4 to 32 lowercase letters, digits or '-'; the prefix
# gcp- is reserved (IAM REST reference, projects.locations.workloadIdentityPools.create and
# .providers.create, workloadIdentityPoolId / workloadIdentityPoolProviderId).
_WIF_ID = r"(?!gcp-)[a-z0-9-]{4,32}"
WifId = Annotated[str, AfterValidator(_pattern(_WIF_ID, "workload identity pool or provider id", "4 to 32 lowercase letters, digits or '-', not starting with gcp-"))]

# Bucket names: 3 to 63 lowercase letters, digits, '-', '_' (dots would need domain
# verification), starting and ending with a letter or digit
# (https://cloud.google.com/storage/docs/buckets#naming).
BucketName = Annotated[str, AfterValidator(_pattern(r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]", "bucket name", "3 to 63 lowercase letters, digits, '-' or '_', starting and ending with a letter or digit (no dots)"))]

# Key ring and key names: letters, digits, '_' and '-', at most 63
# (https://cloud.google.com/kms/docs/reference/rest/v1/projects.locations.keyRings/create).
KmsName = Annotated[str, AfterValidator(_pattern(r"[A-Za-z0-9_-]{1,63}", "KMS key ring name", "1 to 63 letters, digits, '_' or '-'"))]

Location = Annotated[str, AfterValidator(_pattern(r"[a-zA-Z][a-zA-Z0-9-]{1,40}", "location", "a region, dual-region or multi-region name such as us-central1 or US"))]

# A stack's name becomes part of two service account ids, gab-<stack>-preview and
# gab-<stack>-deploy, which are 6 to 30 of [a-z0-9-], starting with a letter
# (IAM CreateServiceAccount accountId): 30 - len("gab-") - len("-preview") = 18.
STACK_NAME_MAX = 18
StackName = Annotated[str, AfterValidator(_pattern(rf"[a-z0-9]([a-z0-9-]{{0,{STACK_NAME_MAX - 2}}}[a-z0-9])?", "stack name here", f"lowercase letters, digits and '-', at most {STACK_NAME_MAX} characters (it becomes part of the service account ids gab-<stack>-preview and gab-<stack>-deploy)"))]

ServiceAccountId = Annotated[str, AfterValidator(_pattern(r"[a-z][a-z0-9-]{4,28}[a-z0-9]", "service account id", "6 to 30 lowercase letters, digits or '-', starting with a letter"))]

# GitHub environment names: at most 255 characters, not containing ',', ';' or '/' here
# because the name becomes part of a principalSet path (attribute.env_ref/<env>@<ref>).
EnvironmentName = Annotated[str, AfterValidator(_pattern(r"[A-Za-z0-9_.-]{1,100}", "GitHub environment name here", "1 to 100 letters, digits, '_', '.' or '-'"))]


def _repository_id(value: int | str) -> str:
    # GitHub's numeric repository id (the OIDC token's repository_id claim, a string of digits;
    # `gh api repos/OWNER/NAME --jq .id`). Pinned by id, not by owner/name: a deleted and
    # re-created repository of the same name (or a renamed one) gets a new id.
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not re.fullmatch(r"[1-9][0-9]{0,19}", text, re.ASCII):
        raise ValueError(f"{value!r} is not a GitHub repository id: the repository's number (gh api repos/OWNER/NAME --jq .id)")
    return text


RepositoryId = Annotated[int | str, AfterValidator(_repository_id)]


def _checkpoint_prefix(value: str) -> str:
    # The main program names a team's bucket <prefix>-<namespace>-ckpt
    # (gke_ai_batch/config/checkpoints.py); a prefix Cloud Storage would refuse there is refused here.
    problem = bucket_name_problem(f"{value}-a{BUCKET_SUFFIX}")
    if problem:
        raise ValueError(f"{value!r} cannot start a bucket name <prefix>-<namespace>{BUCKET_SUFFIX}: it {problem}")
    return value


class GitHub(Model):
    repository_id: RepositoryId
    """The numeric id of this repository on GitHub (`gh api repos/OWNER/NAME --jq .id`): the only repository whose tokens the provider admits."""
    repository: Annotated[str, AfterValidator(_pattern(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}", "repository", "OWNER/NAME"))] | None = None
    """OWNER/NAME, for display only (names change; the id does not)."""
    deploy_ref: Literal["refs/heads/main"] = "refs/heads/main"
    """The only ref whose workflows may impersonate a deployer."""


class WorkloadIdentity(Model):
    pool_id: WifId = "github"
    provider_id: WifId = "gke-ai-batch"


class StateBucket(Model):
    name: BucketName
    location: Location
    """The bucket's location, e.g. US-CENTRAL1 or US."""


class Kms(Model):
    location: Location
    """Where the key ring lives (a region such as us-central1, or global)."""
    key_ring: KmsName = "gke-ai-batch-pulumi"


class Stack(Model):
    name: StackName
    """The main program's stack (stacks/Pulumi.<name>.yaml)."""
    project: str
    """The stack's gcp:project: where its deployer works and its preview reads."""
    environment: EnvironmentName
    """The GitHub environment its deploy job runs in; only tokens naming it (on refs/heads/main) may impersonate the deployer."""
    production: bool = False
    """Protects this stack's service accounts and key against deletion."""
    secrets_provider: Literal["gcpkms", "passphrase"] = "gcpkms"
    """gcpkms: a key per stack in the bootstrap's key ring; passphrase: PULUMI_CONFIG_PASSPHRASE (no key)."""
    secrets_encryption_key: Annotated[str, AfterValidator(check_kms_key_name)] | None = None
    """The Cloud KMS key of the stack's cluster.databaseEncryption.keyName: GKE's service agent
    of the stack's project gets roles/cloudkms.cryptoKeyEncrypterDecrypter on it, which GKE
    needs before it creates the cluster (the deployer has no IAM rights on keys)."""
    node_service_account: ServiceAccountId
    """The account id of the node service account created here for this stack, in its project;
    the main stack names it as cluster.nodeServiceAccount (ID@PROJECT.iam.gserviceaccount.com).
    The deployer may act as that account only."""
    checkpoint_bucket_prefix: Annotated[str, AfterValidator(_checkpoint_prefix)] | None = None
    """The main stack's checkpoint bucket prefix (its checkpoints.bucketPrefix, or the default there,
    <project>-<cluster name>): the deployer may create, change, delete and set the IAM policy of
    the buckets <prefix>-*-ckpt in the stack's project, and of no other bucket. Unset: the stack
    has no checkpoint buckets."""
    dashboard: bool = False
    """The main stack registers a Cloud Monitoring dashboard (gke-ai-batch:metrics, dashboard on):
    the deployer gets roles/monitoring.dashboardEditor on the stack's project."""

    @model_validator(mode="after")
    def _project(self) -> "Stack":
        problem = gcp_project_problem(self.project)
        if problem:
            raise RuleError("project", problem.message)
        return self


def _unique_stacks(stacks: list[Stack]) -> list[Stack]:
    raise_all(_stack_problems(stacks))
    return stacks


def _stack_problems(stacks: list[Stack]) -> Iterator[RuleError]:
    names: dict[str, int] = {}
    environments: dict[str, int] = {}
    for i, stack in enumerate(stacks):
        if stack.name in names:
            yield RuleError((i, "name"), f"stack {stack.name!r} is listed twice (also stacks[{names[stack.name]}])")
        names.setdefault(stack.name, i)
        # Two stacks deploying through one environment would share each other's deployer.
        if stack.environment in environments:
            yield RuleError((i, "environment"), f"environment {stack.environment!r} is already stacks[{environments[stack.environment]}]'s: each deployer needs its own")
        environments.setdefault(stack.environment, i)
    # The deployer's bucket role is conditioned to <prefix>-*-ckpt in its stack's project
    # (bootstrap/resources.py checkpoint_buckets_condition: CEL startsWith, where '*' matches any
    # text, '-' included). Where one stack's "<prefix>-" starts another's in the same project,
    # its deployer could create, delete and grant on the other stack's checkpoint buckets: the
    # main stack's default prefix <project>-<cluster> does that for clusters ml and ml-prod.
    claimed: dict[tuple[str, str], int] = {}
    for i, stack in enumerate(stacks):
        prefix = stack.checkpoint_bucket_prefix
        if prefix is None or names[stack.name] != i:
            continue  # a stack listed twice is said once, as that
        for (project, other), j in claimed.items():
            if project == stack.project and (f"{prefix}-".startswith(f"{other}-") or f"{other}-".startswith(f"{prefix}-")):
                wider, narrower = (other, prefix) if len(other) <= len(prefix) else (prefix, other)
                yield RuleError(
                    (i, "checkpointBucketPrefix"),
                    f"{prefix!r} and stacks[{j}]'s {other!r} share project {project}, and the buckets "
                    f"{narrower}-*{BUCKET_SUFFIX} are also {wider}-*{BUCKET_SUFFIX}: one stack's deployer could delete "
                    "the other's checkpoints; give prefixes where neither, with its '-', starts the other",
                )
                break
        claimed.setdefault((stack.project, prefix), i)


class BootstrapConfig(Model):
    production: bool = False
    """Protects every stateful resource (pool, provider, service accounts, bucket, key ring, keys) against deletion."""
    github: GitHub
    workload_identity: WorkloadIdentity = WorkloadIdentity()
    state_bucket: StateBucket
    kms: Kms | None = None
    """Required when a stack uses the gcpkms secrets provider."""
    stacks: Annotated[list[Stack], Field(min_length=1), AfterValidator(_unique_stacks)]

    @model_validator(mode="after")
    def _kms_when_needed(self) -> "BootstrapConfig":
        if self.kms is None and any(s.secrets_provider == "gcpkms" for s in self.stacks):
            raise RuleError("kms", "required: a stack uses the gcpkms secrets provider (give kms.location)")
        return self

    def protect(self, stack: Stack | None = None) -> bool:
        return self.production or (stack is not None and stack.production)


def _ours(path: str) -> str:
    # gke_ai_batch.config.errors names paths in the main program's namespace.
    if path == MAIN_NAMESPACE or path.startswith(f"{MAIN_NAMESPACE}:"):
        return NAMESPACE + path[len(MAIN_NAMESPACE) :]
    return path


def load(values: Mapping[str, Any], *, source: str | None = None) -> tuple[BootstrapConfig, str]:
    """(config, gcp:project) from a flat Pulumi config map ('ns:key' -> JSON text or value);
    ConfigError listing every problem (unknown or near-miss namespaces, gcp:project, the models)."""
    ours: dict[str, Any] = {}
    problems: list[Finding] = []
    project = None
    for full_key, value in values.items():
        namespace, _, key = full_key.partition(":")
        key = key.removeprefix("config:")
        if namespace == NAMESPACE:
            ours[key] = decode(value)
        elif f"{namespace}:{key}" == "gcp:project":
            project = decode(value)
        elif namespace == MAIN_NAMESPACE:
            problems.append(at_key(full_key, f"is the main program's namespace; the bootstrap reads {NAMESPACE}:*"))
        elif namespace.startswith("gke-ai-b"):
            problems.append(at_key(full_key, f"unknown namespace {namespace!r} (did you mean {NAMESPACE!r}?)"))
    problem = gcp_project_problem(project)
    if problem:
        problems.append(at_key("gcp:project", "required: the project that holds the pool, the service accounts, the state bucket and the keys" if project in (None, "") else problem.message))
    config = None
    try:
        config = BootstrapConfig.model_validate(ours)
    except ValidationError as exc:
        problems += [at_key(_ours(p), m) for p, m in from_validation_error(exc, BootstrapConfig).problems]
    if config is not None and not problem:
        # The state bucket lives in the bootstrap's project, and Cloud Storage binds that
        # project's viewers to read a new bucket's objects (gke_ai_batch/domain/gcsfuse.py
        # CONVENIENCE_BINDINGS): a stack whose preview identity holds roles/viewer there would
        # read every stack's state, prod's included.
        problems += [
            at_key(f"{NAMESPACE}:stacks[{i}].project", f"is the bootstrap's own project ({project}): the stack's preview identity "
             "(roles/viewer on it) would read every stack's state in the state bucket; give the stack its own project")
            for i, stack in enumerate(config.stacks) if stack.project == project
        ]
    if problems:
        raise ConfigError(problems, source)
    return config, project


def load_from_pulumi(source: str | None = None) -> tuple[BootstrapConfig, str]:
    import pulumi.runtime

    return load(pulumi.runtime.get_config_env(), source=source)
