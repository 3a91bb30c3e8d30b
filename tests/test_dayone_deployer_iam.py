"""The deployer identity can create what the stacks register: every Google Cloud type a shipped
stack registers has a row in bootstrap/permissions.py, and the bootstrap's deployer holds each
row's grant, scoped as the row says (checkpoint buckets: by name, evaluated as IAM evaluates the
condition)."""

from __future__ import annotations

import copy
import functools

import celpy
import pytest
from gke_ai_batch.synth import yamlread
from gke_ai_batch.synth.stackfile import StackFile

from bootstrap import synth as bsynth
from bootstrap.grants import grants
from bootstrap.permissions import CUSTOM_ROLE_IDS, DEPLOYER_NEEDS, role_permissions
from bootstrap.resources import PREVIEW_ROLES, checkpoint_buckets_condition
from conftest import ROOT, STACKS, synth_stack

EXAMPLE = ROOT / "bootstrap" / "Pulumi.example.yaml"
NS = "gke-ai-batch-bootstrap"
BUCKET = "gcp:storage/bucket:Bucket"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"


@functools.lru_cache(maxsize=None)
def example():
    recording, problems = bsynth.render(StackFile.locate(ROOT, None, EXAMPLE))
    assert not problems, [d.render() for d in problems]
    return recording


def example_stacks() -> dict[str, dict]:
    return {s["name"]: s for s in yamlread.load(EXAMPLE.read_text()).data["config"][f"{NS}:stacks"]}


def deployer(rec, stack: str) -> str:
    [sa] = [r for r in rec.resources if r.type == "gcp:serviceaccount/account:Account" and r.name == f"{stack}/deployer"]
    return f"serviceAccount:{sa.inputs['accountId']}@{sa.inputs['project']}.iam.gserviceaccount.com"


def custom_roles(rec, stack: str) -> dict[str, list[str]]:
    """role path -> permissions, for the custom roles the bootstrap creates for `stack`."""
    return {
        f"projects/{r.inputs['project']}/roles/{r.inputs['roleId']}": r.inputs["permissions"]
        for r in rec.resources
        if r.type == "gcp:projects/iAMCustomRole:IAMCustomRole" and r.name.startswith(f"{stack}/")
    }


def gcp_types(stack: str) -> set[str]:
    return {r.type for r in synth_stack(stack).recording.resources if r.type.startswith("gcp:")}


@pytest.mark.parametrize("stack", STACKS)
def test_every_google_cloud_type_a_stack_registers_has_a_deployer_row(stack):
    # A component that registers a new type fails here until bootstrap/permissions.py says what
    # the deployer needs for it, and the bootstrap grants it (or says why it is granted by hand).
    missing = gcp_types(stack) - set(DEPLOYER_NEEDS)
    assert not missing, f"stack {stack} registers {sorted(missing)}: add each to bootstrap/permissions.py DEPLOYER_NEEDS"


def _deployer_holds(rec, stack: str, need) -> bool:
    member = deployer(rec, stack)
    held = [g for g in grants(rec) if g.member == member]
    [project] = {r.inputs["project"] for r in rec.resources if r.type == "gcp:serviceaccount/account:Account" and r.name == f"{stack}/nodes"}
    customs = custom_roles(rec, stack)
    for g in held:
        if need.grant in CUSTOM_ROLE_IDS:
            if not (g.role in customs and g.role.split("/")[-1].startswith(f"{need.grant}_")):
                continue
            if not set(need.permissions) <= set(customs[g.role]):
                continue
        elif g.role != need.grant:
            continue
        if need.scope == "node-service-account":
            return "/serviceAccounts/" in g.resource and not g.project_wide
        return g.resource == f"projects/{project}" and (g.condition is not None) == (need.scope != "project")
    return False


@pytest.mark.parametrize("stack", sorted(example_stacks()))
def test_the_deployer_holds_every_grant_its_stack_needs(stack):
    # The example's stacks are the shipped dev and prod stacks: each type they register is granted
    # to their deployer, at the row's scope; a by-hand type is one they do not register.
    rec = example()
    for type_ in sorted(gcp_types(stack)):
        for need in DEPLOYER_NEEDS[type_]:
            assert need.scope != "by-hand", f"{stack} registers {type_}, which the bootstrap does not grant: {need.why}"
            assert _deployer_holds(rec, stack, need), f"{stack}/deployer lacks {need.grant} ({need.scope}) for {type_}"


def test_by_hand_rows_say_why_and_every_other_row_is_granted_by_the_bootstrap():
    for type_, needs in DEPLOYER_NEEDS.items():
        for need in needs:
            assert bool(need.why) == (need.scope == "by-hand"), type_
            assert need.permissions and all(p.count(".") >= 2 for p in need.permissions), type_
    # Each custom role holds exactly the rows it covers, no more.
    for role_id in CUSTOM_ROLE_IDS:
        assert role_permissions(role_id), role_id
    assert role_permissions("gkeAiBatchCheckpointBuckets") == [
        "storage.buckets.create", "storage.buckets.get", "storage.buckets.update", "storage.buckets.delete",
        "storage.buckets.getIamPolicy", "storage.buckets.setIamPolicy",
    ]


