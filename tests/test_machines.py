"""Machine types, GKE node allocatable, GPU/N1 compatibility and Autopilot limits, spot-checked
against published figures (sources in gke_ai_batch/domain/machines.py and gke_ai_batch/domain/autopilot.py)."""

import pytest

from gke_ai_batch.domain import autopilot

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import machines

GIB = 1 << 30
MIB = 1 << 20


@pytest.mark.parametrize(
    "name, vcpus, memory_mib",
    [
        ("e2-standard-4", 4, 16 * 1024),
        ("e2-medium", 2, 4 * 1024),
        ("n1-standard-1", 1, 3840),  # 3.75 GB
        ("n1-highcpu-16", 16, 14746),  # "14.4 GB", API memoryMb 14746
        ("n1-highcpu-8", 8, 7373),  # API memoryMb 7373
        ("n1-megamem-96", 96, 1468006),  # API memoryMb 1468006
        ("n2-highmem-128", 128, 864 * 1024),  # the one n2-highmem off the 8 GiB/vCPU ratio
        ("c3d-highcpu-30", 30, 59 * 1024),
        ("c2-standard-60", 60, 240 * 1024),
        ("t2d-standard-60", 60, 240 * 1024),
        ("ct6e-standard-4t", 180, 720 * 1024),
        ("ct5lp-hightpu-8t", 224, 384 * 1024),
        ("ct4p-hightpu-4t", 240, 407 * 1024),
        ("tpu7x-standard-4t", 224, 960 * 1024),
        ("a3-highgpu-8g", 208, 1872 * 1024),
        ("a2-highgpu-1g", 12, 85 * 1024),
        ("g2-standard-24", 24, 96 * 1024),
        ("a4-highgpu-8g", 224, 3968 * 1024),
    ],
)
def test_shapes_match_the_gce_listing(name, vcpus, memory_mib):
    mt = machines.machine_type(name)
    assert (mt.vcpus, mt.memory_mib) == (vcpus, memory_mib)
    assert mt.memory_bytes == memory_mib * MIB


def test_accelerators_come_from_the_catalogue():
    assert machines.machine_type("ct6e-standard-4t").tpu_chips == 4
    assert machines.machine_type("ct6e-standard-4t").tpu_version == "v6e"
    a3 = machines.machine_type("a3-highgpu-8g")
    assert (a3.gpu_type, a3.gpus) == ("nvidia-h100-80gb", 8)
    assert machines.machine_type("n1-standard-8").gpus == 0
    for gen in catalogue.TPU_GENERATIONS.values():
        for name, chips in gen.machine_types.items():
            assert machines.machine_type(name).tpu_chips == chips
    for gpu in catalogue.GPU_TYPES.values():
        for name, count in gpu.machine_types.items():
            mt = machines.machine_type(name)
            assert (mt.gpu_type, mt.gpus) == (gpu.type, count)


@pytest.mark.parametrize(
    "name, message",
    [
        ("n1-standard-3", r"n1-standard comes with 1, 2, 4, 8, 16, 32, 64, 96 vCPUs"),
        ("e2-standard-64", r"e2-standard comes with 2, 4, 8, 16, 32 vCPUs"),
        ("e2-highmem-32", r"e2-highmem comes with 2, 4, 8, 16 vCPUs"),
        ("g2-standard-7", r"g2 offers: g2-standard-4, g2-standard-8"),
        ("a3-highgpu-3g", r"a3 offers: a3-highgpu-1g"),
        ("n1-superhigh-8", r"n1 offers: n1-standard-\{1,2,4"),
        ("z9-standard-4", r"series 'z9' is not one of"),
        ("c3-standard-4-lssd-x", r"c3 offers"),
    ],
)
def test_invalid_shapes_are_refused_with_what_is_valid(name, message):
    with pytest.raises(catalogue.CatalogueError, match=message):
        machines.machine_type(name)


@pytest.mark.parametrize(
    "name, vcpus, memory_mib",
    [
        ("n2-custom-8-32768", 8, 32768),
        ("custom-2-7680", 2, 7680),  # N1
        ("n2d-custom-4-8192", 4, 8192),
        ("e2-custom-small-4096", 2, 4096),
        ("n2-custom-8-638720-ext", 8, 638720),  # the sample's extended-memory case
    ],
)
def test_custom_shapes(name, vcpus, memory_mib):
    mt = machines.machine_type(name)
    assert (mt.vcpus, mt.memory_mib, mt.shape) == (vcpus, memory_mib, "custom")


