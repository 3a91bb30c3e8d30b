"""What the bootstrap creates: the GitHub Workload Identity pool and provider, the state
bucket, the secrets keys, and per stack a read-only preview identity and a deployer."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import apis as api
from gke_ai_batch.plan.cluster import NODE_SA_ROLE

from gke_ai_batch.config.checkpoints import BUCKET_SUFFIX

from .model import MAIN_PROJECT, BootstrapConfig, Stack
from .permissions import (
    CHECKPOINT_BUCKETS_ROLE_ID,
    CONTAINER_ADMIN,
    DASHBOARD_EDITOR,
    RESOURCE_POLICY_ROLE_ID,
    SERVICE_ACCOUNT_USER,
    SERVICE_ENABLER_ROLE_ID,
    role_permissions,
)

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"

# What the preview identity may hold: reading, never writing (tests/test_bootstrap.py).
PREVIEW_ROLES = ("roles/viewer", "roles/container.viewer", "roles/storage.objectViewer", "roles/cloudkms.cryptoKeyDecrypter")

# What the deployer may do to APIs (tests/test_dayone_apis.py: never disable one).
SERVICE_ENABLER_PERMISSIONS = role_permissions(SERVICE_ENABLER_ROLE_ID)

def attribute_mapping() -> dict[str, str]:
    """GitHub's OIDC claims (https://docs.github.com/en/actions/security-for-github-actions/
    security-hardening-your-deployments/about-security-hardening-with-openid-connect, "Understanding
    the OIDC token") mapped to attributes IAM bindings can name. Google's limits (IAM REST
    reference, WorkloadIdentityPoolProvider.attributeMapping): google.subject at most 127 bytes,
    at most 50 custom attributes, keys of [a-z0-9_], each expression a CEL expression of at most
    2048 characters over `assertion`."""
    return {
        "google.subject": "assertion.sub",
        "attribute.repository_id": "assertion.repository_id",
        "attribute.repository": "assertion.repository",
        "attribute.ref": "assertion.ref",
        "attribute.event_name": "assertion.event_name",
        "attribute.job_workflow_ref": "assertion.job_workflow_ref",
        "attribute.environment": "has(assertion.environment) ? assertion.environment : ''",
        # One attribute holding both the environment and the ref, so that a single principalSet
        # (attribute.env_ref/<environment>@refs/heads/main) requires both: IAM allow-policy
        # members match one attribute value, and a binding cannot AND two principalSets. The
        # environment claim exists only for jobs that name an environment; has() keeps the
        # mapping from failing (and so every token exchange) for the others.
        "attribute.env_ref": "has(assertion.environment) ? assertion.environment + '@' + assertion.ref : ''",
    }


# The stack file as the DIY backend writes it: plain or gzipped (PULUMI_DIY_BACKEND_GZIP), each
# with the .bak copy it keeps of the previous checkpoint.
STATE_FILE_SUFFIXES = (".json", ".json.bak", ".json.gz", ".json.gz.bak")


def attribute_condition(repository_id: str) -> str:
    # Only this repository's tokens enter the pool (google-github-actions/auth README: "you
    # should always add an attribute condition"), pinned by its numeric id, which a new
    # repository of the same owner/name does not get.
    return f"assertion.repository_id == '{repository_id}'"


def principal_set(pool_name: pulumi.Output[str], attribute: str, value: str) -> pulumi.Output[str]:
    # principalSet://iam.googleapis.com/<pool full name>/attribute.<name>/<value>
    # (https://cloud.google.com/iam/docs/principal-identifiers, workload identity federation).
    return pool_name.apply(lambda pool: f"principalSet://iam.googleapis.com/{pool}/attribute.{attribute}/{value}")


def state_condition(bucket: str, stack: str, *, meta: bool = True) -> dict[str, str]:
    """The stack's own objects in a self-managed backend, plus what listing and login read.
    Pulumi's DIY backend keeps a project-scoped stack in .pulumi/stacks/<project>/<stack>.json
    (.json.gz when compressed, each with a .bak copy) and its history, backups and locks in
    directories .pulumi/{history,backups,locks}/<project>/<stack>/ (pulumi/pulumi
    pkg/backend/diy: StackBasePath, HistoryDir, BackupDir, backupTarget adds ".bak"; lock.go),
    beside the backend's .pulumi/meta.yaml. Names are matched exactly and directories with
    their trailing slash: a bare prefix on "dev" would also hand over stack dev2's state (and
    "dev.json" the state of a stack named dev.jsonx; stack names may contain dots). Storage
    supports conditions on resource.name
    (https://cloud.google.com/iam/docs/conditions-resource-attributes); listing is checked on
    the bucket itself, hence the bucket clause."""
    objects = f"projects/_/buckets/{bucket}/objects/.pulumi"
    files = [f"{objects}/stacks/{MAIN_PROJECT}/{stack}{ext}" for ext in STATE_FILE_SUFFIXES]
    dirs = [f"{objects}/{kind}/{MAIN_PROJECT}/{stack}/" for kind in ("history", "backups", "locks")]
    clauses = [
        "resource.type == 'storage.googleapis.com/Bucket'",
        *([f"resource.name == '{objects}/meta.yaml'"] if meta else []),
        *[f"resource.name == '{f}'" for f in files],
        *[f"resource.name.startsWith('{d}')" for d in dirs],
    ]
    title, what = (f"state-of-{stack}", "") if meta else (f"own-state-of-{stack}", ", not the backend's meta.yaml")
    return {"title": title, "description": f"Pulumi state of stack {stack} only{what}", "expression": " || ".join(clauses)}


def checkpoint_buckets_condition(prefix: str) -> dict[str, str]:
    """The stack's checkpoint buckets only: <prefix>-<namespace>-ckpt (gke_ai_batch/config/checkpoints.py),
    matched with the '-' after the prefix so that prefix ml does not also reach ml2-*. Cloud
    Storage supports conditions on a bucket's resource.name, projects/_/buckets/NAME
    (https://cloud.google.com/iam/docs/conditions-resource-attributes), which every permission of
    the role but storage.buckets.create is checked on. Creation is checked on the project (the
    bucket does not exist yet; https://cloud.google.com/storage/docs/access-control/iam-permissions,
    storage.buckets.create "in a project"), so the condition lets any other resource type through:
    the role holds nothing else, and a bucket the deployer creates under another name it can
    then neither change, delete nor grant on."""
    buckets = f"projects/_/buckets/{prefix}-"
    return {
        "title": f"checkpoint-buckets-{prefix}"[:100],
        "description": f"Checkpoint buckets {prefix}-*{BUCKET_SUFFIX} only",
        "expression": (
            "resource.type != 'storage.googleapis.com/Bucket' || "
            f"(resource.name.startsWith('{buckets}') && resource.name.endsWith('{BUCKET_SUFFIX}'))"
        ),
    }


def bootstrap_apis(cfg: BootstrapConfig) -> tuple[str, ...]:
    """What the bootstrap project serves: the pool and provider and the stacks' service accounts
    (IAM), the GitHub token exchange (STS: google-github-actions/auth trades the OIDC token for a
    federated one, then IAM Credentials for the service account's access token;
    https://cloud.google.com/iam/docs/workload-identity-federation-with-deployment-pipelines,
    "Before you begin"), the state bucket (Cloud Storage), the secrets keys (Cloud KMS), and
    Resource Manager and Service Usage, through which IAM policies are set and APIs enabled."""
    wanted = [api.IAM, api.IAM_CREDENTIALS, api.STS, api.STORAGE, api.RESOURCE_MANAGER, api.SERVICE_USAGE]
    if cfg.kms is not None and any(s.secrets_provider == "gcpkms" for s in cfg.stacks):
        wanted.append(api.KMS)
    return tuple(wanted)


def stack_project_apis(stack: Stack) -> tuple[str, ...]:
    """What the bootstrap calls in a main stack's project: IAM (the node service account and the
    custom roles), Resource Manager (the deployer's project grants), Service Usage (the
    deployer enables the main program's APIs through it), and GKE when it names GKE's service
    agent for the secrets key (projects.ServiceIdentity of container.googleapis.com, which
    exists only once the API is on)."""
    wanted = [api.IAM, api.RESOURCE_MANAGER, api.SERVICE_USAGE]
    if stack.secrets_encryption_key is not None:
        wanted.append(api.CONTAINER)
    return tuple(wanted)


def enable_apis(cfg: BootstrapConfig, project: str) -> dict[str, list[gcp.projects.Service]]:
    """project -> its Service resources: the bootstrap project's and each stack project's, one
    per API and project (stacks may share a project), named as the main program names them
    (gke_ai_batch/plan/apis.py), and with disableOnDestroy false for the same reason
    (gke_ai_batch/components/services.py): turning an API off breaks whatever else uses it."""
    wanted: dict[str, list[str]] = {project: list(bootstrap_apis(cfg))}
    for stack in cfg.stacks:
        have = wanted.setdefault(stack.project, [])
        have.extend(a for a in stack_project_apis(stack) if a not in have)
    return {
        where: [
            gcp.projects.Service(
                api.resource_name(service, where, project),
                project=where,
                service=service,
                disable_on_destroy=False,
                disable_dependent_services=False,
            )
            for service in services
        ]
        for where, services in wanted.items()
    }


class WorkloadIdentity(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: BootstrapConfig, project: str, apis: Sequence[pulumi.Resource] = (), opts: pulumi.ResourceOptions | None = None):
        super().__init__("gke-ai-batch-bootstrap:wif:WorkloadIdentity", name, None, opts)
        keep = pulumi.ResourceOptions(parent=self, protect=cfg.protect(), depends_on=list(apis))
        wif = cfg.workload_identity
        self.pool = gcp.iam.WorkloadIdentityPool(
            "pool",
            project=project,
            workload_identity_pool_id=wif.pool_id,
            display_name="GitHub Actions",
            description="GitHub Actions workflows of gke-ai-batch",
            opts=keep,
        )
        self.provider = gcp.iam.WorkloadIdentityPoolProvider(
            "github",
            project=project,
            workload_identity_pool_id=self.pool.workload_identity_pool_id,
            workload_identity_pool_provider_id=wif.provider_id,
            display_name="gke-ai-batch",
            attribute_mapping=attribute_mapping(),
            attribute_condition=attribute_condition(cfg.github.repository_id),
            # No allowed_audiences: the default audience is the provider's own full name, which
            # google-github-actions/auth requests.
            oidc={"issuer_uri": GITHUB_ISSUER},
            opts=keep,
        )
        self.register_outputs({})


class StateStore(pulumi.ComponentResource):
    def __init__(self, name: str, cfg: BootstrapConfig, project: str, apis: Sequence[pulumi.Resource] = (), opts: pulumi.ResourceOptions | None = None):
        super().__init__("gke-ai-batch-bootstrap:state:StateStore", name, None, opts)
        keep = pulumi.ResourceOptions(parent=self, protect=cfg.protect(), depends_on=list(apis))
        # Versioning keeps every earlier state file (a bad `pulumi up` or a deleted object can be
        # restored); uniform bucket-level access turns object ACLs off, so IAM alone decides; and
        # enforced public access prevention refuses allUsers/allAuthenticatedUsers grants
        # (https://cloud.google.com/storage/docs/public-access-prevention).
        self.bucket = gcp.storage.Bucket(
            "state",
            project=project,
            name=cfg.state_bucket.name,
            location=cfg.state_bucket.location,
            versioning={"enabled": True},
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=False,
            opts=keep,
        )
        # Written here, so no deployer needs to: Pulumi's DIY backend creates .pulumi/meta.yaml
        # on first login to an empty bucket, with version 1 (project-scoped stacks, the layout
        # state_condition names), and only reads it afterwards (pulumi/pulumi
        # pkg/backend/diy/meta.go, ensurePulumiMeta).
        self.meta = gcp.storage.BucketObject(
            "backend-meta",
            bucket=self.bucket.name,
            name=".pulumi/meta.yaml",
            content="version: 1\n",
            content_type="application/yaml",
            opts=keep,
        )
        self.key_ring = None
        self.keys: dict[str, gcp.kms.CryptoKey] = {}
        if cfg.kms is not None and any(s.secrets_provider == "gcpkms" for s in cfg.stacks):
            # A key ring cannot be deleted (KMS keeps its name forever); keys are destroyed
            # only version by version, after a scheduled delay.
            self.key_ring = gcp.kms.KeyRing("secrets", project=project, name=cfg.kms.key_ring, location=cfg.kms.location, opts=keep)
            ring_path = pulumi.Output.all(self.key_ring.project, self.key_ring.location, self.key_ring.name).apply(
                lambda a: f"projects/{a[0]}/locations/{a[1]}/keyRings/{a[2]}"
            )
            for stack in cfg.stacks:
                if stack.secrets_provider != "gcpkms":
                    continue
                self.keys[stack.name] = gcp.kms.CryptoKey(
                    f"secrets-{stack.name}",
                    name=stack.name,
                    key_ring=ring_path,
                    purpose="ENCRYPT_DECRYPT",
                    opts=pulumi.ResourceOptions(parent=self, protect=cfg.protect(stack)),
                )
        self.register_outputs({})

    def key_id(self, stack: str) -> pulumi.Output[str] | None:
        key = self.keys.get(stack)
        if key is None:
            return None
        return pulumi.Output.all(key.key_ring, key.name).apply(lambda a: f"{a[0]}/cryptoKeys/{a[1]}")


class StackAccess(pulumi.ComponentResource):
    """One main-program stack's two identities: preview (read-only, any workflow of the
    repository) and deployer (least privilege, only its environment's jobs on main)."""

    def __init__(
        self,
        stack: Stack,
        cfg: BootstrapConfig,
        project: str,
        wif: WorkloadIdentity,
        state: StateStore,
        opts: pulumi.ResourceOptions | None = None,
        apis: Sequence[pulumi.Resource] = (),
    ):
        """`apis`: the Services of the bootstrap project and of the stack's project."""
        super().__init__("gke-ai-batch-bootstrap:stack:StackAccess", stack.name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(apis))
        keep = pulumi.ResourceOptions(parent=self, protect=cfg.protect(stack), depends_on=list(apis))
        s = stack.name

        def make(cls, name: str, **kwargs):
            # Named within the stack: URNs carry the parent's type, not its name, so two stacks'
            # "preview" accounts would otherwise have one URN (Pulumi refuses the second). The
            # alias keeps a bootstrap that had a single stack from replacing its resources.
            opts = pulumi.ResourceOptions.merge(kwargs.pop("opts"), pulumi.ResourceOptions(aliases=[pulumi.Alias(name=name)]))
            return cls(f"{s}/{name}", opts=opts, **kwargs)

        self.preview = make(gcp.serviceaccount.Account,
            "preview",
            project=project,
            account_id=f"gab-{s}-preview",
            display_name=f"gke-ai-batch {s}: pulumi preview (read-only)",
            opts=keep,
        )
        self.deployer = make(gcp.serviceaccount.Account,
            "deployer",
            project=project,
            account_id=f"gab-{s}-deploy",
            display_name=f"gke-ai-batch {s}: pulumi up",
            opts=keep,
        )
        preview = self.preview.email.apply(lambda e: f"serviceAccount:{e}")
        deployer = self.deployer.email.apply(lambda e: f"serviceAccount:{e}")

        # Who may impersonate whom (https://cloud.google.com/iam/docs/workload-identity-federation-with-deployment-pipelines:
        # roles/iam.workloadIdentityUser on the service account for a principalSet of the pool).
        make(gcp.serviceaccount.IAMMember,
            "preview-wif",
            service_account_id=self.preview.name,
            role="roles/iam.workloadIdentityUser",
            member=principal_set(wif.pool.name, "repository_id", cfg.github.repository_id),
            opts=child,
        )
        make(gcp.serviceaccount.IAMMember,
            "deployer-wif",
            service_account_id=self.deployer.name,
            role="roles/iam.workloadIdentityUser",
            member=principal_set(wif.pool.name, "env_ref", f"{stack.environment}@{cfg.github.deploy_ref}"),
            opts=child,
        )

        # Preview: read the stack's project, its cluster's objects, its state, its secrets.
        for role in ("roles/viewer", "roles/container.viewer"):
            make(gcp.projects.IAMMember, f"preview-{role.split('/')[1]}", project=stack.project, role=role, member=preview, opts=child)
        make(gcp.storage.BucketIAMMember,
            "preview-state",
            bucket=state.bucket.name,
            role="roles/storage.objectViewer",
            member=preview,
            condition=state_condition(cfg.state_bucket.name, s),
            opts=child,
        )

        # Deployer: what the main program creates, and no more (bootstrap/permissions.py, type by type).
        make(gcp.projects.IAMMember, "deployer-container", project=stack.project, role=CONTAINER_ADMIN, member=deployer, opts=child)
        def deployer_role(name: str, role_id: str, title: str, description: str, condition: dict[str, str] | None = None) -> None:
            role = make(gcp.projects.IAMCustomRole,
                name,
                project=stack.project,
                # Per stack: two stacks may share a project, and a custom role id is the project's.
                role_id=f"{role_id}_{s.replace('-', '_')}",
                title=title,
                description=description,
                permissions=role_permissions(role_id),
                opts=keep,
            )
            path = pulumi.Output.all(role.project, role.role_id).apply(lambda a: f"projects/{a[0]}/roles/{a[1]}")
            make(gcp.projects.IAMMember, f"deployer-{name}", project=stack.project, role=path, member=deployer, condition=condition, opts=child)

        deployer_role("resource-policies", RESOURCE_POLICY_ROLE_ID, "gke-ai-batch: Compute resource policies",
                      "The tpu7x workload policy the main program creates (gke_ai_batch/components/nodepools.py)")
        deployer_role("services", SERVICE_ENABLER_ROLE_ID, "gke-ai-batch: enable APIs",
                      "Enable the APIs the main program needs (gke_ai_batch/plan/apis.py); never disable one")
        if stack.checkpoint_bucket_prefix is not None:
            deployer_role("checkpoint-buckets", CHECKPOINT_BUCKETS_ROLE_ID, "gke-ai-batch: checkpoint buckets",
                          "Team checkpoint buckets and their IAM policy (gke_ai_batch/components/storage.py)",
                          condition=checkpoint_buckets_condition(stack.checkpoint_bucket_prefix))
        if stack.dashboard:
            make(gcp.projects.IAMMember, "deployer-dashboards", project=stack.project, role=DASHBOARD_EDITOR, member=deployer, opts=child)
        # The node service account is created here, not by the main program: the deployer then
        # needs neither iam.serviceAccounts.create on the project nor setIamPolicy on accounts,
        # only actAs on this one account (clusters and node pools run as it; GKE checks
        # iam.serviceAccounts.actAs, https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa).
        # IAM conditions cannot narrow a project-level grant to one service account (IAM is not
        # among the services with resource attributes:
        # https://cloud.google.com/iam/docs/conditions-resource-attributes), so the grant is on
        # the account itself. The main stack names it as cluster.nodeServiceAccount.
        nodes = make(gcp.serviceaccount.Account,
            "nodes",
            project=stack.project,
            account_id=stack.node_service_account,
            display_name=f"GKE nodes of stack {s} (gke-ai-batch)",
            opts=keep,
        )
        make(gcp.serviceaccount.IAMMember, "deployer-node-sa-user", service_account_id=nodes.name, role=SERVICE_ACCOUNT_USER, member=deployer, opts=child)
        # The account's role is granted here too, so the deployer holds no projectIamAdmin: IAM
        # conditions limit which roles a setIamPolicy grants or revokes
        # (https://cloud.google.com/iam/docs/setting-limits-on-granting-roles,
        # iam.googleapis.com/modifiedGrantsByRole) but not to or from whom, and with it a deployer
        # could grant this role to anyone or take it from another stack's node account.
        make(gcp.projects.IAMMember,
            "nodes-role",
            project=stack.project,
            role=NODE_SA_ROLE,
            member=nodes.email.apply(lambda e: f"serviceAccount:{e}"),
            opts=child,
        )
        # The backend's meta.yaml (its layout version) is every stack's: the bootstrap writes it
        # once, and a deployer only reads it, so one environment's deployer cannot break the
        # state lookup of another's.
        for name, role, meta in (("deployer-state", "roles/storage.objectAdmin", False), ("deployer-state-read", "roles/storage.objectViewer", True)):
            make(gcp.storage.BucketIAMMember,
                name,
                bucket=state.bucket.name,
                role=role,
                member=deployer,
                condition=state_condition(cfg.state_bucket.name, s, meta=meta),
                opts=child,
            )

        if stack.secrets_encryption_key is not None:
            # GKE encrypts Secrets with the key as its service agent
            # (service-<project number>@container-engine-robot.iam.gserviceaccount.com), which
            # needs encrypt/decrypt on it before the cluster is created (GKE docs
            # how-to/encrypting-secrets, "Grant permission to use the key"). ServiceIdentity
            # makes sure the agent exists and names it without a project-number lookup.
            agent = make(gcp.projects.ServiceIdentity, "gke-agent", project=stack.project, service="container.googleapis.com", opts=child)
            make(gcp.kms.CryptoKeyIAMMember,
                "gke-agent-secrets-key",
                crypto_key_id=stack.secrets_encryption_key,
                role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
                member=agent.email.apply(lambda e: f"serviceAccount:{e}"),
                opts=child,
            )

        key = state.key_id(s)
        if key is not None:
            make(gcp.kms.CryptoKeyIAMMember, "preview-secrets", crypto_key_id=key, role="roles/cloudkms.cryptoKeyDecrypter", member=preview, opts=child)
            make(gcp.kms.CryptoKeyIAMMember, "deployer-secrets", crypto_key_id=key, role="roles/cloudkms.cryptoKeyEncrypterDecrypter", member=deployer, opts=child)
        self.register_outputs({})


def deploy(cfg: BootstrapConfig, project: str) -> dict[str, pulumi.Output]:
    """Register everything; return the stack outputs the GitHub repository needs (and only those)."""
    apis = enable_apis(cfg, project)
    wif = WorkloadIdentity("github", cfg, project, apis=apis[project])
    state = StateStore("state", cfg, project, apis=apis[project])
    stacks = {
        s.name: StackAccess(s, cfg, project, wif, state, apis=[*apis[project], *apis[s.project]]) for s in cfg.stacks
    }
    # secretsProvider is what the deploy workflow's first `up` (upsert) creates the stack with:
    # left out, Pulumi would create it with a passphrase the workflow does not have.
    emails = {
        name: {
            "preview": a.preview.email,
            "deployer": a.deployer.email,
            "secretsProvider": (
                pulumi.Output.concat("gcpkms://", key) if (key := state.key_id(name)) is not None else "passphrase"
            ),
        }
        for name, a in stacks.items()
    }
    identities = pulumi.Output.all(wif.provider.name, emails).apply(
        lambda a: json.dumps({"workloadIdentityProvider": a[0], "stacks": a[1]}, sort_keys=True)
    )
    return {"PULUMI_BACKEND_URL": pulumi.Output.concat("gs://", state.bucket.name), "GCP_IDENTITIES": identities}
