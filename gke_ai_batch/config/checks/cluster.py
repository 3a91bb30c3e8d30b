"""The cluster's own rules: production settings, locations, versions, the system pool."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.config.lookups import copies, master_version_problems


@check("cluster")
def production(cfg, ctx) -> Iterator[RuleError]:
    """Production clusters: nodes without public addresses, and the program (and people)
    reach the control plane through the IAM-authorized DNS endpoint (GKE docs
    concepts/network-isolation: "Use only the DNS-based endpoint to access your control
    plane"; CIS GKE Benchmark 5.6.4 and 5.6.5)."""
    if not cfg.production:
        return
    if not cfg.cluster.control_plane.dns_endpoint:
        yield RuleError(
            ("cluster", "controlPlane", "dnsEndpoint"),
            "a production cluster is reached through its DNS endpoint (IAM-authorized); set it true",
        )
    if not cfg.cluster.private_nodes:
        yield RuleError(
            ("cluster", "privateNodes"),
            "a production cluster's nodes have no public IP addresses; set privateNodes true (with Cloud NAT for egress)",
        )


@check("cluster")
def locations(cfg, ctx) -> Iterator[RuleError]:
    """Regions and zones must exist (gke_ai_batch/domain/regions.py, or the stack's catalogue override)."""
    cat = cfg.regions
    location = cfg.cluster.location
    region = region_of(location)
    if not cat.has_region(region):
        yield RuleError(
            ("cluster", "location"),
            f"{region!r} is not a Google Cloud region this catalogue knows; known: "
            f"{', '.join(sorted(cat.regions))} (a newer one: add its zones under gke-ai-batch:catalogue.zones)",
        )
    yield from _zone(cfg, ("cluster", "location"), location)
    for i, zone in enumerate(cfg.cluster.node_locations):
        yield from _zone(cfg, ("cluster", "nodeLocations", i), zone)
    for i, zone in enumerate(cfg.cluster.auto_provisioning.locations if cfg.cluster.auto_provisioning else []):
        yield from _zone(cfg, ("cluster", "autoProvisioning", "locations", i), zone)
    copied = copies(cfg.node_pools)
    for i, pool in enumerate(cfg.node_pools):
        for j, zone in enumerate(pool.zones if i not in copied else []):
            if region_of(zone) == region:
                yield from _zone(cfg, ("nodePools", i, "zones", j), zone)


def _zone(cfg, at: tuple, location: str) -> Iterator[RuleError]:
    cat = cfg.regions
    region = region_of(location)
    if region == location or region not in cat.regions:
        return  # a region (checked above), or a zone of another region (refused elsewhere)
    if cat.zone(location) is None:
        yield RuleError(
            at,
            f"{location!r} is not a zone of {region}; its zones: {', '.join(cat.zones_of(region))} "
            "(a newer one: add it under gke-ai-batch:catalogue.zones)",
        )


@check("cluster")
def version(cfg, ctx) -> Iterator[RuleError]:
    """minMasterVersion must be a minor the cluster's release channel offers
    (gke_ai_batch/domain/versions.py, from GKE's release notes)."""
    yield from master_version_problems(cfg)


@check("cluster")
def system_pool(cfg, ctx) -> Iterator[RuleError]:
    """Compute Engine creates no VM of a machine type it does not have; GKE refuses the pool
    (the machine types: gke_ai_batch/domain/machines.py, and the stack's catalogue override)."""
    system = cfg.cluster.system_pool
    if system is not None and cfg.cluster.standard:  # Autopilot's is refused as such
        problem = cfg.catalogue.machine_type_problem(system.machine_type)
        if problem:
            yield RuleError(("cluster", "systemPool", "machineType"), problem)
