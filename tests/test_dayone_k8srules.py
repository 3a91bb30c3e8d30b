"""Kubernetes and Kueue rules that synth applies before the cluster would: what the API
server, Kueue's admission and the Kueue manager refuse is refused here (exit 2, key path and
rule named), and what they accept renders."""

from __future__ import annotations

import copy

import pytest

from components import catalogue
from conftest import base_config, by_name, synth_config
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
