"""The fleet's plan (gke_ai_batch/plan/fleet.py): every cluster has every team and queue, each
worker's quota from its own capacity; the manager's flavors and quotas are the workers' added up, its queues admit
through MultiKueue alone, and every object validates against the upstream schemas."""

from __future__ import annotations

import copy

import yaml

from gke_ai_batch.config import load
from gke_ai_batch.plan.fleet import build_fleet_plan
from test_fleet_config import FLEET, STACK, h100, worker
from support import manifests as M


def plan(stack: dict | None = None, fleet: dict | None = None):
    return build_fleet_plan(load({**copy.deepcopy(stack or STACK), "fleet": copy.deepcopy(fleet or FLEET)}), "acme-ml")


def test_every_cluster_has_every_team_and_queue_with_quota_where_its_capacity_is():
    p = plan()
    assert [w.name for w in p.workers] == ["us-east4", "europe-west4", "us-east5"]
    every = [p.manager, *(w.plan for w in p.workers)]
    for cluster in every:
        assert [q.name for q in cluster.queues] == ["gpu", "tpu"]
        assert [(t.namespace, t.local_queue, t.cluster_queue) for t in cluster.teams] == [
            ("llm", "gpu", "gpu"), ("research", "tpu", "tpu")]
        assert [n["metadata"]["name"] for n in cluster.namespaces] == ["llm", "research"]
        assert sorted(n["metadata"]["namespace"] for n in cluster.network_policies) == ["llm", "research"]
    east4, _, east5 = p.workers
    # A worker with none of a queue's flavors keeps it idle: no resource groups, no quota, no check.
    gpu4, tpu4 = east4.plan.queues
    assert gpu4.quotas and "resourceGroups" in gpu4.manifest["spec"]
    assert tpu4.flavors == () and tpu4.quotas == {} and "resourceGroups" not in tpu4.manifest["spec"]
    assert tpu4.manifest["spec"]["namespaceSelector"]["matchExpressions"][0]["values"] == ["research"]
    assert [q.flavors != () for q in east5.plan.queues] == [False, True]
    # Each DWS worker keeps its own ProvisioningRequest check: capacity is requested where the job lands.
    assert gpu4.admission_checks and east4.plan.provisioning and not tpu4.admission_checks
    assert [m["kind"] for m in east4.rbac] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRole", "Secret"]
    # The manager writes only in the namespaces whose queue the worker serves, bound with the
    # namespace's own RBAC (registered once the namespace exists), and nowhere else.
    served = {"us-east4": {"llm"}, "europe-west4": {"llm"}, "us-east5": {"research"}}
    for w in p.workers:
        bindings = {ns: [m for m in docs if m["kind"] == "RoleBinding" and m["roleRef"]["name"] == "multikueue-sa-write"]
                    for ns, docs in w.plan.team_rbac.items()}
        assert {ns for ns, b in bindings.items() if b} == served[w.name], w.name


def test_the_managers_quota_is_the_sum_of_its_workers():
    p = plan()
    gpu = {q.name: q for q in p.manager.queues}["gpu"]
    per_worker = [w.plan.queues[0].quotas["nvidia-h100-80gb-queued"]["nvidia.com/gpu"] for w in p.workers[:2]]
    assert per_worker == [32, 32]  # 4 nodes x 8 H100 each
    assert gpu.quotas["nvidia-h100-80gb-queued"]["nvidia.com/gpu"] == 64
    assert not p.manager.pools and not p.manager.provisioning
    [flavor] = [f for f in p.manager.flavors if f.name == "nvidia-h100-80gb-queued"]
    assert flavor.capacity["nvidia.com/gpu"] == 64 and flavor.pools == ()


def test_manager_queues_admit_through_multikueue_alone():
    p = plan()
    # Each queue dispatches only to the workers that mirror it: gpu to the two H100 workers,
    # tpu to the v6e one (a copy on a worker without the queue could never be admitted).
    assert {q.name: q.manifest["spec"]["admissionChecksStrategy"] for q in p.manager.queues} == {
        "gpu": {"admissionChecks": [{"name": "dws-gpu"}]},
        "tpu": {"admissionChecks": [{"name": "dws-tpu"}]},
    }
    configs = {m["metadata"]["name"]: m["spec"]["clusters"] for m in p.multikueue if m["kind"] == "MultiKueueConfig"}
    assert configs == {"dws-gpu": ["us-east4", "europe-west4"], "dws-tpu": ["us-east5"]}
    assert p.problems() == []
    conf = yaml.safe_load(p.manager.kueue_values["managerConfig"]["controllerManagerConfigYaml"])
    assert conf["multiKueue"]["dispatcherName"] == "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
    kinds = [m["kind"] for m in p.multikueue]
    assert kinds.count("MultiKueueCluster") == 3 and "MultiKueueConfig" in kinds and "AdmissionCheck" in kinds


