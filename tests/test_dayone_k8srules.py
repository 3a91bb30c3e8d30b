"""Kubernetes and Kueue rules that synth applies before the cluster would: what the API
server, Kueue's admission and the Kueue manager refuse is refused here (exit 2, key path and
rule named), and what they accept renders."""

from __future__ import annotations

import copy

import pytest
import yaml

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import kueue_releases
from conftest import ROOT, base_config, by_name, synth_config
from support.diagnostics import assert_names

NS = "gke-ai-batch"


def _tpu_stack(version: str, topology: str, zone: str) -> dict:
    return base_config(
        nodePools=[{"name": "slice", "tpu": {"version": version, "topology": topology}, "zones": [zone]}],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}],
        workloads=[{"kind": "jobset", "name": "train", "team": "team-a", "pool": "slice", "image": "i:1"}],
    )


def _refused(tmp_path, config, path: str, words: str) -> None:
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, "synth rendered what the cluster refuses"
    assert result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", f"{NS}:{path}", words)


# -- TPU topologies: the generation's rule, not a list (xpk generate_tpu_topologies) --------------


@pytest.mark.parametrize(
    "version, topology, zone, vms",
    [
        ("v5p", "4x4x20", "us-central1-a", 80),  # GKE offers it; the old hand-written list lacked it
        ("tpu7x", "4x4x12", "us-central1-c", 48),  # likewise
        ("v5p", "16x20x28", "us-central1-a", 2240),  # 140 cubes: v5p's largest
    ],
)
def test_tpu_topologies_gke_offers_render(tmp_path, version, topology, zone, vms):
    config = _tpu_stack(version, topology, zone)
    config[f"{NS}:cluster"]["minMasterVersion"] = "1.35"
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    pool = by_name(result, "gcp:container/nodePool:NodePool", "slice-0")["inputs"]
    gen = catalogue.TPU_GENERATIONS[version]
    # The topology picks the machine type and the host count.
    assert pool["nodeConfig"]["machineType"] == gen.default_machine_type
    assert pool["nodeCount"] == vms
    assert pool["placementPolicy"]["tpuTopology"] == topology


@pytest.mark.parametrize(
    "version, topology, words",
    [
        ("v5p", "4x4x6", "each side a multiple of 4"),
        ("v5p", "8x4x4", "with A <= B <= C"),  # v5p takes its sides in order; v4 would not mind
        ("v5p", "16x20x32", "at most 140 4x4x4 cubes"),  # 160 cubes
        ("tpu7x", "16x20x32", "at most 144 4x4x4 cubes"),
        ("v5p", "4x4x04", "is not a v5p topology"),  # not the label GKE puts on the nodes
        ("v6e", "4x4x4", "allowed: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"),
    ],
)
def test_tpu_topologies_outside_the_rule_are_refused(tmp_path, version, topology, words):
    zone = {"v5p": "us-central1-a", "tpu7x": "us-central1-c", "v6e": "us-central1-b"}[version]
    _refused(tmp_path, _tpu_stack(version, topology, zone), "nodePools[0].tpu.topology", words)


def test_v4_takes_its_sides_in_any_order():
    assert catalogue.tpu_slice("v4", "8x4x4").vms == 32
    assert catalogue.topology_problem(catalogue.TPU_GENERATIONS["v4"], "4x8x4") is None


def test_every_generated_topology_is_one_the_rule_accepts():
    for gen in catalogue.TPU_GENERATIONS.values():
        shapes = gen.topologies
        assert len(set(shapes)) == len(shapes), gen.version
        for topology in shapes:
            assert catalogue.topology_problem(gen, topology) is None, (gen.version, topology)
    assert "4x4x20" in catalogue.TPU_GENERATIONS["v5p"].topologies
    assert "4x4x12" in catalogue.TPU_GENERATIONS["tpu7x"].topologies


# -- valid Jobs and queue names that used to be refused ------------------------------------------

