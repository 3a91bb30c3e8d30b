"""The accelerator catalogue: what GKE offers per TPU generation and GPU type.

One place for every number that a node pool, a ResourceFlavor, a quota or a policy rule
derives from (chips per VM, VMs per slice, node labels). Pure data and pure functions; no
Pulumi, no pydantic, so the policy pack can import it too.

Sources: GKE "Plan TPUs in GKE" (cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus),
"TPU Ironwood" (.../concepts/tpu-ironwood), "About GPUs" (.../concepts/gpus), and xpk's
system_characteristics.py (AI-Hypercomputer/xpk), which maps the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod

TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
GPU_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"

TPU_RESOURCE = "google.com/tpu"
GPU_RESOURCE = "nvidia.com/gpu"

# GKE taints every TPU and GPU node with these (the extended-resource toleration admission
# controller adds the matching tolerations to pods that request the resource).
TPU_TAINT = {"key": TPU_RESOURCE, "value": "present", "effect": "NoSchedule"}
GPU_TAINT = {"key": GPU_RESOURCE, "value": "present", "effect": "NoSchedule"}


@dataclass(frozen=True)
class Quota:
    """A regional Compute Engine quota (compute.googleapis.com) a node draws on, as the
    console's Quotas page names it (IAM & Admin > Quotas, filter by name), with the API's
    metric name where Google documents one. GKE's nodes are Compute Engine VMs, so TPU and GPU
    node pools draw on Compute Engine quota, not the Cloud TPU API's (GKE docs
    troubleshooting/tpus, "Insufficient quota"; Cloud TPU docs tpu/docs/quota: "If you are using
    GKE, see Ensure sufficient quota")."""

    name: str
    metric: str | None = None
    global_: bool = False  # a project-wide limit over every region (GPUs (all regions))


# Capacity that draws on preemptible quota: Spot VMs (Compute Engine docs compute/resource-usage,
# "Preemptible quotas"), flex-start and queued provisioning (the Dynamic Workload Scheduler's
# two modes: GKE docs how-to/dws-flex-start-training and how-to/provisioningrequest, "Quota":
# they consume preemptible quota although their VMs are not preempted). Reservations draw on
# the reservation itself: creating it consumed the quota, and a pool that uses it needs none.
PREEMPTIBLE_QUOTA_CAPACITIES = ("spot", "flexStart", "queued")
RESERVATION_CAPACITY = "reservation"
# The on-demand TPU chips of v6e and later, one quota with the family as a dimension (tpu_family
# CT6E, tpu7x): Cloud TPU docs v6e-intro, "Prerequisites" ("Verify that your project has enough
# TPUS_PER_TPU_FAMILY quota", https://cloud.google.com/tpu/docs/v6e-intro, read in its ?hl=ja
# translation); the display names and dimension values are from GKE docs troubleshooting/tpus.
TPUS_PER_TPU_FAMILY = "TPUS_PER_TPU_FAMILY"


@dataclass(frozen=True)
class TpuGeneration:
    version: str  # the config value: v4, v5e, v5p, v6e, tpu7x
    accelerator: str  # value of cloud.google.com/gke-tpu-accelerator
    dims: int  # 2 for AxB, 3 for AxBxC
    machine_types: dict[str, int]  # machine type -> chips per VM
    default_machine_type: str  # the 4-chip type
    shapes_2d: tuple[str, ...] = ()  # 2D generations: every slice shape GKE offers, smallest first
    max_cubes: int = 0  # 3D generations: the most 4x4x4 cubes a slice spans (the 3D rule below)
    any_order: bool = False  # 3D: AxBxC in any order (v4), else A <= B <= C
    single_chip_machine_type: str | None = None  # for 1x1
    workload_policy: bool = False  # multi-host placement via a HIGH_THROUGHPUT workload policy
    min_gke_version: str | None = None
    # Compute Engine's TPU quotas, in chips (compute/resource-usage#tpu_quota; GKE docs
    # troubleshooting/tpus#insufficient_quota): on-demand, and preemptible (spot, flex-start,
    # queued). v6e and tpu7x on-demand chips are one metric, "TPUs per TPU family", with the
    # family as a dimension (TPUS_PER_TPU_FAMILY below). The metric ids are those
    # `gcloud compute regions describe REGION --format='value(quotas)'` lists and the console's
    # Quotas & System Limits page filters by (compute.googleapis.com/<metric in lower case>), as
    # projects report them: v5e TPU_LITE_PODSLICE_V5, v5p TPU_V5P, v6e PREEMPTIBLE_TPU_V6E and their
    # PREEMPTIBLE_ forms. tpu7x's preemptible metric is not written where this could read it:
    # its row names the quota alone.
    quota: Quota | None = None
    preemptible_quota: Quota | None = None
    # Reservations (RESERVATION_FEATURES below): a node pool may target one block or sub-block
    # of a reservation of this generation, and a future reservation in calendar mode holds it.
    reservation_blocks: bool = False
    calendar_mode: bool = False
    sub_block_vms: int | None = None  # VMs (hosts) in one sub-block, where GKE documents it

    @property
    def topologies(self) -> tuple[str, ...]:
        """Every slice shape GKE offers for this generation, smallest first."""
        return _enumerate_topologies(self.dims, self.shapes_2d, self.max_cubes, self.any_order)


