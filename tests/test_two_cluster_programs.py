"""A consumer's check of library programs on two clusters: each program as a platform engineer
would write it (two GkeClusters; a GkeCluster beside an ExistingCluster; an existing Standard
cluster beside an existing Autopilot one; the same team, queue and flavor names on both; RBAC
of one name on both; a MultiKueue manager and its worker), rendered as `synth --program` renders
it, exits as it should: 0, or a refusal by the right rule naming the right cluster. Each cluster
is judged alone (gke_ai_batch/model/clusters.py), and the report's tables say whose each row is."""

from __future__ import annotations

import json

import pytest
from gke_ai_batch.synth import EXIT_OK, EXIT_POLICY_VIOLATION

from support.programs import render_program

# What every program below shares: a Kueue platform on a cluster (flavor, queue and team of the
# same names whichever cluster), and a JobSet or Job in its queue.
PRELUDE = '''
import pulumi
import pulumi_kubernetes as k8s
from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster
from gke_ai_batch.components.nodepools import GpuPool, TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor, Team

def on(cluster, **more):
    return pulumi.ResourceOptions(provider=cluster.provider, **more)

def platform(prefix, cluster, flavor, quotas=None):
    ResourceFlavor(f"{prefix}-flavor", flavor, opts=on(cluster))
    ClusterQueue(f"{prefix}-cq", {"queue_name": "research", "flavors": [{**flavor, **({"quotas": quotas} if quotas else {})}],
                                  "namespace_selector": {}}, opts=on(cluster))
    Team(f"{prefix}-team", {"namespace": "research", "local_queues": [{"name": "research", "cluster_queue": "research"}],
                            "pod_security": "privileged"}, opts=on(cluster))

def job(prefix, cluster, limits, selector=None, requests=None):
    pod = {"restartPolicy": "Never", "nodeSelector": selector or {},
           "containers": [{"name": "t", "image": "python:3.12",
                           "resources": {"limits": limits, **({"requests": requests} if requests else {})}}]}
    return k8s.batch.v1.Job(f"{prefix}/train", metadata={"name": "train", "namespace": "research",
                                                           "labels": {"kueue.x-k8s.io/queue-name": "research"}},
                            spec={"template": {"spec": pod}}, opts=on(cluster))

def tpu_selector(flavor):
    return {k: v for k, v in flavor["node_labels"].items() if k.startswith("cloud.google.com/gke-tpu")}

def existing(name, location, mode, **more):
    return ExistingCluster(name, {"name": name, "location": location, "project": "acme-ml", "mode": mode,
        "version": "1.35.7-gke.1222000", "endpoint": f"gke-0123456789abcdef-123456789012.{location}.gke.goog",
        "node_service_account": f"{name}-nodes@acme-ml.iam.gserviceaccount.com", **more})
'''

TPU_GKE = '''
tpu_cluster = GkeCluster("tpu", {"name": "ml-tpu", "location": "us-east5", "project": "acme-ml",
                                 "node_locations": ["us-east5-b"], "private_nodes": False})
tpu = TpuSlices("v6e", {"cluster": tpu_cluster.ref(), "version": "v6e", "topology": "2x2"})
platform("tpu", tpu_cluster, tpu.flavor)
'''

GPU_EXISTING = '''
gpu_cluster = existing("ml-gpu", "us-central1", "standard", node_locations=["us-central1-a"])
gpu = GpuPool("h100", {"cluster": gpu_cluster.ref(), "gpu": {"type": "nvidia-h100-80gb", "count": 8},
                       "machine_type": "a3-highgpu-8g", "max_nodes": 2})
platform("gpu", gpu_cluster, gpu.flavor)
'''

AUTOPILOT = '''
auto = existing("ml-auto", "us-central1", "autopilot")
t4 = {"name": "t4", "node_labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}}
platform("auto", auto, t4, {"cpu": 8, "memory": "32Gi", "nvidia.com/gpu": 4})
job("auto", auto, {"nvidia.com/gpu": "1"}, {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"},
    {"cpu": "1", "memory": "1Gi"})
'''

STANDARD_TPU = '''
std = existing("ml-std", "us-east5", "standard", node_locations=["us-east5-b"])
if STD_POOL:
    v5e = TpuSlices("v5e", {"cluster": std.ref(), "version": "v5e", "topology": "2x2"}).flavor
    platform("std", std, v5e)
else:  # the cluster's TPU pools are someone else's: a flavor and quota as written by hand
    labels = {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x2"}
    v5e = {"name": "v5e", "node_labels": labels}
    platform("std", std, v5e, {"google.com/tpu": 4})
job("std", std, {"google.com/tpu": "4"}, tpu_selector(v5e))
'''

