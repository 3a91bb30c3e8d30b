"""What GKE Autopilot admits and can place: per-pod request limits of its compute classes.

Autopilot raises requests below a class's minimum (and to its CPU:memory ratio) and rejects pods
whose requests exceed the maximum ("Resource requests in Autopilot",
cloud.google.com/kubernetes-engine/docs/concepts/autopilot-resource-requests). autopilot_problems()
reports the rejections, and pods that no node of their class could hold. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import machines

GIB = 1 << 30
MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    max_cpu_millis: int
    max_memory_mib: int
    source: str  # where the number comes from


@dataclass(frozen=True)
class AutopilotClass:
    name: str  # the compute class, or the GPU type / TPU version the pod selects
    min_cpu_millis: int | None  # raised to, not rejected; None where not established here
    min_memory_mib: int | None
    ratio_gib_per_vcpu: tuple[float, float] | None  # enforced by raising one request; None: not enforced
    limits: dict[int, Limits]  # accelerators per pod -> maxima; {0: ...} for CPU classes


def _derived(host: str) -> Limits:
    """Upper bound from the node Autopilot must use: one node's allocatable less GKE's daemons."""
    alloc = machines.workload_allocatable(host, attached_gpus=1)
    return Limits(alloc.cpu_millis, alloc.memory_bytes // MIB, f"derived from {host} (machines.workload_allocatable)")


# CPU compute classes, the "Minimum and maximum resource requests" table of the page above
# (autopilot-resource-requests#min-max-requests; read here in a public transcription of that table,
# not on the page itself): general purpose 1:1 to 1:6.5, 50m / 52 MiB minimum where bursting is
# supported (250m / 512 MiB where it is not; we take the larger), at most 30 vCPU and 110 GiB;
# Balanced 1:1 to 1:8, 0.25 vCPU / 0.5 GiB, at most 222 vCPU and 851 GiB.
_DOC = "autopilot-resource-requests#min-max-requests"
CPU_CLASSES: dict[str, AutopilotClass] = {
    "general-purpose": AutopilotClass("general-purpose", 250, 512, (1, 6.5), {0: Limits(30_000, 110 * 1024, _DOC)}),
    "balanced": AutopilotClass("balanced", 250, 512, (1, 8), {0: Limits(222_000, 851 * 1024, _DOC)}),
}

# GPU types Autopilot runs: T4, L4 and A100 40/80 GB named in Autopilot's own rejection message
# ("supported values are: [nvidia-a100-80gb, nvidia-tesla-a100, nvidia-tesla-t4]",
# substratusai/helm#8, 2023) and the L4 tutorial change GoogleCloudPlatform/kubernetes-engine-samples#1040
# (nvidia-l4 a "valid option" per autopilot-gpus#request-gpus); H100 (A3 High), H100 Mega (A3 Mega),
# H200 (A3 Ultra) and B200 (A4) by Google's Autopilot manifests for them in
# GoogleCloudPlatform/container-engine-accelerators (gpudirect-tcpx/nccl-test-latest-autopilot.yaml,
# gpudirect-tcpxo/nccl-test-latest-autopilot.yaml, gpudirect-rdma/nccl-rdma-installer-autopilot.yaml,
# gpudirect-rdma/nccl-test-a4-autopilot.yaml).
#
# Per-pod maxima: the doc's GPU table (autopilot-resource-requests#hardware-min-max) was not readable
# in the stored copies available when this was written. One row is confirmed by Autopilot's own
# rejection quoted in argoproj/argo-workflows#13073 (nvidia-tesla-a100 x1: "higher than the Autopilot
# maximum of '11'" CPU and "'74Gi'" memory); every other row is an upper bound derived from the node
# the pod must land on (the catalogue's machine type for that count; for T4 the largest N1 shape GCE
# attaches that many T4s to), so it never refuses a pod Autopilot would take, but may let through a
# pod slightly above the documented maximum.
_T4_HOSTS = {1: "custom-48-319488", 2: "custom-48-319488", 4: "custom-96-638976"}  # N1_GPU_LIMITS at 6.5 GiB/vCPU


def _gpu_class(gpu_type: str) -> AutopilotClass:
    gpu = catalogue.GPU_TYPES[gpu_type]
    hosts: dict[int, str] = {}
    if gpu.machine_types:
        for machine, count in gpu.machine_types.items():  # the largest host for each count
            if count not in hosts or machines.machine_type(machine).vcpus > machines.machine_type(hosts[count]).vcpus:
                hosts[count] = machine
    else:
        hosts = dict(_T4_HOSTS)
    return AutopilotClass(gpu_type, None, None, None, {n: _derived(h) for n, h in sorted(hosts.items())})


AUTOPILOT_GPUS: tuple[str, ...] = (
    "nvidia-tesla-t4", "nvidia-l4", "nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-h100-80gb",
    "nvidia-h100-mega-80gb", "nvidia-h200-141gb", "nvidia-b200",
)
# TPU versions Autopilot runs ("Deploy TPU workloads in GKE Autopilot",
# cloud.google.com/kubernetes-engine/docs/how-to/tpus-autopilot): every generation the catalogue has.
# Not re-verified against the page in this session; listed so that none is refused.
AUTOPILOT_TPU_VERSIONS: tuple[str, ...] = tuple(catalogue.TPU_GENERATIONS)

_CONFIRMED = {
    ("nvidia-tesla-a100", 1): Limits(11_000, 74 * 1024, "argoproj/argo-workflows#13073 (Autopilot rejection)"),
}


def _build() -> dict[str, AutopilotClass]:
    table: dict[str, AutopilotClass] = dict(CPU_CLASSES)
    for gpu_type in AUTOPILOT_GPUS:
        cls = _gpu_class(gpu_type)
        for (g, n), lim in _CONFIRMED.items():
            if g == gpu_type:
                cls.limits[n] = lim
        table[gpu_type] = cls
    for version in AUTOPILOT_TPU_VERSIONS:
        gen = catalogue.TPU_GENERATIONS[version]
        by_chips = sorted(gen.machine_types.items(), key=lambda kv: kv[1])
        limits = {chips: _derived(machine) for machine, chips in by_chips}
        table[version] = AutopilotClass(version, None, None, None, limits)
    return table


AUTOPILOT: dict[str, AutopilotClass] = _build()


def _tpu_version(accelerator: str) -> str | None:
    if accelerator in catalogue.TPU_GENERATIONS:
        return accelerator
    for gen in catalogue.TPU_GENERATIONS.values():
        if gen.accelerator == accelerator:
            return gen.version
    return None


def autopilot_problems(
    accelerator: str | None, count: int, cpu_millis: int, memory_bytes: int, compute_class: str = "general-purpose"
) -> list[str]:
    """Why Autopilot would reject this pod or never place it; [] if it would not.

    accelerator: a GPU type (cloud.google.com/gke-accelerator), a TPU version or TPU accelerator
    label, or None for a CPU pod of `compute_class`. count: GPUs or TPU chips the pod requests."""
    if accelerator is None:
        cls = CPU_CLASSES.get(compute_class)
        if cls is None:
            return [f"unknown Autopilot compute class {compute_class!r}; known: {', '.join(CPU_CLASSES)}"]
        cpu, mem = _ratio_adjusted(cls, cpu_millis, memory_bytes)
        return _over(cls.name, cls.limits[0], cpu, mem, (cpu != cpu_millis, mem != memory_bytes))
    key = accelerator if accelerator in AUTOPILOT else _tpu_version(accelerator)
    if key is None or key not in AUTOPILOT:
        return [
            f"Autopilot does not run {accelerator!r}: GPU types {', '.join(AUTOPILOT_GPUS)}; "
            f"TPU versions {', '.join(AUTOPILOT_TPU_VERSIONS)}"
        ]
    cls = AUTOPILOT[key]
    lim = cls.limits.get(count)
    if lim is None:
        unit = "chips" if key in catalogue.TPU_GENERATIONS else "GPUs"
        return [f"Autopilot {key} pods request {', '.join(map(str, cls.limits))} {unit}, not {count}"]
    return _over(f"{count} x {key}", lim, cpu_millis, memory_bytes, (False, False))


def _ratio_adjusted(cls: AutopilotClass, cpu_millis: int, memory_bytes: int) -> tuple[int, int]:
    """Requests after Autopilot raises them to the class minimum and into its CPU:memory ratio."""
    cpu = max(cpu_millis, cls.min_cpu_millis or 0)
    mem = max(memory_bytes, (cls.min_memory_mib or 0) * MIB)
    if cls.ratio_gib_per_vcpu:
        lo, hi = cls.ratio_gib_per_vcpu
        mem = max(mem, int(cpu * lo * GIB / 1000))
        cpu = max(cpu, -(-mem * 1000 // int(hi * GIB)))
    return cpu, mem


def _over(what: str, lim: Limits, cpu: int, mem: int, adjusted: tuple[bool, bool]) -> list[str]:
    note = [" (as raised to Autopilot's CPU:memory ratio)" if a else "" for a in adjusted]
    out = []
    if cpu > lim.max_cpu_millis:
        out.append(
            f"Autopilot {what}: cpu request {cpu}m{note[0]} exceeds the maximum {lim.max_cpu_millis}m [{lim.source}]"
        )
    if mem > lim.max_memory_mib * MIB:
        out.append(
            f"Autopilot {what}: memory request {mem // MIB} MiB{note[1]} exceeds the maximum {lim.max_memory_mib} MiB "
            f"[{lim.source}]"
        )
    return out
