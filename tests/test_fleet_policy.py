"""The policy pack over a fleet: the MultiKueue manager's access to a worker passes
rbac-no-queue-bypass and probe-namespaced-rbac as it is (reads cluster-wide, writes only in the
team namespaces whose queue the worker serves) and fails both as soon as it holds more; a manager queue
admits through MultiKueue alone (fleet-multikueue-only). Every check runs over the fleet's
recording (tests/test_fleet_deploy.py), edited the way a careless change would register it."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from components.fleet import worker as wk
from policy import rules
from test_fleet_deploy import by_name, recording

RBAC = "kubernetes:rbac.authorization.k8s.io/v1"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"


def resources() -> list[rules.Resource]:
    return [
        rules.Resource(r.urn, r.type, r.name, copy.deepcopy(r.inputs), bool(r.options.get("protect")))
        for r in recording().resources
    ]


def violations(res: list[rules.Resource], *names: str) -> set[tuple[str, str]]:
    """(rule, logical name of the resource blamed) for the named rules, or every rule."""
    by_urn = {r.urn: r.name for r in res}
    return {
        (rule.name, by_urn.get(urn, ""))
        for rule in rules.RULES
        if not names or rule.name in names
        for urn, _ in rules.run(rule, res)
    }


def edit(res: list[rules.Resource], name: str, type_: str, change: Callable[[dict], None]) -> None:
    [r] = [r for r in res if r.name == name and r.type == type_]
    change(r.props)


def add(res: list[rules.Resource], like: str, type_: str, name: str, props: dict) -> None:
    [r] = [r for r in res if r.name == like and r.type == type_]
    res.append(r._replace(urn=r.urn[: r.urn.rindex("::")] + f"::{name}", type=type_, name=name, props=props))


def test_the_fleet_breaks_no_rule_but_the_sample_configs_advisory():
    # The sample config (tests/test_fleet_config.py) leaves cluster.privateNodes off on every
    # cluster, an advisory: nothing else fires, the manager's access to each worker included.
    found = violations(resources())
    assert found == {("gke-private-nodes", f"{c}/cluster") for c in ("manager", "us-east4", "europe-west4", "us-east5")}
    assert all(rules.by_name(rule).enforcement == "advisory" for rule, _ in found)


def test_the_managers_write_binding_waits_for_its_namespace():
    # Registered before the namespace exists, the API server would refuse it (namespace not found).
    binding = by_name(f"us-east4/llm/{wk.WRITE_BINDING}", ":RoleBinding")
    namespace = by_name("us-east4/llm", ":Namespace")
    assert namespace.urn in binding.dependencies


def _rule(group: str, resource: str, *verbs: str) -> dict:
    return {"apiGroups": [group], "resources": [resource], "verbs": list(verbs)}


MORE = {
    "pods": _rule("", "pods", "create"),
    "quota": _rule("kueue.x-k8s.io", "clusterqueues", "update"),
    "rbac": _rule("rbac.authorization.k8s.io", "rolebindings", "create"),
    "local queues": _rule("kueue.x-k8s.io", "localqueues", "patch"),
}


@pytest.mark.parametrize("grant", MORE)
def test_the_write_role_holding_more_than_multikueue_needs_fires(grant):
    res = resources()
    edit(res, f"us-east4/{wk.WRITE_ROLE}", f"{RBAC}:ClusterRole", lambda p: p["rules"].append(MORE[grant]))
    assert violations(res, "rbac-no-queue-bypass") == {("rbac-no-queue-bypass", f"us-east4/llm/{wk.WRITE_BINDING}")}


@pytest.mark.parametrize("grant", [*MORE, "jobs"])
def test_the_cluster_wide_binding_may_only_read(grant):
    res = resources()
    extra = MORE.get(grant) or _rule("batch", "jobs", "create")  # harmless in a namespace, not everywhere
    edit(res, f"us-east5/{wk.READ_ROLE}", f"{RBAC}:ClusterRole", lambda p: p["rules"].append(extra))
    blamed = f"us-east5/{wk.READ_BINDING}"
    assert violations(res, "rbac-no-queue-bypass", "probe-namespaced-rbac") == {
        ("rbac-no-queue-bypass", blamed), ("probe-namespaced-rbac", blamed)
    }


def test_the_write_role_bound_cluster_wide_fires():
    res = resources()
    edit(res, f"europe-west4/{wk.READ_BINDING}", f"{RBAC}:ClusterRoleBinding",
         lambda p: p["roleRef"].update(name=wk.WRITE_ROLE))
    blamed = f"europe-west4/{wk.READ_BINDING}"
    assert violations(res, "rbac-no-queue-bypass", "probe-namespaced-rbac") == {
        ("rbac-no-queue-bypass", blamed), ("probe-namespaced-rbac", blamed)
    }


@pytest.mark.parametrize("namespace", ["kueue-system", "research"])
def test_writes_where_the_worker_has_no_local_queue_fire(namespace):
    # research's LocalQueue on us-east4 points at a ClusterQueue with no quota there (us-east4 has
    # no TPU): each cluster's bindings are judged against that cluster's queues.
    res = resources()
    props = copy.deepcopy(by_name(f"us-east4/llm/{wk.WRITE_BINDING}", ":RoleBinding").inputs)
    props["metadata"]["namespace"] = namespace
    name = f"us-east4/{namespace}/{wk.WRITE_BINDING}"
    add(res, f"us-east4/llm/{wk.WRITE_BINDING}", f"{RBAC}:RoleBinding", name, props)
    assert violations(res, "rbac-no-queue-bypass") == {("rbac-no-queue-bypass", name)}


def test_another_subject_on_the_managers_bindings_loses_the_exemption():
    res = resources()
    intruder = {"kind": "ServiceAccount", "name": "intruder", "namespace": "kueue-system"}
    sa = copy.deepcopy(by_name("us-east4/kueue-system/multikueue-sa", ":ServiceAccount").inputs)
    sa["metadata"]["name"] = "intruder"
    add(res, "us-east4/kueue-system/multikueue-sa", "kubernetes:core/v1:ServiceAccount", "us-east4/kueue-system/intruder", sa)
    edit(res, f"us-east4/{wk.READ_BINDING}", f"{RBAC}:ClusterRoleBinding", lambda p: p["subjects"].append(intruder))
    edit(res, f"us-east4/llm/{wk.WRITE_BINDING}", f"{RBAC}:RoleBinding", lambda p: p["subjects"].append(intruder))
    assert violations(res, "rbac-no-queue-bypass", "probe-namespaced-rbac") == {
        ("probe-namespaced-rbac", f"us-east4/{wk.READ_BINDING}"),
        ("rbac-no-queue-bypass", f"us-east4/llm/{wk.WRITE_BINDING}"),
    }


def _manager_check(name: str, controller: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": name},
            "spec": {"controllerName": controller}}


@pytest.mark.parametrize("controller, fragment", [
    ("kueue.x-k8s.io/provisioning-request", "MultiKueueWithProvisioningRequest"),
    ("kueue.x-k8s.io/multikueue", "MultipleMultiKueueAdmissionChecks"),
    ("example.com/budget", "checks belong on the workers' queues"),
])
def test_a_manager_queue_with_another_check_fires(controller, fragment):
    res = resources()
    add(res, "manager/dws-gpu", f"{KUEUE}:AdmissionCheck", "manager/other", _manager_check("other", controller))
    edit(res, "manager/gpu", f"{KUEUE}:ClusterQueue",
         lambda p: p["spec"]["admissionChecksStrategy"]["admissionChecks"].append({"name": "other"}))
    rule = rules.by_name("fleet-multikueue-only")
    assert rule.enforcement == "mandatory"
    found = [(urn, m) for urn, m in rules.run(rule, res)]
    assert [urn for urn, _ in found] == [by_name("manager/gpu", ":ClusterQueue").urn]
    assert fragment in found[0][1]


def test_a_multikueue_check_limited_to_some_flavors_fires():
    res = resources()
    edit(res, "manager/gpu", f"{KUEUE}:ClusterQueue",
         lambda p: p["spec"]["admissionChecksStrategy"]["admissionChecks"][0].update(onFlavors=["elsewhere"]))
    assert violations(res, "fleet-multikueue-only") == {("fleet-multikueue-only", "manager/gpu")}


def test_checks_are_resolved_on_the_queues_own_cluster():
    # A worker's ProvisioningRequest check of the same name as the manager's MultiKueue check is
    # another object on another cluster: the worker's queue keeps its check, the manager's its own.
    res = resources()
    edit(res, "us-east4/dws-prov", f"{KUEUE}:AdmissionCheck", lambda p: p["metadata"].update(name="dws-gpu"))
    edit(res, "us-east4/gpu", f"{KUEUE}:ClusterQueue",
         lambda p: p["spec"]["admissionChecksStrategy"]["admissionChecks"][0].update(name="dws-gpu"))
    assert violations(res, "fleet-multikueue-only") == set()
