"""What one node of a machine type holds: vCPUs, memory, accelerators, and what GKE leaves to pods.

Pure data and pure functions, standard library only (like catalogue.py), so the policy pack can
import it. Accelerator counts are not repeated here: GPUs per VM come from catalogue.GPU_TYPES and
TPU chips per VM from catalogue.TPU_GENERATIONS.

Units: Compute Engine states memory in "GB" that are GiB (2^30 bytes); its API field memoryMb is
MiB, round(GiB * 1024) (n1-highcpu-16 is "14.4 GB" and memoryMb 14746). Every memory figure here
is an exact integer of MiB; bytes are MiB * 2^20.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from gke_ai_batch.domain import catalogue
from gke_ai_batch.domain.catalogue import CatalogueError

MIB = 1 << 20
GIB_MIB = 1024


@dataclass(frozen=True)
class MachineType:
    name: str
    series: str  # "n1", "e2", "g2", "a3", "ct6e", "tpu7x", ...
    shape: str  # "standard", "highmem", "highcpu", "custom", "micro", "highgpu", "hightpu", ...
    vcpus: int
    memory_mib: int
    shared_core: bool = False  # e2-micro/small/medium: fractional vCPUs, no accelerators
    gpu_type: str | None = None  # fixed GPUs (A2/A3/A4/G2): catalogue.GPU_TYPES
    gpus: int = 0
    tpu_version: str | None = None  # catalogue.TPU_GENERATIONS
    tpu_chips: int = 0

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def general_purpose(self) -> bool:
        """A general-purpose shape (standard, highmem, highcpu or custom), not megamem/ultramem or shared core."""
        return self.shape in ("standard", "highmem", "highcpu", "custom") and not self.shared_core


def _mib(gib: float) -> int:
    return round(gib * GIB_MIB)


# Fixed shapes, (vCPUs, memory GiB), as `gcloud compute machine-types list` reports them
# (CPUS, MEMORY_GB = memoryMb / 1024). Source: the GCE API listing kept by
# github.com/Cyclenerd/google-cloud-pricing-cost-calculator tools/machinetypes.csv (tools/machinetypes.sh
# runs that command), HEAD dac31281 (2026-08-20); ct4p-hightpu-4t from the same file at 9c4698ec
# (2025-10-31), since dropped from the zones it lists. They match the GCE "Accelerator-optimized
# machine family" (cloud.google.com/compute/docs/accelerator-optimized-machines), "TPU machines"
# (cloud.google.com/compute/docs/tpus/tpu-machines) and GKE "Plan TPUs" tables.
_ACCELERATOR_HOSTS: dict[str, tuple[int, float]] = {
    # TPU hosts
    "ct4p-hightpu-4t": (240, 407),
    "ct5lp-hightpu-1t": (24, 48), "ct5lp-hightpu-4t": (112, 192), "ct5lp-hightpu-8t": (224, 384),
    "ct5p-hightpu-4t": (208, 448),
    "ct6e-standard-1t": (44, 176), "ct6e-standard-4t": (180, 720), "ct6e-standard-8t": (360, 1440),
    "tpu7x-standard-4t": (224, 960),
    # GPU hosts
    "g2-standard-4": (4, 16), "g2-standard-8": (8, 32), "g2-standard-12": (12, 48), "g2-standard-16": (16, 64),
    "g2-standard-24": (24, 96), "g2-standard-32": (32, 128), "g2-standard-48": (48, 192),
    "g2-standard-96": (96, 384),
    "a2-highgpu-1g": (12, 85), "a2-highgpu-2g": (24, 170), "a2-highgpu-4g": (48, 340),
    "a2-highgpu-8g": (96, 680), "a2-megagpu-16g": (96, 1360),
    "a2-ultragpu-1g": (12, 170), "a2-ultragpu-2g": (24, 340), "a2-ultragpu-4g": (48, 680),
    "a2-ultragpu-8g": (96, 1360),
    "a3-highgpu-1g": (26, 234), "a3-highgpu-2g": (52, 468), "a3-highgpu-4g": (104, 936),
    "a3-highgpu-8g": (208, 1872), "a3-megagpu-8g": (208, 1872), "a3-ultragpu-8g": (224, 2952),
    "a4-highgpu-8g": (224, 3968),
}

# Local SSD disks (375 GiB each) that come attached to these shapes, a fixed number that cannot
# be left out or changed: Compute Engine docs accelerator-optimized-machines, the A4, A3 (Ultra,
# Mega, High) and A2 Ultra tables' "Attached Local SSD (GiB)" column (A4 and A3 Ultra 12,000;
# A3 Mega and A3 High 8g 6,000, 4g 3,000, 2g 1,500, 1g 750; A2 Ultra 8g 3,000, 4g 1,500, 2g 750,
# 1g 375). The G2, A2 High/Mega and N1 shapes have none attached. A VM consumes a reservation only
# with the reservation's properties, its local SSDs included (Compute Engine docs
# instances/reservations-overview, "How reservations work"), so a ComputeClass priority that
# consumes one states localSSDCount (config/computeclasses.py).
ATTACHED_LOCAL_SSDS: dict[str, int] = {
    "a4-highgpu-8g": 32, "a3-ultragpu-8g": 32, "a3-megagpu-8g": 16,
    "a3-highgpu-8g": 16, "a3-highgpu-4g": 8, "a3-highgpu-2g": 4, "a3-highgpu-1g": 2,
    "a2-ultragpu-8g": 8, "a2-ultragpu-4g": 4, "a2-ultragpu-2g": 2, "a2-ultragpu-1g": 1,
}

# Predefined general-purpose shapes by rule: series -> shape -> (GiB per vCPU, valid vCPU counts).
# Source: the same GCE API listing (every name below is in it, and nothing of these series and
# shapes is missing from it), cf. cloud.google.com/compute/docs/general-purpose-machines and
# .../compute-optimized-machines.
_E2 = (2, 4, 8, 16, 32)
_N1 = (2, 4, 8, 16, 32, 64, 96)
_N2 = (2, 4, 8, 16, 32, 48, 64, 80, 96)
_C2D = (2, 4, 8, 16, 32, 56, 112)
_C3 = (4, 8, 22, 44, 88, 176)
_C3D = (4, 8, 16, 30, 60, 90, 180, 360)
_N4 = (2, 4, 8, 16, 32, 48, 64, 80)
PREDEFINED: dict[str, dict[str, tuple[float, tuple[int, ...]]]] = {
    "e2": {"standard": (4, _E2), "highmem": (8, _E2[:-1]), "highcpu": (1, _E2)},
    "n1": {"standard": (3.75, (1, *_N1)), "highmem": (6.5, _N1), "highcpu": (0.9, _N1)},
    "n2": {"standard": (4, (*_N2, 128)), "highmem": (8, (*_N2, 128)), "highcpu": (1, _N2)},
    "n2d": {"standard": (4, (*_N2, 128, 224)), "highmem": (8, _N2), "highcpu": (1, (*_N2, 128, 224))},
    "c2": {"standard": (4, (4, 8, 16, 30, 60))},
    "c2d": {"standard": (4, _C2D), "highmem": (8, _C2D), "highcpu": (2, _C2D)},
    "c3": {"standard": (4, _C3), "highmem": (8, _C3), "highcpu": (2, _C3)},
    "c3d": {"standard": (4, _C3D), "highmem": (8, _C3D), "highcpu": (2, _C3D)},
    "n4": {"standard": (4, _N4), "highmem": (8, _N4), "highcpu": (2, _N4)},
    "t2d": {"standard": (4, (1, 2, 4, 8, 16, 32, 48, 60))},
}
# Where the ratio does not hold (same listing): GiB.
_MEMORY_EXCEPTIONS: dict[str, float] = {
    "n2-highmem-128": 864,
    "c3d-highcpu-30": 59, "c3d-highcpu-60": 118, "c3d-highcpu-90": 177, "c3d-highcpu-180": 354,
    "c3d-highcpu-360": 708,
}
# Local-SSD variants (same vCPUs and memory as the plain shape) and bare metal, same listing.
_LSSD: dict[str, dict[str, tuple[int, ...]]] = {
    "c3": {"standard": (4, 8, 22, 44, 88, 176)},
    "c3d": {"standard": _C3D[1:], "highmem": _C3D[1:]},
}
_OTHER: dict[str, tuple[str, str, int, float, bool]] = {  # name: (series, shape, vCPUs, GiB, shared core)
    "e2-micro": ("e2", "micro", 2, 1, True),
    "e2-small": ("e2", "small", 2, 2, True),
    "e2-medium": ("e2", "medium", 2, 4, True),
    "n1-megamem-96": ("n1", "megamem", 96, 1433.6, False),
    "n1-ultramem-40": ("n1", "ultramem", 40, 961, False),
    "n1-ultramem-80": ("n1", "ultramem", 80, 1922, False),
    "n1-ultramem-160": ("n1", "ultramem", 160, 3844, False),
    "c3-standard-192-metal": ("c3", "standard", 192, 768, False),
    "c3-highmem-192-metal": ("c3", "highmem", 192, 1536, False),
    "c3-highcpu-192-metal": ("c3", "highcpu", 192, 512, False),
}

# Series the same listing has (tools/machinetypes.csv as of 0026ae3a) whose shapes are not modelled above (C4, C4A, C4D, H3, the M
# memory-optimized series, T2A, X4, Z3, and the F1/G1 shared-core types): a name of one of them
# in the listing's form is a machine type Compute Engine may have, taken on trust (unsized()),
# so that a real type is never refused; its vCPUs and memory stay unknown here.
UNSIZED_SERIES = ("c4", "c4a", "c4d", "f1", "g1", "h3", "m1", "m2", "m3", "m4", "t2a", "x4", "z3")
# SERIES-SHAPE-VCPUS[-SUFFIX] (c4-standard-8, c4a-highmem-16-lssd), SERIES-SHAPE-SUFFIX (x4's
# x4-960-16t) or a shared-core SERIES-micro/small/medium (g1-small): a vCPU count is a whole
# number without leading zeros and a suffix has a letter, so c4-standard-0, c4-standard-08 and
# c4-standard, which Compute Engine has no type for, are not taken on trust.
_SUFFIX = r"[a-z0-9]*[a-z][a-z0-9]*"
_UNSIZED_RX = re.compile(
    rf"(?P<series>[a-z0-9]+)-(?:micro|small|medium|[a-z0-9]+-(?:[1-9][0-9]*(?:-{_SUFFIX})?|{_SUFFIX}))", re.ASCII
)
_UNSIZED_FORM = "SERIES-SHAPE-VCPUS[-SUFFIX], VCPUS a whole number from 1 without leading zeros (e.g. c4-standard-8)"

# Machine types Compute Engine has and GKE refuses for any node pool: "f1-micro machines are
# not supported, because they do not have sufficient memory to run GKE" (GKE docs
# concepts/cluster-architecture, "Memory and CPU"); the API answers "Node pools of f1-micro
# machines are not supported due to insufficient memory" (seen in nkoson/gke-tutorial#7).
GKE_REFUSED = {"f1-micro": "GKE refuses node pools of f1-micro machines: they have too little memory to run GKE"}


def known_names() -> list[str]:
    """Every predefined machine type this catalogue sizes (custom shapes aside), sorted: what
    the price table covers (scripts/refresh_prices.py)."""
    names = {f"{series}-{shape}-{n}" for series, shapes in PREDEFINED.items() for shape, (_, sizes) in shapes.items()
             for n in sizes}
    names |= {f"{series}-{shape}-{n}-lssd" for series, shapes in _LSSD.items() for shape, sizes in shapes.items()
              for n in sizes}
    return sorted(names | set(_OTHER) | set(_ACCELERATOR_HOSTS))


def unsized(name: str) -> bool:
    """Whether `name` is written like a machine type of a series Compute Engine has but this
    catalogue does not size (UNSIZED_SERIES), e.g. c4-standard-8 or c4a-highmem-16-lssd."""
    m = _UNSIZED_RX.fullmatch(name)
    return m is not None and m["series"] in UNSIZED_SERIES


@dataclass(frozen=True)
class CustomRule:
    vcpus: tuple[int, ...]  # allowed vCPU counts; () for the shared-core E2 customs (2 fractional vCPUs)
    min_mib_per_vcpu: int
    max_mib_per_vcpu: int
    extended_max_mib: int | None = None  # total memory allowed with the -ext suffix


# Custom machine types: "<series>-custom-<vCPUs>-<MiB>[-ext]" (N1 also "custom-<vCPUs>-<MiB>"), memory a
# multiple of 256 MiB. Source: Google's own validation in the Compute Engine sample "Create VMs with custom
# machine types" (cloud.google.com/compute/docs/samples/compute-custom-machine-type-helper-class; the
# same tables in GoogleCloudPlatform/golang-samples and nodejs-docs-samples), which cites
# cloud.google.com/compute/docs/general-purpose-machines#custom_machine_types; 256 MiB steps from the
# Cloud Billing API CustomMachineType.memorySizeGb ("must be an increment of 0.25 (256 MB)").
CUSTOM: dict[str, CustomRule] = {
    "n1": CustomRule((1, *range(2, 97, 2)), 922, 6656, 624 * GIB_MIB),
    "n2": CustomRule((*range(2, 33, 2), *range(36, 129, 4)), 512, 8192, 624 * GIB_MIB),
    "n2d": CustomRule((2, 4, 8, 16, 32, 48, 64, 80, 96), 512, 8192, 768 * GIB_MIB),
    "e2": CustomRule(tuple(range(2, 33, 2)), 512, 8192),
    # shared core: 2 vCPUs at a fraction of a core; memory bounds are totals
    "e2-micro": CustomRule((), 1024, 2048),
    "e2-small": CustomRule((), 2048, 4096),
    "e2-medium": CustomRule((), 4096, 8192),
}
_CUSTOM_RX = re.compile(
    r"(?:(?P<series>[a-z0-9]+)-)?custom-(?:(?P<shared>micro|small|medium)-)?"
    r"(?:(?P<vcpus>\d+)-)?(?P<mib>\d+)(?P<ext>-ext)?"
)


def _accelerators() -> dict[str, tuple[str | None, int, str | None, int]]:
    """machine type -> (GPU type, GPUs, TPU version, chips), from the catalogue."""
    out: dict[str, tuple[str | None, int, str | None, int]] = {}
    for gpu in catalogue.GPU_TYPES.values():
        for machine, count in gpu.machine_types.items():
            out[machine] = (gpu.type, count, None, 0)
    for gen in catalogue.TPU_GENERATIONS.values():
        for machine, chips in gen.machine_types.items():
            out[machine] = (None, 0, gen.version, chips)
    return out


def _series_and_shape(name: str) -> tuple[str, str]:
    parts = name.split("-")
    return parts[0], parts[1] if len(parts) > 1 else ""


@lru_cache(maxsize=None)
def machine_type(name: str) -> MachineType:
    """The machine type GCE creates for `name`; CatalogueError (saying what is valid) if there is none."""
    accel = _accelerators()
    if name in _ACCELERATOR_HOSTS:
        vcpus, gib = _ACCELERATOR_HOSTS[name]
        gpu_type, gpus, tpu, chips = accel.get(name, (None, 0, None, 0))
        series, shape = _series_and_shape(name)
        return MachineType(name, series, shape, vcpus, _mib(gib), False, gpu_type, gpus, tpu, chips)
    if name in _OTHER:
        series, shape, vcpus, gib, shared = _OTHER[name]
        return MachineType(name, series, shape, vcpus, _mib(gib), shared)
    if "custom" in name.split("-"):
        return _custom(name)
    series, shape = _series_and_shape(name)
    if series in UNSIZED_SERIES:  # not in unsized()'s form
        raise CatalogueError(f"unknown machine type {name!r}: {series} machine types are written {_UNSIZED_FORM}")
    m = re.fullmatch(r"([a-z0-9]+)-([a-z]+)-(\d+)(-lssd)?", name)
    shapes = PREDEFINED.get(series, {})
    if series not in _known_series():
        raise CatalogueError(
            f"unknown machine type {name!r}: series {series!r} is not one of {', '.join(_known_series())}"
        )
    if m is None or shape not in shapes:
        raise CatalogueError(f"unknown machine type {name!r}; {series} offers: {', '.join(_valid_names(series))}")
    vcpus, lssd = int(m.group(3)), bool(m.group(4))
    ratio, sizes = shapes[shape]
    if lssd:
        sizes = _LSSD.get(series, {}).get(shape, ())
    if vcpus not in sizes:
        raise CatalogueError(
            f"unknown machine type {name!r}: {series}-{shape}{'-*-lssd' if lssd else ''} comes with "
            f"{', '.join(map(str, sizes)) or 'no'} vCPUs; {series} offers: {', '.join(_valid_names(series))}"
        )
    base = f"{series}-{shape}-{vcpus}"
    gib = _MEMORY_EXCEPTIONS.get(base, ratio * vcpus)
    return MachineType(name, series, shape, vcpus, _mib(gib))


def _known_series() -> list[str]:
    hosts = {_series_and_shape(n)[0] for n in _ACCELERATOR_HOSTS}
    return sorted(set(PREDEFINED) | hosts)


def _valid_names(series: str) -> list[str]:
    shapes = PREDEFINED.get(series, {}).items()
    names = [f"{series}-{shape}-{{{','.join(map(str, sizes))}}}" for shape, (_, sizes) in shapes]
    names += [n for n, row in _OTHER.items() if row[0] == series]
    names += [n for n in _ACCELERATOR_HOSTS if n.startswith(series + "-")]
    if series in CUSTOM:
        names.append("custom-<vCPUs>-<MiB>" if series == "n1" else f"{series}-custom-<vCPUs>-<MiB>")
    return names


def _custom(name: str) -> MachineType:
    m = _CUSTOM_RX.fullmatch(name)
    allowed = ", ".join(sorted({k.split("-")[0] for k in CUSTOM}))
    if m is None:
        raise CatalogueError(
            f"{name!r} is not a custom machine type; write <series>-custom-<vCPUs>-<MiB> (series: {allowed}), "
            "e.g. n2-custom-8-32768, or e2-custom-small-<MiB>"
        )
    if m.group("series") == "n1":
        raise CatalogueError(f"{name!r}: N1 custom machine types are written custom-<vCPUs>-<MiB> (no series prefix)")
    series = m.group("series") or "n1"  # the sample names N1 custom types "custom-<vCPUs>-<MiB>"
    key = f"{series}-{m.group('shared')}" if m.group("shared") else series
    rule = CUSTOM.get(key)
    if rule is None:
        raise CatalogueError(f"{name!r}: custom machine types are modelled for {allowed} only, not {series}")
    mib = int(m.group("mib"))
    problems: list[str] = []
    if m.group("shared"):
        if m.group("vcpus") is not None or m.group("ext"):
            problems.append(f"{series}-custom-{m.group('shared')} takes only a memory size")
        vcpus, shared = 2, True
        lo, hi = rule.min_mib_per_vcpu, rule.max_mib_per_vcpu
    else:
        if m.group("vcpus") is None:
            raise CatalogueError(f"{name!r}: write {series}-custom-<vCPUs>-<MiB>")
        vcpus, shared = int(m.group("vcpus")), False
        if vcpus not in rule.vcpus:
            problems.append(f"{series} custom vCPUs must be one of {_ranges(rule.vcpus)}, not {vcpus}")
        lo, hi = rule.min_mib_per_vcpu * vcpus, rule.max_mib_per_vcpu * vcpus
    if mib % 256:
        problems.append(f"memory must be a multiple of 256 MiB, not {mib}")
    if mib < lo:
        problems.append(f"{mib} MiB is below {series}'s minimum of {lo} MiB for this shape")
    elif m.group("ext"):
        if rule.extended_max_mib is None:
            problems.append(f"{series} has no extended memory (-ext)")
        elif mib > rule.extended_max_mib:
            problems.append(f"{mib} MiB exceeds {series}'s extended-memory maximum of {rule.extended_max_mib} MiB")
    elif mib > hi:
        ext = f" (more needs the -ext suffix, up to {rule.extended_max_mib} MiB)" if rule.extended_max_mib else ""
        problems.append(f"{mib} MiB exceeds {series}'s maximum of {hi} MiB for this shape{ext}")
    if problems:
        raise CatalogueError(f"{name!r} is not a valid custom machine type: " + "; ".join(problems))
    return MachineType(name, series, "custom", vcpus, mib, shared)


def _ranges(values: tuple[int, ...]) -> str:
    if len(values) <= 10:
        return ", ".join(map(str, values))
    return f"{values[0]}, {values[1]}, {values[2]}, ..., {values[-1]}"


# --- What GKE leaves to pods ------------------------------------------------------------------

@dataclass(frozen=True)
class Allocatable:
    cpu_millis: int
    memory_bytes: int


# GKE Standard node reservations, "About GKE node sizing" -> "Node allocatable resources"
# (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_cpu, formerly
# concepts/cluster-architecture#node_allocatable): memory 255 MiB for machines with less than 1 GiB,
# else 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above
# 128 GiB; plus 100 MiB for eviction. CPU 6% of the first core, 1% of the next, 0.5% of the next 2,
# 0.25% of any above 4; shared-core E2 types reserve 1060 mCPU in total; more than 110 pods per node
# adds 400 mCPU. The same brackets are in the cluster autoscaler's GCE template code
# (kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/reserved.go) and in
# cloudpilot-ai/karpenter-provider-gcp (pkg/utils ResolveReservedResource).
MEMORY_BRACKETS_MIB: tuple[tuple[int, float], ...] = (  # (upper bound of the bracket, rate)
    (4 * GIB_MIB, 0.25), (8 * GIB_MIB, 0.20), (16 * GIB_MIB, 0.10), (128 * GIB_MIB, 0.06), (1 << 62, 0.02),
)
SMALL_MACHINE_RESERVED_MIB = 255
EVICTION_HARD_MIB = 100
CPU_BRACKETS_MILLIS: tuple[tuple[int, float], ...] = ((1000, 0.06), (2000, 0.01), (4000, 0.005), (1 << 62, 0.0025))
SHARED_CORE_RESERVED_MILLIS = 1060
DEFAULT_MAX_PODS = 110
MANY_PODS_EXTRA_MILLIS = 400

# The kubelet's memory capacity is not the machine's memory: the guest kernel keeps its page tables
# (struct page, 1/64 of memory) and a fixed part (kubernetes/autoscaler reserved.go
# CalculateKernelReserved: 1/64 + 16 MiB + 64 MiB swiotlb). GKE applies the brackets above to that
# capacity. Measured GKE 1.27-1.29 COS nodes (2i2c-org/infrastructure
# src/deployer/dev/commands/generate/resource_allocation/instance_capacities.yaml: n1-standard-2..64,
# n1-highmem-4, n2-highmem-2..32) show a fixed part of 105-310 MiB; 320 MiB keeps every one of them
# at or above the allocatable computed here (tests/test_machines.py holds that data).
KERNEL_RESERVED_FIXED_MIB = 320


def _bracketed(amount: float, brackets: tuple[tuple[int, float], ...]) -> float:
    reserved, floor = 0.0, 0
    for ceiling, rate in brackets:
        if amount > floor:
            reserved += (min(amount, ceiling) - floor) * rate
        floor = ceiling
    return reserved


def kube_reserved_memory_mib(capacity_mib: float) -> float:
    """GKE's memory reservation for a node whose kubelet sees `capacity_mib` (eviction threshold apart)."""
    if capacity_mib < GIB_MIB:
        return SMALL_MACHINE_RESERVED_MIB
    return _bracketed(capacity_mib, MEMORY_BRACKETS_MIB)


