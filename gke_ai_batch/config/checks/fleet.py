"""A MultiKueue fleet: its manager, and each worker checked as a stack of its own."""

from __future__ import annotations

from itertools import chain
from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, problems
from gke_ai_batch.config.checks.priorities import priorities
from gke_ai_batch.config.checks.teams import teams
from gke_ai_batch.config.fleet import fleet_problems


@check("cluster")
def manager_is_created(cfg, ctx) -> Iterator[RuleError]:
    """A fleet's manager is made with the kubeconfig Secrets and MultiKueue objects that wait
    for its workers (gke_ai_batch/components/fleet/deploy.py): this program creates it."""
    if cfg.fleet is not None and cfg.cluster.existing:
        yield RuleError(("cluster", "existing"), "a fleet's manager is a cluster this program creates; remove existing")


@check("fleet")
def fleet(cfg, ctx) -> Iterator[RuleError]:
    """Every reason the fleet would not work (gke_ai_batch/config/fleet.py). Pools, flavors,
    queues and workloads are checked per worker, each as a stack of its own; the fleet's teams
    and priorities once."""
    if cfg.fleet is not None:
        yield from fleet_problems(
            cfg, cfg.fleet, chain(teams(cfg, ctx), priorities(cfg, ctx)), lambda w: problems(w, ctx, worker=True)
        )


@check("computeClasses")
def manager_has_no_compute_classes(cfg, ctx) -> Iterator[RuleError]:
    """The manager creates and mirrors jobs; their pods run on the workers' nodes (as for its
    nodePools: fleet_problems in gke_ai_batch/config/fleet.py, from Kueue docs concepts/multikueue)."""
    if cfg.fleet is not None and cfg.compute_classes:
        yield RuleError("computeClasses", "a fleet's manager runs no pods, so no node of a compute class; remove computeClasses")