@pytest.mark.parametrize("stack", sorted(example_stacks()))
def test_grants_follow_what_the_main_stack_registers(stack):
    # No bucket role for a stack without checkpoint buckets, no dashboard role without a dashboard.
    rec = example()
    member = deployer(rec, stack)
    roles = {g.role.split("/")[-1].split("_")[0] for g in grants(rec) if g.member == member}
    assert ("gkeAiBatchCheckpointBuckets" in roles) == (BUCKET in gcp_types(stack))
    assert ("monitoring.dashboardEditor" in roles) == (DASHBOARD in gcp_types(stack))


@pytest.mark.parametrize("stack", sorted(example_stacks()))
def test_the_bootstraps_stacks_change_no_project_iam_policy(stack):
    # Their node account and its role are the bootstrap's, so their deployer needs no
    # projectIamAdmin, which IAM could limit by role but not by member: with it, a deployer could
    # grant the node role to anyone or take it from another stack's node account.
    rec = example()
    assert not [r for r in synth_stack(stack).recording.resources if r.type == "gcp:projects/iAMMember:IAMMember"]
    admin = {"roles/resourcemanager.projectIamAdmin", "roles/iam.securityAdmin", "roles/owner", "roles/editor"}
    assert not [g for g in grants(rec) if g.member == deployer(rec, stack) and g.role in admin]
    [nodes] = [r for r in rec.resources if r.type == "gcp:serviceaccount/account:Account" and r.name == f"{stack}/nodes"]
    email = f"serviceAccount:{nodes.inputs['accountId']}@{nodes.inputs['project']}.iam.gserviceaccount.com"
    assert [(g.role, g.resource, g.condition) for g in grants(rec) if g.member == email] == [
        ("roles/container.defaultNodeServiceAccount", f"projects/{nodes.inputs['project']}", None)
    ]


def test_the_preview_identity_still_only_reads():
    rec = example()
    for stack in example_stacks():
        [sa] = [r for r in rec.resources if r.type == "gcp:serviceaccount/account:Account" and r.name == f"{stack}/preview"]
        member = f"serviceAccount:{sa.inputs['accountId']}@{sa.inputs['project']}.iam.gserviceaccount.com"
        held = {g.role for g in grants(rec) if g.member == member}
        assert held <= set(PREVIEW_ROLES) and not any(r.startswith("projects/") for r in held), held


def _allows(expression: str, name: str, type_: str = "storage.googleapis.com/Bucket") -> bool:
    env = celpy.Environment()
    program = env.program(env.compile(expression))
    return bool(program.evaluate({"resource": celpy.json_to_cel({"name": name, "type": type_})}))


@pytest.mark.parametrize("stack", sorted(example_stacks()))
def test_the_bucket_condition_admits_the_stacks_own_buckets(stack):
    entry = example_stacks()[stack]
    expression = checkpoint_buckets_condition(entry["checkpointBucketPrefix"])["expression"]
    buckets = [r.inputs["name"] for r in synth_stack(stack).recording.resources if r.type == BUCKET]
    assert buckets
    for name in buckets:
        assert _allows(expression, f"projects/_/buckets/{name}"), name
    # ... and it is the condition the deployer's bucket role is granted under.
    assert expression in {g.condition for g in grants(example()) if g.member == deployer(example(), stack)}


@pytest.mark.parametrize(
    ("bucket", "allowed"),
    [
        ("acme-ml-ml-research-ckpt", True),
        ("acme-ml-ml-a-ckpt", True),
        # Another stack's prefix that starts with this one's, another bucket of the project, the
        # bootstrap's state bucket, a name that only ends right.
        ("acme-ml-ml2-research-ckpt", False),
        ("acme-ml-ml-research-logs", False),
        ("acme-ml-logs", False),
        ("acme-gke-ai-batch-state", False),
        ("other-acme-ml-ml-research-ckpt", False),
    ],
)
def test_the_bucket_condition_reaches_no_other_bucket(bucket: str, allowed: bool):
    expression = checkpoint_buckets_condition("acme-ml-ml")["expression"]
    assert _allows(expression, f"projects/_/buckets/{bucket}") is allowed
    # Creation is checked on the project (the bucket does not exist yet): the condition passes it.
    assert _allows(expression, "projects/acme-ml", "cloudresourcemanager.googleapis.com/Project")


def test_a_prefix_no_bucket_could_start_with_is_refused(tmp_path):
    config = copy.deepcopy(yamlread.load(EXAMPLE.read_text()).data["config"])
    config[f"{NS}:stacks"][0]["checkpointBucketPrefix"] = "Acme_ML"
    config[f"{NS}:stacks"][1]["checkpointBucketPrefix"] = "a" * 60
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yamlread.dump({"config": config}))
    rec, problems = bsynth.render(StackFile.locate(ROOT, None, path))
    assert rec is None
    paths = {d.path: d.message for d in problems}
    assert set(paths) == {f"{NS}:stacks[0].checkpointBucketPrefix", f"{NS}:stacks[1].checkpointBucketPrefix"}, paths
    assert "has a character Cloud Storage refuses" in paths[f"{NS}:stacks[0].checkpointBucketPrefix"]
    assert "Cloud Storage takes 3 to 63" in paths[f"{NS}:stacks[1].checkpointBucketPrefix"]
    assert all(d.line for d in problems)
