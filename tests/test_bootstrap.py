"""The bootstrap project (bootstrap/): rendered offline from bootstrap/Pulumi.example.yaml (and
variations written on the fly), its IAM read back through bootstrap.grants."""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import celpy
import pytest
from gke_ai_batch.synth import yamlread
from gke_ai_batch.synth.diagnostics import EXIT_INVALID_CONFIG, EXIT_OK
from gke_ai_batch.synth.stackfile import StackFile

from bootstrap import synth as bsynth
from bootstrap.grants import STATEFUL_TYPES, grants
from bootstrap.resources import PREVIEW_ROLES, state_condition
from conftest import ROOT, synth_stack

EXAMPLE = ROOT / "bootstrap" / "Pulumi.example.yaml"
NS = "gke-ai-batch-bootstrap"
WIU = "roles/iam.workloadIdentityUser"


def example_config() -> dict:
    return copy.deepcopy(yamlread.load(EXAMPLE.read_text()).data["config"])


def render(tmp_path: Path, config: dict, stack: str = "t"):
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(yamlread.dump({"config": config}))
    return bsynth.render(StackFile.locate(ROOT, None, path))


@functools.lru_cache(maxsize=None)
def example():
    recording, problems = bsynth.render(StackFile.locate(ROOT, None, EXAMPLE))
    assert not problems, [d.render() for d in problems]
    return recording


def members_of(recording, stack: str, account: str) -> str:
    [sa] = [r for r in recording.resources if r.type == "gcp:serviceaccount/account:Account" and r.name == f"{stack}/{account}"]
    return f"serviceAccount:{sa.inputs['accountId']}@{sa.inputs['project']}.iam.gserviceaccount.com"


def test_outputs_are_the_two_repository_variables():
    rec = example()
    assert set(rec.outputs) == {"PULUMI_BACKEND_URL", "GCP_IDENTITIES"}
    assert rec.outputs["PULUMI_BACKEND_URL"] == "gs://acme-gke-ai-batch-state"
    identities = json.loads(rec.outputs["GCP_IDENTITIES"])
    assert identities == {
        "workloadIdentityProvider": f"projects/{bsynth.MOCK_PROJECT_NUMBER}/locations/global/workloadIdentityPools/github/providers/gke-ai-batch",
        "stacks": {
            s: {
                "preview": f"gab-{s}-preview@acme-ml-ci.iam.gserviceaccount.com",
                "deployer": f"gab-{s}-deploy@acme-ml-ci.iam.gserviceaccount.com",
                # What the deploy workflow's upsert creates a new stack with.
                "secretsProvider": f"gcpkms://projects/acme-ml-ci/locations/us-central1/keyRings/gke-ai-batch-pulumi/cryptoKeys/{s}",
            }
            for s in ("dev", "prod")
        },
    }


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_preview_identities_only_read(stack):
    rec = example()
    held = [g for g in grants(rec) if g.member == members_of(rec, stack, "preview")]
    assert {g.role for g in held} == set(PREVIEW_ROLES)
    assert set(PREVIEW_ROLES) == {"roles/viewer", "roles/container.viewer", "roles/storage.objectViewer", "roles/cloudkms.cryptoKeyDecrypter"}
    # Its own stack's key only.
    [kms] = [g for g in held if g.role == "roles/cloudkms.cryptoKeyDecrypter"]
    assert kms.resource.endswith(f"/cryptoKeys/{stack}")


def test_preview_has_no_key_with_a_passphrase_stack(tmp_path):
    config = example_config()
    config[f"{NS}:stacks"][0]["secretsProvider"] = "passphrase"
    rec, problems = render(tmp_path, config)
    assert not problems
    dev = [g.role for g in grants(rec) if g.member == members_of(rec, "dev", "preview")]
    assert "roles/cloudkms.cryptoKeyDecrypter" not in dev and "roles/viewer" in dev
    assert not [r for r in rec.resources if r.type == "gcp:kms/cryptoKey:CryptoKey" and r.name == "secrets-dev"]


