"""One seam for judging: the admission model judges what a program registers
(gke_ai_batch/model/recorded.py). The stack program judges its plan's objects in the shape it
registers them (gke_ai_batch/plan/admission.py); synth's recording of the same stack, fed to the
same judge, must give the same world, verdicts and problems, or a program that uses the library
without a stack file (judged by the policy pack) would hear something else."""

from __future__ import annotations

import copy
import dataclasses
import functools
import tempfile
from pathlib import Path

import pytest

from conftest import STACKS, synth_stack
from gke_ai_batch.model.recorded import Judgement
from gke_ai_batch.plan.admission import Admission, declared_cluster
from gke_ai_batch.policy import rules
from gke_ai_batch.policy.rules.base import by_cluster


def _world(w) -> dict:
    d = dataclasses.asdict(w)
    # GKE's own taints are listed before the pool's in the plan, and after its GPU taint in the
    # NodePool's arguments; the order means nothing to the scheduler.
    for g in d["node_groups"]:
        g["taints"] = sorted(tuple(sorted(t.items())) for t in g["taints"])
    return d


def _verdict(v) -> tuple:
    return (v.workload, v.cluster_queue, v.mode, v.reasons, v.flavors, [dataclasses.asdict(p) for p in v.placements])


def _clusters(result) -> list[tuple[str, object]]:
    """(naming scope, the stack program's judgement) of each cluster of a rendered stack."""
    if result.fleet is None:
        return [("", Admission(result.plan))]
    return [
        ("manager", Admission(result.fleet.manager, result.fleet.multikueue)),
        *((w.name, Admission(w.plan)) for w in result.fleet.workers),
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_the_recorded_resources_are_judged_as_the_plan_is(stack):
    result = synth_stack(stack)
    recorded = by_cluster([rules.Resource(r.urn, r.type, r.name, r.inputs) for r in result.recording.resources])
    for scope, planned in _clusters(result):
        judged = Judgement(recorded[scope], declared_cluster(planned.plan))
        assert _world(judged.world) == _world(planned.world), scope
        assert [_verdict(v) for v in judged.verdicts] == [_verdict(v) for v in planned.verdicts], scope
        assert judged.at_once == planned.at_once
        assert [(p.where, p.message) for p in judged.problems] == [
            (p.where, p.message) for p in planned.judgement.problems
        ]


LIBRARY_PROGRAM = """
import pulumi_kubernetes as k8s
from pulumi_kubernetes.apiextensions import CustomResource

from gke_ai_batch.components.nodepools import GpuPool, TpuSlices

ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
# Two spot v6e 4x4 slices: 4 VMs of 4 chips each, 32 chips in all.
tpu = TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2, "capacity": "spot"})
gpu = GpuPool("h100", {"cluster": ref, "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "max_nodes": 2,
                       "capacity": "flexStart", "zones": ["us-east5-a"]})
KUEUE = "kueue.x-k8s.io/v1beta2"
for name, pool in (("v6e", tpu), ("h100", gpu)):
    CustomResource(name, api_version=KUEUE, kind="ResourceFlavor", metadata={"name": name},
                   spec={"nodeLabels": pool.node_labels, "tolerations": pool.flavor["tolerations"]})
CustomResource("ml", api_version=KUEUE, kind="ClusterQueue", metadata={"name": "ml"}, spec={
    "namespaceSelector": {},
    "resourceGroups": [
        {"coveredResources": ["google.com/tpu"], "flavors": [{"name": "v6e", "resources": [{"name": "google.com/tpu", "nominalQuota": 32}]}]},
        {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 16}]}]},
    ],
})
k8s.core.v1.Namespace("research", metadata={"name": "research"})
CustomResource("research/ml", api_version=KUEUE, kind="LocalQueue", metadata={"name": "ml", "namespace": "research"},
               spec={"clusterQueue": "ml"})


def jobset(name, replicas):
    pod = {"restartPolicy": "Never", "containers": [
        {"name": "jax", "image": "jax:0.8.1", "resources": {"limits": {"google.com/tpu": 4}, "requests": {"google.com/tpu": 4}}}]}
    CustomResource(f"research/{name}", api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet",
                   metadata={"name": name, "namespace": "research", "labels": {"kueue.x-k8s.io/queue-name": "ml"}},
                   spec={"replicatedJobs": [{"name": "slice", "replicas": replicas, "template": {"spec": {
                       "parallelism": 4, "completions": 4, "template": {"spec": pod}}}}]})


jobset("fits", 2)  # 2 slices x 4 hosts x 4 chips = 32: exactly the queue's quota
jobset("too-big", 3)  # 48 chips: more than any flavor of the queue holds
"""


@functools.lru_cache(maxsize=None)
def library_resources() -> tuple:
    from gke_ai_batch.synth import engine

    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "__main__.py"
        program.write_text(LIBRARY_PROGRAM)
        recording = engine.run(program, project="lib", stack="test", config={}, outputs_for=lambda t, n, i: {})
    return tuple(rules.Resource(r.urn, r.type, r.name, r.inputs) for r in recording.resources)


def test_a_program_without_a_stack_file_gets_the_verdicts():
    """TpuSlices, GpuPool and raw CustomResource Kueue objects on an existing cluster: the policy
    pack's kueue-admissible runs the judge the stack program runs, so the JobSet that needs more
    than any flavor holds is refused with the model's reason, and the one that fits exactly is not."""
    resources = list(library_resources())
    verdicts = {v.workload.name: v for v in Judgement(resources).verdicts}
    assert verdicts["fits"].admissible, verdicts["fits"].refusal
    assert verdicts["fits"].flavors == ["v6e"]
    assert not verdicts["too-big"].admissible and verdicts["too-big"].refusal.rule == "quota"
    found = list(rules.run(rules.by_name("kueue-admissible"), resources))
    (jobset,) = [r.urn for r in resources if r.name == "research/too-big"]
    assert [urn for urn, _ in found] == [jobset], found
    message = found[0][1]
    assert message.startswith("JobSet research/too-big (LocalQueue ml → ClusterQueue ml) can never run: ")
    assert "google.com/tpu" in message and "48" in message, message


def _admissible(resources, config=None) -> list[tuple[str | None, str]]:
    return list(rules.run(rules.by_name("kueue-admissible"), resources, config or {}))


def _edited(resources, name: str, edit) -> list:
    out = []
    for r in resources:
        if r.name == name:
            props = copy.deepcopy(r.props)
            edit(props)
            r = r._replace(props=props)
        out.append(r)
    return out


def test_values_known_only_after_deploy_leave_the_cluster_unjudged():
    """Under `pulumi preview` a flavor's labels may be another resource's output: no verdict
    rather than a wrong one. A pool's cluster name, which the model does not read, may be."""
    resources = list(library_resources())
    unknown = _edited(resources, "v6e", lambda p: p.get("spec", {}).update(nodeLabels="[unknown]"))
    assert _admissible(unknown) == []
    pool_of_unknown_cluster = _edited(resources, "v6e-0", lambda p: p.update(cluster="[unknown]"))
    assert len(_admissible(pool_of_unknown_cluster)) == 1


def test_objects_the_api_refuses_do_not_fail_the_preview():
    resources = list(library_resources())
    broken = _edited(resources, "research/fits", lambda p: p["spec"]["replicatedJobs"][0].pop("template"))
    broken = _edited(broken, "ml", lambda p: p["spec"]["resourceGroups"][0]["flavors"][0].pop("name"))
    assert _admissible(broken) == []


def test_a_cluster_of_other_nodes_is_declared_in_the_settings():
    """Without a recorded Cluster and without its pools, the flavors select nodes no registered
    pool has; a cluster declared with node auto-provisioning (or Autopilot) makes its own."""
    resources = [r for r in library_resources() if r.type != "gcp:container/nodePool:NodePool"]
    found = _admissible(resources)
    assert any("ClusterQueue ml.flavors[0]: ResourceFlavor v6e selects nodes labelled" in m for _, m in found), found
    assert not any("flavors[" in m for _, m in _admissible(resources, {"autoProvisioning": True}))