GPU_POOL = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 4}


def _gpu_stack(**workload) -> dict:
    return base_config(
        nodePools=[copy.deepcopy(GPU_POOL)],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        workloads=[{"kind": "job", "name": "eval", "team": "team-a", "pool": "l4", "image": "i:1", **workload}],
    )


def test_parallelism_above_completions_renders_and_counts_the_smaller(tmp_path):
    result = synth_config(tmp_path, _gpu_stack(parallelism=4, completions=2))
    assert result.exit_code == 0, result.error
    job = by_name(result, "kubernetes:batch/v1:Job", "team-a/eval")["inputs"]
    assert (job["spec"]["parallelism"], job["spec"]["completions"]) == (4, 2)
    # Kueue's Workload has min(parallelism, completions) pods: 2 pods of one L4 each.
    report = result.extra_files["report.md"]
    row = next(line for line in report.splitlines() if line.startswith("| `eval`"))
    assert [c.strip() for c in row.strip("|").split("|")][-2:] == ["2", "2 nvidia.com/gpu"]


def test_a_local_queue_name_with_a_dot_renders(tmp_path):
    config = _gpu_stack(localQueue="team.a")
    config[f"{NS}:teams"][0]["localQueue"] = "team.a"
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    job = by_name(result, "kubernetes:batch/v1:Job", "team-a/eval")["inputs"]
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team.a"


@pytest.mark.parametrize("name, words", [("team..a", "not a valid LocalQueue name"), ("q" * 64, "at most 63 characters")])
def test_a_local_queue_name_kueue_refuses_is_refused(tmp_path, name, words):
    config = _gpu_stack()
    config[f"{NS}:teams"][0]["localQueue"] = name
    _refused(tmp_path, config, "teams[0].localQueue", words)


# -- Kueue objects that can never admit what the stack ships ----------------------------------------


@pytest.mark.parametrize("policy", ["Hold", "HoldAndDrain"])
def test_a_stopped_cluster_queue_with_sample_workloads_is_refused(tmp_path, policy):
    config = _gpu_stack()
    config[f"{NS}:clusterQueues"][0]["stopPolicy"] = policy
    _refused(tmp_path, config, "workloads[0]", f"ClusterQueue cq is stopped (stopPolicy {policy}): Kueue admits nothing new")


def test_a_stopped_cluster_queue_no_workload_uses_renders(tmp_path):
    config = _gpu_stack()
    config[f"{NS}:clusterQueues"].append({"name": "parked", "stopPolicy": "HoldAndDrain"})
    config[f"{NS}:teams"].append({"namespace": "team-b", "localQueue": "lq", "clusterQueue": "parked"})
    config[f"{NS}:clusterQueues"][0]["stopPolicy"] = "None"
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    assert by_name(result, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "parked")["inputs"]["spec"]["stopPolicy"] == "HoldAndDrain"


# -- what the API server checks on create -----------------------------------------------------------


@pytest.mark.parametrize(
    "resource, amount",
    [("nvidia.com/gpu", "0.5"), ("nvidia.com/gpu", "500m"), ("example.com/fpga", "1.5"), ("google.com/tpu", "1.0001")],
)
def test_a_fractional_extended_resource_is_refused(tmp_path, resource, amount):
    _refused(
        tmp_path, _gpu_stack(resources={resource: amount}), f'workloads[0].resources["{resource}"]',
        "is an extended resource, counted in whole units",
    )


def test_whole_extended_resources_and_fractional_cpu_render(tmp_path):
    result = synth_config(tmp_path, _gpu_stack(resources={"nvidia.com/gpu": "1000m", "cpu": "0.5"}))
    assert result.exit_code == 0, result.error
    container = by_name(result, "kubernetes:batch/v1:Job", "team-a/eval")["inputs"]["spec"]["template"]["spec"]["containers"][0]
    # Extended resources: requests equal limits, as the API server requires.
    assert container["resources"]["requests"] == container["resources"]["limits"]


