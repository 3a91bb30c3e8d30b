"""Each seed stack holds the objects its source document describes, in today's APIs
(../shared/seeds/README.md maps documents to stacks; the tests read only the stacks, so they
need nothing beside the repository)."""

from __future__ import annotations

import pytest

from gke_ai_batch import synth
from gke_ai_batch.domain import images
from gke_ai_batch.domain import machines
from gke_ai_batch.plan.kueue import quota_quantity
from conftest import by_name, synth_config, synth_stack

def node_quota(machine_type: str, nodes: int) -> list[dict]:
    """cpu and memory quota entries for `nodes` nodes: what they leave to workload pods."""
    alloc = machines.workload_allocatable(machine_type)
    return [
        {"name": "cpu", "nominalQuota": quota_quantity("cpu", nodes * alloc.cpu_millis)},
        {"name": "memory", "nominalQuota": quota_quantity("memory", nodes * alloc.memory_bytes)},
    ]


TPU_TOLERATION = {"key": "google.com/tpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def manifest(stack_or_result, kind: str, name: str, namespace: str | None = None) -> dict:
    result = synth_stack(stack_or_result) if isinstance(stack_or_result, str) else stack_or_result
    found = [
        m
        for m in synth.manifests(result.recording)
        if m["kind"] == kind and m["metadata"]["name"] == name and m["metadata"].get("namespace") == namespace
    ]
    assert len(found) == 1, f"{kind} {namespace}/{name}: {len(found)} found"
    return found[0]


def kinds(stack: str) -> list[str]:
    return [m["kind"] for m in synth.manifests(synth_stack(stack).recording)]


def pod_spec(jobset: dict) -> dict:
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def assert_seed_image(image: str, seed_image: str) -> None:
    """The stack runs the seed's image, pinned. Where the document names :latest or no tag
    (which means :latest), the stack must pick one build of the same repository instead:
    synth refuses :latest, which moves under a running job. A tag the document fixes stays."""
    seed, ours = images.parse(seed_image), images.parse(image)
    assert ours is not None and images.pin_problem(image) is None, image
    if images.pin_problem(seed_image) is None:
        assert image == seed_image
    else:
        assert ours.name == seed.name, f"{image} is not a build of the seed's {seed_image}"


@pytest.mark.parametrize(
    "stack, kind, name, namespace, seed_image",
    [
        ("batch-autopilot", "Job", "sample-job-team-a", "team-a", "gcr.io/k8s-staging-perf-tests/sleep:latest"),
        ("gpu-dws", "Job", "sample-job", "default", "gcr.io/k8s-staging-perf-tests/sleep:v0.0.3"),
        ("gpu-dws", "PodTemplate", "dws-direct-pods", "default", "perl"),
        ("tpu-multislice", "JobSet", "multislice-1slice", "default", "python:3.8"),
        ("tpu-flex", "Job", "job-1", "default", "gcr.io/k8s-staging-perf-tests/sleep:latest"),
        ("tpu-flex", "Job", "job-2", "default", "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:latest"),
    ],
)
def test_seed_images_are_pinned_builds_of_the_documents(stack, kind, name, namespace, seed_image):
    m = manifest(stack, kind, name, namespace)
    spec = {"Job": lambda: m["spec"]["template"]["spec"], "PodTemplate": lambda: m["template"]["spec"],
            "JobSet": lambda: pod_spec(m)}[kind]()
    assert_seed_image(spec["containers"][0]["image"], seed_image)


def test_seed_image_fidelity_check_can_fail():
    with pytest.raises(AssertionError):
        assert_seed_image("perl:latest", "perl")
    with pytest.raises(AssertionError):
        assert_seed_image("python:3.12", "python:3.8")
    with pytest.raises(AssertionError):
        assert_seed_image("busybox:1.36", "perl")


# -- 000: tpu-hotswap --------------------------------------------------------------------


def test_hotswap_queue_flavor_and_local_queue():
    assert manifest("tpu-hotswap", "ResourceFlavor", "tpu-v6e-slice")["spec"] == {
        "nodeLabels": {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
            "cloud.google.com/gke-tpu-topology": "4x4",
            "gke-ai-batch/capacity": "on-demand",
        },
        "tolerations": [TPU_TOLERATION],
    }
    assert manifest("tpu-hotswap", "ClusterQueue", "tpu-training-cq") == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "tpu-training-cq"},
        "spec": {
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Never"},
            "resourceGroups": [
                {
                    "coveredResources": ["google.com/tpu", "cpu", "memory"],
                    "flavors": [{"name": "tpu-v6e-slice", "resources": [
                        {"name": "google.com/tpu", "nominalQuota": 32}, *node_quota("ct6e-standard-4t", 8)]}],
                }
            ],
        },
    }
    assert manifest("tpu-hotswap", "LocalQueue", "default-queue", "default")["spec"] == {"clusterQueue": "tpu-training-cq"}
    # `default` exists in every cluster: used, never created; only its Pod Security labels are
    # applied, as a NamespacePatch (server-side apply of the partial object).
    types = {r.type for r in synth_stack("tpu-hotswap").recording.resources if r.type.endswith("Namespace")}
    assert types == set()  # no Namespace is created
    assert "kubernetes:core/v1:NamespacePatch" in {r.type for r in synth_stack("tpu-hotswap").recording.resources}
    assert manifest("tpu-hotswap", "Namespace", "default")["metadata"]["labels"] == {
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": "baseline",
        "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": "baseline",
        "pod-security.kubernetes.io/audit-version": "latest",
    }


