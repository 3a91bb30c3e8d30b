"""Metrics collection and its GKE version floors (docs/metrics.md)."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.lookups import version_floor
from gke_ai_batch.config.metrics import metrics_problems


@check("metrics")
def metrics(cfg, ctx) -> Iterator[RuleError]:
    """GKE refuses DCGM and TPU metrics below their floors, and a chart needs a collector
    (the rules and their sources: gke_ai_batch/config/metrics.py)."""
    if cfg.metrics is not None:
        yield from metrics_problems(cfg.metrics, cfg.collected, partial(version_floor, cfg.facts))
