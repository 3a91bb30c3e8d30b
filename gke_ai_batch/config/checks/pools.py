"""Node pools: names, locations and offers, version floors, GKE's node limits."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import catalogue, naming, versions
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.config.lookups import copies, override_hint, version_floor, zones_known
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.config.reservations import calendar_zone_problems, zone_problems as reservation_zone_problems

# GKE limits per cluster (https://cloud.google.com/kubernetes-engine/quotas, "Limits per
# cluster"): 1,000 nodes per node pool per zone; 15,000 nodes per Standard cluster (beyond 5,000
# needs a quota raise from support, which config cannot tell, so only 15,000 is refused).
NODES_PER_POOL_ZONE = 1000
NODES_PER_STANDARD_CLUSTER = 15000
# Compute Engine names its resources (the TPU workload policy is a resource policy) with at most
# 63 characters (https://cloud.google.com/compute/docs/naming-resources).
RESOURCE_POLICY_NAME_MAX = 63


@check("nodePools", on_manager=False)
def pools(cfg, ctx) -> Iterator[RuleError]:
    """Each pool: GKE's pool name unique in the cluster, a machine type Compute Engine has,
    its zones in the cluster's region and offering its accelerator, its version floors, its
    reservation's zones. Autopilot clusters have no node pools (GKE docs concepts/autopilot-overview)."""
    cluster = cfg.cluster
    if not cluster.standard and cfg.node_pools:
        yield RuleError(
            ("nodePools", 0),
            "Autopilot clusters have no node pools: GKE creates nodes for each workload's "
            "nodeSelector; remove nodePools or use mode standard",
        )
        return  # the pools' own rules are moot
    seen: dict[str, int] = {naming.SYSTEM_POOL: -1}
    copied = copies(cfg.node_pools)
    for i, pool in enumerate(cfg.node_pools):
        for gke_name in pool.pool_names:
            if gke_name in seen:
                other = "the system pool" if seen[gke_name] < 0 else f"nodePools[{seen[gke_name]}]"
                yield RuleError(("nodePools", i, "name"), f"node pool {gke_name!r} is also made by {other}")
                break
        for gke_name in pool.pool_names:
            seen.setdefault(gke_name, i)
        if i in copied:
            continue
        if pool.kind == "cpu" and pool.machine_type is not None:
            # GPU and TPU pools' machine types are checked against their accelerator already
            # (machines.check_gpu, catalogue.tpu_slice).
            problem = cfg.catalogue.machine_type_problem(pool.machine_type)
            if problem:
                yield RuleError(("nodePools", i, "machineType"), problem)
        yield from _location(cfg, i, pool)
        yield from _versions(cfg, i, pool)
        if pool.capacity == "reservation" and pool.reservation is not None:
            region = region_of(cfg.cluster.location) if cfg.cluster.location else None
            for problem in reservation_zone_problems(pool, cfg.pool_zones(pool), region):
                yield RuleError(("nodePools", i, *problem.path), problem.message)
            for problem in calendar_zone_problems(pool, cfg.pool_zones(pool), cfg.regions):
                yield RuleError(("nodePools", i, *problem.path), problem.message)


