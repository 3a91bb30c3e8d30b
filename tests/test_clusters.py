"""Each cluster judged alone: a program's objects belong to the cluster their Kubernetes
provider reaches (gke_ai_batch/model/clusters.py), and the model, the policy pack, the report
and the per-cluster manifests group by that; an existing cluster is judged in its declared mode."""

from __future__ import annotations

import json

import pytest
from gke_ai_batch.synth import EXIT_OK, EXIT_POLICY_VIOLATION

from conftest import ROOT
from support.programs import render_program as _render

# Two clusters with the same team, queue and sample names on each: only the provider tells
# which cluster a ClusterQueue or a JobSet is on.
TWO_CLUSTERS = '''
import os
import pulumi
import pulumi_kubernetes as k8s
from gke_ai_batch.components.cluster import GkeCluster
from gke_ai_batch.components.nodepools import GpuPool, TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor, Team

def platform(prefix, cluster, flavor, pod):
    on = pulumi.ResourceOptions(provider=cluster.provider)
    ResourceFlavor(f"{prefix}-flavor", flavor, opts=on)
    ClusterQueue(f"{prefix}-cq", {"queue_name": "research", "flavors": [flavor], "namespace_selector": {}}, opts=on)
    Team(f"{prefix}-team", {"namespace": "research", "local_queues": [{"name": "research", "cluster_queue": "research"}],
                            "pod_security": "privileged"}, opts=on)
    job = {"parallelism": 1, "completions": 1, "template": {"spec": pod}}
    k8s.apiextensions.CustomResource(f"{prefix}/train", api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet",
        metadata={"name": "train", "namespace": "research", "labels": {"kueue.x-k8s.io/queue-name": "research"}},
        spec={"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": job}}]}, opts=on)

tpu_cluster = GkeCluster("tpu", {"name": "ml-tpu", "location": "us-east5", "project": "acme-ml",
                                 "node_locations": ["us-east5-b"], "private_nodes": False})
gpu_cluster = GkeCluster("gpu", {"name": "ml-gpu", "location": "us-central1", "project": "acme-ml",
                                 "node_locations": ["us-central1-a"], "private_nodes": False})
tpu = TpuSlices("v6e", {"cluster": tpu_cluster.ref(), "version": "v6e", "topology": "2x2"})
gpu = GpuPool("h100", {"cluster": gpu_cluster.ref(), "gpu": {"type": "nvidia-h100-80gb", "count": 8},
                       "machine_type": "a3-highgpu-8g", "max_nodes": 2})
tpu_pod = {"restartPolicy": "Never",
           "nodeSelector": {k: v for k, v in tpu.flavor["node_labels"].items() if k.startswith("cloud.google.com/gke-tpu")},
           "containers": [{"name": "t", "image": "python:3.12", "resources": {"limits": {"google.com/tpu": "4"}}}]}
gpu_pod = {"restartPolicy": "Never",
           "containers": [{"name": "t", "image": "python:3.12", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
platform("tpu", tpu_cluster, tpu.flavor, tpu_pod)
platform("gpu", gpu_cluster, gpu.flavor, gpu_pod)
if H100_ON_TPU:
    # H100s only the GPU cluster has, asked of the TPU cluster's queue.
    k8s.batch.v1.Job("research/h100", metadata={"name": "h100", "namespace": "research",
                                                "labels": {"kueue.x-k8s.io/queue-name": "research"}},
                     spec={"template": {"spec": {**gpu_pod, "nodeSelector": {
                         "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}}}},
                     opts=pulumi.ResourceOptions(provider=tpu_cluster.provider))
'''

EXISTING = '''
import pulumi
import pulumi_kubernetes as k8s
from gke_ai_batch.components.cluster import ExistingCluster
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor, Team

cluster = ExistingCluster("shared", {"name": "ml-auto", "location": "us-central1", "project": "acme-ml", "mode": MODE,
    "version": "1.35.7-gke.1222000", "endpoint": "gke-0123456789abcdef-123456789012.us-central1.gke.goog",
    "node_service_account": "ml-auto-nodes@acme-ml.iam.gserviceaccount.com"})
on = pulumi.ResourceOptions(provider=cluster.provider)
flavor = {"name": "t4", "node_labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}}
ResourceFlavor("t4", flavor, opts=on)
ClusterQueue("cq", {"flavors": [{**flavor, "quotas": {"cpu": 8, "memory": "32Gi", "nvidia.com/gpu": 4}}],
                    "namespace_selector": {}}, opts=on)
Team("team", {"namespace": "team", "local_queues": [{"name": "lq", "cluster_queue": "cq"}]}, opts=on)
k8s.batch.v1.Job("team/t4", metadata={"name": "t4", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
    spec={"template": {"spec": {"restartPolicy": "Never", "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"},
        "containers": [{"name": "t", "image": "python:3.12",
                        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": "1"}}}]}}},
    opts=on)
'''


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    return _render(tmp_path_factory.mktemp("two"), TWO_CLUSTERS, H100_ON_TPU=False)


