"""Ordering, as the engine sees it in resources.json: every Kueue object waits for the Kueue
install (and its webhook probe), every Job and JobSet for both installs, namespaces come
before what lives in them, and node pools wait for the cluster."""

from __future__ import annotations

import pytest

from conftest import SINGLE_CLUSTER_STACKS, synth_stack

KUEUE_API = "kubernetes:kueue.x-k8s.io/v1beta2:"
RELEASE = "kubernetes:helm.sh/v3:Release"


def index(stack: str):
    resources = synth_stack(stack).recording.resources
    return resources, {r.urn: r for r in resources}


def release(resources, name: str):
    (found,) = [r for r in resources if r.type == RELEASE and r.name == name]
    return found


def closure(by_urn, urn: str) -> set[str]:
    """Everything a resource waits for, directly or through what it waits for."""
    seen: set[str] = set()
    todo = [urn]
    while todo:
        for dep in by_urn[todo.pop()].dependencies:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


@pytest.mark.parametrize("stack", SINGLE_CLUSTER_STACKS)
def test_kueue_objects_wait_for_the_kueue_install_and_probe(stack):
    resources, _ = index(stack)
    kueue = release(resources, "kueue")
    probe = [r for r in resources if r.type == "kubernetes:core/v1:Pod" and r.name == "kueue-system/webhook-probe"]
    kueue_objects = [r for r in resources if r.type.startswith(KUEUE_API)]
    assert kueue_objects
    for r in kueue_objects:
        assert kueue.urn in r.dependencies, r.name
        if probe:
            assert probe[0].urn in r.dependencies, r.name


@pytest.mark.parametrize("stack", SINGLE_CLUSTER_STACKS)
def test_workloads_wait_for_both_installs_their_namespace_and_queue(stack):
    resources, by_urn = index(stack)
    jobset, kueue = release(resources, "jobset"), release(resources, "kueue")
    namespaces = {r.name: r.urn for r in resources if r.type == "kubernetes:core/v1:Namespace"}
    local_queues = {r.name: r.urn for r in resources if r.type == KUEUE_API + "LocalQueue"}
    workloads = [
        r
        for r in resources
        if r.type in ("kubernetes:batch/v1:Job", "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
        and not r.name.startswith("kueue-system/")
    ]
    for r in workloads:
        assert {jobset.urn, kueue.urn} <= set(r.dependencies), r.name
        ns = r.inputs["metadata"]["namespace"]
        if ns in namespaces:
            assert namespaces[ns] in r.dependencies, r.name
        queue = r.inputs["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name")
        if queue:
            assert local_queues[f"{ns}/{queue}"] in r.dependencies, r.name


def test_kueue_is_installed_after_jobset():
    resources, _ = index("dev")
    assert release(resources, "jobset").urn in release(resources, "kueue").dependencies


def test_probe_runs_after_both_releases():
    resources, by_urn = index("dev")
    (probe,) = [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
    assert {release(resources, "jobset").urn, release(resources, "kueue").urn} <= closure(by_urn, probe.urn)


def test_local_queue_waits_for_namespace_and_cluster_queue():
    resources, _ = index("batch-autopilot")
    (lq,) = [r for r in resources if r.type == KUEUE_API + "LocalQueue" and r.name == "team-a/lq-team-a"]
    (ns,) = [r for r in resources if r.type == "kubernetes:core/v1:Namespace" and r.name == "team-a"]
    (cq,) = [r for r in resources if r.type == KUEUE_API + "ClusterQueue"]
    assert {ns.urn, cq.urn} <= set(lq.dependencies)


def test_cluster_queue_waits_for_its_flavors_and_admission_check():
    resources, _ = index("gpu-dws")
    (cq,) = [r for r in resources if r.type == KUEUE_API + "ClusterQueue"]
    needed = [r.urn for r in resources if r.type in (KUEUE_API + "ResourceFlavor", KUEUE_API + "AdmissionCheck")]
    assert len(needed) == 2 and set(needed) <= set(cq.dependencies)
    (ac,) = [r for r in resources if r.type == KUEUE_API + "AdmissionCheck"]
    (prc,) = [r for r in resources if r.type == KUEUE_API + "ProvisioningRequestConfig"]
    assert prc.urn in ac.dependencies


def test_provisioning_request_path_is_ordered():
    resources, _ = index("gpu-dws")
    (template,) = [r for r in resources if r.type == "kubernetes:core/v1:PodTemplate"]
    (request,) = [r for r in resources if r.type == "kubernetes:autoscaling.x-k8s.io/v1:ProvisioningRequest"]
    (job,) = [r for r in resources if r.type == "kubernetes:batch/v1:Job" and r.name == "default/dws-direct"]
    assert template.urn in request.dependencies and request.urn in job.dependencies


# A stack on an existing cluster (cluster.existing) creates no cluster to wait for: tests/test_dayone_existing.py.
@pytest.mark.parametrize("stack", [s for s in SINGLE_CLUSTER_STACKS if s not in ("batch-autopilot", "existing-cluster")])
def test_node_pools_wait_for_the_cluster_and_kubernetes_for_the_system_pool(stack):
    resources, _ = index(stack)
    (cluster,) = [r for r in resources if r.type == "gcp:container/cluster:Cluster"]
    for r in resources:
        if r.type == "gcp:container/nodePool:NodePool":
            assert cluster.urn in r.dependencies, r.name
    (provider,) = [r for r in resources if r.type == "pulumi:providers:kubernetes"]
    (system,) = [r for r in resources if r.type == "gcp:container/nodePool:NodePool" and r.name == "system"]
    assert system.urn in provider.dependencies
    for r in resources:
        if r.type.startswith("kubernetes:"):
            assert r.options.get("provider") == provider.urn, r.name


def test_every_resource_sits_under_a_component():
    resources, by_urn = index("prod")
    stack_urn = resources[0].urn
    top = {r.type for r in resources if r.parent == stack_urn}
    assert all(t.startswith("gke-ai-batch:") for t in top), top
    for r in resources[1:]:
        assert r.parent in by_urn, r.name
