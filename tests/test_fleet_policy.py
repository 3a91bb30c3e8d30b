"""The policy pack over a fleet: the MultiKueue manager's access to a worker passes
rbac-no-queue-bypass and probe-namespaced-rbac as it is (reads cluster-wide, writes only in the
team namespaces whose queue the worker serves) and fails both as soon as it holds more; a manager queue
admits through MultiKueue alone (fleet-multikueue-only). Every check runs over the fleet's
recording (tests/test_fleet_deploy.py), edited the way a careless change would register it."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable

import pytest
import yaml

from gke_ai_batch.domain import multikueue_worker as wk
from gke_ai_batch.policy import rules
from test_fleet_deploy import by_name, recording

RBAC = "kubernetes:rbac.authorization.k8s.io/v1"
SECRET = "kubernetes:core/v1:Secret"
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
        for urn in (f.urn for f in rules.findings(rule, res))
    }


def edit(res: list[rules.Resource], name: str, type_: str, change: Callable[[dict], None]) -> None:
    [r] = [r for r in res if r.name == name and r.type == type_]
    change(r.props)


def add(res: list[rules.Resource], like: str, type_: str, name: str, props: dict) -> None:
    [r] = [r for r in res if r.name == like and r.type == type_]
    res.append(r._replace(urn=r.urn[: r.urn.rindex("::")] + f"::{name}", type=type_, name=name, props=props))


def test_the_fleet_breaks_no_rule_but_the_sample_configs_advisory():
    # The sample config (tests/test_fleet_config.py) leaves cluster.privateNodes off on every
    # worker (the manager needs it for its Cloud NAT), an advisory: nothing else fires, the
    # manager's access to each worker included.
    found = violations(resources())
    assert found == {("gke-private-nodes", f"{c}/cluster") for c in ("us-east4", "europe-west4", "us-east5")}
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


# -- the fleet rules: names agree, teams everywhere, regions apart, kubeconfigs secret --

FLEET_RULES = ("fleet-multikueue-names", "fleet-teams-everywhere", "fleet-worker-regions", "fleet-kubeconfig-secret",
               "fleet-dispatch-targets")


def test_the_fleet_rules_are_mandatory_and_quiet_on_the_fleet():
    assert {rules.by_name(r).enforcement for r in FLEET_RULES} == {"mandatory"}
    assert violations(resources(), *FLEET_RULES) == set()


def _drop(res: list[rules.Resource], name: str, kind: str) -> None:
    # The Kubernetes object, not the component of the same kind and name that holds it.
    res.remove(next(r for r in res if r.name == name and r.type.startswith("kubernetes:") and r.type.endswith(kind)))


NAME_BREAKS = {
    "check names another config": (
        lambda res: edit(res, "manager/dws-gpu", f"{KUEUE}:AdmissionCheck",
                         lambda p: p["spec"]["parameters"].update(name="dws-typo")),
        ("fleet-multikueue-names", "manager/dws-gpu"), "name no MultiKueueConfig"),
    "check names the wrong kind": (
        lambda res: edit(res, "manager/dws-gpu", f"{KUEUE}:AdmissionCheck",
                         lambda p: p["spec"]["parameters"].update(kind="ProvisioningRequestConfig")),
        ("fleet-multikueue-names", "manager/dws-gpu"), "BadConfig"),
    "config lists a cluster that is not declared": (
        lambda res: edit(res, "manager/dws-gpu", f"{KUEUE}:MultiKueueConfig",
                         lambda p: p["spec"]["clusters"].append("us-central2")),
        ("fleet-multikueue-names", "manager/dws-gpu"), "lists cluster us-central2"),
    "cluster's Secret is missing": (
        lambda res: _drop(res, "manager/kueue-system/multikueue-europe-west4", ":Secret"),
        ("fleet-multikueue-names", "manager/europe-west4"), "kueue-system/multikueue-europe-west4 is not declared"),
    "cluster names another Secret": (
        lambda res: edit(res, "manager/us-east5", f"{KUEUE}:MultiKueueCluster",
                         lambda p: p["spec"]["clusterSource"]["kubeConfig"].update(location="multikueue-us-east4x")),
        ("fleet-multikueue-names", "manager/us-east5"), "multikueue-us-east4x is not declared"),
    "kubeconfig in a file": (
        lambda res: edit(res, "manager/us-east5", f"{KUEUE}:MultiKueueCluster",
                         lambda p: p["spec"]["clusterSource"]["kubeConfig"].update(locationType="Path")),
        ("fleet-multikueue-names", "manager/us-east5"), "a Path location"),
    "Secret under another key": (
        lambda res: edit(res, "manager/kueue-system/multikueue-us-east4", SECRET,
                         lambda p: p.update(data={"config": "[secret]"})),
        ("fleet-multikueue-names", "manager/kueue-system/multikueue-us-east4"), "no key 'kubeconfig'"),
    "cluster of no worker": (
        lambda res: edit(res, "manager/us-east5", f"{KUEUE}:MultiKueueCluster",
                         lambda p: p["metadata"].update(name="elsewhere")),
        ("fleet-multikueue-names", "manager/us-east5"), "MultiKueueCluster elsewhere is no worker of this stack"),
}


@pytest.mark.parametrize("case", NAME_BREAKS)
def test_multikueue_objects_that_do_not_name_one_another_fire(case):
    brk, expected, words = NAME_BREAKS[case]
    res = resources()
    brk(res)
    found = violations(res, "fleet-multikueue-names")
    assert expected in found, found
    rule = rules.by_name("fleet-multikueue-names")
    assert any(words in m for _, m in rules.run(rule, res)), [m for _, m in rules.run(rule, res)]


TEAM_BREAKS = {
    "worker without the namespace": (
        lambda res: _drop(res, "us-east5/llm", ":Namespace"), "manager/llm", "namespace llm is not on worker us-east5"),
    "worker without the LocalQueue": (
        lambda res: _drop(res, "us-east4/research/tpu", ":LocalQueue"), "manager/research/tpu",
        "LocalQueue research/tpu is not on worker us-east4"),
    "worker's LocalQueue points elsewhere": (
        lambda res: edit(res, "europe-west4/llm/gpu", f"{KUEUE}:LocalQueue", lambda p: p["spec"].update(clusterQueue="tpu")),
        "manager/llm/gpu", "at tpu on worker europe-west4"),
    "worker without the ClusterQueue": (
        lambda res: _drop(res, "us-east4/tpu", ":ClusterQueue"), "manager/research/tpu",
        "ClusterQueue tpu, which LocalQueue research/tpu points at, is not on worker us-east4"),
}


@pytest.mark.parametrize("case", TEAM_BREAKS)
def test_a_worker_missing_a_team_or_its_queue_fires(case):
    # Each of these is on every worker today, the idle ones included (us-east4 has no TPU and
    # still has research's namespace and queue).
    brk, blamed, words = TEAM_BREAKS[case]
    res = resources()
    brk(res)
    assert violations(res, "fleet-teams-everywhere") == {("fleet-teams-everywhere", blamed)}
    [(_, message)] = rules.run(rules.by_name("fleet-teams-everywhere"), res)
    assert words in message


@pytest.mark.parametrize("project, fires", [(None, True), ("acme-ml-eu", False)])
def test_two_workers_in_one_region_of_one_project_fire(project, fires):
    res = resources()

    def move(p):
        p["location"] = "us-east4-b"  # a zone of the first worker's region
        if project:
            p["project"] = project

    edit(res, "europe-west4/cluster", "gcp:container/cluster:Cluster", move)
    expected = {("fleet-worker-regions", "europe-west4/cluster")} if fires else set()
    assert violations(res, "fleet-worker-regions") == expected


TOKEN_KUBECONFIG = (
    "apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://10.0.0.2\n"
    "users:\n- name: w\n  user:\n    token: eyJhbGciOiJSUzI1NiJ9.payload.signature\n"
)
EXEC_KUBECONFIG = (
    "apiVersion: v1\nkind: Config\nusers:\n- name: w\n  user:\n    exec:\n      command: gke-gcloud-auth-plugin\n"
)


@pytest.mark.parametrize("value, fires", [
    (TOKEN_KUBECONFIG, True),
    (base64.b64encode(TOKEN_KUBECONFIG.encode()).decode(), True),
    (json.dumps(yaml.safe_load(TOKEN_KUBECONFIG)), True),
    (EXEC_KUBECONFIG, False),  # no credential in it: the provider's own kubeconfig is of this kind
    ("[secret]", False),
])
def test_a_kubeconfig_with_a_credential_outside_a_secrets_data_fires(value, fires):
    res = resources()
    [like] = [r for r in res if r.name == "manager/llm" and r.type.endswith(":Namespace")]
    leak = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "leak", "namespace": "kueue-system"},
            "data": {"kubeconfig": value}}
    res.append(like._replace(urn=like.urn.replace("Namespace::manager/llm", "ConfigMap::manager/kueue-system/leak"),
                             type="kubernetes:core/v1:ConfigMap", name="manager/kueue-system/leak", props=leak))
    expected = {("fleet-kubeconfig-secret", "manager/kueue-system/leak")} if fires else set()
    assert violations(res, "fleet-kubeconfig-secret") == expected


def test_a_kubeconfig_in_a_secrets_data_passes_and_in_its_annotations_fires():
    res = resources()
    edit(res, "manager/kueue-system/multikueue-us-east4", SECRET,
         lambda p: p.update(stringData={"kubeconfig": TOKEN_KUBECONFIG}))  # a Pulumi secret whatever the program does
    assert violations(res, "fleet-kubeconfig-secret") == set()
    edit(res, "manager/kueue-system/multikueue-us-east4", SECRET,
         lambda p: p["metadata"].setdefault("annotations", {}).update(backup=TOKEN_KUBECONFIG))
    assert violations(res, "fleet-kubeconfig-secret") == {
        ("fleet-kubeconfig-secret", "manager/kueue-system/multikueue-us-east4")}


# -- single-cluster rules judge each cluster on its own -------------------------------------

def _raise_gpu_quota(amount: int) -> Callable[[dict], None]:
    def edit_quota(p: dict) -> None:
        for group in p["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for r in flavor["resources"]:
                    if r["name"] == "nvidia.com/gpu":
                        r["nominalQuota"] = amount
    return edit_quota


PER_CLUSTER = {
    # The manager's Namespace still carries research's level: it must not vouch for us-east5's.
    "namespace level": (lambda res: _drop(res, "us-east5/research", ":Namespace"),
                        "namespace-pod-security", None, "cluster us-east5: team namespace research"),
    # The workers' LocalQueues must not make up for the manager's, where the sample is submitted.
    "known queue": (lambda res: _drop(res, "manager/llm/gpu", ":LocalQueue"),
                    "workload-known-queue", "manager/llm/smoke-h100", "names LocalQueue 'gpu'"),
    "known priority": (lambda res: _drop(res, "manager/low", ":WorkloadPriorityClass"),
                       "workload-known-priority", "manager/llm/smoke-h100", "priority-class=low"),
    # us-east4 lost its flavor: the manager's (and europe-west4's) of that name are elsewhere.
    "flavor exists": (lambda res: _drop(res, "us-east4/nvidia-h100-80gb-queued", ":ResourceFlavor"),
                      "kueue-flavors-exist", "us-east4/gpu", "no ResourceFlavor"),
    # 40 fits the fleet's 64 H100 but not us-east4's own 32.
    "worker quota": (lambda res: edit(res, "us-east4/gpu", f"{KUEUE}:ClusterQueue", _raise_gpu_quota(40)),
                     "kueue-quota-within-capacity", "us-east4/gpu", "exceeds the 32"),
    # The manager's quota is its workers' pools added up: 65 is one more than they hold.
    "manager quota": (lambda res: edit(res, "manager/gpu", f"{KUEUE}:ClusterQueue", _raise_gpu_quota(65)),
                      "kueue-quota-within-capacity", "manager/gpu", "exceeds the 64"),
}


@pytest.mark.parametrize("case", PER_CLUSTER)
def test_single_cluster_rules_judge_each_cluster_alone(case):
    brk, rule_name, blamed, words = PER_CLUSTER[case]
    res = resources()
    assert not list(rules.run(rules.by_name(rule_name), res))
    brk(res)
    found = list(rules.run(rules.by_name(rule_name), res))
    urns = {r.urn: r.name for r in res}
    assert [urns.get(urn) for urn, _ in found] == [blamed], found
    assert words in found[0][1], found[0][1]


# -- red-team findings: what a careless edit of a rendered fleet must not get past -----------

def test_a_manager_queue_without_its_multikueue_check_fires():
    # The manager would admit the jobs and run them itself, on no nodes.
    res = resources()
    edit(res, "manager/gpu", f"{KUEUE}:ClusterQueue", lambda p: p["spec"].pop("admissionChecksStrategy"))
    assert ("fleet-multikueue-only", "manager/gpu") in violations(res, "fleet-multikueue-only")


def test_a_cluster_using_another_workers_secret_fires():
    res = resources()
    edit(res, "manager/us-east4", f"{KUEUE}:MultiKueueCluster",
         lambda p: p["spec"]["clusterSource"]["kubeConfig"].update(location="multikueue-us-east5"))
    assert violations(res, "fleet-multikueue-names") == {("fleet-multikueue-names", "manager/us-east4")}


def test_the_managers_identity_reading_secrets_fires():
    # Reads only, yet the manager's token would read every worker Secret, tokens included.
    res = resources()
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}
    edit(res, f"us-east4/{wk.READ_ROLE}", f"{RBAC}:ClusterRole", lambda p: p["rules"].append(secrets))
    found = list(rules.run(rules.by_name("rbac-no-queue-bypass"), res))
    assert len(found) == 1 and "get/list/watch core secrets" in found[0][1], found


DISPATCH_BREAKS = {
    "no write binding": (lambda res: _drop(res, f"us-east4/llm/{wk.WRITE_BINDING}", ":RoleBinding"),
                         "has no RoleBinding to multikueue-sa-write in namespace llm"),
    "selector leaves the team out": (
        lambda res: edit(res, "us-east4/gpu", f"{KUEUE}:ClusterQueue",
                         lambda p: p["spec"]["namespaceSelector"]["matchExpressions"][0].update(values=["research"])),
        "does not select namespace llm"),
    "an idle worker in the config": (
        lambda res: edit(res, "manager/dws-gpu", f"{KUEUE}:MultiKueueConfig", lambda p: p["spec"]["clusters"].append("us-east5")),
        "to worker us-east5, whose ClusterQueue gpu is idle"),
}


@pytest.mark.parametrize("case", DISPATCH_BREAKS)
def test_a_worker_that_cannot_take_a_queues_jobs_fires(case):
    brk, words = DISPATCH_BREAKS[case]
    res = resources()
    brk(res)
    found = list(rules.run(rules.by_name("fleet-dispatch-targets"), res))
    assert len(found) == 1 and words in found[0][1], found
    assert {r.urn: r.name for r in res}[found[0][0]] == "manager/dws-gpu"
