"""Node pools: names, locations and offers, version floors, GKE's node limits."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import catalogue, naming, regions, versions
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, entry, valid
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.config.lookups import (
    ClusterFacts, copies, override_hint, pool_zones, under, unknown_zone, version_floor, zones_known,
)
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


def autopilot_problems(facts: ClusterFacts) -> Iterator[RuleError]:
    """Autopilot clusters have no node pools (GKE docs concepts/autopilot-overview)."""
    if not facts.standard:
        yield RuleError(
            (),
            "Autopilot clusters have no node pools: GKE creates nodes for each workload's "
            "nodeSelector; remove nodePools or use mode standard",
        )


def pool_problems(pool: NodePoolConfig, facts: ClusterFacts) -> Iterator[RuleError]:
    """Every rule about one pool entry on its cluster, paths relative to the entry (its keys as
    the stack spells them): what the stack's nodePools checks run per entry, and what a pool
    component runs on its args (gke_ai_batch/components/nodepools.py)."""
    moot = list(autopilot_problems(facts))
    if moot:
        yield from moot
        return  # the pool's own rules are moot
    yield from entry_problems(pool, facts)
    yield from zone_limit_problems(pool, facts)


@check("nodePools", on_manager=False)
def pools(cfg, ctx) -> Iterator[RuleError]:
    """Each pool: GKE's pool name unique in the cluster, its zones known, a machine type Compute
    Engine has, its zones in the cluster's region and offering its accelerator, its version
    floors, its reservation's zones. Autopilot clusters have no node pools (GKE docs
    concepts/autopilot-overview)."""
    facts = cfg.facts
    if cfg.node_pools:
        moot = list(autopilot_problems(facts))
        if moot:
            yield from under(("nodePools", 0), moot)
            return  # the pools' own rules are moot
    seen: dict[str, int] = {naming.SYSTEM_POOL: -1}
    copied = copies(cfg.node_pools)
    for i, pool in valid(cfg.node_pools):
        for gke_name in pool.pool_names:
            if gke_name in seen:
                other = "the system pool" if seen[gke_name] < 0 else f"nodePools[{seen[gke_name]}]"
                yield RuleError(("nodePools", i, "name"), f"node pool {gke_name!r} is also made by {other}")
                break
        for gke_name in pool.pool_names:
            seen.setdefault(gke_name, i)
        if i not in copied:
            yield from under(("nodePools", i), entry_problems(pool, facts))


@entry("nodePools", on_manager=False)
def pool_entry(cfg, ctx, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
    """One pool among invalid ones: its rules on its cluster's facts (an Autopilot cluster's
    pools are refused once, by the pools check)."""
    facts = cfg.facts
    if facts.standard:
        yield from under(("nodePools", i), pool_problems(pool, facts))


def entry_problems(pool: NodePoolConfig, facts: ClusterFacts) -> Iterator[RuleError]:
    """One pool entry's rules that need its cluster (paths relative to the entry)."""
    for j, zone in enumerate(pool.zones):
        if region_of(zone) == facts.region:
            yield from unknown_zone(facts, ("zones", j), zone)
    if pool.kind == "cpu" and pool.machine_type is not None:
        # GPU and TPU pools' machine types are checked against their accelerator already
        # (machines.check_gpu, catalogue.tpu_slice).
        problem = facts.catalogue.machine_type_problem(pool.machine_type)
        if problem:
            yield RuleError("machineType", problem)
    yield from _location(facts, pool)
    yield from _versions(facts, pool)
    if pool.capacity == "reservation" and pool.reservation is not None:
        zones = pool_zones(pool, facts)
        region = facts.region if facts.location else None
        yield from reservation_zone_problems(pool, zones, region)
        yield from calendar_zone_problems(pool, zones, facts.regions)


def _location(facts: ClusterFacts, pool: NodePoolConfig) -> Iterator[RuleError]:
    region = facts.region
    outside = False
    for j, zone in enumerate(pool.zones):
        if region_of(zone) != region:
            yield RuleError(("zones", j), f"{zone} is not in the cluster's region {region}")
            outside = True
    zones = pool_zones(pool, facts)
    if pool.tpu is not None and len(zones) != 1:
        yield RuleError(
            "zones",
            "a TPU slice lives in exactly one zone: list one zone here (or give the cluster a "
            "single node location)",
        )
        return
    if not outside and zones_known(facts, zones):
        yield from _offer(facts, pool, zones)


