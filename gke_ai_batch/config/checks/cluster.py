"""The cluster's own rules: production settings, locations, versions, the system pool.

Each rule but production (a stack's setting) is a function of the cluster key and the facts of
its cluster (ClusterFacts), with paths relative to the key: a stack runs it under `cluster`, a
cluster component (gke_ai_batch/components/cluster.py) on its args, through cluster_problems."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.checks import network
from gke_ai_batch.config.cluster import ClusterConfig
from gke_ai_batch.config.lookups import ClusterFacts, master_version_problems, under, unknown_zone


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
    yield from under(("cluster",), location_problems(cfg.cluster, cfg.facts))
    # A pool's zones: the nodePools check (pools.entry_problems).


def location_problems(cluster: ClusterConfig, facts: ClusterFacts) -> Iterator[RuleError]:
    """The cluster's region and zones, and its auto-provisioning zones, exist."""
    yield from place_problems(facts)
    for i, zone in enumerate(cluster.auto_provisioning.locations if cluster.auto_provisioning else []):
        yield from unknown_zone(facts, ("autoProvisioning", "locations", i), zone)


def place_problems(facts: ClusterFacts) -> Iterator[RuleError]:
    """The cluster's region and zones exist; paths relative to the cluster key."""
    cat = facts.regions
    region = facts.region
    if not cat.has_region(region):
        yield RuleError(
            "location",
            f"{region!r} is not a Google Cloud region this catalogue knows; known: "
            f"{', '.join(sorted(cat.regions))} (a newer one: add its zones under gke-ai-batch:catalogue.zones)",
        )
    yield from unknown_zone(facts, ("location",), facts.location)
    for i, zone in enumerate(facts.node_locations):
        yield from unknown_zone(facts, ("nodeLocations", i), zone)


@check("cluster")
def version(cfg, ctx) -> Iterator[RuleError]:
    """minMasterVersion must be a minor the cluster's release channel offers
    (gke_ai_batch/domain/versions.py, from GKE's release notes)."""
    yield from under(("cluster",), version_problems(cfg.facts))


def version_problems(facts: ClusterFacts) -> Iterator[RuleError]:
    # master_version_problems names the stack's key path (cluster.minMasterVersion), as
    # version_floor reads it.
    yield from (RuleError(e.path[1:], e.message) for e in master_version_problems(facts))


def fact_problems(facts: ClusterFacts) -> Iterator[RuleError]:
    """What the locations and version checks say of the facts a pool entry's rules stand on
    (paths relative to the cluster key): a pool component's cluster, given as data."""
    yield from place_problems(facts)
    yield from version_problems(facts)


@check("cluster")
def system_pool(cfg, ctx) -> Iterator[RuleError]:
    """Compute Engine creates no VM of a machine type it does not have; GKE refuses the pool
    (the machine types: gke_ai_batch/domain/machines.py, and the stack's catalogue override)."""
    yield from under(("cluster",), system_pool_problems(cfg.cluster, cfg.facts))


def system_pool_problems(cluster: ClusterConfig, facts: ClusterFacts) -> Iterator[RuleError]:
    system = cluster.system_pool
    if system is not None and cluster.standard:  # Autopilot's is refused as such
        problem = facts.catalogue.machine_type_problem(system.machine_type)
        if problem:
            yield RuleError(("systemPool", "machineType"), problem)


def cluster_problems(cluster: ClusterConfig, facts: ClusterFacts, project: str | None) -> Iterator[RuleError]:
    """Every rule of a stack about its cluster key alone, in the order the stack runs them,
    paths relative to the key: what a cluster component runs on its args (`project`: the
    cluster's, which a network named without one is in)."""
    yield from location_problems(cluster, facts)
    yield from version_problems(facts)
    yield from system_pool_problems(cluster, facts)
    yield from network.network_problems(cluster, project)