def test_hotswap_priorities_are_pod_and_workload_classes():
    for name, value, text in [
        ("low-priority-job", 1000000, "This priority class should be used for low priority pods only."),
        ("high-priority-job", 2000000, "This priority class should be used for critical pods only."),
    ]:
        assert manifest("tpu-hotswap", "PriorityClass", name) == {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "globalDefault": False,
            "description": text,
        }
        wpc = manifest("tpu-hotswap", "WorkloadPriorityClass", name)
        assert (wpc["apiVersion"], wpc["value"], wpc["description"]) == ("kueue.x-k8s.io/v1beta2", value, text)


@pytest.mark.parametrize("name, priority, run, steps", [("low-jax-trillium", "low-priority-job", "low-priority-run", 30000), ("high-jax-trillium", "high-priority-job", "high-priority-run", 300)])
def test_hotswap_jobsets(name, priority, run, steps):
    js = manifest("tpu-hotswap", "JobSet", name, "default")
    assert js["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    assert js["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "default-queue", "kueue.x-k8s.io/priority-class": priority}
    assert js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "cloud.google.com/gke-nodepool"
    assert js["spec"]["failurePolicy"] == {"maxRestarts": 10, "restartStrategy": "BlockingRecreate"}
    rj = js["spec"]["replicatedJobs"][0]
    assert (rj["name"], rj["replicas"]) == ("slice", 1)  # one slice each, side by side
    assert {k: rj["template"]["spec"][k] for k in ("backoffLimit", "completions", "parallelism")} == {
        "backoffLimit": 0,
        "completions": 4,
        "parallelism": 4,
    }
    pod = pod_spec(js)
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
    assert (pod["hostNetwork"], pod["dnsPolicy"], pod["priorityClassName"]) == (True, "ClusterFirstWithHostNet", priority)
    container = pod["containers"][0]
    assert container["name"] == "jax-program"
    assert container["resources"]["limits"] == {"google.com/tpu": 4}
    assert f"run_name={run}" in container["command"] and f"steps={steps}" in container["command"]


def test_hotswap_capacity_matches_the_quota():
    plan = synth_stack("tpu-hotswap").plan
    assert [(p.name, p.nodes, p.chips) for p in plan.pools] == [("v6e-0", 4, 16), ("v6e-1", 4, 16)]
    alloc = machines.workload_allocatable("ct6e-standard-4t")
    assert plan.flavors[0].capacity == {"google.com/tpu": 32, "cpu": 8 * alloc.cpu_millis, "memory": 8 * alloc.memory_bytes}


def jobset_chips(js: dict) -> int:
    """TPU chips a JobSet holds while it runs: slices x pods per slice x chips per pod."""
    rj = js["spec"]["replicatedJobs"][0]
    pod = rj["template"]["spec"]["template"]["spec"]
    per_pod = pod["containers"][0]["resources"]["limits"]["google.com/tpu"]
    return rj["replicas"] * rj["template"]["spec"]["parallelism"] * per_pod