def test_a_tpu_request_spelt_as_another_quantity_of_the_same_chips_renders(tmp_path):
    config = _tpu_stack("v6e", "2x2", "us-central1-b")
    config[f"{NS}:workloads"][0]["resources"] = {"google.com/tpu": "4000m"}
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


@pytest.mark.parametrize(
    "pool, taint",
    [
        (GPU_POOL, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
        ({"name": "slice", "tpu": {"version": "v6e", "topology": "2x2"}}, {"key": "google.com/tpu", "effect": "NoSchedule"}),
    ],
)
def test_a_taint_gke_already_sets_is_refused(tmp_path, pool, taint):
    config = base_config(nodePools=[{**copy.deepcopy(pool), "taints": [taint]}])
    _refused(tmp_path, config, "nodePools[0].taints[0]", f"taint {taint['key']}:NoSchedule is one GKE puts on this pool's nodes already")


def test_a_taint_on_the_same_key_with_another_effect_renders(tmp_path):
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute"}
    result = synth_config(tmp_path, base_config(nodePools=[{**copy.deepcopy(GPU_POOL), "taints": [taint]}]))
    assert result.exit_code == 0, result.error
    taints = by_name(result, "gcp:container/nodePool:NodePool", "l4")["inputs"]["nodeConfig"]["taints"]
    assert [(t["key"], t["effect"]) for t in taints] == [("nvidia.com/gpu", "NO_SCHEDULE"), ("nvidia.com/gpu", "NO_EXECUTE")]


def test_a_repeated_port_on_the_host_network_is_refused(tmp_path):
    config = _tpu_stack("v6e", "4x4", "us-central1-b")  # multi-host: its pods use the host network
    config[f"{NS}:workloads"][0]["ports"] = [8080, 9090, 8080]
    _refused(tmp_path, config, "workloads[0].ports[2]", "port 8080 is listed twice; this workload's pods use the host network")


def test_a_repeated_port_off_the_host_network_renders(tmp_path):
    result = synth_config(tmp_path, _gpu_stack(ports=[8080, 8080]))
    assert result.exit_code == 0, result.error


# -- the pinned Kueue release's own API -------------------------------------------------------------


def _fleet_config(**multi_kueue) -> dict:
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text())["config"]
    config[f"{NS}:fleet"]["multiKueue"] = multi_kueue
    return config


def _manager_configuration(result) -> dict:
    values = by_name(result, "kubernetes:helm.sh/v3:Release", "manager/kueue")["inputs"]["values"]
    return yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])


def _kueue_values(result) -> dict:
    return by_name(result, "kubernetes:helm.sh/v3:Release", "kueue")["inputs"]["values"]


def _unlisted(conf: dict, prefix: str = "") -> list[str]:
    """The Configuration fields written that the table of releases does not list."""
    out = []
    for key, value in conf.items():
        path = prefix + key
        if path in kueue_releases.CONFIG_FIELDS:
            continue
        out += _unlisted(value, path + ".") if isinstance(value, dict) else [path]
    return out


def test_every_configuration_field_and_gate_the_program_writes_is_in_the_table(tmp_path):
    config = _gpu_stack()
    config[f"{NS}:kueue"] = {
        "fairSharing": True, "waitForPodsReady": {"timeout": "10m", "recoveryTimeout": "5m"},
        "integrations": list(kueue_releases.INTEGRATIONS),
    }
    config[f"{NS}:clusterQueues"] = [{"name": "cq", "cohort": "ml"}, {"name": "cq2", "cohort": "ml"}]
    plan = synth_config(tmp_path, config).plan
    conf = yaml.safe_load(plan.kueue_values["managerConfig"]["controllerManagerConfigYaml"])
    assert _unlisted(conf) == []
    assert set(conf["integrations"]["frameworks"]) == set(kueue_releases.INTEGRATIONS)
    fleet = synth_config(tmp_path, _fleet_config(dispatcher="Incremental", incrementalStepSize=2))
    assert fleet.exit_code == 0, fleet.error
    assert _unlisted(_manager_configuration(fleet)) == []
    config[f"{NS}:kueue"] = {"waitForPodsReady": False}
    gates = synth_config(tmp_path, config).plan.kueue_values["controllerManager"]["featureGates"]
    assert {g["name"] for g in gates} <= set(kueue_releases.FEATURE_GATES)