def kube_reserved_cpu_millis(mt: MachineType, max_pods: int = DEFAULT_MAX_PODS) -> int:
    if mt.shared_core:
        reserved = SHARED_CORE_RESERVED_MILLIS
    else:
        reserved = round(_bracketed(mt.vcpus * 1000, CPU_BRACKETS_MILLIS))
    return reserved + (MANY_PODS_EXTRA_MILLIS if max_pods > DEFAULT_MAX_PODS else 0)


def capacity_memory_mib(mt: MachineType) -> float:
    """The memory the kubelet reports as capacity (estimate, see KERNEL_RESERVED_FIXED_MIB)."""
    return mt.memory_mib - mt.memory_mib / 64 - KERNEL_RESERVED_FIXED_MIB


def allocatable(mt: MachineType | str, max_pods: int = DEFAULT_MAX_PODS) -> Allocatable:
    """What the scheduler may place on one Standard node of this type (node allocatable), before
    GKE's own DaemonSets: subtract system_daemons(mt) for what is left to workloads."""
    if isinstance(mt, str):
        mt = machine_type(mt)
    cap = capacity_memory_mib(mt)
    memory_mib = cap - kube_reserved_memory_mib(cap) - EVICTION_HARD_MIB
    cpu = mt.vcpus * 1000 - kube_reserved_cpu_millis(mt, max_pods)
    return Allocatable(max(cpu, 0), max(int(memory_mib * MIB), 0))