# RBAC of one name on both clusters: a Role `ops` and its binding in namespace research. On the
# TPU cluster it only reads; on the GPU cluster it creates Pods, outside Kueue's queues.
RBAC = '''
def ops(prefix, cluster, verbs):
    role = k8s.rbac.v1.Role(f"{prefix}-ops", metadata={"name": "ops", "namespace": "research"},
        rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": verbs}], opts=on(cluster))
    k8s.rbac.v1.RoleBinding(f"{prefix}-ops-binding", metadata={"name": "ops", "namespace": "research"},
        role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ops"},
        subjects=[{"kind": "Group", "name": "ops@acme.example", "apiGroup": "rbac.authorization.k8s.io"}],
        opts=on(cluster, depends_on=[role]))

ops("gpu", gpu_cluster, GPU_VERBS)
ops("tpu", tpu_cluster, ["get", "list", "watch"])
'''

# A MultiKueue manager and its one worker, each a GkeCluster; the worker is called "east" in the
# fleet, and its cluster ml-east: the MultiKueueCluster reaches it through the kubeconfig the
# worker's MultiKueueWorker hands the manager.
MULTIKUEUE = '''
from gke_ai_batch.components.batch import KueueInstall
from gke_ai_batch.components.multikueue import MultiKueueManager, MultiKueueWorker

east = GkeCluster("east", {"name": "ml-east", "location": "us-east5", "project": "acme-ml",
                           "node_locations": ["us-east5-b"], "private_nodes": False})
hub = GkeCluster("hub", {"name": "ml-hub", "location": "us-central1", "project": "acme-ml",
                         "node_locations": ["us-central1-a"], "private_nodes": False})
east_kueue = KueueInstall("east-kueue", {}, opts=on(east))
hub_kueue = KueueInstall("hub-kueue", {"multi_kueue": {}}, opts=on(hub))
pool = TpuSlices("v6e", {"cluster": east.ref(), "version": "v6e", "topology": "2x2"})
flavor = ResourceFlavor("east-flavor", pool.flavor, opts=on(east, depends_on=[east_kueue]))
ClusterQueue("east-cq", {"queue_name": "research", "flavors": [pool.flavor], "namespace_selector": {}},
             opts=on(east, depends_on=[flavor]))
team = Team("east-team", {"namespace": "research", "local_queues": WORKER_QUEUES}, opts=on(east, depends_on=[east_kueue]))
worker = MultiKueueWorker("east", {"namespaces": ["research"], "frameworks": ["batch/job"],
                                   "endpoint": east.endpoint, "ca_certificate": east.cluster_ca_certificate},
                          opts=on(east, depends_on=[team]))
manager = MultiKueueManager("fleet", {"workers": [{"name": "east", "kubeconfig": worker.kubeconfig}],
                                      "admission_check": "multikueue"},
                            opts=on(hub, depends_on=[hub_kueue]))
hub_flavor = ResourceFlavor("hub-flavor", pool.flavor, opts=on(hub, depends_on=[hub_kueue]))
ClusterQueue("hub-cq", {"queue_name": "research", "namespace_selector": {},
                        "flavors": [{**pool.flavor, "quotas": {"google.com/tpu": 4}}],
                        "admission_checks": ["multikueue"]}, opts=on(hub, depends_on=[manager, hub_flavor]))
Team("hub-team", {"namespace": "research", "local_queues": [{"name": "research", "cluster_queue": "research"}]},
     opts=on(hub, depends_on=[hub_kueue]))
'''


def _render(tmp_path, *parts: str, **names):
    return render_program(tmp_path, PRELUDE + "".join(parts), **names)


def _refused(result, rule: str) -> list[dict]:
    assert result.exit_code == EXIT_POLICY_VIOLATION, (result.exit_code, result.error, result.violations)
    found = [v for v in result.violations if v["policy"] == rule]
    assert found, [v["policy"] for v in result.violations]
    assert not [v for v in result.violations if v["enforcement"] == "mandatory" and v["policy"] != rule], result.violations
    return found


def _mandatory(result) -> list[str]:
    return [f"{v['policy']}: {v['message']}" for v in result.violations if v["enforcement"] == "mandatory"]


@pytest.fixture(scope="module")
def gke_and_existing(tmp_path_factory):
    # A GkeCluster for TPUs beside an existing Standard cluster this program adds an H100 pool to:
    # the same flavor-less names (queue and team research, a Job train) on each.
    jobs = 'job("tpu", tpu_cluster, {"google.com/tpu": "4"}, tpu_selector(tpu.flavor))\njob("gpu", gpu_cluster, {"nvidia.com/gpu": "8"})\n'
    return _render(tmp_path_factory.mktemp("mixed"), TPU_GKE, GPU_EXISTING, jobs)


def test_a_gke_cluster_beside_an_existing_one_renders_each_judged_alone(gke_and_existing):
    result, files = gke_and_existing
    assert result.exit_code == EXIT_OK, _mandatory(result)
    workloads = json.loads(files["admission.json"])["workloads"]
    assert {k: v["admissible"] for k, v in workloads.items()} == {"ml-tpu/train": True, "ml-gpu/train": True}
    assert {n for n in files if n.startswith("manifests/")} == {"manifests/ml-tpu.yaml", "manifests/ml-gpu.yaml"}
    report = files["report.md"]
    assert "| `ml-tpu` | `research` |" in report and "| `ml-gpu` | `research` |" in report, report
    assert "| `ml-gpu` | `h100` |" in report and "| `ml-tpu` | `system` |" in report, report


