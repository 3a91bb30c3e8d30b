"""report.md's "Quota to request": the Compute Engine quota each node pool draws on at its
maximum size, per project and region, and the sum per metric to ask for.

The quota names are the catalogue's (gke_ai_batch/domain/catalogue.py: TpuGeneration.quota, GpuType.quota,
cpu_quota, PREEMPTIBLE_QUOTA_CAPACITIES), not this module's: it only counts."""

from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.config.reservations import shown, spec_of
from gke_ai_batch.domain import catalogue
from gke_ai_batch.domain.catalogue import Quota
from gke_ai_batch.domain.machines import machine_type
from gke_ai_batch.domain.regions import region_of
from gke_ai_batch.model import computeclass, facts
from gke_ai_batch.plan.computeclasses import compute_class_manifest

from .md import DASH, code, plural, table

GLOBAL = "global"


@dataclass(frozen=True)
class Draw:
    """What one pool (or the system pool, or Autopilot's workloads) takes of one quota."""

    project: str
    region: str  # GLOBAL for a project-wide limit
    cluster: str
    pool: str
    quota: Quota | None  # None: a reservation, no quota to request
    figure: int | None  # None: a machine type the catalogue does not size
    unit: str
    basis: str
    # A ComputeClass's priorities are alternatives: its nodes at the class's limits are shared
    # between them, so the sum to request takes the most any one of them draws.
    alternative: str = ""


def draws(plan) -> list[Draw]:
    """Every quota a cluster's pools draw on at their ceiling, in pool order."""
    cfg = plan.config
    cluster = cfg.cluster.name
    region = region_of(cfg.cluster.location)
    entries = {e.name: e for e in cfg.node_pools}
    out: list[Draw] = []

    def add(pool: str, quota: Quota | None, figure: int | None, unit: str, basis: str, alternative: str = "") -> None:
        where = GLOBAL if quota is not None and quota.global_ else region
        out.append(Draw(plan.project, where, cluster, pool, quota, figure, unit, basis, alternative))

    def cpus(pool: str, name: str, nodes: int, preemptible: bool, how: str, alternative: str = "") -> None:
        try:
            mt = machine_type(name)
        except catalogue.CatalogueError:
            # A machine type the catalogue does not size renders unchecked; its series may
            # still say which quota it draws on.
            series = name.split("-", 1)[0]
            quota = catalogue.PREEMPTIBLE_CPUS if preemptible else catalogue.cpu_quota(series)
            add(pool, quota, None, "vCPUs", f"{nodes} × {name}: not in the catalogue (gke_ai_batch/domain/machines.py), vCPUs unknown",
                alternative)
            return
        quota = catalogue.PREEMPTIBLE_CPUS if preemptible else catalogue.cpu_quota(mt.series)
        add(pool, quota, mt.vcpus * nodes, "vCPUs", f"{nodes} × {name} ({mt.vcpus} vCPUs){how}", alternative)

    if cfg.cluster.standard and cfg.cluster.system is not None:
        system = cfg.cluster.system
        cpus("system", system.machine_type, system.max_nodes, False, "")
    for pool in plan.pools:
        entry = entries[pool.entry]
        preemptible = pool.capacity in catalogue.PREEMPTIBLE_QUOTA_CAPACITIES
        fallback = ""
        if pool.capacity == catalogue.RESERVATION_CAPACITY:
            if spec_of(entry.reservation).affinity != "any":
                unit = "TPU chips" if pool.tpu is not None else "GPUs" if pool.kind == "gpu" else "VMs"
                add(pool.name, None, pool.chips if pool.kind != "cpu" else pool.nodes, unit,
                    f"reservation {code(shown(entry.reservation))}: the reservation holds the quota; nothing to request")
                continue
            # ANY_RESERVATION falls back to on-demand VMs when no matching reservation has room.
            fallback = ": on-demand when no matching reservation has room (ANY_RESERVATION)"
        if pool.tpu is not None:
            gen = pool.tpu.generation
            add(pool.name, gen.preemptible_quota if preemptible else gen.quota, pool.chips, "TPU chips",
                f"{pool.nodes} × {pool.machine_type} ({pool.tpu.chips_per_vm} chips), {pool.capacity}{fallback}")
            continue
        if pool.kind == "gpu":
            gpu = catalogue.GPU_TYPES[entry.gpu.type]
            how = f"{pool.nodes} × {pool.machine_type} ({plural(pool.chips // max(pool.nodes, 1), 'GPU')}), {pool.capacity}{fallback}"
            add(pool.name, gpu.preemptible_quota if preemptible else gpu.quota, pool.chips, "GPUs", how)
            add(pool.name, catalogue.GPUS_ALL_REGIONS, pool.chips, "GPUs", how)
        cpus(pool.name, pool.machine_type, pool.nodes, preemptible, f", {pool.capacity}{fallback}")
    _class_draws(plan, add, cpus)
    if not cfg.cluster.standard:
        # Autopilot picks the machines; what is known is the accelerators the workloads ask for,
        # all of them running at once.
        for wl in cfg.workloads:
            if wl.gpu is None:
                continue
            pods = getattr(wl, "parallelism", None) or 1
            gpu = catalogue.GPU_TYPES[wl.gpu.type]
            how = f"workload {code(wl.name)}: {plural(pods, 'pod')} × {plural(wl.gpu.count, 'GPU')} (Autopilot, on-demand)"
            add(f"(Autopilot) {wl.name}", gpu.quota, pods * wl.gpu.count, "GPUs", how)
            add(f"(Autopilot) {wl.name}", catalogue.GPUS_ALL_REGIONS, pods * wl.gpu.count, "GPUs", how)
    return out