def test_prod_deployer_needs_the_prod_environment_on_main():
    rec = example()
    deployer_sa = "projects/acme-ml-ci/serviceAccounts/gab-prod-deploy@acme-ml-ci.iam.gserviceaccount.com"
    [wiu] = [g for g in grants(rec) if g.role == WIU and g.resource == deployer_sa]
    pool = f"projects/{bsynth.MOCK_PROJECT_NUMBER}/locations/global/workloadIdentityPools/github"
    assert wiu.member == f"principalSet://iam.googleapis.com/{pool}/attribute.env_ref/prod@refs/heads/main"
    [provider] = [r for r in rec.resources if r.type.endswith("WorkloadIdentityPoolProvider")]
    mapping = provider.inputs["attributeMapping"]
    assert "assertion.environment + '@' + assertion.ref" in mapping["attribute.env_ref"]
    # Nobody else may impersonate a deployer; anyone of the repository may impersonate a preview.
    for g in grants(rec):
        if g.role == WIU and "-deploy@" in g.resource:
            assert "/attribute.env_ref/" in g.member and g.member.endswith("@refs/heads/main")
        elif g.role == WIU:
            assert g.member.endswith("/attribute.repository_id/812345678")


def test_provider_admits_only_this_repository_by_id():
    [provider] = [r for r in example().resources if r.type.endswith("WorkloadIdentityPoolProvider")]
    assert provider.inputs["attributeCondition"] == "assertion.repository_id == '812345678'"
    assert provider.inputs["oidc"]["issuerUri"] == "https://token.actions.githubusercontent.com"
    assert provider.inputs["attributeMapping"]["google.subject"] == "assertion.sub"


def test_service_account_user_is_never_project_wide():
    rec = example()
    users = [g for g in grants(rec) if g.role in ("roles/iam.serviceAccountUser", "roles/iam.serviceAccountAdmin", "roles/iam.serviceAccountTokenCreator")]
    assert users, "the deployer acts as the node service account"
    for g in users:
        assert not g.project_wide and "/serviceAccounts/" in g.resource, g
    assert {g.resource for g in users if g.role == "roles/iam.serviceAccountUser"} == {
        "projects/acme-ml-dev/serviceAccounts/ml-dev-nodes@acme-ml-dev.iam.gserviceaccount.com",
        "projects/acme-ml-prod/serviceAccounts/ml-prod-nodes@acme-ml-prod.iam.gserviceaccount.com",
    }


def test_no_identity_may_change_a_projects_iam_policy():
    # The bootstrap grants the node role itself (tests/test_dayone_deployer_iam.py).
    for g in grants(example()):
        assert g.role not in ("roles/resourcemanager.projectIamAdmin", "roles/owner", "roles/editor", "roles/iam.securityAdmin"), g


def test_state_bucket_is_versioned_uniform_and_never_public():
    [bucket] = [r for r in example().resources if r.type == "gcp:storage/bucket:Bucket"]
    assert bucket.inputs["versioning"] == {"enabled": True}
    assert bucket.inputs["uniformBucketLevelAccess"] is True
    assert bucket.inputs["publicAccessPrevention"] == "enforced"
    assert bucket.inputs["location"] == "US-CENTRAL1"


def test_state_grants_name_their_stacks_objects():
    state = [g for g in grants(example()) if g.resource.startswith("buckets/")]
    assert state
    for g in state:
        stack = "dev" if g.member.startswith("serviceAccount:gab-dev-") else "prod"
        # Writers get their own stack's objects, not the backend's meta.yaml, which is everyone's.
        meta = g.role != "roles/storage.objectAdmin"
        assert g.condition == state_condition("acme-gke-ai-batch-state", stack, meta=meta)["expression"]
    writes = state_condition("b", "dev", meta=False)["expression"]
    assert not _state_access(writes, "projects/_/buckets/b/objects/.pulumi/meta.yaml")
    assert _state_access(writes, "projects/_/buckets/b/objects/.pulumi/stacks/gke-ai-batch/dev.json")
    [meta_object] = [r for r in example().resources if r.type == "gcp:storage/bucketObject:BucketObject"]
    # Its content, version: 1, is recorded as a secret (pulumi-gcp marks BucketObject.content sensitive).
    assert meta_object.inputs["name"] == ".pulumi/meta.yaml" and meta_object.options.get("protect")