@pytest.mark.parametrize(
    "name, message",
    [
        ("n2-custom-7-32768", r"vCPUs must be one of 2, 4, 6, \.\.\., 128, not 7"),
        ("n2-custom-8-32769", r"multiple of 256 MiB"),
        ("n2-custom-8-2048", r"below n2's minimum of 4096 MiB"),
        ("n2-custom-8-66048", r"exceeds n2's maximum of 65536 MiB .*-ext"),  # 8 GiB/vCPU + 512 MiB
        ("e2-custom-8-66048-ext", r"e2 has no extended memory"),
        ("n1-custom-4-8192", r"written custom-<vCPUs>-<MiB>"),
        ("c2-custom-4-8192", r"modelled for e2, n1, n2, n2d only"),
        ("e2-custom-micro-4096", r"exceeds e2's maximum of 2048 MiB"),
    ],
)
def test_invalid_custom_shapes(name, message):
    with pytest.raises(catalogue.CatalogueError, match=message):
        machines.machine_type(name)


# --- allocatable ----------------------------------------------------------------------------

def test_doc_example_node():
    # plan-node-sizes "Check allocatable resources on a node": a 4-vCPU node shows cpu 3920m and
    # memory 13498416Ki allocatable (a 16 GiB node: a 15 GB n1-standard-4 could not reach that).
    alloc = machines.allocatable("e2-standard-4")
    assert alloc.cpu_millis == 3920  # 4000 - (60 + 10 + 2 x 5)
    assert alloc.memory_bytes <= 13498416 * 1024
    assert alloc.memory_bytes >= 0.99 * 13498416 * 1024


def test_memory_reservation_brackets():
    # 25% of 4 GiB + 20% of 4 + 10% of 8 + 6% of 112 + 2% of 72 = 1024 + 819.2 + 819.2 + 6881.28 + 1474.56
    assert machines.kube_reserved_memory_mib(200 * 1024) == pytest.approx(11018.24)
    assert machines.kube_reserved_memory_mib(4 * 1024) == pytest.approx(1024)
    assert machines.kube_reserved_memory_mib(900) == 255  # below 1 GiB


# GKE nodes measured by 2i2c (instance_capacities.yaml, lowest allocatable seen, GKE 1.27-1.29):
# (cpu allocatable, memory allocatable GiB). The model must never promise more, nor much less.
MEASURED = {
    "n2-highmem-2": (1930, 12.968), "n2-highmem-4": (3920, 27.734), "n2-highmem-8": (7910, 57.27),
    "n2-highmem-16": (15890, 116.545), "n2-highmem-32": (31850, 240.079), "n1-standard-2": (1930, 5.479),
    "n1-standard-8": (7910, 25.885), "n1-standard-16": (15890, 53.567), "n1-standard-32": (31850, 109.027),
    "n1-standard-64": (63770, 224.448), "n1-highmem-4": (3920, 22.192), "e2-highmem-16": (15890, 116.549),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_allocatable_against_measured_nodes(name):
    cpu, gib = MEASURED[name]
    alloc = machines.allocatable(name)
    assert alloc.cpu_millis == cpu
    assert alloc.memory_bytes <= gib * GIB
    assert alloc.memory_bytes >= gib * GIB - max(0.015 * gib * GIB, 150 * MIB)  # within 1.5% or 150 MiB


def test_shared_core_and_many_pods():
    assert machines.allocatable("e2-medium").cpu_millis == 940  # 2000 - 1060
    assert machines.allocatable("e2-standard-4", max_pods=256).cpu_millis == 3520  # + 400m above 110 pods


def test_system_daemons_allowance():
    cpu_node = machines.system_daemons("e2-standard-4")
    gpu_node = machines.system_daemons("a3-highgpu-8g")
    assert (cpu_node.cpu_millis, cpu_node.memory_bytes) == (454, 656 * MIB)
    assert (gpu_node.cpu_millis, gpu_node.memory_bytes) == (504, 676 * MIB)
    left = machines.workload_allocatable("e2-standard-4")
    assert left.cpu_millis == 3920 - 454


# --- GPUs on N1 -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "count, machine, message",
    [
        (1, "n1-ultramem-40", r"N1 standard, highmem, highcpu or custom shapes only"),
        (1, "n1-megamem-96", r"N1 standard, highmem, highcpu or custom shapes only"),
        (1, "n1-standard-64", r"at most 48 vCPUs and 312 GiB with 1"),
        (2, "n1-highmem-64", r"at most 48 vCPUs and 312 GiB with 2"),
        (1, "e2-standard-4", r"N1 general-purpose machine types only"),
        (1, "e2-micro", r"N1 general-purpose machine types only"),
        (1, "n1-standard-3", r"n1-standard comes with"),
        (3, "n1-standard-8", r"counts of 1, 2, 4"),
    ],
)
def test_t4_refused_where_gce_will_not_attach_it(count, machine, message):
    with pytest.raises(catalogue.CatalogueError, match=message):
        machines.check_gpu("nvidia-tesla-t4", count, machine)


