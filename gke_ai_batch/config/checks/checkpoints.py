"""Checkpoint storage (docs/checkpoints.md)."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checkpoints import checkpoint_problems
from gke_ai_batch.config.checks import check


@check("checkpoints", per_worker=False)
def checkpoints(cfg, ctx) -> Iterator[RuleError]:
    """Bucket names Cloud Storage takes, the CSI drivers' GKE floors and regions, workloads that
    can mount them (the rules and their sources: gke_ai_batch/config/checkpoints.py)."""
    yield from checkpoint_problems(cfg, ctx.project)
