"""The TPU/GPU catalogue: node counts follow from topology and machine type."""

import pytest

from gke_ai_batch.domain import catalogue, machines


@pytest.mark.parametrize(
    "version, topology, vms, chips, machine",
    [
        ("v5e", "2x4", 2, 8, "ct5lp-hightpu-4t"),  # seed 002: --num-nodes=2
        ("v6e", "4x4", 4, 16, "ct6e-standard-4t"),  # seeds 000/004: 4 VMs
        ("v5p", "4x4x4", 16, 64, "ct5p-hightpu-4t"),
        ("v6e", "16x16", 64, 256, "ct6e-standard-4t"),
        ("v4", "2x2x1", 1, 4, "ct4p-hightpu-4t"),
        ("tpu7x", "2x2x2", 2, 8, "tpu7x-standard-4t"),
        ("v5e", "1x1", 1, 1, "ct5lp-hightpu-1t"),  # the 1-chip type for 1x1
        ("v6e", "2x2", 1, 4, "ct6e-standard-4t"),
    ],
)
def test_vms_per_slice_follow_from_topology(version, topology, vms, chips, machine):
    s = catalogue.tpu_slice(version, topology)
    assert (s.vms, s.chips, s.machine_type) == (vms, chips, machine)
    assert s.multi_host == (vms > 1)


def test_eight_chip_machine_makes_2x4_single_host():
    s = catalogue.tpu_slice("v6e", "2x4", "ct6e-standard-8t")
    assert (s.vms, s.chips_per_vm, s.multi_host) == (1, 8, False)


@pytest.mark.parametrize(
    "version, topology, machine, message",
    [
        ("v6e", "4x4", "ct6e-standard-8t", "does not fit machine type 'ct6e-standard-8t'"),
        ("v5e", "2x2x2", None, "is not a v5e topology"),
        ("v5p", "4x4", None, "is not a v5p topology"),
        ("v5e", "2x4", "ct6e-standard-4t", "is not a v5e machine type"),
        ("v5e", "1x1", "ct5lp-hightpu-4t", "does not fit"),
    ],
)
def test_shapes_the_catalogue_refuses(version, topology, machine, message):
    with pytest.raises(catalogue.CatalogueError, match=message):
        catalogue.tpu_slice(version, topology, machine)


def test_labels_per_generation():
    assert {v: g.accelerator for v, g in catalogue.TPU_GENERATIONS.items()} == {
        "v4": "tpu-v4-podslice",
        "v5e": "tpu-v5-lite-podslice",
        "v5p": "tpu-v5p-slice",
        "v6e": "tpu-v6e-slice",
        "tpu7x": "tpu7x",
    }
    assert catalogue.tpu_slice("v6e", "4x4").node_labels == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }


def test_every_listed_topology_has_the_right_dimensions():
    for gen in catalogue.TPU_GENERATIONS.values():
        for topology in gen.topologies:
            assert len(topology.split("x")) == gen.dims, (gen.version, topology)
            chips = catalogue.topology_chips(topology)
            assert chips == 1 or chips % 4 == 0, (gen.version, topology)


@pytest.mark.parametrize(
    "gpu, count, machine, ok",
    [
        ("nvidia-h100-80gb", 8, "a3-highgpu-8g", True),
        ("nvidia-h100-80gb", 4, "a3-highgpu-8g", False),
        ("nvidia-l4", 2, "g2-standard-24", True),
        ("nvidia-l4", 2, "g2-standard-32", False),  # g2-standard-32 carries one L4
        ("nvidia-tesla-t4", 2, "n1-standard-8", True),
        ("nvidia-tesla-t4", 3, "n1-standard-8", False),
        ("nvidia-tesla-t4", 1, "g2-standard-8", False),
        ("nvidia-b200", 8, "a4-highgpu-8g", True),
    ],
)
def test_gpu_machine_types(gpu, count, machine, ok):
    if ok:
        machines.check_gpu(gpu, count, machine)
    else:
        with pytest.raises(catalogue.CatalogueError):
            machines.check_gpu(gpu, count, machine)
