"""Sample workloads: their team and queue, what they run on, the names Kubernetes derives."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import catalogue, quantity
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, entry
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.config.lookups import cluster_zones, each_once, known, override_hint, unknown_pools, zones_known
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.config.workloads import JobSetWorkload, JobWorkload, ProvisioningRequestWorkload


@check("workloads", on_manager=False)
def workloads(cfg, ctx) -> Iterator[RuleError]:
    """Each sample workload: declared once, a team and local queue that resolve, Kueue's
    integration for its kind, a pool and priority the stack has, a shape GKE offers in the
    cluster's zones (gke_ai_batch/domain/regions.py), names and host ports the API server takes
    (k8s.io/kubernetes pkg/apis/core/validation/validation.go), and a pool its queue can admit
    it onto (Kueue docs concepts/cluster_queue)."""
    twice, own = each_once("workloads", "workload", cfg.workloads)
    yield from twice
    for i, wl in own:
        yield from workload_entry(cfg, ctx, i, wl)


@entry("workloads", on_manager=False)
def workload_entry(cfg, ctx, i: int, wl) -> Iterator[RuleError]:
    """One workload's rules (the workloads check's, on each entry it does not find a copy)."""
    at = ("workloads", i)
    pools = {p.name: p for p in cfg.node_pools}
    priorities = [p.name for p in cfg.priorities]
    team_problems = list(_team(cfg, at, wl))
    yield from team_problems
    yield from _integration(cfg, at, wl)
    # An unknown pool is one message: every rule that looks at the pool would guess.
    pool_known = wl.pool is None or wl.pool in pools
    if not pool_known:
        yield RuleError((*at, "pool"), f"unknown node pool {wl.pool!r}; known: {known(pools)}")
    if wl.pool is None and wl.tpu is None and wl.gpu is None and cfg.cluster.standard and isinstance(
        wl, JobSetWorkload
    ):
        yield RuleError((*at, "pool"), "a JobSet needs a pool (or a tpu or gpu shape) to run on")
    if wl.priority is not None and wl.priority not in priorities:
        yield RuleError(
            (*at, "priority"),
            f"unknown priority {wl.priority!r}; known: {', '.join(priorities) or 'none'}",
        )
    pool = pools.get(wl.pool) if wl.pool else None
    yield from _shape_offered(cfg, at, wl)
    yield from _generated_names(cfg, at, wl, pool)
    if pool_known:
        yield from _target(cfg, at, wl, pool, team_known=not team_problems)


def _target(cfg, at: tuple, wl, pool: NodePoolConfig | None, team_known: bool) -> Iterator[RuleError]:
    """The rules on what a workload runs on: its pool (None: a bare shape, or none given),
    which must be one the stack has."""
    yield from _accelerator_request(cfg, at, wl, pool)
    yield from _host_ports(cfg, at, wl)
    if pool is not None and not isinstance(wl, ProvisioningRequestWorkload) and team_known:
        yield from _pool_reachable(cfg, at, wl, pool)
    if isinstance(wl, JobSetWorkload):
        yield from _jobset(cfg, at, wl, pool)
    elif isinstance(wl, JobWorkload):
        yield from _job(cfg, at, wl, pool)
    elif isinstance(wl, ProvisioningRequestWorkload):
        if pool is not None and pool.capacity != "queued":
            yield RuleError(
                (*at, "pool"),
                f"a ProvisioningRequest needs a queued pool; {pool.name!r} is {pool.capacity}",
            )
        if pool is None and wl.gpu is None and wl.tpu is None:
            yield RuleError((*at, "pool"), "a ProvisioningRequest needs a queued pool (or a gpu or tpu shape)")


def _host_ports(cfg, at: tuple, wl) -> Iterator[RuleError]:
    """On the host network every containerPort is a host port too (the API server defaults
    hostPort to containerPort: defaultHostNetworkPorts, pkg/apis/core/v1/defaults.go), and a pod's
    host ports are unique by port, protocol and host IP (AccumulateUniqueHostPorts in
    k8s.io/kubernetes pkg/apis/core/validation/validation.go: "Duplicate value"). Off the
    host network a repeated containerPort is only a warning."""
    if not cfg.uses_host_network(wl):
        return
    for i, port in enumerate(wl.ports):
        if port in wl.ports[:i]:
            yield RuleError(
                (*at, "ports", i),
                f"port {port} is listed twice; this workload's pods use the host network, where each "
                "containerPort is also a host port and the API server refuses a repeated one",
            )


def _pool_reachable(cfg, at: tuple, wl, pool: NodePoolConfig) -> Iterator[RuleError]:
    """A queued workload runs only where its ClusterQueue has quota: the pool's flavor must
    be one of the queue's, or Kueue never admits it. Judged only when the team, its queue,
    the queue's flavors and the declared flavors' pools all resolve (else that is reported,
    and this would repeat it)."""
    flavor = cfg.pool_flavor(pool)
    if flavor is None:
        if not any(unknown_pools(cfg, f) for f in cfg.flavors or []):
            yield RuleError(
                (*at, "pool"), f"no flavor covers pool {pool.name!r}, so no queue can admit work onto it"
            )
        return
    queue_name = cfg.team_queue(wl).cluster_queue
    queue = next((cq for cq in cfg.cluster_queues if cq.name == queue_name), None)
    if queue is None:
        return
    names = [f.name for f in queue.flavors]
    if any(name not in cfg.flavor_names() for name in names):
        return
    if names and flavor not in names:
        yield RuleError(
            (*at, "pool"),
            f"pool {pool.name!r} is flavor {flavor!r}, which cluster queue {queue_name!r} of team "
            f"{wl.team!r} does not offer ({', '.join(names)}); Kueue would never admit this workload",
        )


def _shape_offered(cfg, at: tuple, wl) -> Iterator[RuleError]:
    """A bare tpu/gpu shape (Autopilot, or auto-provisioned nodes) needs a zone of the cluster
    that offers it: GKE creates the nodes there (gke_ai_batch/domain/regions.py)."""
    if not zones_known(cfg.facts, cluster_zones(cfg.facts)):
        return  # the cluster's location is reported already
    cat = cfg.regions
    region = region_of(cfg.cluster.location)
    allowed = cluster_zones(cfg.facts) or cat.zones_of(region)
    for kind, spec in (("tpu", wl.tpu), ("gpu", wl.gpu)):
        if spec is None:
            continue
        name = spec.version if kind == "tpu" else spec.type
        offering = cat.tpu_zones(region, name) if kind == "tpu" else cat.gpu_zones(region, name)
        if not set(offering) & set(allowed):
            where = "the cluster's zones " + ", ".join(allowed) if allowed != cat.zones_of(region) else region
            yield RuleError(
                (*at, kind, "version" if kind == "tpu" else "type"),
                f"GKE offers {'TPU ' if kind == 'tpu' else ''}{name} in {region} only in "
                f"{', '.join(offering) or 'no zone'}, none of them in {where}, so no node can be made "
                "for this workload" + override_hint(region),
            )


def _generated_names(cfg, at: tuple, wl, pool: NodePoolConfig | None) -> Iterator[RuleError]:
    """Names Kubernetes derives from a workload's must be DNS labels too: JobSet pods are
    <name>-slice-<job>-<pod>-<5 random>, a multi-host Job's Service is <name>-hosts. (With
    an unknown pool, one VM per slice: the shortest names, so no false alarm.)"""
    tpu = pool.tpu if pool is not None else wl.tpu
    vms = tpu.slice.vms if tpu is not None else 1
    if not ("a" <= wl.name[0] <= "z"):  # ASCII: str.isalpha() also takes other scripts' letters
        yield RuleError((*at, "name"), f"{wl.name!r} must start with a letter (it names pods and Services)")
    if isinstance(wl, JobSetWorkload):
        room = 63 - len("-slice-") - len(str(wl.slices - 1)) - 1 - len(str(vms - 1)) - 6
        what = f"JobSet pod names (<name>-slice-<i>-<j>-xxxxx) for {wl.slices} slices of {vms} VMs"
    elif isinstance(wl, JobWorkload) and tpu is not None and tpu.slice.multi_host:
        room = 63 - len("-hosts")
        what = "the headless Service <name>-hosts"
    else:
        return
    if len(wl.name) > room:
        yield RuleError(
            (*at, "name"), f"{wl.name!r} is too long: {what} must fit 63 characters; at most {room} here"
        )


def _accelerator_request(cfg, at: tuple, wl, pool: NodePoolConfig | None) -> Iterator[RuleError]:
    tpu = pool.tpu if pool is not None else wl.tpu
    gpu = pool.gpu if pool is not None else wl.gpu
    asked = quantity.value(wl.resources.get(catalogue.TPU_RESOURCE))
    if tpu is not None and asked is not None and asked != tpu.slice.chips_per_vm:
        yield RuleError(
            (*at, "resources", catalogue.TPU_RESOURCE),
            f"a TPU pod takes all {tpu.slice.chips_per_vm} chips of its {tpu.slice.machine_type} VM; "
            "leave google.com/tpu out to derive it",
        )
    asked = quantity.value(wl.resources.get(catalogue.GPU_RESOURCE))
    if gpu is not None and asked is not None and asked > gpu.count:
        yield RuleError(
            (*at, "resources", catalogue.GPU_RESOURCE),
            f"{wl.resources[catalogue.GPU_RESOURCE]} GPUs per pod never fit a node with {gpu.count}",
        )


def _team(cfg, at: tuple, wl) -> Iterator[RuleError]:
    """The workload's team and local queue resolve to exactly one team entry."""
    teams = [t for t in cfg.teams if t.namespace == wl.team]
    queues = list(dict.fromkeys(t.local_queue for t in teams))  # a team declared twice: one queue
    if not teams:
        known = sorted({t.namespace for t in cfg.teams})
        yield RuleError((*at, "team"), f"unknown team {wl.team!r}; known: {', '.join(known) or 'none'}")
        if not isinstance(wl, ProvisioningRequestWorkload):
            return  # which local queue is right depends on the team
    if isinstance(wl, ProvisioningRequestWorkload):
        if wl.local_queue is not None:
            yield RuleError((*at, "localQueue"), "a ProvisioningRequest workload bypasses Kueue: no local queue")
        return
    if wl.local_queue is not None:
        if wl.local_queue not in queues:
            yield RuleError(
                (*at, "localQueue"),
                f"team {wl.team!r} has no local queue {wl.local_queue!r}; it has {', '.join(queues)}",
            )
    elif len(queues) > 1:
        yield RuleError(
            (*at, "localQueue"),
            f"team {wl.team!r} has several local queues ({', '.join(queues)}); name one",
        )


def _integration(cfg, at: tuple, wl) -> Iterator[RuleError]:
    if isinstance(wl, ProvisioningRequestWorkload):
        return  # no Kueue
    framework = "jobset.x-k8s.io/jobset" if isinstance(wl, JobSetWorkload) else "batch/job"
    if framework not in cfg.kueue.integrations:
        yield RuleError(
            (*at, "kind"),
            f"Kueue manages this workload only with the {framework!r} integration; add it to kueue.integrations",
        )


def _jobset(cfg, at: tuple, wl: JobSetWorkload, pool: NodePoolConfig | None) -> Iterator[RuleError]:
    if pool is not None and pool.tpu is not None and wl.slices > pool.slice_count:
        yield RuleError(
            (*at, "slices"),
            f"{wl.slices} slices never fit pool {pool.name!r}, which has {pool.slice_count}",
        )


def _job(cfg, at: tuple, wl: JobWorkload, pool: NodePoolConfig | None) -> Iterator[RuleError]:
    if wl.max_run_duration_seconds is not None and (pool is None or pool.capacity != "queued"):
        yield RuleError(
            (*at, "maxRunDurationSeconds"),
            "only for workloads on a queued pool (it becomes a ProvisioningRequest parameter)",
        )