def test_hotswap_both_jobsets_run_side_by_side():
    # Hotswap needs the low-priority JobSet running beside the high-priority one: Kueue must
    # admit both at once (their chips within the queue's quota), and each must fit one slice,
    # so that when the high one's slice fails it can take the low one's.
    result = synth_stack("tpu-hotswap")
    quota = manifest(result, "ClusterQueue", "tpu-training-cq")["spec"]["resourceGroups"][0]["flavors"][0]
    (nominal,) = [r["nominalQuota"] for r in quota["resources"] if r["name"] == "google.com/tpu"]
    slice_chips = {p.chips for p in result.plan.pools}
    assert slice_chips == {16}
    low, high = (manifest(result, "JobSet", n, "default") for n in ("low-jax-trillium", "high-jax-trillium"))
    assert jobset_chips(low) == jobset_chips(high) == 16
    assert jobset_chips(low) + jobset_chips(high) <= nominal == 32
    # One slice each, and never two JobSets in one node pool.
    total_slices = sum(js["spec"]["replicatedJobs"][0]["replicas"] for js in (low, high))
    assert total_slices <= len(result.plan.pools) == 2
    for js in (low, high):
        assert js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "cloud.google.com/gke-nodepool"
        # Pods select the slice shape, not one node pool: the high one can restart on either.
        assert "cloud.google.com/gke-nodepool" not in pod_spec(js)["nodeSelector"]
    # kube-scheduler lets the high-priority pods preempt the low-priority ones.
    low_class, high_class = (manifest(result, "PriorityClass", n) for n in ("low-priority-job", "high-priority-job"))
    assert high_class["value"] > low_class["value"]
    assert high_class.get("preemptionPolicy", "PreemptLowerPriority") == "PreemptLowerPriority"


# -- 001: batch-autopilot ----------------------------------------------------------------