def test_two_clusters_with_the_same_names_are_each_judged_alone(two):
    # Judged as one world, the TPU cluster's JobSet met the GPU cluster's ClusterQueue: exit 3.
    result, files = two
    assert result.exit_code == EXIT_OK, result.violations
    queues = json.loads(files["admission.json"])["queues"]
    assert set(queues) == {"ml-tpu/research", "ml-gpu/research"}
    assert queues["ml-tpu/research"]["tpu-v6e-slice-2x2/google.com/tpu"]["most"] == "4"
    assert queues["ml-gpu/research"]["nvidia-h100-80gb/nvidia.com/gpu"]["most"] == "16"
    workloads = json.loads(files["admission.json"])["workloads"]
    assert {k: v["admissible"] for k, v in workloads.items()} == {"ml-tpu/train": True, "ml-gpu/train": True}


def test_each_cluster_gets_its_own_manifests_file(two):
    _, files = two
    assert {name for name in files if name.startswith("manifests/")} == {"manifests/ml-tpu.yaml", "manifests/ml-gpu.yaml"}
    assert "tpu-v6e-slice-2x2" in files["manifests/ml-tpu.yaml"] and "nvidia-h100" not in files["manifests/ml-tpu.yaml"]
    assert "nvidia-h100-80gb" in files["manifests/ml-gpu.yaml"] and "tpu-v6e" not in files["manifests/ml-gpu.yaml"]
    both = files["manifests/ml-tpu.yaml"].count("\nkind: ") + files["manifests/ml-gpu.yaml"].count("\nkind: ")
    assert both == files["manifests.yaml"].count("\nkind: ")


def test_the_reports_tables_name_each_rows_cluster(two):
    _, files = two
    report = files["report.md"]
    # Both clusters have a pool named system: the column says whose each is.
    assert "| `ml-tpu` | `system` |" in report and "| `ml-gpu` | `system` |" in report, report
    assert "| `ml-tpu` | `research` | — |" in report and "| `ml-gpu` | `research` | — |" in report
    assert "| cluster | workload |" in report and "| `ml-tpu` | `train` | `research` | `tpu-v6e-slice-2x2` |" in report


def test_a_job_asking_the_tpu_cluster_for_h100s_only_the_other_has_is_refused(tmp_path):
    result, _ = _render(tmp_path, TWO_CLUSTERS, H100_ON_TPU=True)
    assert result.exit_code == EXIT_POLICY_VIOLATION
    [found] = [v for v in result.violations if v["policy"] == "kueue-admissible"]
    assert found["urn"].endswith("kubernetes:batch/v1:Job::research/h100")
    assert found["message"].startswith("cluster ml-tpu: ") and "nvidia.com/gpu unavailable in ClusterQueue research" in found["message"]


def test_one_cluster_has_no_cluster_column_and_no_manifests_folder(tmp_path):
    one = TWO_CLUSTERS.replace('platform("gpu", gpu_cluster, gpu.flavor, gpu_pod)', "")
    one = one.replace("gpu_cluster = GkeCluster(", "gpu_cluster = None and GkeCluster(").replace("gpu = GpuPool(", "gpu = None and GpuPool(")
    one = one.replace('"containers": [{"name": "t", "image": "python:3.12", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}', "}")
    result, files = _render(tmp_path, one, H100_ON_TPU=False)
    assert result.exit_code == EXIT_OK, result.violations
    assert not [name for name in files if name.startswith("manifests/")]
    assert "| cluster |" not in files["report.md"]
    assert set(json.loads(files["admission.json"])["queues"]) == {"research"}


@pytest.mark.parametrize("mode, exit_code", [("autopilot", EXIT_OK), ("standard", EXIT_POLICY_VIOLATION)])
def test_an_existing_cluster_is_judged_in_its_declared_mode(tmp_path, mode, exit_code):
    # Judged as Standard, an Autopilot cluster's queue had no node pools to admit onto.
    result, _ = _render(tmp_path, EXISTING, MODE=mode)
    assert result.exit_code == exit_code, result.violations
    found = [v["message"] for v in result.violations if v["policy"] == "kueue-admissible"]
    assert bool(found) is (mode == "standard"), found
    if mode == "standard":
        assert any("the cluster has no node pools" in m for m in found), found


