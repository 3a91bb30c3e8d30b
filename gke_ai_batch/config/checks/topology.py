"""Topology-aware scheduling (docs/batch-layer.md, "Topology-aware scheduling")."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, entry
from gke_ai_batch.config.topology import (
    declared_levels, flavor_topology_problems, topology_problems, workload_topology_problems,
)


@check("topologies", on_manager=False)
def topologies(cfg, ctx) -> Iterator[RuleError]:
    """Kueue Topology objects, the flavors that name them and the samples that ask for a domain
    (the rules and their sources, the Topology and ResourceFlavor CRDs and Kueue's
    tas_flavorassigner.go: gke_ai_batch/config/topology.py)."""
    yield from topology_problems(cfg)


@entry("flavors", on_manager=False)
def flavor_topology(cfg, ctx, i: int, flavor) -> Iterator[RuleError]:
    """One declared flavor's topology rules (the topologies check's, per flavor)."""
    yield from flavor_topology_problems(cfg, i, flavor, *declared_levels(cfg))


@entry("workloads", on_manager=False)
def workload_topology(cfg, ctx, i: int, wl) -> Iterator[RuleError]:
    """One sample's topology rules (the topologies check's, per workload)."""
    yield from workload_topology_problems(cfg, i, wl, declared_levels(cfg)[1])