def test_a_job_asking_the_gpu_cluster_for_the_tpu_clusters_chips_is_refused_naming_it(tmp_path):
    jobs = 'job("gpu", gpu_cluster, {"google.com/tpu": "4"}, tpu_selector(tpu.flavor))\n'
    result, _ = _render(tmp_path, TPU_GKE, GPU_EXISTING, jobs)
    [found] = _refused(result, "kueue-admissible")
    assert found["urn"].endswith("::gpu/train")
    assert found["message"].startswith("cluster ml-gpu: "), found["message"]


def test_an_existing_standard_cluster_beside_an_autopilot_one_is_each_judged_in_its_mode(tmp_path):
    result, files = _render(tmp_path, STANDARD_TPU, AUTOPILOT, STD_POOL=True)
    assert result.exit_code == EXIT_OK, _mandatory(result)
    queues = json.loads(files["admission.json"])["queues"]
    assert set(queues) == {"ml-std/research", "ml-auto/research"}
    assert "Autopilot creates a node for each pod" in files["report.md"]


def test_the_standard_cluster_without_pools_is_refused_and_the_autopilot_one_is_not(tmp_path):
    # The same queues; only the Standard cluster's pool is gone. Judged as one world, the
    # Autopilot cluster was Standard too (no node pools), or the Standard one borrowed its pools.
    result, _ = _render(tmp_path, STANDARD_TPU, AUTOPILOT, STD_POOL=False)
    found = _refused(result, "kueue-admissible")
    assert all(v["message"].startswith("cluster ml-std: ") for v in found), found
    assert any("the cluster has no node pools" in v["message"] for v in found), found


def test_rbac_of_one_name_on_both_clusters_is_judged_on_each(tmp_path):
    # Judged by name, the TPU cluster's read-only Role `ops` (registered last) stood for both.
    result, _ = _render(tmp_path, TPU_GKE, GPU_EXISTING, RBAC, GPU_VERBS=["get", "create"])
    [found] = _refused(result, "rbac-no-queue-bypass")
    assert found["urn"].endswith("::gpu-ops-binding"), found
    assert found["message"].startswith("cluster ml-gpu: "), found["message"]


def test_rbac_of_one_name_on_both_clusters_each_read_only_renders(tmp_path):
    result, _ = _render(tmp_path, TPU_GKE, GPU_EXISTING, RBAC, GPU_VERBS=["get", "list"])
    assert result.exit_code == EXIT_OK, _mandatory(result)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    queues = [{"name": "research", "cluster_queue": "research"}]
    return _render(tmp_path_factory.mktemp("fleet"), MULTIKUEUE, WORKER_QUEUES=queues)


def test_a_multikueue_manager_and_its_worker_render(fleet):
    result, files = fleet
    assert result.exit_code == EXIT_OK, _mandatory(result)
    assert {n for n in files if n.startswith("manifests/")} == {"manifests/ml-east.yaml", "manifests/ml-hub.yaml"}
    assert "kind: MultiKueueCluster" in files["manifests/ml-hub.yaml"]
    assert "kind: MultiKueueCluster" not in files["manifests/ml-east.yaml"]


def test_a_worker_without_the_managers_team_queue_is_refused_naming_the_worker(tmp_path):
    result, _ = _render(tmp_path, MULTIKUEUE, WORKER_QUEUES=[{"name": "other", "cluster_queue": "research"}])
    found = _refused(result, "fleet-teams-everywhere")
    assert any(v["message"].startswith("cluster ml-hub: LocalQueue research/research is not on worker east") for v in found), found


def test_a_provider_of_the_programs_own_reaches_the_cluster_its_kubeconfig_context_names(tmp_path):
    # gcloud's context name for ml-tpu: the Job goes through the TPU cluster's queue, whichever
    # provider object applies it, and is judged against that cluster's capacity alone.
    own = '''
ops = k8s.Provider("ops-k8s", context="gke_acme-ml_us-east5_ml-tpu", kubeconfig=tpu_cluster.kubeconfig)
k8s.batch.v1.Job("ops/train", metadata={"name": "ops-train", "namespace": "research",
                                        "labels": {"kueue.x-k8s.io/queue-name": "research"}},
                 spec={"template": {"spec": {"restartPolicy": "Never", "nodeSelector": tpu_selector(tpu.flavor),
                     "containers": [{"name": "t", "image": "python:3.12", "resources": {"limits": {"google.com/tpu": LIMIT}}}]}}},
                 opts=pulumi.ResourceOptions(provider=ops))
'''
    result, files = _render(tmp_path, TPU_GKE, GPU_EXISTING, own, LIMIT="4")
    assert result.exit_code == EXIT_OK, _mandatory(result)
    assert json.loads(files["admission.json"])["workloads"]["ml-tpu/ops-train"]["admissible"] is True
    (tmp_path / "more").mkdir()
    result, _ = _render(tmp_path / "more", TPU_GKE, GPU_EXISTING, own, LIMIT="8")
    [found] = _refused(result, "kueue-admissible")
    assert found["urn"].endswith("::ops/train") and found["message"].startswith("cluster ml-tpu: "), found