def _location(cfg, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
    region = region_of(cfg.cluster.location)
    outside = False
    for j, zone in enumerate(pool.zones):
        if region_of(zone) != region:
            yield RuleError(("nodePools", i, "zones", j), f"{zone} is not in the cluster's region {region}")
            outside = True
    if pool.tpu is not None and len(cfg.pool_zones(pool)) != 1:
        yield RuleError(
            ("nodePools", i, "zones"),
            "a TPU slice lives in exactly one zone: list one zone here (or give the cluster a "
            "single node location)",
        )
        return
    if not outside and zones_known(cfg, cfg.pool_zones(pool)):
        yield from _offer(cfg, i, pool)


def _offer(cfg, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
    """The pool's accelerator must be offered in its zones (gke_ai_batch/domain/regions.py)."""
    cat = cfg.regions
    region = region_of(cfg.cluster.location)
    zones = cfg.pool_zones(pool)
    if pool.tpu is not None:
        where = ("nodePools", i, "zones") if pool.zones else ("cluster", "nodeLocations")
        version = pool.tpu.version
        offering = cat.tpu_zones(region, version)
        zone = zones[0]
        if zone not in offering:
            yield RuleError(
                (*where, 0) if pool.zones else ("nodePools", i, "tpu", "version"),
                f"GKE offers TPU {version} in {region} only in {', '.join(offering) or 'no zone'}, "
                f"not in {zone}" + override_hint(zone),
            )
    elif pool.gpu is not None:
        gpu = pool.gpu.type
        offering = cat.gpu_zones(region, gpu)
        if not zones:
            if not offering:
                yield RuleError(
                    ("nodePools", i, "gpu", "type"),
                    f"GKE offers {gpu} in no zone of {region} (the cluster names no node locations, "
                    "so GKE picks the zones; at least one must offer it)" + override_hint(region),
                )
            return
        for j, zone in enumerate(zones):
            if zone not in offering:
                at = ("nodePools", i, "zones", j) if pool.zones else ("nodePools", i, "gpu", "type")
                via = "" if pool.zones else " (the pool takes the cluster's nodeLocations)"
                yield RuleError(
                    at,
                    f"GKE offers {gpu} in {region} only in {', '.join(offering) or 'no zone'}, not in "
                    f"{zone}{via}; every zone of a GPU pool must offer it" + override_hint(zone),
                )
                if not pool.zones:
                    return  # one key (gpu.type) for all the cluster's zones: one message


def _versions(cfg, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
    # Checked against what the cluster's minor alias (or its channel's default) resolves to:
    # gke_ai_batch/domain/versions.py explains how.
    if pool.capacity == "flexStart":
        yield from version_floor(
            cfg, ("nodePools", i, "capacity"), versions.FLEX_START_MIN[pool.kind], f"flexStart {pool.kind.upper()} pools"
        )
    if pool.tpu is None:
        return
    gen = catalogue.TPU_GENERATIONS[pool.tpu.version]
    if gen.min_gke_version is not None:
        yield from version_floor(cfg, ("nodePools", i, "tpu", "version"), gen.min_gke_version, f"{gen.version} pools")
    if gen.workload_policy:
        name = naming.workload_policy_name(cfg.cluster.name, pool.name)
        if pool.tpu.slice.multi_host and len(name) > RESOURCE_POLICY_NAME_MAX:
            yield RuleError(
                ("nodePools", i, "name"),
                f"the {gen.version} workload policy {name!r} would exceed {RESOURCE_POLICY_NAME_MAX} "
                "characters; shorten the cluster or pool name",
            )


@check("nodePools", on_manager=False)
def node_limits(cfg, ctx) -> Iterator[RuleError]:
    """GKE's node limits (NODES_PER_POOL_ZONE, NODES_PER_STANDARD_CLUSTER): GKE docs
    https://cloud.google.com/kubernetes-engine/quotas, "Limits per cluster"."""
    total = 0
    over = False
    copied = copies(cfg.node_pools)
    for i, pool in enumerate(cfg.node_pools):
        # A TPU slice's size is a topology GKE itself offers ("Plan TPUs in GKE" lists v5p up
        # to 16x16x24, 1,536 VMs in one pool): the per-pool limit would refuse documented
        # shapes, so it applies to GPU and CPU pools only.
        if pool.tpu is None and i not in copied:
            zones = cfg.pool_zone_count(pool)
            if pool.max_nodes is not None and pool.max_nodes > NODES_PER_POOL_ZONE * zones:
                over = True
                yield RuleError(
                    ("nodePools", i, "maxNodes"),
                    f"maxNodes {pool.max_nodes} over {zones} zone{'s' if zones > 1 else ''} exceeds GKE's "
                    f"{NODES_PER_POOL_ZONE} nodes per node pool per zone (at most "
                    f"{NODES_PER_POOL_ZONE * zones} here)",
                )
        total += cfg.pool_max_nodes(pool)
    system = cfg.cluster.system
    if system is not None:
        total += system.max_nodes
    # A pool over its own limit is reported already, and the total it makes is moot.
    if total > NODES_PER_STANDARD_CLUSTER and not over:
        parts = ", ".join(
            f"{p.name} {cfg.pool_max_nodes(p)}" for p in cfg.node_pools
        ) + (f", system {system.max_nodes}" if system is not None else "")
        yield RuleError(
            "nodePools",
            f"the pools can grow to {total} nodes ({parts}); a GKE Standard cluster has at most "
            f"{NODES_PER_STANDARD_CLUSTER}",
        )
