"""Stacks that are schema-valid but would never run are refused at synth (exit 2), naming the
workload or queue and the rule; a near miss of each renders. The model behind it is tested in
test_admission_model.py; here the whole path from stack file to message."""

from __future__ import annotations

import copy

import pytest

from support.diagnostics import assert_names
from conftest import base_config, synth_config

V6E = {"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}, "slices": 2}
# privileged: the multi-host v6e JobSets' pods use the host network.
TEAM = {"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}


def jobset(**over) -> dict:
    return {"kind": "jobset", "name": "train", "team": "team-a", "pool": "v6e", "slices": 2, "image": "i:1", **over}


def stack(**over) -> dict:
    keys = {
        "nodePools": [copy.deepcopy(V6E)],
        "clusterQueues": [{"name": "cq"}],
        "teams": [dict(TEAM)],
        "workloads": [jobset()],
    }
    keys.update(over)
    return base_config(**keys)


def autopilot(cpu) -> dict:
    return base_config(
        cluster={"name": "ap", "mode": "autopilot"},
        flavors=[{"name": "t4"}],
        clusterQueues=[{"name": "cq", "flavors": [{"name": "t4", "quotas": {"cpu": 1000, "memory": "4000Gi", "nvidia.com/gpu": 8}}]}],
        teams=[dict(TEAM)],
        workloads=[{"kind": "job", "name": "j", "team": "team-a", "gpu": {"type": "nvidia-tesla-t4"}, "image": "i:1",
                    "resources": {"cpu": cpu, "memory": "16Gi"}}],
    )


BIG_CPU = {"name": "cq", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"cpu": 100000}}]}

CASES = [
    (
        "a pod Autopilot's GPU class does not take",
        autopilot(100),
        autopilot(8),
        "gke-ai-batch:workloads[0]",
        "Autopilot would not run its pods: Autopilot 1 x nvidia-tesla-t4: cpu request 100000m exceeds the maximum",
    ),
    # (id, refused config, near miss that renders, key path, words)
    (
        "a resource no queue covers",
        stack(workloads=[jobset(resources={"ephemeral-storage": "10Gi"})]),
        stack(workloads=[jobset(resources={"ephemeral-storage": "10Gi"})],
              clusterQueues=[{"name": "cq", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"ephemeral-storage": "100Gi"}}]}]),
        "gke-ai-batch:workloads[0]",
        "resource ephemeral-storage unavailable in ClusterQueue cq",
    ),
    (
        "a quota smaller than one workload",
        stack(clusterQueues=[{"name": "cq", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"google.com/tpu": 16}}]}]),
        stack(clusterQueues=[{"name": "cq", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"google.com/tpu": 32}}]}]),
        "gke-ai-batch:workloads[0]",
        "insufficient quota for google.com/tpu in flavor tpu-v6e-slice-4x4: the workload needs 32, the queue can have at most 16",
    ),
    (
        "a pod larger than its machine type",
        # The derived cpu quota is what the nodes hold, so it refuses first; a generous quota
        # leaves the node itself to refuse.
        stack(workloads=[jobset(resources={"cpu": 400})], clusterQueues=[BIG_CPU]),
        stack(workloads=[jobset(resources={"cpu": 100})], clusterQueues=[BIG_CPU]),
        "gke-ai-batch:workloads[0]",
        "a pod requests 400 cpu, a ct6e-standard-4t node has",
    ),
    (
        "flavor labels that match no node",
        stack(flavors=[{"name": "fast", "nodeLabels": {"disk": "ssd"}}],
              clusterQueues=[{"name": "cq", "flavors": [{"name": "fast", "quotas": {"cpu": 10}}]}], workloads=[]),
        stack(flavors=[{"name": "fast", "pools": ["v6e"]}],
              clusterQueues=[{"name": "cq", "flavors": [{"name": "fast", "quotas": {"cpu": 10}}]}], workloads=[]),
        "gke-ai-batch:clusterQueues[0].flavors[0]",
        "ResourceFlavor fast selects nodes labelled disk=ssd, and no node pool's nodes carry them",
    ),
    (
        "a namespaceSelector that matches no team namespace",
        stack(clusterQueues=[{"name": "cq", "namespaceSelector": {"matchLabels": {"tier": "ml"}}}]),
        stack(clusterQueues=[{"name": "cq", "namespaceSelector": {"matchLabels": {"tier": "ml"}}}],
              teams=[{**TEAM, "labels": {"tier": "ml"}}]),
        "gke-ai-batch:clusterQueues[0].namespaceSelector",
        "LocalQueue team-a/lq points at ClusterQueue cq, whose namespaceSelector does not match namespace team-a",
    ),
    (
        "a multi-host slice short of pods",
        stack(workloads=[{"kind": "job", "name": "j", "team": "team-a", "pool": "v6e", "parallelism": 2, "image": "i:1"}]),
        stack(workloads=[{"kind": "job", "name": "j", "team": "team-a", "pool": "v6e", "parallelism": 4, "image": "i:1"}]),
        "gke-ai-batch:workloads[0]",
        "multi-host TPU slice of 4 hosts that runs one pod per host",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused_with_the_rule_and_a_near_miss_renders(tmp_path, case):
    _, refused, near, path, words = case
    result = synth_config(tmp_path, refused)
    assert result.exit_code == 2 and result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)
    ok = synth_config(tmp_path, near)
    assert ok.error is None and ok.exit_code == 0, ok.error