def test_production_protects_every_stateful_resource(tmp_path):
    rec = example()
    stateful = [r for r in rec.resources if r.type in STATEFUL_TYPES]
    assert {r.type for r in stateful} == set(STATEFUL_TYPES)
    assert all(r.options.get("protect") for r in stateful), [r.urn for r in stateful if not r.options.get("protect")]
    # Without production, only the prod stack's own resources stay protected.
    config = example_config()
    config[f"{NS}:production"] = False
    rec, _ = render(tmp_path, config)
    unprotected = {r.name for r in rec.resources if r.type in STATEFUL_TYPES and not r.options.get("protect")}
    assert {"pool", "github", "state", "secrets", "secrets-dev"} <= unprotected and "secrets-prod" not in unprotected


def test_bad_config_lists_every_problem_with_its_key_path(tmp_path):
    config = example_config()
    config[f"{NS}:stateBucket"]["versioning"] = True  # unknown key
    del config[f"{NS}:github"]["repositoryId"]
    config[f"{NS}:stacks"].append(dict(config[f"{NS}:stacks"][0], environment="dev2"))
    rec, problems = render(tmp_path, config)
    assert rec is None
    paths = {d.path: d.message for d in problems}
    assert set(paths) == {f"{NS}:stateBucket.versioning", f"{NS}:github.repositoryId", f"{NS}:stacks[2].name"}, paths
    assert "listed twice" in paths[f"{NS}:stacks[2].name"] and paths[f"{NS}:github.repositoryId"] == "required"
    assert all(d.line for d in problems)


def test_cli_exits_2_on_bad_config_without_a_traceback(tmp_path):
    config = example_config()
    config[f"{NS}:github"] = {"repository": "acme/gke-ai-batch"}
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yamlread.dump({"config": config}))
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "bootstrap.synth", "--config", str(path), "--out", str(out)],
        cwd=ROOT, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == EXIT_INVALID_CONFIG, run.stderr
    assert f"{NS}:github.repositoryId: required" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()


def test_cli_writes_resources_and_iam_table(tmp_path):
    out = tmp_path / "example"
    assert bsynth.main(["example", "--out", str(out)]) == EXIT_OK
    resources = json.loads((out / "resources.json").read_text())
    assert len(resources) == len(example().resources)
    table = (out / "iam.md").read_text()
    assert "| `prod/deployer` | `roles/container.admin` | `projects/acme-ml-prod` |  |" in table


def _state_access(expression: str, name: str, type_: str = "storage.googleapis.com/Object") -> bool:
    # The condition as IAM evaluates it: CEL over resource.name and resource.type.
    env = celpy.Environment()
    program = env.program(env.compile(expression))
    return bool(program.evaluate({"resource": celpy.json_to_cel({"name": name, "type": type_})}))


@pytest.mark.parametrize(
    ("obj", "allowed"),
    [
        (".pulumi/meta.yaml", True),
        (".pulumi/stacks/gke-ai-batch/dev.json", True),
        (".pulumi/stacks/gke-ai-batch/dev.json.bak", True),
        (".pulumi/stacks/gke-ai-batch/dev.json.gz", True),
        (".pulumi/history/gke-ai-batch/dev/dev-1732450000000000000.history.json", True),
        (".pulumi/backups/gke-ai-batch/dev/dev.1732450000000000000.json", True),
        (".pulumi/locks/gke-ai-batch/dev/4f1c.json", True),
        # Another stack whose name starts with this one's, or a stack named like its file.
        (".pulumi/stacks/gke-ai-batch/dev2.json", False),
        (".pulumi/stacks/gke-ai-batch/dev.jsonx.json", False),
        (".pulumi/history/gke-ai-batch/dev2/dev2-1.history.json", False),
        (".pulumi/locks/gke-ai-batch/dev-eu/1.json", False),
        (".pulumi/stacks/gke-ai-batch/prod.json", False),
        # Another project's stack of the same name (the bootstrap project's own state).
        (".pulumi/stacks/gke-ai-batch-bootstrap/dev.json", False),
    ],
)
def test_a_stack_identity_reaches_its_own_state_objects_only(obj: str, allowed: bool):
    expression = state_condition("b", "dev")["expression"]
    assert _state_access(expression, f"projects/_/buckets/b/objects/{obj}") is allowed
    assert _state_access(expression, "projects/_/buckets/b", "storage.googleapis.com/Bucket")