# Requests of what GKE runs on every Standard node (kube-system DaemonSets and the kube-proxy static
# pod), as measured on GKE 1.29 nodes by 2i2c (daemonset_requests.yaml, same folder as above): 354m CPU
# and 656 MiB for calico-node (network policy), fluentbit-gke, gke-metadata-server (workload
# identity), gke-metrics-agent, ip-masq-agent, netd and pdcsi-node plus two DaemonSets of 2i2c's own
# (15m, 130 MiB: an overcount we keep as margin), and the kube-proxy pod, "currently requesting 100m
# CPU (no memory requests)" (ibid.; the request is the cpurequest of kubernetes/kubernetes
# cluster/gce/manifests/kube-proxy.manifest). GPU nodes add the NVIDIA device plugin DaemonSet, 50m
# and 20 MiB (GoogleCloudPlatform/container-engine-accelerators cmd/nvidia_gpu/device-plugin.yaml).
# TPU nodes add GKE's TPU device plugin, whose manifest is not public: assumed the same as the GPU
# plugin (an estimate).
SYSTEM_DAEMONS_CPU_MILLIS = 454
SYSTEM_DAEMONS_MEMORY_MIB = 656
DEVICE_PLUGIN_CPU_MILLIS = 50
DEVICE_PLUGIN_MEMORY_MIB = 20