def test_a_manager_queue_with_a_provisioning_check_too_is_refused():
    p = plan()
    q = p.manager.queues[0]
    q.manifest["spec"]["admissionChecksStrategy"]["admissionChecks"].append({"name": "dws-prov"})
    checks = [*p.multikueue, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
                              "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"}}]
    p2 = type(p)(p.manager, p.workers, checks)
    assert any("ProvisioningRequest" in m or "provisioning" in m.lower() for m in (f.message for f in p2.problems()))


def cluster_objects(p) -> list[dict]:
    """The Kueue and namespace objects one cluster's plan declares."""
    docs = [f.manifest() for f in p.flavors] + [q.manifest for q in p.queues] + list(p.provisioning)
    docs += list(p.namespaces) + list(p.network_policies) + [t.manifest for t in p.teams]
    docs += [m for pr in p.priorities for m in (pr.priority_class, pr.workload_priority_class)]
    docs += [m for ms in p.team_rbac.values() for m in ms]
    return docs


def test_every_object_of_every_cluster_is_valid_and_refers_to_its_own_cluster():
    # Each cluster on its own: a manager queue's check and a worker's LocalQueue's ClusterQueue
    # must exist on that cluster, not somewhere in the fleet.
    p = plan()
    assert M.problems(cluster_objects(p.manager) + p.multikueue) == []
    for w in p.workers:
        assert M.problems(cluster_objects(w.plan) + w.rbac) == [], w.name


def test_flavors_of_one_name_must_mean_the_same_nodes():
    fleet = copy.deepcopy(FLEET)
    # Declared on one worker with fewer labels than the derived flavor of that name elsewhere.
    fleet["workers"][1]["flavors"] = [{"name": "nvidia-h100-80gb-queued", "pools": ["h100-dws"],
                                       "nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}}]
    messages = [f.message for f in plan(fleet=fleet).problems()]
    assert any("means other nodes on worker europe-west4" in m for m in messages), messages


def test_queues_every_worker_mirrors_share_the_fleets_check():
    fleet = copy.deepcopy(FLEET)
    fleet["workers"] = fleet["workers"][:2]  # both H100 workers
    stack = copy.deepcopy(STACK)
    stack["clusterQueues"] = stack["clusterQueues"][:1]
    stack["teams"] = stack["teams"][:1]
    p = plan(stack=stack, fleet=fleet)
    assert p.manager.queues[0].manifest["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws"}]}
    assert [m["spec"]["clusters"] for m in p.multikueue if m["kind"] == "MultiKueueConfig"] == [["us-east4", "europe-west4"]]


GPU_JOB = {"kind": "job", "name": "smoke-h100", "team": "llm", "pool": "h100-dws", "image": "perl:5.40",
           "command": ["nvidia-smi"], "priority": "high"}


def with_workloads(*workloads: dict) -> dict:
    stack = copy.deepcopy(STACK)
    stack["workloads"] = [copy.deepcopy(w) for w in workloads]
    return stack


def test_a_sample_is_submitted_on_the_manager_and_could_land_on_each_worker_of_its_queue():
    p = plan(stack=with_workloads(GPU_JOB))
    assert [w.name for w in p.manager.workloads] == ["smoke-h100"]
    assert all(not w.plan.workloads for w in p.workers)  # workers get MultiKueue's copies only
    assert p.landing == {"smoke-h100": {"us-east4": None, "europe-west4": None}}
    assert p.problems() == []
    [job] = p.manager.workloads[0].manifests
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "gpu"


def test_a_sample_no_worker_could_ever_run_is_refused_with_each_workers_reason():
    from test_fleet_config import problems

    # 16 GPUs in one pod: no worker's 8-GPU node fits it (each worker's own pool checks).
    found = problems(stack=with_workloads({**GPU_JOB, "resources": {"nvidia.com/gpu": 16}}))
    assert found["gke-ai-batch:workloads[0]"] == (
        "no worker could run it: worker us-east4: 16 GPUs per pod never fit a node with 8; "
        "worker europe-west4: 16 GPUs per pod never fit a node with 8"
    )
    # A quota smaller than the pod on every worker: Kueue's admission, per worker's queue.
    stack = with_workloads(GPU_JOB)
    stack["clusterQueues"][0]["flavors"] = [{"name": "nvidia-h100-80gb-queued", "quotas": {"nvidia.com/gpu": 4}}]
    p = plan(stack=stack)
    assert set(p.landing["smoke-h100"]) == {"us-east4", "europe-west4"}
    assert all(reason for reason in p.landing["smoke-h100"].values())
    [finding] = p.problems()
    path, message = finding.path, finding.message
    assert finding.rule == "config"
    assert path == "gke-ai-batch:workloads[0]" and message.startswith("no worker could ever run it: worker us-east4:")


def test_a_sample_whose_pool_no_worker_has_is_refused():
    from test_fleet_config import problems

    found = problems(stack=with_workloads({**GPU_JOB, "pool": "a100"}))
    assert "MultiKueue could dispatch this workload nowhere" in found["gke-ai-batch:workloads[0].pool"]
