"""Topology-aware scheduling (docs/batch-layer.md, "Topology-aware scheduling")."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.topology import topology_problems


@check("topologies", on_manager=False)
def topologies(cfg, ctx) -> Iterator[RuleError]:
    """Kueue Topology objects, the flavors that name them and the samples that ask for a domain
    (the rules and their sources, the Topology and ResourceFlavor CRDs and Kueue's
    tas_flavorassigner.go: gke_ai_batch/config/topology.py)."""
    yield from topology_problems(cfg)