def _offer(facts: ClusterFacts, pool: NodePoolConfig, zones: list[str]) -> Iterator[RuleError]:
    """The pool's accelerator must be offered in its zones (gke_ai_batch/domain/regions.py)."""
    cat = facts.regions
    region = facts.region
    if pool.tpu is not None:
        version = pool.tpu.version
        offering = cat.tpu_zones(region, version)
        zone = zones[0]
        if zone not in offering:
            yield RuleError(
                ("zones", 0) if pool.zones else ("tpu", "version"),
                f"GKE offers TPU {version} in {region} only in {', '.join(offering) or 'no zone'}, "
                f"not in {zone}" + override_hint(zone),
            )
    elif pool.gpu is not None:
        gpu = pool.gpu.type
        offering = cat.gpu_zones(region, gpu)
        if not zones:
            if not offering:
                yield RuleError(
                    ("gpu", "type"),
                    f"GKE offers {gpu} in no zone of {region} (the cluster names no node locations, "
                    "so GKE picks the zones; at least one must offer it)" + override_hint(region),
                )
            return
        for j, zone in enumerate(zones):
            if zone not in offering:
                where = ("zones", j) if pool.zones else ("gpu", "type")
                via = "" if pool.zones else " (the pool takes the cluster's nodeLocations)"
                yield RuleError(
                    where,
                    f"GKE offers {gpu} in {region} only in {', '.join(offering) or 'no zone'}, not in "
                    f"{zone}{via}; every zone of a GPU pool must offer it" + override_hint(zone),
                )
                if not pool.zones:
                    return  # one key (gpu.type) for all the cluster's zones: one message


def _versions(facts: ClusterFacts, pool: NodePoolConfig) -> Iterator[RuleError]:
    # Checked against what the cluster's minor alias (or its channel's default) resolves to:
    # gke_ai_batch/domain/versions.py explains how.
    if pool.capacity == "flexStart":
        yield from version_floor(
            facts, ("capacity",), versions.FLEX_START_MIN[pool.kind], f"flexStart {pool.kind.upper()} pools"
        )
    if pool.tpu is None:
        return
    gen = catalogue.TPU_GENERATIONS[pool.tpu.version]
    if gen.min_gke_version is not None:
        yield from version_floor(facts, ("tpu", "version"), gen.min_gke_version, f"{gen.version} pools")
    if gen.workload_policy:
        name = naming.workload_policy_name(facts.name, pool.name)
        if pool.tpu.slice.multi_host and len(name) > RESOURCE_POLICY_NAME_MAX:
            yield RuleError(
                "name",
                f"the {gen.version} workload policy {name!r} would exceed {RESOURCE_POLICY_NAME_MAX} "
                "characters; shorten the cluster or pool name",
            )


def zone_limit_problems(pool: NodePoolConfig, facts: ClusterFacts) -> Iterator[RuleError]:
    """GKE's NODES_PER_POOL_ZONE for one entry (paths relative to it)."""
    # A TPU slice's size is a topology GKE itself offers ("Plan TPUs in GKE" lists v5p up
    # to 16x16x24, 1,536 VMs in one pool): the per-pool limit would refuse documented
    # shapes, so it applies to GPU and CPU pools only.
    if pool.tpu is None:
        zones = len(pool_zones(pool, facts)) or regions.DEFAULT_ZONES_PER_REGION
        if pool.max_nodes is not None and pool.max_nodes > NODES_PER_POOL_ZONE * zones:
            yield RuleError(
                "maxNodes",
                f"maxNodes {pool.max_nodes} over {zones} zone{'s' if zones > 1 else ''} exceeds GKE's "
                f"{NODES_PER_POOL_ZONE} nodes per node pool per zone (at most "
                f"{NODES_PER_POOL_ZONE * zones} here)",
            )


@check("nodePools", on_manager=False)
def node_limits(cfg, ctx) -> Iterator[RuleError]:
    """GKE's node limits (NODES_PER_POOL_ZONE, NODES_PER_STANDARD_CLUSTER): GKE docs
    https://cloud.google.com/kubernetes-engine/quotas, "Limits per cluster"."""
    total = 0
    over = False
    facts = cfg.facts
    copied = copies(cfg.node_pools)
    for i, pool in enumerate(cfg.node_pools):
        if i not in copied:
            for problem in under(("nodePools", i), zone_limit_problems(pool, facts)):
                over = True
                yield problem
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