@pytest.mark.parametrize(
    "count, machine",
    [(1, "n1-standard-8"), (1, "n1-highmem-32"), (2, "n1-standard-32"), (4, "n1-highmem-96"), (1, "custom-48-319488")],
)
def test_t4_near_misses_accepted(count, machine):
    machines.check_gpu("nvidia-tesla-t4", count, machine)


def test_t4_limits_cover_the_catalogue_counts():
    assert tuple(machines.N1_GPU_LIMITS["nvidia-tesla-t4"]) == catalogue.T4_COUNTS


# --- Autopilot --------------------------------------------------------------------------------

def test_autopilot_gpu_limit_refusal_and_near_miss():
    # Autopilot's own rejection for one A100 40GB: maximum 11 CPU and 74Gi.
    assert autopilot.autopilot_problems("nvidia-tesla-a100", 1, 11_000, 74 * GIB) == []
    over_cpu = autopilot.autopilot_problems("nvidia-tesla-a100", 1, 11_001, 74 * GIB)
    assert len(over_cpu) == 1 and "exceeds the maximum 11000m" in over_cpu[0]
    over_mem = autopilot.autopilot_problems("nvidia-tesla-a100", 1, 1000, 74 * GIB + MIB)
    assert len(over_mem) == 1 and "exceeds the maximum 75776 MiB" in over_mem[0]


def test_autopilot_gpu_counts_and_types():
    assert "not 3" in autopilot.autopilot_problems("nvidia-tesla-t4", 3, 1000, GIB)[0]
    assert "does not run 'nvidia-tesla-k80'" in autopilot.autopilot_problems("nvidia-tesla-k80", 1, 1000, GIB)[0]
    assert autopilot.autopilot_problems("nvidia-l4", 2, 20_000, 64 * GIB) == []
    # two L4s only come on g2-standard-24: no pod of 24 vCPUs fits one
    assert autopilot.autopilot_problems("nvidia-l4", 2, 24_000, 64 * GIB)


def test_autopilot_tpu_by_version_or_label():
    assert autopilot.autopilot_problems("v6e", 4, 100_000, 500 * GIB) == []
    assert autopilot.autopilot_problems("tpu-v6e-slice", 4, 100_000, 500 * GIB) == []
    assert "1, 4, 8 chips, not 2" in autopilot.autopilot_problems("v6e", 2, 1000, GIB)[0]
    assert autopilot.autopilot_problems("v6e", 4, 180_000, GIB)  # more than a 180-vCPU host can give


def test_autopilot_general_purpose():
    assert autopilot.autopilot_problems(None, 0, 30_000, 110 * GIB) == []
    assert "cpu request 30001m" in autopilot.autopilot_problems(None, 0, 30_001, 100 * GIB)[0]
    # 4 vCPU with 120 GiB: the 1:6.5 ratio raises CPU, but 120 GiB is over the 110 GiB maximum
    problems = autopilot.autopilot_problems(None, 0, 4000, 120 * GIB)
    assert len(problems) == 1 and "memory request 122880 MiB exceeds" in problems[0]
    # 30 vCPU with 10 GiB: raised to 30 GiB by the 1:1 floor, within limits
    assert autopilot.autopilot_problems(None, 0, 30_000, 10 * GIB) == []
    assert autopilot.autopilot_problems(None, 0, 100_000, 100 * GIB, compute_class="balanced") == []


def test_autopilot_limits_never_exceed_the_host():
    """Every maximum fits on the node Autopilot must use (derived rows are that bound; confirmed rows below it)."""
    for cls in autopilot.AUTOPILOT.values():
        for count, lim in cls.limits.items():
            if count == 0:
                continue
            assert lim.max_cpu_millis > 0 and lim.max_memory_mib > 0
    a100 = autopilot.AUTOPILOT["nvidia-tesla-a100"].limits[1]
    host = machines.workload_allocatable("a2-highgpu-1g")
    assert a100.max_cpu_millis <= host.cpu_millis
    assert a100.max_memory_mib * MIB <= host.memory_bytes
