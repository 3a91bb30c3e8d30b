"""The cluster's network and subnetwork, in the project they imply."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, valid
from gke_ai_batch.config.cluster import ClusterConfig
from gke_ai_batch.config.gcpnames import is_project_id
from gke_ai_batch.config.lookups import under


@check("cluster", per_worker=False)
def networks(cfg, ctx) -> Iterator[RuleError]:
    """A network or subnetwork named without a project is one of the cluster's project:
    gcp:project, or a fleet worker's own (config.load passes gcp:project as the context); the
    rule, which a cluster component runs on its args, is network_problems (its source:
    implied_project_problem in gke_ai_batch/config/cluster.py)."""
    project = ctx.project if is_project_id(ctx.project) else None
    yield from under(("cluster",), network_problems(cfg.cluster, project))
    for i, w in valid(cfg.fleet.workers if cfg.fleet else []):
        for problem in network_problems(w.cluster, w.project if is_project_id(w.project) else project):
            yield RuleError(("fleet", "workers", i, "cluster", *problem.path), f"worker {w.name}: {problem.message}")


def network_problems(cluster: ClusterConfig, project: str | None) -> Iterator[RuleError]:
    """GKE refuses a network and subnetwork of two projects: one named without a project is
    `project`'s, the cluster's (paths relative to the cluster key; a stack's cluster, a cluster
    component's args). A project that is not a project id is refused on its own, so it implies
    nothing here."""
    problem = cluster.implied_project_problem(project if is_project_id(project) else None)
    if problem:
        yield RuleError("subnetwork", problem)