def test_every_problem_is_reported_at_once(tmp_path):
    config = stack(workloads=[jobset(resources={"cpu": 400}), jobset(name="other", resources={"ephemeral-storage": "1Gi"})])
    error = synth_config(tmp_path, config).error
    assert "gke-ai-batch:workloads[0]" in error and "gke-ai-batch:workloads[1]" in error


# -- the committed stacks: every sample can run, and the seeds show what their documents claim --

from conftest import STACKS, synth_stack  # noqa: E402
from gke_ai_batch.model.model import RULES  # noqa: E402


@pytest.mark.parametrize("stack", STACKS)
def test_every_sample_of_every_stack_is_admissible(stack):
    result = synth_stack(stack)
    if result.fleet is not None:
        # A fleet's samples run on its workers: each can land on some worker of its queue.
        assert result.fleet.landing and all(
            any(reason is None for reason in verdicts.values()) for verdicts in result.fleet.landing.values()
        ), result.fleet.landing
        assert "❌ never" not in result.extra_files["report.md"]
        return
    assert result.admission.verdicts or not result.plan.workloads
    for v in result.admission.verdicts:
        assert v.admissible, f"{stack}: {v.workload.name}: {v.refusal}"
        # What it may wait for names a rule of the model's, each citing its upstream source.
        assert {r.rule for r in v.reasons} <= set(RULES), v.reasons
    assert "❌ never" not in result.extra_files["report.md"]


def test_hotswap_runs_both_jobsets_side_by_side_and_shows_the_swap():
    result = synth_stack("tpu-hotswap")
    assert {v.workload.name: result.admission.at_once[v.workload.name] for v in result.admission.verdicts} == {
        "high-jax-trillium": None, "low-jax-trillium": None,
    }
    report = result.extra_files["report.md"]
    assert "**Hotswap:**" in report
    assert "kube-scheduler preempts `low-jax-trillium`'s pods to place it on a healthy pool at once" in report


def test_multislice_admits_by_priority_and_queues_the_rest():
    at_once = synth_stack("tpu-multislice").admission.at_once
    assert at_once["multislice-1slice"] is None and at_once["multislice-2slice"] is None
    assert at_once["multislice-3slice"].message.startswith("waits for quota: needs 24 google.com/tpu of vlp-24, 0 left")
    # the low-priority JobSet is below the unprioritised ones (seed 002), so it waits too
    assert at_once["low-priority"].message.startswith("waits for quota")


# -- found by red-teaming the model ------------------------------------------------------------


def test_a_machine_type_the_catalogue_does_not_size_renders_unchecked(tmp_path):
    config = base_config(cluster={"name": "t", "nodeLocations": ["us-central1-a"], "systemPool": {"machineType": "c4-standard-8"}},
                         nodePools=[{"name": "cpu", "machineType": "c4-standard-8", "maxNodes": 2}])
    result = synth_config(tmp_path, config)
    assert result.error is None and result.exit_code == 0, result.error


def test_huge_quantities_saturate_instead_of_crashing(tmp_path):
    result = synth_config(tmp_path, stack(workloads=[jobset(resources={"cpu": "1e400"})]))
    assert result.exit_code == 2 and "insufficient quota for cpu" in result.error


def test_a_cpu_flavor_beside_an_accelerator_flavor_takes_the_cpu_pods(tmp_path):
    config = stack(
        nodePools=[copy.deepcopy(V6E), {"name": "cpu", "machineType": "n2-standard-8", "maxNodes": 3}],
        flavors=[{"name": "tpu", "pools": ["v6e"]}, {"name": "cpu", "pools": ["cpu"]}],
        clusterQueues=[{"name": "cq", "flavors": ["tpu", {"name": "cpu", "quotas": {"cpu": 24}}]}],
        workloads=[{"kind": "job", "name": "prep", "team": "team-a", "pool": "cpu", "image": "i:1", "resources": {"cpu": "2"}},
                   jobset(resources={"cpu": "8"})],
    )
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    assert [v.flavors for v in result.admission.verdicts] == [["cpu"], ["tpu"]]


def test_a_queue_given_no_chips_of_a_flavor_gets_none_of_its_hosts_cpu(tmp_path):
    result = synth_config(tmp_path, stack(clusterQueues=[
        {"name": "cq", "cohort": "c", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"google.com/tpu": {"nominal": 0, "borrowingLimit": 32}}}]},
        {"name": "other", "cohort": "c", "flavors": ["tpu-v6e-slice-4x4"]},
    ]))
    assert result.error is None, result.error
    quotas = {q.name: q.quotas["tpu-v6e-slice-4x4"] for q in result.plan.queues}
    assert quotas["cq"]["cpu"] == 0 and quotas["cq"]["memory"] == "0Gi"
    assert quotas["other"]["cpu"] != 0
