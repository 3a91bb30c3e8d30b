"""What the CI identities can reach in a checkpoint bucket, modelled from the recorded resources:
the bootstrap example's grants (bootstrap/Pulumi.example.yaml) and the main stacks' buckets and
bucket policies (stacks/Pulumi.{dev,prod}.yaml, which the example's stacks are).

A bucket's effective policy is what Cloud Storage gives a new bucket (its project convenience
bindings, gke_ai_batch/domain/gcsfuse.py CONVENIENCE_BINDINGS) plus every BucketIAMMember, unless a
BucketIAMPolicy sets the whole policy. projectViewer:P stands for everyone holding roles/viewer on
P, which the preview identity does, and any same-repository branch may use that identity."""

from __future__ import annotations

import functools
import json

import pytest
from gke_ai_batch.synth.stackfile import StackFile

from bootstrap import synth as bsynth
from bootstrap.grants import grants
from conftest import ROOT, synth_stack
from gke_ai_batch.domain import gcsfuse

EXAMPLE = ROOT / "bootstrap" / "Pulumi.example.yaml"
BUCKET = "gcp:storage/bucket:Bucket"
MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"

# The object permissions of the roles that can reach a checkpoint bucket (Cloud Storage's IAM
# roles reference, https://cloud.google.com/storage/docs/access-control/iam-roles: the Storage
# Legacy roles and Storage Object User). Project roles the identities hold (roles/viewer,
# roles/container.viewer, roles/container.admin, the deployer's custom roles) hold no
# storage.objects permission (bootstrap/permissions.py for the custom ones).
OBJECT_PERMISSIONS = {
    "roles/storage.legacyBucketOwner": {"storage.objects.list", "storage.objects.create", "storage.objects.delete"},
    "roles/storage.legacyBucketReader": {"storage.objects.list"},
    "roles/storage.legacyObjectOwner": {"storage.objects.get", "storage.objects.update"},
    "roles/storage.legacyObjectReader": {"storage.objects.get"},
    "roles/storage.objectUser": {"storage.objects.get", "storage.objects.list", "storage.objects.create",
                                 "storage.objects.delete", "storage.objects.update"},
}
CONVENIENCE = {"projectViewer": "roles/viewer", "projectEditor": "roles/editor", "projectOwner": "roles/owner"}
STACKS = ("dev", "prod")


@functools.lru_cache(maxsize=None)
def example():
    recording, problems = bsynth.render(StackFile.locate(ROOT, None, EXAMPLE))
    assert not problems, [d.render() for d in problems]
    return recording


def identity(stack: str, account: str) -> tuple[str, set[tuple[str, str]]]:
    """(member, {(project role, project)}) of one bootstrap identity."""
    rec = example()
    [sa] = [r for r in rec.resources if r.type == "gcp:serviceaccount/account:Account" and r.name == f"{stack}/{account}"]
    member = f"serviceAccount:{sa.inputs['accountId']}@{sa.inputs['project']}.iam.gserviceaccount.com"
    held = {(g.role, g.resource.removeprefix("projects/")) for g in grants(rec) if g.member == member and g.project_wide}
    return member, held


def effective_policies(resources, *, authoritative: bool = True) -> dict[str, dict[str, set[str]]]:
    """bucket -> role -> members, as Cloud Storage would hold them once the stack is up."""
    out: dict[str, dict[str, set[str]]] = {}
    for r in resources:
        if r.type == BUCKET:
            out[r.inputs["name"]] = {
                role: {f"{kind}:{r.inputs['project']}" for kind in kinds} for role, kinds in gcsfuse.CONVENIENCE_BINDINGS.items()
            }
    for r in resources:
        if r.type == MEMBER:
            out[r.inputs["bucket"]].setdefault(r.inputs["role"], set()).add(r.inputs["member"])
    for r in resources:
        if r.type == POLICY and authoritative:
            out[r.inputs["bucket"]] = {b["role"]: set(b["members"]) for b in json.loads(r.inputs["policyData"])["bindings"]}
    return out


def object_permissions(policy: dict[str, set[str]], member: str, project_roles: set[tuple[str, str]]) -> set[str]:
    def matches(m: str) -> bool:
        kind, _, project = m.partition(":")
        return m == member or (kind in CONVENIENCE and (CONVENIENCE[kind], project) in project_roles)

    return {p for role, members in policy.items() if any(matches(m) for m in members) for p in OBJECT_PERMISSIONS.get(role, ())}


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("account", ["preview", "deployer"])
def test_no_ci_identity_lists_or_reads_a_checkpoint_object(stack, account):
    member, project_roles = identity(stack, account)
    policies = effective_policies(synth_stack(stack).recording.resources)
    assert policies, f"{stack} has checkpoint buckets"
    for bucket, policy in policies.items():
        assert not object_permissions(policy, member, project_roles), (bucket, policy)


@pytest.mark.parametrize("stack", STACKS)
def test_without_the_bucket_policy_the_preview_would_read_every_checkpoint(stack):
    # What the policy keeps out: the preview holds roles/viewer on the stack's project, so
    # Cloud Storage's projectViewer bindings would let it list and read every object.
    member, project_roles = identity(stack, "preview")
    assert ("roles/viewer", next(p for _, p in project_roles)) in project_roles
    for bucket, policy in effective_policies(synth_stack(stack).recording.resources, authoritative=False).items():
        assert {"storage.objects.get", "storage.objects.list"} <= object_permissions(policy, member, project_roles), bucket


@pytest.mark.parametrize("stack", STACKS)
def test_the_team_alone_reads_and_writes_its_checkpoints(stack):
    for bucket, policy in effective_policies(synth_stack(stack).recording.resources).items():
        assert set(policy) == {gcsfuse.OBJECT_USER_ROLE}, bucket
        [member] = policy[gcsfuse.OBJECT_USER_ROLE]
        assert "/subject/ns/" in member and member.endswith("/sa/checkpoints"), member
        assert {"storage.objects.get", "storage.objects.create"} <= object_permissions(policy, member, set())