def test_autopilot_batch_queues():
    result = synth_stack("batch-autopilot")
    assert by_name(result, "gcp:container/cluster:Cluster", "cluster")["inputs"]["enableAutopilot"] is True
    assert by_name(result, "gcp:container/cluster:Cluster", "cluster")["inputs"]["releaseChannel"] == {"channel": "RAPID"}
    assert manifest(result, "ResourceFlavor", "default-flavor")["spec"] == {}
    assert manifest(result, "ClusterQueue", "cluster-queue")["spec"] == {
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"],
                "flavors": [
                    {
                        "name": "default-flavor",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 10},
                            {"name": "memory", "nominalQuota": "10Gi"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 10},
                            {"name": "ephemeral-storage", "nominalQuota": "10Gi"},
                        ],
                    }
                ],
            }
        ],
    }
    for team in ("team-a", "team-b"):
        # Baseline by default; RAPID without minMasterVersion: the standards' latest version.
        assert manifest(result, "Namespace", team)["metadata"] == {"name": team, "labels": {
            "pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "latest"}}
        assert manifest(result, "LocalQueue", f"lq-{team}", team)["spec"] == {"clusterQueue": "cluster-queue"}


def test_autopilot_batch_sample_job():
    job = manifest("batch-autopilot", "Job", "sample-job-team-a", "team-a")
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq-team-a"}
    spec = job["spec"]
    assert {k: spec[k] for k in ("parallelism", "completions", "suspend")} == {
        "parallelism": 3,
        "completions": 3,
        "suspend": True,
    }
    # Pulumi owns the Job: it must not delete itself, or the next deploy runs it again.
    assert "ttlSecondsAfterFinished" not in spec
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
    assert pod["restartPolicy"] == "Never"
    container = pod["containers"][0]
    # The image: test_seed_images_are_pinned_builds_of_the_documents.
    assert (container["name"], container["args"]) == ("dummy-job", ["10s"])
    expected = {"cpu": "500m", "memory": "512Mi", "ephemeral-storage": "512Mi", "nvidia.com/gpu": 1}
    assert container["resources"] == {"requests": expected, "limits": expected}
    assert "hostNetwork" not in pod  # Autopilot forbids it


# -- 002: tpu-multislice -----------------------------------------------------------------


def test_multislice_pools_flavor_and_queue():
    result = synth_stack("tpu-multislice")
    for i in range(3):
        pool = by_name(result, "gcp:container/nodePool:NodePool", f"nodepool-{i}")["inputs"]
        assert (pool["nodeCount"], pool["nodeConfig"]["machineType"], pool["placementPolicy"]["tpuTopology"]) == (
            2,
            "ct5lp-hightpu-4t",
            "2x4",
        )
        # Any matching reservation, on-demand VMs when none has room (the seed's on-demand slices).
        assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "ANY_RESERVATION"}
    assert manifest(result, "ResourceFlavor", "vlp-24")["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
        "gke-ai-batch/capacity": "reservation",
    }
    cq = manifest(result, "ClusterQueue", "cluster-queue")["spec"]
    assert cq["resourceGroups"] == [
        {"coveredResources": ["google.com/tpu", "cpu", "memory"], "flavors": [{"name": "vlp-24", "resources": [
            {"name": "google.com/tpu", "nominalQuota": 24}, *node_quota("ct5lp-hightpu-4t", 6)]}]}
    ]
    assert cq["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    assert manifest(result, "LocalQueue", "multislice-queue", "default")["spec"] == {"clusterQueue": "cluster-queue"}
    assert manifest(result, "PriorityClass", "low-priority")["value"] == -100


@pytest.mark.parametrize("name, slices", [("multislice-1slice", 1), ("multislice-2slice", 2), ("multislice-3slice", 3)])
def test_multislice_jobsets_on_standard(name, slices):
    js = manifest("tpu-multislice", "JobSet", name, "default")
    assert js["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "multislice-queue"}
    assert js["spec"]["failurePolicy"] == {"maxRestarts": 4, "restartStrategy": "Recreate"}
    rj = js["spec"]["replicatedJobs"][0]
    assert rj["replicas"] == slices
    assert (rj["template"]["spec"]["parallelism"], rj["template"]["spec"]["completions"]) == (2, 2)
    pod = pod_spec(js)
    assert (pod["hostNetwork"], pod["dnsPolicy"]) == (True, "ClusterFirstWithHostNet")
    c = pod["containers"][0]
    assert (c["name"], c["image"], c["ports"]) == ("jax-tpu", "python:3.8", [{"containerPort": 8471}, {"containerPort": 8080}])
    assert c["securityContext"] == {"privileged": True}
    assert c["resources"]["limits"] == {"google.com/tpu": 4}


def test_multislice_low_priority_jobset():
    js = manifest("tpu-multislice", "JobSet", "low-priority", "default")
    assert pod_spec(js)["priorityClassName"] == "low-priority"
    assert js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "low-priority"


def test_multislice_low_priority_ranks_below_the_other_jobsets():
    # The three multislice JobSets name no priority, so Kueue and kube-scheduler rank them 0;
    # "low-priority" must be below that for the queue's LowerPriority preemption to favour them.
    result = synth_stack("tpu-multislice")
    low = manifest(result, "WorkloadPriorityClass", "low-priority")["value"]
    assert low == manifest(result, "PriorityClass", "low-priority")["value"] < 0
    for name in ("multislice-1slice", "multislice-2slice", "multislice-3slice"):
        js = manifest(result, "JobSet", name, "default")
        assert "kueue.x-k8s.io/priority-class" not in js["metadata"]["labels"]
        assert "priorityClassName" not in pod_spec(js)
    # The PR report says it: low-priority can preempt nothing (it used to preempt "no priority (0)").
    assert "| `low-priority` | -100 | — |" in result.extra_files["report.md"]


def test_multislice_autopilot_variant(tmp_path):
    import yaml

    from conftest import ROOT

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.tpu-multislice.yaml").read_text())["config"]
    config["gke-ai-batch:cluster"] = {"name": "multislice-cluster", "mode": "autopilot", "releaseChannel": "RAPID"}
    del config["gke-ai-batch:nodePools"]
    config["gke-ai-batch:flavors"] = [
        {"name": "vlp-24", "nodeLabels": {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4"}}
    ]
    config["gke-ai-batch:clusterQueues"][0]["flavors"] = [{"name": "vlp-24", "quotas": {"google.com/tpu": 24}}]
    for wl in config["gke-ai-batch:workloads"]:
        del wl["pool"], wl["privileged"]
        wl.pop("topology", None)  # the Standard variant's topology-aware sample: its domains are the pools
        wl["tpu"] = {"version": "v5e", "topology": "2x4"}
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    js = manifest(result, "JobSet", "multislice-3slice", "default")
    pod = pod_spec(js)
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4"}
    assert "hostNetwork" not in pod and "securityContext" not in pod["containers"][0]
    assert pod["containers"][0]["resources"]["limits"] == {"google.com/tpu": 4}


# -- 003: gpu-dws ------------------------------------------------------------------------


def test_dws_admission_check_and_config():
    assert manifest("gpu-dws", "ProvisioningRequestConfig", "dws-config")["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
    }
    assert manifest("gpu-dws", "AdmissionCheck", "dws-prov")["spec"] == {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws-config"},
    }
    cq = manifest("gpu-dws", "ClusterQueue", "dws-cluster-queue")["spec"]
    assert cq["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-prov", "onFlavors": ["default-flavor"]}]}
    assert cq["resourceGroups"][0]["coveredResources"] == ["nvidia.com/gpu", "cpu", "memory"]
    assert [r["nominalQuota"] for r in cq["resourceGroups"][0]["flavors"][0]["resources"]] == [10000, 10000, "10000Gi"]
    assert manifest("gpu-dws", "LocalQueue", "dws-local-queue", "default")["spec"] == {"clusterQueue": "dws-cluster-queue"}


def test_dws_node_pool_and_auto_provisioning():
    result = synth_stack("gpu-dws")
    pool = by_name(result, "gcp:container/nodePool:NodePool", "h100-dws")["inputs"]
    assert pool["queuedProvisioning"] == {"enabled": True}
    assert pool["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert pool["initialNodeCount"] == 0
    assert pool["management"]["autoRepair"] is False
    assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert pool["nodeConfig"]["gvnic"] == {"enabled": True}
    nap = by_name(result, "gcp:container/cluster:Cluster", "cluster")["inputs"]["clusterAutoscaling"]
    assert nap["enabled"] is True
    assert {(l["resourceType"], l["maximum"]) for l in nap["resourceLimits"]} == {
        ("cpu", 1024),
        ("memory", 8192),
        ("nvidia-h100-80gb", 32),
    }
    assert nap["autoProvisioningDefaults"]["management"] == {"autoRepair": False, "autoUpgrade": True}


def test_dws_job_through_kueue():
    job = manifest("gpu-dws", "Job", "sample-job", "default")
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "dws-local-queue"}
    assert job["metadata"]["annotations"]["provreq.kueue.x-k8s.io/maxRunDurationSeconds"] == "600"
    assert job["spec"]["suspend"] is True
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "h100-dws"}
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in pod["tolerations"]
    limits = pod["containers"][0]["resources"]["limits"]
    assert limits == {"cpu": "100m", "memory": "100Mi", "nvidia.com/gpu": 1}


def test_dws_without_kueue():
    template = manifest("gpu-dws", "PodTemplate", "dws-direct-pods", "default")
    assert template["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "700m", "nvidia.com/gpu": 1}
    request = manifest("gpu-dws", "ProvisioningRequest", "dws-direct", "default")
    assert request["apiVersion"] == "autoscaling.x-k8s.io/v1"
    assert request["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "parameters": {"maxRunDurationSeconds": "3600"},
        "podSets": [{"count": 1, "podTemplateRef": {"name": "dws-direct-pods"}}],
    }
    job = manifest("gpu-dws", "Job", "dws-direct", "default")
    assert job["spec"]["template"]["metadata"]["annotations"] == {
        "cluster-autoscaler.kubernetes.io/consume-provisioning-request": "dws-direct",
        "cluster-autoscaler.kubernetes.io/provisioning-class-name": "queued-provisioning.gke.io",
    }
    assert "kueue.x-k8s.io/queue-name" not in job["metadata"].get("labels", {})


# -- 004: tpu-flex -----------------------------------------------------------------------


def test_flex_pools():
    result = synth_stack("tpu-flex")
    single = by_name(result, "gcp:container/nodePool:NodePool", "flex-single-0")["inputs"]
    multi = by_name(result, "gcp:container/nodePool:NodePool", "flex-multi-0")["inputs"]
    for pool, vms in ((single, 1), (multi, 2)):
        assert pool["nodeConfig"]["flexStart"] is True
        assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": vms, "locationPolicy": "ANY"}
        assert pool["initialNodeCount"] == 0
        assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert pool["management"]["autoRepair"] is False
    assert "placementPolicy" not in single
    assert multi["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x4"}


def test_flex_jobs():
    single = manifest("tpu-flex", "Job", "job-1", "default")["spec"]["template"]["spec"]
    assert single["nodeSelector"] == {
        "cloud.google.com/gke-flex-start": "true",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x2",
    }
    assert single["restartPolicy"] == "OnFailure"
    assert single["containers"][0]["resources"] == {"requests": {"google.com/tpu": 4}, "limits": {"google.com/tpu": 4}}

    service = manifest("tpu-flex", "Service", "job-2-hosts", "default")
    assert service["spec"] == {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": "job-2"}}
    job = manifest("tpu-flex", "Job", "job-2", "default")["spec"]
    assert {k: job[k] for k in ("backoffLimit", "completions", "parallelism", "completionMode")} == {
        "backoffLimit": 0,
        "completions": 2,
        "parallelism": 2,
        "completionMode": "Indexed",
    }
    pod = job["template"]["spec"]
    assert pod["subdomain"] == "job-2-hosts"
    assert pod["containers"][0]["ports"] == [{"containerPort": 8471}, {"containerPort": 8431}]
    assert pod["containers"][0]["securityContext"] == {"privileged": True}