@pytest.mark.parametrize("framework", ["ray.io/rayservice", "sparkoperator.k8s.io/sparkapplication"])
def test_an_integration_newer_than_the_pinned_kueue_is_refused(tmp_path, framework):
    config = _gpu_stack()
    config[f"{NS}:kueue"] = {"version": "0.16.0", "integrations": ["batch/job", "jobset.x-k8s.io/jobset", framework]}
    _refused(
        tmp_path, config, "kueue.integrations[2]",
        f"Kueue 0.16.0 has no integration {framework} (it came in Kueue 0.17.0",
    )


def test_the_same_integration_on_the_release_that_has_it_renders(tmp_path):
    config = _gpu_stack()
    config[f"{NS}:kueue"] = {"version": "0.17.0", "integrations": ["batch/job", "jobset.x-k8s.io/jobset", "ray.io/rayservice"]}
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


def test_disabling_wait_for_pods_ready_writes_the_gate_only_where_it_exists(tmp_path):
    config = _gpu_stack()
    config[f"{NS}:kueue"] = {"version": "0.18.6", "waitForPodsReady": False}
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    values = _kueue_values(result)
    # Kueue 0.18 has no DisableWaitForPodsReady gate (its manager would not start) and needs
    # none: an omitted waitForPodsReady is off there.
    assert "controllerManager" not in values
    assert "waitForPodsReady" not in yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    config[f"{NS}:kueue"]["version"] = "0.19.0"
    values = _kueue_values(synth_config(tmp_path, config))
    assert values["controllerManager"]["featureGates"] == [{"name": "DisableWaitForPodsReady", "enabled": True}]


def test_an_incremental_step_size_before_kueue_has_the_field_is_refused(tmp_path):
    config = _fleet_config(dispatcher="Incremental", incrementalStepSize=2)
    config[f"{NS}:kueue"] = {"version": "0.18.6"}
    _refused(
        tmp_path, config, "fleet.multiKueue.incrementalStepSize",
        "Kueue 0.18.6 has no Configuration field multiKueue.incrementalDispatcherConfig (it came in Kueue 0.19.0",
    )


def test_the_incremental_dispatcher_before_the_field_renders_without_it(tmp_path):
    config = _fleet_config(dispatcher="Incremental")
    config[f"{NS}:kueue"] = {"version": "0.18.6"}
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    multi_kueue = _manager_configuration(result)["multiKueue"]
    assert multi_kueue["dispatcherName"] == "kueue.x-k8s.io/multikueue-dispatcher-incremental"
    assert "incrementalDispatcherConfig" not in multi_kueue


def test_every_shape_the_old_hand_written_lists_had_is_still_offered():
    old = {
        "v4": "2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x8x8 8x8x8 8x8x12 8x8x16 8x16x16",
        "v5p": "2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x4x12 4x4x16 4x8x8 4x8x12 4x8x16 4x12x12 4x12x16 4x16x16 "
        "8x8x8 8x8x12 8x8x16 8x12x12 8x12x16 8x16x16 12x12x12 12x12x16 12x16x16 16x16x16 16x16x20 16x16x24",
        "tpu7x": "2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x8x8 8x8x8 8x8x16 8x16x16 16x16x16",
    }
    for version, shapes in old.items():
        for topology in shapes.split():
            assert catalogue.topology_problem(catalogue.TPU_GENERATIONS[version], topology) is None, (version, topology)
