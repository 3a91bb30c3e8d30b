"""GKE custom ComputeClasses (docs/capacity-fallback.md)."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, entry
from gke_ai_batch.config.computeclasses import compute_class_problems, flavor_class_problems


@check("computeClasses", on_manager=False)
def compute_classes(cfg, ctx) -> Iterator[RuleError]:
    """Each class on this cluster: GKE's version floors, machine types, zones that offer its
    accelerators, and the flavors that select it (the rules and their sources:
    gke_ai_batch/config/computeclasses.py)."""
    yield from compute_class_problems(cfg)


@entry("flavors", on_manager=False)
def flavor_class(cfg, ctx, i: int, flavor) -> Iterator[RuleError]:
    """One declared flavor's compute class rules (the computeClasses check's, per flavor)."""
    yield from flavor_class_problems(i, flavor, [cc.name for cc in cfg.compute_classes])