def test_deployer_creates_no_accounts_and_administers_none():
    # The node account is the bootstrap's (protected in production); the deployer only acts as it.
    rec = example()
    roles = {g.role for g in grants(rec)}
    assert not roles & {"roles/iam.serviceAccountCreator", "roles/iam.serviceAccountAdmin", "roles/iam.serviceAccountTokenCreator"}
    nodes = {r.inputs["accountId"]: r for r in rec.resources if r.type == "gcp:serviceaccount/account:Account" and r.name.endswith("/nodes")}
    assert {a: (r.inputs["project"], bool(r.options.get("protect"))) for a, r in nodes.items()} == {
        "ml-dev-nodes": ("acme-ml-dev", True),
        "ml-prod-nodes": ("acme-ml-prod", True),
    }


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_main_stacks_run_their_nodes_as_the_bootstraps_account(stack):
    # A main stack that named another account would leave its deployer unable to act as it.
    [entry] = [s for s in example_config()[f"{NS}:stacks"] if s["name"] == stack]
    main = yamlread.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()).data["config"]
    assert main["gcp:project"] == entry["project"]
    assert main["gke-ai-batch:cluster"]["nodeServiceAccount"] == f"{entry['nodeServiceAccount']}@{entry['project']}.iam.gserviceaccount.com"
    rec = synth_stack(stack).recording
    assert not [r for r in rec.resources if r.type == "gcp:serviceaccount/account:Account"]


# The DNS endpoint admits a caller only with container.clusters.connect (GKE docs
# concepts/network-isolation, "DNS-based endpoint"). Per the IAM role reference
# (https://cloud.google.com/iam/docs/roles-permissions/container) Kubernetes Engine Admin holds
# container.* and Kubernetes Engine Viewer includes container.clusters.connect, so the existing
# grants suffice: this keeps them from being narrowed to a role without it.
CONNECT_ROLES = {"roles/container.admin", "roles/container.viewer"}


@pytest.mark.parametrize("stack", ["dev", "prod"])
@pytest.mark.parametrize("account", ["preview", "deployer"])
def test_every_identity_may_reach_the_cluster_through_the_dns_endpoint(stack, account):
    rec = example()
    [project] = {r.inputs["project"] for r in rec.resources if r.type == "gcp:projects/iAMMember:IAMMember" and r.parent.endswith(f"::{stack}")}
    roles = {g.role for g in grants(rec) if g.member == members_of(rec, stack, account) and g.resource == f"projects/{project}" and g.condition is None}
    assert roles & CONNECT_ROLES, roles


def test_gke_may_use_each_stacks_secrets_encryption_key():
    # GKE refuses to create a cluster whose databaseEncryption key its service agent cannot use.
    rec = example()
    agent = f"serviceAccount:service-{bsynth.MOCK_PROJECT_NUMBER}@container-engine-robot.iam.gserviceaccount.com"
    granted = {g.resource for g in grants(rec) if g.member == agent and g.role == "roles/cloudkms.cryptoKeyEncrypterDecrypter"}
    for entry in example_config()[f"{NS}:stacks"]:
        main = yamlread.load((ROOT / "stacks" / f"Pulumi.{entry['name']}.yaml").read_text()).data["config"]
        key = main["gke-ai-batch:cluster"].get("databaseEncryption", {}).get("keyName")
        assert entry.get("secretsEncryptionKey") == key
        assert (key in granted) if key else True
    assert granted == {"projects/acme-ml-prod/locations/us-central1/keyRings/gke/cryptoKeys/ml-prod-secrets"}


def test_a_stack_in_the_bootstraps_own_project_is_refused(tmp_path):
    # Its preview identity's roles/viewer there would read every stack's state through the state
    # bucket's projectViewer binding (tests/test_identity_reach.py models those bindings).
    config = example_config()
    config[f"{NS}:stacks"][1]["project"] = config["gcp:project"]
    rec, problems = render(tmp_path, config)
    assert rec is None
    assert [(d.path, d.message.split(":")[0]) for d in problems] == [
        (f"{NS}:stacks[1].project", f"is the bootstrap's own project ({config['gcp:project']})")
    ]