def _class_draws(plan, add, cpus) -> None:
    """What each priority of each ComputeClass draws at the class's limits: the nodes the queues'
    quota on the flavors that select it fills (gke_ai_batch/model/computeclass.py, the figure the
    Cost table prices), on the quota of the priority's capacity type."""
    cfg = plan.config
    queues = [q.quotas for q in plan.queues]
    for cc in cfg.compute_classes:
        flavors = {f.name for f in cfg.flavors or [] if f.compute_class == cc.name}
        quota = computeclass.flavor_quota(queues, flavors)
        pool = f"{cc.name} (ComputeClass)"
        for i, (entry, p) in enumerate(zip(cc.priorities, computeclass.class_priorities(cc.name, compute_class_manifest(cc)["spec"]))):
            capacity = facts.CONFIG_CAPACITY[p.pool.capacity]
            nodes, how = computeclass.nodes_at_limits(p, quota)
            where = f"priority {i + 1}, {capacity}"
            if nodes is None:
                add(pool, None, None, "nodes", f"{where}: {how}", cc.name)
                continue
            if capacity == catalogue.RESERVATION_CAPACITY:
                add(pool, None, p.pool.per_node * nodes if p.pool.resource else nodes,
                    "TPU chips" if entry.tpu is not None else "GPUs" if entry.gpu is not None else "VMs",
                    f"{where}: reservation {code(shown(entry.reservation or ''))} holds the quota; nothing to request", cc.name)
                continue
            preemptible = capacity in catalogue.PREEMPTIBLE_QUOTA_CAPACITIES
            basis = f"{where}: {nodes} × {p.machine_type} at the class's limits ({how})"
            if entry.tpu is not None:
                gen = entry.tpu.slice.generation
                add(pool, gen.preemptible_quota if preemptible else gen.quota, p.pool.per_node * nodes, "TPU chips", basis, cc.name)
                continue
            if entry.gpu is not None:
                gpu = catalogue.GPU_TYPES[entry.gpu.type]
                add(pool, gpu.preemptible_quota if preemptible else gpu.quota, p.pool.per_node * nodes, "GPUs", basis, cc.name)
                add(pool, catalogue.GPUS_ALL_REGIONS, p.pool.per_node * nodes, "GPUs", basis, cc.name)
            cpus(pool, p.machine_type, nodes, preemptible, f", priority {i + 1}, {capacity}", cc.name)


def _quota(q: Quota | None) -> str:
    if q is None:
        return DASH
    return f"{q.name} ({code(q.metric)})" if q.metric else q.name


def section(plans) -> list[str]:
    """The per-pool table and the sums, for one cluster's plan or a fleet's plans."""
    rows = [d for plan in plans for d in draws(plan)]
    if not rows:
        return ["No node pool, and no workload asks for an accelerator: nothing beyond GKE's own defaults."]
    per_pool = [
        [code(d.project), d.region, code(d.cluster), code(d.pool), _quota(d.quota),
         DASH if d.figure is None else d.figure, d.unit, d.basis]
        for d in rows
    ]
    sums: dict[tuple[str, str, str, str], int] = {}
    most: dict[tuple[str, str, str, str, str, str], int] = {}  # a class's priorities: the most one draws
    for d in rows:
        if d.quota is not None and d.figure is not None:
            key = (d.project, d.region, _quota(d.quota), d.unit)
            if d.alternative:
                alt = (*key, d.cluster, d.alternative)
                most[alt] = max(most.get(alt, 0), d.figure)
            else:
                sums[key] = sums.get(key, 0) + d.figure
    for (*key, _, _), figure in most.items():
        sums[tuple(key)] = sums.get(tuple(key), 0) + figure  # type: ignore[index]
    total = [[code(p), r, q, n, u] for (p, r, q, u), n in sorted(sums.items())]
    lines = [
        "What each pool draws on at its maximum size (Compute Engine quota, per project and region; GKE's TPU and GPU "
        "nodes are Compute Engine VMs, so the Cloud TPU API's quotas do not apply). Spot, flex-start and queued "
        "capacity draw on the **preemptible** quotas; a reservation holds its own. "
        + ("A ComputeClass's priorities draw at the class's limits (the nodes its flavors' queue quota fills); GKE "
           "may use any of them, so the sum takes the most one priority draws per quota. "
           if any(d.alternative for d in rows) else "")
        + "Quota is a ceiling, not capacity: it does not make the machines available.",
        "",
        *table(["project", "region", "cluster", "pool", "quota", "at most", "unit", "from"], per_pool,
               ["l", "l", "l", "l", "l", "r", "l", "l"]),
        "",
        "**To request** (the sum per project, region and quota):",
        "",
        *table(["project", "region", "quota", "at most", "unit"], total, ["l", "l", "l", "r", "l"]),
    ]
    if any(not plan.config.cluster.standard for plan in plans):
        lines += ["", "Autopilot chooses the machines: the vCPU quota its nodes draw on is not known in advance."]
    for plan in plans:
        ap = plan.config.cluster.auto_provisioning if plan.config.cluster.standard else None
        if ap is not None and ap.accelerators:
            # Node auto-provisioning's limits are cluster-wide totals, the pools above included
            # (GKE docs how-to/node-auto-provisioning, "Resource limits").
            limits = ", ".join(f"{code(name)} up to {lim.max}" for name, lim in ap.accelerators.items())
            lines += ["", f"Node auto-provisioning in {code(plan.config.cluster.name)} may create pools beyond these, "
                      f"up to its cluster-wide limits ({limits}; {ap.cpu.max} vCPUs): queued and flex-start ones draw on "
                      "the preemptible quotas, the others on the on-demand ones."]
    return lines