def system_daemons(mt: MachineType | str) -> Allocatable:
    """A conservative allowance for GKE's own pods on one node; the placement model subtracts it."""
    if isinstance(mt, str):
        mt = machine_type(mt)
    cpu, mib = SYSTEM_DAEMONS_CPU_MILLIS, SYSTEM_DAEMONS_MEMORY_MIB
    if mt.gpus or mt.tpu_chips:
        cpu, mib = cpu + DEVICE_PLUGIN_CPU_MILLIS, mib + DEVICE_PLUGIN_MEMORY_MIB
    return Allocatable(cpu, mib * MIB)


def workload_allocatable(
    mt: MachineType | str, max_pods: int = DEFAULT_MAX_PODS, attached_gpus: int = 0
) -> Allocatable:
    """allocatable() less system_daemons(): what one node offers to the workload's pods."""
    if isinstance(mt, str):
        mt = machine_type(mt)
    alloc, daemons = allocatable(mt, max_pods), system_daemons(mt)
    if attached_gpus and not mt.gpus:  # N1 + T4: the device plugin runs there too
        daemons = Allocatable(
            daemons.cpu_millis + DEVICE_PLUGIN_CPU_MILLIS, daemons.memory_bytes + DEVICE_PLUGIN_MEMORY_MIB * MIB
        )
    return Allocatable(
        max(alloc.cpu_millis - daemons.cpu_millis, 0), max(alloc.memory_bytes - daemons.memory_bytes, 0)
    )


