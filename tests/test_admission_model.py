"""The admission and placement model (gke_ai_batch/model), cross-checked on scenarios from
Kueue's own flavor-assigner tests (kubernetes-sigs/kueue v0.19.2
pkg/scheduler/flavorassigner/flavorassigner_test.go, TestAssignFlavors: the scenario is
restated here, each named after its upstream case) and on kube-scheduler placement rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gke_ai_batch.domain.findings import ERROR

from gke_ai_batch.model import (
    ClusterQueue, Flavor, NodeGroup, PodSet, Workload, World, judge, potential_available, simulate,
)
from gke_ai_batch.model.assigner import assign
from gke_ai_batch.model.outcome import WAIT, Mode

GI = 2**30
MI = 2**20


def flavor(name: str, labels: dict | None = None, taints=(), tolerations=()) -> Flavor:
    return Flavor(name, labels or {}, tuple(taints), tuple(tolerations))


FLAVORS = {
    f.name: f
    for f in (
        flavor("default"),
        flavor("one", {"type": "one"}),
        flavor("two", {"type": "two"}),
        flavor("tainted", taints=[{"key": "instance", "value": "spot", "effect": "NoSchedule"}]),
        flavor(
            "taint_and_toleration",
            taints=[{"key": "instance", "value": "spot", "effect": "NoSchedule"}],
            tolerations=[{"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}],
        ),
    )
}


def cq(name: str, *groups: list, cohort: str | None = None, when_can_borrow: str | None = None) -> ClusterQueue:
    """groups: [(flavor, {resource: nominal | (nominal, borrowingLimit, lendingLimit)}), ...] each."""
    resource_groups = []
    for g in groups:
        covered: list[str] = []
        flavors = []
        for fname, quotas in g:
            resources = []
            for r, q in quotas.items():
                if r not in covered:
                    covered.append(r)
                nominal, bl, ll = q if isinstance(q, tuple) else (q, None, None)
                item: dict[str, Any] = {"name": r, "nominalQuota": nominal}
                if bl is not None:
                    item["borrowingLimit"] = bl
                if ll is not None:
                    item["lendingLimit"] = ll
                resources.append(item)
            flavors.append({"name": fname, "resources": resources})
        resource_groups.append({"coveredResources": covered, "flavors": flavors})
    spec: dict[str, Any] = {"resourceGroups": resource_groups, "namespaceSelector": {}}
    if cohort:
        spec["cohortName"] = cohort
    if when_can_borrow:
        spec["flavorFungibility"] = {"whenCanBorrow": when_can_borrow, "whenCanPreempt": "TryNextFlavor"}
    return ClusterQueue.from_manifest({"metadata": {"name": name}, "spec": spec})


def pod(requests: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "resources": {"requests": requests}}], **spec}


def world(*queues: ClusterQueue, groups=(), **kw) -> World:
    return World(
        flavors=FLAVORS, queues={q.name: q for q in queues}, local_queues={("ns", "lq"): queues[0].name},
        namespaces={"ns": {}}, node_groups=tuple(groups), **kw,
    )


def one(requests, count=1, **spec) -> tuple[PodSet, ...]:
    return (PodSet("main", pod(requests, **spec), 1, count),)


# -- Kueue's TestAssignFlavors scenarios ---------------------------------------------------------


def test_single_flavor_fits():
    q = cq("cq", [("default", {"cpu": 1, "memory": "2Mi"})])
    a = assign(world(q), q, one({"cpu": "1", "memory": "1Mi"}))
    assert a.refusal is None and a.pod_sets[0].flavors == {"cpu": "default", "memory": "default"}


def test_single_flavor_fits_tainted_flavor_only_with_a_toleration():
    q = cq("cq", [("tainted", {"cpu": 4})])
    toleration = {"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    assert assign(world(q), q, one({"cpu": "1"}, tolerations=[toleration])).refusal is None
    error = assign(world(q), q, one({"cpu": "1"})).refusal.message
    assert "untolerated taint instance=spot:NoSchedule in flavor tainted" in error


def test_single_flavor_fits_tainted_flavor_with_the_flavors_toleration():
    q = cq("cq", [("taint_and_toleration", {"cpu": 4})])
    assert assign(world(q), q, one({"cpu": "1"})).pod_sets[0].flavors == {"cpu": "taint_and_toleration"}


def test_multiple_resources_in_a_group_doesnt_fit():
    q = cq("cq", [("one", {"cpu": 2, "memory": "1Gi"}), ("two", {"cpu": 4, "memory": "5Mi"})])
    error = assign(world(q), q, one({"cpu": "3", "memory": "10Mi"})).refusal.message
    assert "insufficient quota for cpu in flavor one: the workload needs 3, the queue can have at most 2" in error
    assert "insufficient quota for memory in flavor two: the workload needs 10Mi, the queue can have at most 5Mi" in error


def test_multiple_flavors_fits_while_skipping_tainted_flavor():
    q = cq("cq", [("tainted", {"cpu": 4}), ("two", {"cpu": 4})])
    a = assign(world(q), q, one({"cpu": "3"}))
    assert a.pod_sets[0].flavors == {"cpu": "two"}
    assert [x.flavor for x in a.pod_sets[0].attempts] == ["tainted"]


def test_multiple_flavors_fits_a_node_selector_ignoring_keys_no_flavor_has():
    q = cq("cq", [("one", {"cpu": 4}), ("two", {"cpu": 4})])
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "ignored2", "operator": "In", "values": ["bar"]}]}]}}}
    a = assign(world(q), q, one({"cpu": "1"}, nodeSelector={"type": "two", "ignored1": "foo"}, affinity=affinity))
    assert a.pod_sets[0].flavors == {"cpu": "two"}
    assert "flavor one doesn't match node affinity" in a.pod_sets[0].attempts[0].reason


def test_multiple_flavors_doesnt_fit_node_affinity():
    q = cq("cq", [("one", {"cpu": 4}), ("two", {"cpu": 4})])
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "type", "operator": "In", "values": ["three"]}]}]}}}
    error = assign(world(q), q, one({"cpu": "1"}, affinity=affinity)).refusal.message
    assert "flavor one doesn't match node affinity" in error and "flavor two doesn't match node affinity" in error


def test_multiple_specs_fits_borrowing():
    q = cq("cq", [("default", {"cpu": (2, 98, None), "memory": "2Gi"})], cohort="test-cohort")
    other = cq("secondary", [("default", {"cpu": 198, "memory": "198Gi"})], cohort="test-cohort")
    sets = (PodSet("driver", pod({"cpu": "4", "memory": "1Gi"}), 1, 1), PodSet("worker", pod({"cpu": "6", "memory": "4Gi"}), 1, 1))
    a = assign(world(q, other), q, sets)
    assert a.refusal is None
    assert a.borrowed == {("default", "cpu"): 8000, ("default", "memory"): 3 * GI}  # 10 - 2 cores, 5Gi - 2Gi


def test_not_enough_space_to_borrow():
    # The secondary queue lends nothing (lendingLimit 0): the cohort holds no cpu of flavor one.
    q = cq("cq", [("one", {"cpu": 1})], cohort="test-cohort")
    other = cq("secondary", [("one", {"cpu": (10, None, 0)})], cohort="test-cohort")
    error = assign(world(q, other), q, one({"cpu": "2"})).refusal.message
    assert "insufficient quota for cpu in flavor one: the workload needs 2, the queue can have at most 1" in error


def test_resource_not_listed_in_cluster_queue():
    q = cq("cq", [("one", {"cpu": 4})])
    assert "resource example.com/gpu unavailable in ClusterQueue cq" in assign(world(q), q, one({"example.com/gpu": "2"})).refusal.message


def test_zero_resource_request_not_in_cluster_queue_should_succeed():
    q = cq("cq", [("default", {"cpu": 4})])
    assert assign(world(q), q, one({"cpu": "1", "example.com/gpu": "0"})).refusal is None


def test_num_pods_fit_and_dont_fit():
    q = cq("cq", [("default", {"cpu": 10, "pods": 3})])
    assert assign(world(q), q, one({"cpu": "1"}, count=3)).refusal is None
    assert "insufficient quota for pods" in assign(world(q), q, one({"cpu": "1"}, count=4)).refusal.message


def test_borrow_try_next_flavor_found_the_second_flavor():
    q = cq("cq", [("one", {"cpu": (10, 1, None)}), ("two", {"cpu": 10})], cohort="c", when_can_borrow="TryNextFlavor")
    other = cq("secondary", [("one", {"cpu": 1})], cohort="c")
    a = assign(world(q, other), q, one({"cpu": "9"}), used={("cq", "one", "cpu"): 2000})
    assert a.pod_sets[0].flavors == {"cpu": "two"} and a.borrowed == {}


def test_borrow_before_try_next_flavor_with_may_stop_search():
    q = cq("cq", [("one", {"cpu": (10, 1, None)}), ("two", {"cpu": 10})], cohort="c")
    other = cq("secondary", [("one", {"cpu": 1})], cohort="c")
    a = assign(world(q, other), q, one({"cpu": "9"}), used={("cq", "one", "cpu"): 2000})
    assert a.pod_sets[0].flavors == {"cpu": "one"} and a.borrowed == {("one", "cpu"): 1000}


def test_an_answer_is_an_ordered_mode_with_its_reasons_as_kueue_gives_it():
    # flavorassigner.go FlavorAssignmentMode: NoFit < Preempt < Fit; a workload's mode is its
    # worst pod set's (RepresentativeMode), and a pod set's Status carries the reasons.
    assert Mode.NO_FIT < Mode.PREEMPT < Mode.FIT
    q = cq("cq", [("default", {"cpu": 4})])
    fits = assign(world(q), q, one({"cpu": "2"}))
    assert (fits.mode, fits.refusal, fits.pod_sets[0].reasons) == (Mode.FIT, None, ())
    busy = assign(world(q), q, one({"cpu": "2"}), used={("cq", "default", "cpu"): 3000})
    [wait] = busy.pod_sets[0].reasons
    assert (busy.mode, busy.refusal, busy.pod_sets[0].flavors) == (Mode.PREEMPT, None, {"cpu": "default"})
    assert (wait.rule, wait.severity, wait.message) == ("quota", WAIT, "insufficient unused quota for cpu in flavor default")
    sets = (PodSet("small", pod({"cpu": "1"}), 1, 1), PodSet("big", pod({"cpu": "5"}), 1, 1))
    never = assign(world(q), q, sets)
    assert [p.mode for p in never.pod_sets] == [Mode.FIT, Mode.NO_FIT] and never.mode == Mode.NO_FIT
    assert (never.refusal.rule, never.refusal.severity) == ("quota", ERROR)
    with pytest.raises(dataclasses.FrozenInstanceError):
        never.pod_sets[1].mode = Mode.FIT  # type: ignore[misc]


# -- potential capacity (pkg/cache/scheduler/resource_node.go:potentialAvailable) ----------------


def test_potential_capacity_adds_what_the_cohort_lends_within_the_borrowing_limit():
    a = cq("a", [("default", {"cpu": (4, 2, None)})], cohort="c")
    b = cq("b", [("default", {"cpu": (10, None, 3)})], cohort="c")
    w = world(a, b)
    assert potential_available(w, a, "default", "cpu") == 6000  # 4 + min(2, 3 lent)
    assert potential_available(w, b, "default", "cpu") == 14000  # its 10 + a's 4
    assert potential_available(world(cq("alone", [("default", {"cpu": 4})])), cq("alone", [("default", {"cpu": 4})]), "default", "cpu") == 4000


# -- placement (kube-scheduler's filters) --------------------------------------------------------

TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}
TPU_TOLERATION = {"key": "google.com/tpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def slice_pool(name: str, hosts: int = 2, chips: int = 4) -> NodeGroup:
    return NodeGroup(name, {"cloud.google.com/gke-nodepool": name, "tpu": "v5e"}, (TPU_TAINT,),
                     {"cpu": 100_000, "memory": 180 * GI, "google.com/tpu": chips}, hosts, "ct5lp-hightpu-4t", "onDemand", hosts)


def tpu_world(pools: int, quota: int = 64) -> World:
    f = Flavor("tpu", {"tpu": "v5e"}, (), (TPU_TOLERATION,))
    q = cq("cq", [("tpu", {"google.com/tpu": quota, "cpu": 1000})])
    return World({"tpu": f}, {"cq": q}, {("ns", "lq"): "cq"}, {"ns": {}}, tuple(slice_pool(f"p-{i}") for i in range(pools)))


def jobset(replicas: int, pods: int, requests: dict | None = None, exclusive=True) -> Workload:
    spec = pod(requests or {"google.com/tpu": 4})
    return Workload("js", "JobSet", "ns", "lq", None, (PodSet("slice", spec, replicas, pods),),
                    "cloud.google.com/gke-nodepool" if exclusive else None)


def test_a_jobset_fits_as_many_slices_as_there_are_pools():
    assert judge(tpu_world(2), jobset(2, 2)).admissible


def test_exclusive_placement_needs_a_pool_per_replica():
    v = judge(tpu_world(2), jobset(3, 2))
    assert not v.admissible and v.refusal.rule == "placement"
    assert "each of its 3 replicas on a node pool of its own, and only 2 pools can hold a replica of 2 pods" in v.refusal.message


def test_multi_host_slice_takes_one_pod_per_host():
    v = judge(tpu_world(2), jobset(1, 1))
    assert not v.admissible
    assert "multi-host TPU slice of 2 hosts" in v.refusal.message and "use 2" in v.refusal.message


def test_a_pod_larger_than_its_node_is_never_placed():
    v = judge(tpu_world(2), jobset(1, 2, {"google.com/tpu": 4, "cpu": "200"}))
    assert not v.admissible
    assert "a pod requests 200 cpu, a ct5lp-hightpu-4t node has 100 allocatable" in v.refusal.message


def test_flavor_labels_reach_the_pod_and_select_the_pool():
    # Kueue injects the flavor's nodeLabels into the pod's nodeSelector: a pool without them is no home.
    w = tpu_world(1)
    bare = NodeGroup("bare", {"cloud.google.com/gke-nodepool": "bare"}, (TPU_TAINT,), {"google.com/tpu": 4, "cpu": 10**6},
                     2, "ct5lp-hightpu-4t", "onDemand", 2)
    w = World(w.flavors, w.queues, w.local_queues, w.namespaces, (bare,))
    v = judge(w, jobset(1, 2))
    assert not v.admissible and "bare: nodes lack tpu=v5e" in v.refusal.message


def test_quota_smaller_than_one_workload_is_never_admitted():
    v = judge(tpu_world(2, quota=4), jobset(1, 2))
    assert not v.admissible and v.refusal.rule == "quota"
    assert "the workload needs 8, the queue can have at most 4" in v.refusal.message


def test_namespace_outside_the_queue_selector_is_never_admitted():
    w = tpu_world(2)
    q = ClusterQueue.from_manifest({"metadata": {"name": "cq"}, "spec": {
        "namespaceSelector": {"matchLabels": {"team": "x"}},
        "resourceGroups": [{"coveredResources": ["google.com/tpu"], "flavors": [
            {"name": "tpu", "resources": [{"name": "google.com/tpu", "nominalQuota": 8}]}]}]}})
    w = World(w.flavors, {"cq": q}, w.local_queues, w.namespaces, w.node_groups)
    v = judge(w, jobset(1, 2))
    assert not v.admissible and "namespace ns doesn't match ClusterQueue cq's namespaceSelector" in v.refusal.message


def test_pods_beyond_the_pools_run_in_waves_but_queued_provisioning_is_all_or_nothing():
    # Kueue's PodsReady counts succeeded pods too (job_controller.go), so a Job may run in waves;
    # a ProvisioningRequest gets every pod's node or none.
    cpu_pool = NodeGroup("cpu", {"cloud.google.com/gke-nodepool": "cpu"}, (), {"cpu": 4000, "memory": 16 * GI}, 2, "e2-standard-4", "onDemand")
    q = cq("cq", [("default", {"cpu": 100})])
    job = Workload("j", "Job", "ns", "lq", None, (PodSet("main", pod({"cpu": "2"}), 1, 5),))
    v = judge(world(q, groups=[cpu_pool]), job)
    assert v.admissible and "pod set main runs in waves: at most 4 of its 5 pods at once" in [w.message for w in v.waits]
    queued = NodeGroup("dws", {"cloud.google.com/gke-nodepool": "dws"}, (), {"cpu": 4000, "memory": 16 * GI}, 2, "e2-standard-4", "queued")
    request = Workload("pr", "ProvisioningRequest", "ns", None, None, (PodSet("podset-0", pod({"cpu": "2"}), 1, 5),))
    v = judge(world(q, groups=[queued]), request)
    assert not v.admissible and "creates the nodes of all 5 pods at once or none" in v.refusal.message


def test_extended_resource_toleration_is_added_by_the_api_server():
    gpu_pool = NodeGroup("l4", {"cloud.google.com/gke-nodepool": "l4"}, ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},),
                         {"cpu": 7000, "memory": 28 * GI, "nvidia.com/gpu": 1}, 2, "g2-standard-8", "onDemand")
    q = cq("cq", [("default", {"cpu": 100, "nvidia.com/gpu": 2})])
    job = Workload("j", "Job", "ns", "lq", None, (PodSet("main", pod({"nvidia.com/gpu": 1}), 1, 1),))
    assert judge(world(q, groups=[gpu_pool]), job).admissible
    cpu_only = Workload("c", "Job", "ns", "lq", None, (PodSet("main", pod({"cpu": "1"}), 1, 1),))
    assert "taint nvidia.com/gpu=present:NoSchedule is not tolerated" in judge(world(q, groups=[gpu_pool]), cpu_only).refusal.message


def test_well_known_node_labels_the_model_does_not_enumerate_are_taken_as_met():
    pool = NodeGroup("cpu", {"cloud.google.com/gke-nodepool": "cpu"}, (), {"cpu": 4000, "memory": 16 * GI}, 2, "e2-standard-4", "onDemand")
    q = cq("cq", [("default", {"cpu": 100})])
    arch = Workload("a", "Job", "ns", "lq", None, (PodSet("main", pod({"cpu": "1"}, nodeSelector={"kubernetes.io/arch": "amd64"}), 1, 1),))
    assert judge(world(q, groups=[pool]), arch).admissible
    own = Workload("o", "Job", "ns", "lq", None, (PodSet("main", pod({"cpu": "1"}, nodeSelector={"disk": "ssd"}), 1, 1),))
    assert "cpu: nodes lack disk=ssd" in judge(world(q, groups=[pool]), own).refusal.message


def test_a_cpu_pod_on_a_multi_host_slice_is_not_held_to_one_pod_per_host():
    job = Workload("prep", "Job", "ns", "lq", None, (PodSet("main", pod({"cpu": "1"}, tolerations=[TPU_TOLERATION]), 1, 1),))
    assert judge(tpu_world(1), job).admissible


def test_kueue_ignores_jobs_in_kube_system():
    q = cq("cq", [("default", {"cpu": 100})])
    w = World(FLAVORS, {"cq": q}, {("kube-system", "lq"): "cq"}, {}, ())
    job = Workload("j", "Job", "kube-system", "lq", None, (PodSet("main", pod({"cpu": "1"}), 1, 1),))
    assert "Kueue does not manage jobs in kube-system" in judge(w, job).refusal.message


def test_side_by_side_simulation_admits_by_priority_then_order():
    w = tpu_world(2, quota=16)
    w = World(w.flavors, w.queues, w.local_queues, w.namespaces, w.node_groups, priorities={"high": 10, "low": 1})
    low = Workload("low", "JobSet", "ns", "lq", "low", (PodSet("slice", pod({"google.com/tpu": 4}), 1, 2),), "x")
    high = Workload("high", "JobSet", "ns", "lq", "high", (PodSet("slice", pod({"google.com/tpu": 4}), 1, 2),), "x")
    big = Workload("big", "JobSet", "ns", "lq", None, (PodSet("slice", pod({"google.com/tpu": 4}), 2, 2),), "x")
    at_once = simulate(w, [judge(w, x) for x in (low, high, big)])
    assert at_once["high"] is None and at_once["low"] is None
    assert at_once["big"].message.startswith("waits for quota: needs 16 google.com/tpu of tpu, 0 left")


@pytest.mark.parametrize("requests, expected", [
    ({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}, {"name": "b", "resources": {"limits": {"cpu": "500m"}}}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]}, {"cpu": 2000}),
    ({"containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi"}}}, {"name": "b", "resources": {"requests": {"memory": "512Mi"}}}]},
     {"memory": GI + 512 * MI}),
])
def test_pod_requests_sum_containers_max_init_and_take_limits_for_missing_requests(requests, expected):
    from gke_ai_batch.model.requests import pod_requests

    assert pod_requests(requests) == expected
