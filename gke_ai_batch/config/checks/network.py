"""The cluster's network and subnetwork, in the project they imply."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.gcpnames import is_project_id


@check("cluster", per_worker=False)
def networks(cfg, ctx) -> Iterator[RuleError]:
    """A network or subnetwork named without a project is one of the cluster's project:
    gcp:project, or a fleet worker's own (config.load passes gcp:project as the context). A
    project that is not a project id is refused on its own, so it implies nothing here (the
    rule and its source: implied_project_problem in gke_ai_batch/config/cluster.py)."""
    project = ctx.project if is_project_id(ctx.project) else None
    problem = cfg.cluster.implied_project_problem(project)
    if problem:
        yield RuleError(("cluster", "subnetwork"), problem)
    for i, w in enumerate(cfg.fleet.workers if cfg.fleet else []):
        problem = w.cluster.implied_project_problem(w.project if is_project_id(w.project) else project)
        if problem:
            yield RuleError(("fleet", "workers", i, "cluster", "subnetwork"), f"worker {w.name}: {problem}")