# --- GPUs on N1 -------------------------------------------------------------------------------

# GPUs GCE attaches to N1 general-purpose VMs (standard, highmem, highcpu and N1 custom shapes; not
# megamem/ultramem, not shared-core, no other series): GPU count -> (max vCPUs, max memory GiB).
# Source: GCE "GPU machine types" / "About GPUs" (cloud.google.com/compute/docs/gpus), T4 rows, as
# transcribed in skypilot-org/skypilot sky/clouds/service_catalog/gcp_catalog.py
# _NUM_ACC_TO_MAX_CPU_AND_MEMORY ("Refer to: https://cloud.google.com/compute/docs/gpus").
N1_GPU_LIMITS: dict[str, dict[int, tuple[int, int]]] = {
    "nvidia-tesla-t4": {1: (48, 312), 2: (48, 312), 4: (96, 624)},
}


def n1_gpu_problem(gpu_type: str, count: int, machine: str) -> str | None:
    """Why GCE would not attach `count` x `gpu_type` to this N1 machine type, or None."""
    limits = N1_GPU_LIMITS[gpu_type]
    try:
        mt = machine_type(machine)
    except CatalogueError as e:
        return str(e)
    if mt.series != "n1" or mt.shared_core:
        return f"{gpu_type} attaches to N1 general-purpose machine types only, not {machine!r}"
    if not mt.general_purpose:
        return (
            f"{gpu_type} attaches to N1 standard, highmem, highcpu or custom shapes only, not {machine!r} "
            f"(n1-{mt.shape})"
        )
    if count not in limits:
        return f"{gpu_type} comes in counts of {', '.join(map(str, limits))} per VM, not {count}"
    max_vcpus, max_gib = limits[count]
    if mt.vcpus > max_vcpus or mt.memory_mib > max_gib * GIB_MIB:
        return (
            f"{machine} ({mt.vcpus} vCPUs, {mt.memory_mib / GIB_MIB:g} GiB) is too large for {count} x {gpu_type}: "
            f"GCE allows at most {max_vcpus} vCPUs and {max_gib} GiB with {count} of them"
        )
    return None


def check_gpu(gpu_type: str, count: int, machine_type: str) -> None:
    """Raise CatalogueError unless GKE can attach `count` GPUs of `gpu_type` to `machine_type`."""
    gpu = catalogue.GPU_TYPES.get(gpu_type)
    if gpu is None:
        raise CatalogueError(f"unknown GPU type {gpu_type!r}; allowed: {', '.join(catalogue.GPU_TYPES)}")
    if not gpu.machine_types:
        # N1 general-purpose shapes only, within GCE's vCPU/memory limits per GPU count
        # (N1_GPU_LIMITS cites the GCE GPU doc).
        problem = n1_gpu_problem(gpu_type, count, machine_type)
        if problem:
            raise CatalogueError(problem)
        return
    per_vm = gpu.machine_types.get(machine_type)
    if per_vm is None:
        raise CatalogueError(
            f"{machine_type!r} does not carry {gpu_type}; allowed: {', '.join(gpu.machine_types)}"
        )
    if count != per_vm:
        raise CatalogueError(f"{machine_type} carries exactly {per_vm} x {gpu_type}, not {count}")