# The 3D slice rule, as xpk derives the shapes GKE offers (generate_tpu_topologies in
# AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py): the four sub-cube shapes, and
# every AxBxC whose sides are multiples of 4 (a 4x4x4 cube of chips) up to 256 and that spans at
# most `max_cubes` cubes, (A/4)(B/4)(C/4); A <= B <= C except on v4 (xpk's
# enforce_nondecreasing=False). xpk calls it with max_cubes 64 for v4, 140 for v5p and 144 for
# tpu7x. A rule, not a list: the hand-written list this replaced lacked shapes GKE offers (v5p
# 4x4x20, tpu7x 4x4x12); every shape it had is within the rule.
SUB_CUBE_SHAPES = ("2x2x1", "2x2x2", "2x2x4", "2x4x4")
CUBE_SIDE = 4
MAX_SIDE = 256


def _sides(topology: str) -> tuple[int, ...] | None:
    """The sides of a topology written canonically (4x4x8, not 4x4x08), else None."""
    try:
        sides = tuple(int(d) for d in topology.split("x"))
    except ValueError:
        return None
    return sides if "x".join(map(str, sides)) == topology else None


def topology_problem(gen: TpuGeneration, topology: str) -> str | None:
    """Why GKE offers no `topology` slice of this generation, or None when it does."""
    sides = _sides(topology)
    if gen.dims == 2 or sides is None or len(sides) != 3:
        if topology in gen.shapes_2d:
            return None
        return f"{topology!r} is not a {gen.version} topology; allowed: {topology_rule(gen)}"
    if topology in SUB_CUBE_SHAPES:
        return None
    if (
        all(CUBE_SIDE <= s <= MAX_SIDE and s % CUBE_SIDE == 0 for s in sides)
        and prod(s // CUBE_SIDE for s in sides) <= gen.max_cubes
        and (gen.any_order or list(sides) == sorted(sides))
    ):
        return None
    return f"{topology!r} is not a {gen.version} topology; allowed: {topology_rule(gen)}"


def topology_rule(gen: TpuGeneration) -> str:
    """The generation's slice shapes in words, for messages."""
    if gen.dims == 2:
        return ", ".join(gen.shapes_2d)
    order = "in any order" if gen.any_order else "with A <= B <= C"
    return (
        f"{', '.join(SUB_CUBE_SHAPES)}, or AxBxC {order}, each side a multiple of {CUBE_SIDE} up to "
        f"{MAX_SIDE}, spanning at most {gen.max_cubes} {CUBE_SIDE}x{CUBE_SIDE}x{CUBE_SIDE} cubes "
        f"((A/{CUBE_SIDE})(B/{CUBE_SIDE})(C/{CUBE_SIDE}) <= {gen.max_cubes}; e.g. 4x4x4, 4x4x8, 4x8x8)"
    )


@lru_cache(maxsize=None)
def _enumerate_topologies(dims: int, shapes_2d: tuple[str, ...], max_cubes: int, any_order: bool) -> tuple[str, ...]:
    if dims == 2:
        return shapes_2d
    per_side = MAX_SIDE // CUBE_SIDE
    found = [
        (a, b, c)
        for a in range(1, per_side + 1)
        for b in range(1 if any_order else a, per_side + 1)
        if a * b <= max_cubes
        for c in range(1 if any_order else b, min(per_side, max_cubes // (a * b)) + 1)
    ]
    big = sorted(found, key=lambda t: (prod(t), t))
    return SUB_CUBE_SHAPES + tuple("x".join(str(s * CUBE_SIDE) for s in t) for t in big)


def _t(*shapes: str) -> tuple[str, ...]:
    return shapes


# Reservation features per accelerator (TpuGeneration / GpuType .reservation_blocks,
# .calendar_mode, .sub_block_vms):
# - Blocks and sub-blocks (a node pool's reservation R/reservationBlocks/B[/reservationSubBlocks/S]):
#   reservations of densely deployed GPU capacity have them: A4X, A4 and A3 Ultra (AI
#   Hypercomputer docs ai-hypercomputer/docs/terminology, "Block", "Cluster": "For A4X, A4, and
#   A3 Ultra machines ..."), and Google's own GKE blueprints target blocks of A3 Mega and A3 High
#   reservations too (GoogleCloudPlatform/cluster-toolkit examples/gke-a3-megagpu/gke-a3-megagpu.yaml
#   and examples/gke-a3-highgpu/gke-a3-highgpu.yaml: "To target a BLOCK_NAME ... input
#   <reservation-name>/reservationBlocks/<reservation-block-name>"). For TPUs, GKE's All Capacity
#   mode, which exposes a reservation's blocks and sub-blocks to node pools, "supports only
#   Ironwood (TPU7x)" (GKE docs how-to/tpu-all-capacity-mode, "Limitations"), where one
#   sub-block is one 4x4x4 cube: 64 chips on 16 hosts ("Terminology related to All Capacity mode").
#   Other accelerators' reservations have no blocks to target.
# - Calendar mode (future reservations for 1 to 90 days, the Dynamic Workload Scheduler's
#   calendar mode): "Currently offered for A3+ GPUs and TPUs only" (Compute Engine API,
#   Reservation.ReservationMode CALENDAR, google-cloud-compute v1beta), and of TPUs only v5e,
#   v5p, v6e and TPU7x (Cloud TPU docs tpu/docs/calendar-mode-reservation, "Limitations").
#   A node pool consumes the auto-created reservation as a specific one (GKE docs
#   how-to/tpu-calendar-mode, "Create a node pool": --reservation-affinity=specific, "This is required").


# The 2D generations' slice shapes: v5e and v6e offer the same ones (GKE "Plan TPUs", TPU
# v5e and v6e configurations), so they are written once.
SHAPES_2D = _t("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")

TPU_GENERATIONS: dict[str, TpuGeneration] = {
    "v4": TpuGeneration(
        version="v4",
        accelerator="tpu-v4-podslice",
        dims=3,
        machine_types={"ct4p-hightpu-4t": 4},
        default_machine_type="ct4p-hightpu-4t",
        quota=Quota("TPU v4 PodSlice chips", "TPU_V4_PODSLICE"),
        preemptible_quota=Quota("Preemptible TPU v4 PodSlice chips", "PREEMPTIBLE_TPU_V4_PODSLICE"),
        max_cubes=64,
        any_order=True,
    ),
    "v5e": TpuGeneration(
        version="v5e",
        accelerator="tpu-v5-lite-podslice",
        dims=2,
        machine_types={"ct5lp-hightpu-1t": 1, "ct5lp-hightpu-4t": 4, "ct5lp-hightpu-8t": 8},
        default_machine_type="ct5lp-hightpu-4t",
        quota=Quota("TPU v5 Lite PodSlice chips", "TPU_LITE_PODSLICE_V5"),
        preemptible_quota=Quota("Preemptible TPU v5 Lite Podslice chips", "PREEMPTIBLE_TPU_LITE_PODSLICE_V5"),
        single_chip_machine_type="ct5lp-hightpu-1t",
        shapes_2d=SHAPES_2D,
        calendar_mode=True,
    ),
    "v5p": TpuGeneration(
        version="v5p",
        accelerator="tpu-v5p-slice",
        dims=3,
        machine_types={"ct5p-hightpu-4t": 4},
        default_machine_type="ct5p-hightpu-4t",
        quota=Quota("TPU v5p chips", "TPU_V5P"),
        preemptible_quota=Quota("Preemptible TPU v5p chips", "PREEMPTIBLE_TPU_V5P"),
        max_cubes=140,
        calendar_mode=True,
    ),
    "v6e": TpuGeneration(
        version="v6e",
        accelerator="tpu-v6e-slice",
        dims=2,
        machine_types={"ct6e-standard-1t": 1, "ct6e-standard-4t": 4, "ct6e-standard-8t": 8},
        default_machine_type="ct6e-standard-4t",
        quota=Quota("TPUs per TPU family (tpu_family: CT6E)", TPUS_PER_TPU_FAMILY),
        preemptible_quota=Quota("Preemptible TPU slices v6e", "PREEMPTIBLE_TPU_V6E"),
        single_chip_machine_type="ct6e-standard-1t",
        shapes_2d=SHAPES_2D,
        calendar_mode=True,
    ),
    "tpu7x": TpuGeneration(
        version="tpu7x",
        accelerator="tpu7x",
        dims=3,
        machine_types={"tpu7x-standard-4t": 4},
        default_machine_type="tpu7x-standard-4t",
        quota=Quota("TPUs per TPU family (tpu_family: tpu7x)", TPUS_PER_TPU_FAMILY),
        preemptible_quota=Quota("Preemptible TPU slices tpu7x"),
        max_cubes=144,
        workload_policy=True,
        min_gke_version="1.34.0-gke.2201000",
        reservation_blocks=True,
        calendar_mode=True,
        sub_block_vms=16,
    ),
}



def __getattr__(name: str):
    # TPU_VERSIONS is read from TPU_GENERATIONS on each use (PEP 562), so the generations are
    # written in one place: a generation added there is a version everywhere.
    if name == "TPU_VERSIONS":
        return tuple(TPU_GENERATIONS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class TpuSlice:
    """One slice of a TPU generation at a topology, on a machine type."""

    generation: TpuGeneration
    topology: str
    machine_type: str
    chips: int
    chips_per_vm: int

    @property
    def vms(self) -> int:
        return self.chips // self.chips_per_vm

    @property
    def multi_host(self) -> bool:
        return self.vms > 1

    @property
    def accelerator(self) -> str:
        return self.generation.accelerator

    @property
    def node_labels(self) -> dict[str, str]:
        return {TPU_ACCELERATOR_LABEL: self.accelerator, TPU_TOPOLOGY_LABEL: self.topology}


class CatalogueError(ValueError):
    """A shape the catalogue does not offer; the message says what is allowed."""


def topology_chips(topology: str) -> int:
    return prod(int(d) for d in topology.split("x"))


@lru_cache(maxsize=None)
def tpu_slice(version: str, topology: str, machine_type: str | None = None) -> TpuSlice:
    """The slice GKE builds for this generation, topology and (optional) machine type."""
    gen = TPU_GENERATIONS.get(version)
    if gen is None:
        raise CatalogueError(f"unknown TPU version {version!r}; allowed: {', '.join(TPU_GENERATIONS)}")
    problem = topology_problem(gen, topology)
    if problem is not None:
        raise CatalogueError(problem)
    chips = topology_chips(topology)
    if machine_type is None:
        machine_type = default_tpu_machine_type(gen, topology)
    per_vm = gen.machine_types.get(machine_type)
    if per_vm is None:
        raise CatalogueError(
            f"{machine_type!r} is not a {version} machine type; "
            f"allowed: {', '.join(gen.machine_types)}"
        )
    allowed = tpu_topologies_for_machine(gen, machine_type)
    if topology not in allowed:
        raise CatalogueError(
            f"topology {topology!r} ({chips} chips) does not fit machine type {machine_type!r} "
            f"({per_vm} chips per VM); allowed with it: {', '.join(allowed)}"
        )
    return TpuSlice(gen, topology, machine_type, chips, per_vm)


def default_tpu_machine_type(gen: TpuGeneration, topology: str) -> str:
    if topology_chips(topology) == 1 and gen.single_chip_machine_type:
        return gen.single_chip_machine_type
    return gen.default_machine_type


def tpu_topologies_for_machine(gen: TpuGeneration, machine_type: str) -> tuple[str, ...]:
    """Topologies a machine type can build: the 4-chip type any shape of 4 chips or more
    (one VM per 4 chips), the 1- and 8-chip types only the single-host shape of their size."""
    per_vm = gen.machine_types[machine_type]
    if machine_type == gen.default_machine_type:
        return tuple(t for t in gen.topologies if topology_chips(t) >= per_vm)
    return tuple(t for t in gen.topologies if topology_chips(t) == per_vm)


@dataclass(frozen=True)
class GpuType:
    type: str  # the guest accelerator type and the cloud.google.com/gke-accelerator value
    machine_types: dict[str, int]  # machine type -> GPUs per VM; {} means any n1 shape
    # Compute Engine's GPU quotas, per region (compute/resource-usage#gpu_quota): NVIDIA_<X>_GPUS
    # for on-demand VMs, PREEMPTIBLE_NVIDIA_<X>_GPUS for spot, flex-start and queued ones.
    quota_stem: str = ""  # <X>: NVIDIA_<X>_GPUS
    # Reservations (RESERVATION_FEATURES below): blocks and sub-blocks; calendar mode.
    reservation_blocks: bool = False
    calendar_mode: bool = False

    @property
    def quota(self) -> Quota:
        return Quota(f"NVIDIA {self.quota_label} GPUs", f"NVIDIA_{self.quota_stem}_GPUS")

    @property
    def preemptible_quota(self) -> Quota:
        return Quota(f"Preemptible NVIDIA {self.quota_label} GPUs", f"PREEMPTIBLE_NVIDIA_{self.quota_stem}_GPUS")

    @property
    def quota_label(self) -> str:
        return self.quota_stem.replace("_", " ")


GPU_TYPES: dict[str, GpuType] = {
    g.type: g
    for g in (
        # T4 attaches to N1 general-purpose machine types in counts of 1, 2 or 4 (machines.N1_GPU_LIMITS).
        GpuType("nvidia-tesla-t4", {}, "T4"),
        GpuType(
            "nvidia-l4",
            {
                "g2-standard-4": 1, "g2-standard-8": 1, "g2-standard-12": 1,
                "g2-standard-16": 1, "g2-standard-32": 1, "g2-standard-24": 2,
                "g2-standard-48": 4, "g2-standard-96": 8,
            },
            "L4",
        ),
        GpuType(
            "nvidia-tesla-a100",
            {
                "a2-highgpu-1g": 1, "a2-highgpu-2g": 2, "a2-highgpu-4g": 4,
                "a2-highgpu-8g": 8, "a2-megagpu-16g": 16,
            },
            "A100",
        ),
        GpuType(
            "nvidia-a100-80gb",
            {"a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4, "a2-ultragpu-8g": 8},
            "A100_80GB",
        ),
        GpuType(
            "nvidia-h100-80gb",
            {"a3-highgpu-1g": 1, "a3-highgpu-2g": 2, "a3-highgpu-4g": 4, "a3-highgpu-8g": 8},
            "H100",
            reservation_blocks=True,
            calendar_mode=True,
        ),
        GpuType("nvidia-h100-mega-80gb", {"a3-megagpu-8g": 8}, "H100_MEGA", reservation_blocks=True, calendar_mode=True),
        GpuType("nvidia-h200-141gb", {"a3-ultragpu-8g": 8}, "H200", reservation_blocks=True, calendar_mode=True),
        GpuType("nvidia-b200", {"a4-highgpu-8g": 8}, "B200", reservation_blocks=True, calendar_mode=True),
    )
}

T4_COUNTS = (1, 2, 4)

# Every GPU, on-demand or preemptible, in any region, also counts against one project-wide
# limit (compute/resource-usage#gpu_quota, "GPUs (all regions)").
GPUS_ALL_REGIONS = Quota("GPUs (all regions)", "GPUS_ALL_REGIONS", global_=True)

# vCPU quotas of the machine series a node pool can use (compute/resource-usage#cpu_quota): E2
# and N1 share "CPUs"; A2 and A3 have their own; newer series count in "CPUs per VM family"
# with the family as a dimension. Spot, flex-start and queued VMs draw on "Preemptible CPUs"
# where the project has that quota in the region (and on the series' own quota otherwise).
# TPU hosts count in TPU chips alone.
CPUS = Quota("CPUs", "CPUS")
CPU_QUOTAS: dict[str, Quota] = {
    "e2": CPUS,
    "n1": CPUS,
    "n2": Quota("N2 CPUs", "N2_CPUS"),
    "n2d": Quota("N2D CPUs", "N2D_CPUS"),
    "c2": Quota("C2 CPUs", "C2_CPUS"),
    "a2": Quota("A2 CPUs", "A2_CPUS"),
    "a3": Quota("A3 CPUs", "A3_CPUS"),
}
PREEMPTIBLE_CPUS = Quota("Preemptible CPUs", "PREEMPTIBLE_CPUS")


def cpu_quota(series: str) -> Quota:
    """The on-demand vCPU quota of a machine series (CPU_QUOTAS, else CPUs per VM family)."""
    return CPU_QUOTAS.get(series) or Quota(f"CPUs per VM family (vm_family: {series.upper()})", "CPUS_PER_VM_FAMILY")


def default_gpu_machine_type(gpu_type: str, count: int) -> str | None:
    """The machine type that carries exactly `count` GPUs of this type, if there is one."""
    gpu = GPU_TYPES.get(gpu_type)
    if gpu is None:
        return None
    for machine, per_vm in gpu.machine_types.items():
        if per_vm == count:
            return machine
    return None
