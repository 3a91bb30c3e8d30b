"""Who may do what on the cluster the program builds: teams run work only through Kueue, quota
is for cluster admins, and the webhook probe holds namespaced rights only."""

from __future__ import annotations

import pytest

from gke_ai_batch import synth
from gke_ai_batch.domain import multikueue_worker as worker
from gke_ai_batch.plan.metrics import SCRAPER
from gke_ai_batch.plan.rbac import TEAM_ROLE
from conftest import FLEET_STACKS, STACKS, by_name, synth_stack
from gke_ai_batch.policy import rules
from gke_ai_batch.policy.rules import rbac
from support import manifests as M

RBAC = "rbac.authorization.k8s.io/v1"


def rbac_objects(stack: str) -> tuple[dict, dict, list[dict]]:
    """(Roles by (namespace, name), ClusterRoles by name, bindings) a stack emits."""
    docs = synth.manifests(synth_stack(stack).recording)
    roles = {(m["metadata"]["namespace"], m["metadata"]["name"]): m for m in docs if (m["apiVersion"], m["kind"]) == (RBAC, "Role")}
    cluster_roles = {m["metadata"]["name"]: m for m in docs if (m["apiVersion"], m["kind"]) == (RBAC, "ClusterRole")}
    bindings = [m for m in docs if m["apiVersion"] == RBAC and m["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    return roles, cluster_roles, bindings


@pytest.mark.parametrize("stack", STACKS)
def test_no_subject_the_stack_binds_may_create_pods_or_write_quota(stack):
    roles, cluster_roles, bindings = rbac_objects(stack)
    # A fleet's workers give the manager's ServiceAccount cluster-wide reads and, in the
    # namespaces they mirror, the MultiKueue writes (gke_ai_batch/domain/multikueue_worker.py); nothing else
    # is granted cluster-wide.
    fleet_roles = {worker.READ_ROLE, worker.WRITE_ROLE} if stack in FLEET_STACKS else set()
    # With gke-ai-batch:metrics, the scrapers may read /metrics, a right that exists only
    # cluster-wide and opens no object (gke_ai_batch/plan/metrics.py).
    metrics_role = {SCRAPER} if SCRAPER in cluster_roles else set()
    assert all(cluster_roles[r]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}] for r in metrics_role)
    assert set(cluster_roles) <= fleet_roles | metrics_role, f"{stack}: the program grants nothing else cluster-wide"
    assert {b["metadata"]["name"] for b in bindings if b["kind"] == "ClusterRoleBinding"} <= (
        ({worker.READ_BINDING} if fleet_roles else set()) | metrics_role)
    assert all(
        (b["roleRef"]["kind"] == "Role" and (b["metadata"]["namespace"], b["roleRef"]["name"]) in roles)
        or (b["roleRef"]["kind"] == "ClusterRole" and b["roleRef"]["name"] in fleet_roles | metrics_role)
        for b in bindings
    )
    # The rule itself, over what the stack records: every roleRef resolves and grants no bypass.
    resources = [rules.Resource(r.urn, r.type, r.name, r.inputs) for r in synth_stack(stack).recording.resources]
    assert list(rules.findings(rules.by_name("rbac-no-queue-bypass"), resources)) == []


def test_the_check_above_can_fail():
    assert rbac.forbidden_grants([{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]) == ["create pods"]
    written = rbac.forbidden_grants([{"apiGroups": ["kueue.x-k8s.io"], "resources": ["*"], "verbs": ["update"]}])
    assert "update kueue.x-k8s.io clusterqueues" in written and "update kueue.x-k8s.io localqueues" in written


def test_the_probes_workload_create_passes_only_where_no_queue_admits():
    roles, _, _ = rbac_objects("prod")
    probe = roles[("kueue-system", "gke-ai-batch-webhook-probe")]["rules"]
    assert rbac.forbidden_grants(probe, namespace_has_queue=False) == []
    # The same Role in a team namespace would queue Workloads of its own making.
    assert rbac.forbidden_grants(probe) == ["create kueue.x-k8s.io workloads"]


def allows(rules: list[dict], group: str, resource: str, verb: str) -> bool:
    return any(
        group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules
    )


@pytest.mark.parametrize("stack, groups", [
    ("prod", {"llm-training": "llm-training@acme.com", "research": "ml-research@acme.com", "evals": "ml-evals@acme.com"}),
    ("batch-autopilot", {"team-a": "team-a@acme.com", "team-b": "team-b@acme.com"}),
])
def test_team_groups_get_the_team_role_in_their_namespace(stack, groups):
    roles, _, bindings = rbac_objects(stack)
    for namespace, group in groups.items():
        rules = roles[(namespace, TEAM_ROLE)]["rules"]
        for group_, resource in (("batch", "jobs"), ("jobset.x-k8s.io", "jobsets")):
            assert all(allows(rules, group_, resource, v) for v in ("create", "get", "list", "watch", "delete"))
        for group_, resource in (("", "pods"), ("", "pods/log"), ("kueue.x-k8s.io", "workloads"), ("kueue.x-k8s.io", "localqueues")):
            assert all(allows(rules, group_, resource, v) for v in ("get", "list", "watch"))
            assert not any(allows(rules, group_, resource, v) for v in ("create", "update", "patch", "delete"))
        (binding,) = [b for b in bindings if b["metadata"].get("namespace") == namespace]
        assert binding["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}]
    cluster = by_name(synth_stack(stack), "gcp:container/cluster:Cluster", "cluster")["inputs"]
    assert cluster["authenticatorGroupsConfig"] == {"securityGroup": "gke-security-groups@acme.com"}


def test_stacks_without_groups_bind_no_team():
    roles, _, bindings = rbac_objects("dev")
    assert TEAM_ROLE not in {name for _, name in roles}
    cluster = by_name(synth_stack("dev"), "gcp:container/cluster:Cluster", "cluster")["inputs"]
    assert "authenticatorGroupsConfig" not in cluster


def test_the_probe_dry_runs_a_namespaced_workload_with_a_role():
    docs = synth.manifests(synth_stack("prod").recording)
    roles, _, bindings = rbac_objects("prod")
    rules = roles[("kueue-system", "gke-ai-batch-webhook-probe")]["rules"]
    assert rules == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["create"]},
    ]
    (config_map,) = [m for m in docs if m["kind"] == "ConfigMap" and m["metadata"]["namespace"] == "kueue-system"]
    payload = [doc for _, doc in M.embedded_manifests(config_map)]
    assert {(d["kind"], d["metadata"].get("namespace")) for d in payload} == {
        ("Workload", "kueue-system"),
        ("JobSet", "kueue-system"),
    }
    # Everything the probe creates is something its Role allows, in its own namespace.
    plural = {"Workload": ("kueue.x-k8s.io", "workloads"), "JobSet": ("jobset.x-k8s.io", "jobsets")}
    assert all(allows(rules, *plural[d["kind"]], "create") for d in payload)