def test_an_existing_autopilot_stack_renders_with_its_queue_judged_as_autopilot(tmp_path):
    import yaml

    from conftest import synth_rendered

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.batch-autopilot.yaml").read_text())
    cluster = config["config"]["gke-ai-batch:cluster"]
    for key in ("releaseChannel", "deletionProtection", "privateNodes", "securityGroup"):
        cluster.pop(key, None)
    cluster.update(existing=True, version="1.35.7-gke.1222000",
                   endpoint="gke-0123456789abcdef-123456789012.us-central1.gke.goog",
                   nodeServiceAccount="auto-nodes@acme-batch.iam.gserviceaccount.com")
    for team in config["config"]["gke-ai-batch:teams"]:
        team.pop("group", None)
    result = synth_rendered(tmp_path, config["config"])
    assert result.exit_code == EXIT_OK, result.violations
    assert "Autopilot creates a node for each pod" in result.extra_files["report.md"]


def test_a_pool_on_an_autopilot_cluster_ref_is_refused():
    from gke_ai_batch.components.nodepools import TpuSlices
    from gke_ai_batch.config.errors import ArgsError

    ref = {"name": "ml-auto", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"], "mode": "autopilot"}
    with pytest.raises(ArgsError) as refused:
        TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "2x2"})
    assert "Autopilot clusters have no node pools" in str(refused.value)


def test_the_crossguard_adapter_hands_the_rules_each_resources_provider_and_parent():
    # Under `pulumi up` a stack policy gets PolicyResource.provider and opts.parent; the rules
    # group by them exactly as synth does.
    from types import SimpleNamespace as NS

    from gke_ai_batch.policy.crossguard import _parent, _provider

    r = NS(provider=NS(urn="urn:p"), opts=NS(parent="urn:c"))
    assert (_provider(r), _parent(r)) == ("urn:p", "urn:c")
    assert (_provider(NS(provider=None)), _parent(NS(opts=None))) == ("", "")


# A consumer who builds each cluster's provider from its kubeconfig (a secret, so no judge reads
# its text): the dependency on the cluster's Cluster resource says which cluster it reaches.
OWN_PROVIDERS = TWO_CLUSTERS.replace(
    "on = pulumi.ResourceOptions(provider=cluster.provider)",
    "on = pulumi.ResourceOptions(provider=k8s.Provider(f'{prefix}-own', kubeconfig=cluster.kubeconfig))",
).replace(
    "opts=pulumi.ResourceOptions(provider=tpu_cluster.provider))",
    "opts=pulumi.ResourceOptions(provider=k8s.Provider('tpu-own-2', kubeconfig=tpu_cluster.kubeconfig)))",
)


def test_providers_built_from_each_clusters_kubeconfig_reach_that_cluster(tmp_path):
    # Each such provider was a cluster of its own, without node pools: exit 3 on a valid program.
    result, files = _render(tmp_path, OWN_PROVIDERS, H100_ON_TPU=False)
    assert result.exit_code == EXIT_OK, result.violations
    assert set(json.loads(files["admission.json"])["queues"]) == {"ml-tpu/research", "ml-gpu/research"}


def test_through_a_kubeconfig_provider_h100s_asked_of_the_tpu_cluster_are_refused(tmp_path):
    result, _ = _render(tmp_path, OWN_PROVIDERS, H100_ON_TPU=True)
    assert result.exit_code == EXIT_POLICY_VIOLATION
    [found] = [v for v in result.violations if v["policy"] == "kueue-admissible"]
    assert found["urn"].endswith("kubernetes:batch/v1:Job::research/h100")
    assert "nvidia.com/gpu unavailable in ClusterQueue research" in found["message"]


def test_an_existing_autopilot_clusters_gpu_flavor_is_listed_unpriced_not_zero(tmp_path):
    # Read from inputs, the ExistingCluster declared no mode: its T4 flavor showed $0.00, complete.
    result, files = _render(tmp_path, EXISTING, MODE="autopilot")
    cost = json.loads(files["cost.json"])
    assert cost["flavors"]["t4"]["unpriced"] == ["ml-auto/t4"] and not cost["total"]["complete"]
    assert "ml-auto/t4" in files["report.md"]


def test_an_existing_autopilot_clusters_cpu_flavor_is_priced(tmp_path):
    # A CPU-only flavor of the same cluster: Autopilot's Pod rates price its quota.
    source = EXISTING.replace(', "nvidia.com/gpu": 4', '').replace(
        '"limits": {"nvidia.com/gpu": "1"}', '"limits": {}').replace(
        '"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"},', "").replace(
        '{"name": "t4", "node_labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}}', '{"name": "t4"}')
    result, files = _render(tmp_path, source, MODE="autopilot")
    cost = json.loads(files["cost.json"])
    assert cost["total"]["complete"] and cost["total"]["per30DaysMax"] > 0, cost["total"]
