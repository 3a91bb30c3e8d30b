"""Kueue ClusterQueues: names, flavors and quotas, fair sharing."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import quantity
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.batch import ClusterQueueConfig, QuotaLimits
from gke_ai_batch.config.checks import check, entry
from gke_ai_batch.config.lookups import each_once, flavors_with_capacity, unknown_pools


@check("kueue", on_manager=False)
def fair_sharing(cfg, ctx) -> Iterator[RuleError]:
    """Kueue's fair sharing divides "the unused nominal quota of all the ClusterQueues in
    the cohort" between "the tenants of a cohort" (Kueue v0.19.2 docs, concepts/preemption
    #fair-sharing; share values compare a ClusterQueue "to others in the same cohort").
    Without a cohort of two or more cluster queues there is nothing to share, and the
    setting changes nothing."""
    if cfg.kueue.fair_sharing is None:
        return
    cohorts: dict[str, list[str]] = {}
    for cq in cfg.cluster_queues:
        if cq.cohort is not None:
            cohorts.setdefault(cq.cohort, []).append(cq.name)
    if any(len(members) >= 2 for members in cohorts.values()):
        return
    alone = [f"{q[0]!r} alone in cohort {c!r}" for c, q in cohorts.items()]
    loose = [repr(cq.name) for cq in cfg.cluster_queues if cq.cohort is None]
    if loose:
        alone.append(f"{', '.join(loose)} in no cohort")
    yield RuleError(
        ("kueue", "fairSharing"),
        "fair sharing divides a cohort's unused quota between its cluster queues, and no cohort "
        f"here has two or more ({'; '.join(alone) or 'no cluster queues'}), so it would do "
        "nothing; remove kueue.fairSharing, or give the queues that should share one cohort",
    )


@check("clusterQueues", on_manager=False)
def cluster_queues(cfg, ctx) -> Iterator[RuleError]:
    """A cluster queue is declared once, and names flavors the stack has, with quotas Kueue
    takes (Kueue docs concepts/cluster_queue; kubernetes-sigs/kueue
    apis/kueue/v1beta1/clusterqueue_types.go: nominalQuota, lendingLimit)."""
    facts = None  # read on first need: a name declared twice needs no flavor
    twice, own = each_once("clusterQueues", "cluster queue", cfg.cluster_queues)
    yield from twice
    for i, cq in own:
        facts = facts or _flavor_facts(cfg)
        yield from cluster_queue_problems(("clusterQueues", i), cq, *facts)


@entry("clusterQueues", on_manager=False)
def cluster_queue_entry(cfg, ctx, i: int, cq: ClusterQueueConfig) -> Iterator[RuleError]:
    """One cluster queue's rules (the clusterQueues check's, on each entry that is not a copy)."""
    yield from cluster_queue_problems(("clusterQueues", i), cq, *_flavor_facts(cfg))


def _flavor_facts(cfg) -> tuple[list[str], set[str], set[str], bool, bool]:
    """What a queue's rules need of the stack (cluster_queue_problems' arguments after the queue)."""
    # Which flavors there are, and what capacity they have, is unknown on an Autopilot stack
    # that declares none, and for a flavor that names an unknown pool: both are reported
    # under flavors, and the queue rules that need them stay quiet.
    flavors_known = cfg.flavors is not None or cfg.cluster.standard
    unsure = {f.name for f in cfg.flavors or [] if unknown_pools(cfg, f)}
    return cfg.flavor_names(), flavors_with_capacity(cfg), unsure, flavors_known, cfg.kueue.fair_sharing is not None


def cluster_queue_problems(
    at: tuple,
    cq: ClusterQueueConfig,
    known: list[str],
    derived: set[str],
    unsure: set[str] = frozenset(),
    flavors_known: bool = True,
    fair_sharing: bool = False,
) -> Iterator[RuleError]:
    """One cluster queue's rules against the flavors there are (`known`), those with TPU or GPU
    capacity to derive a quota from (`derived`) and those whose pools are unknown (`unsure`):
    the stack's, and a ClusterQueue component's (gke_ai_batch/components/queues.py), whose
    flavors are its args."""
    if fair_sharing and cq.preemption and cq.preemption.borrow_within_cohort:
        yield RuleError(
            (*at, "preemption", "borrowWithinCohort"),
            "Kueue ignores borrowWithinCohort when fair sharing is on (kueue.fairSharing); "
            "remove one of the two",
        )
    if not cq.flavors and flavors_known:
        if not known:
            yield RuleError((*at, "flavors"), "the stack has no flavors for this queue")
        else:
            bare = [f for f in known if f not in derived and f not in unsure]
            if bare:
                yield RuleError(
                    (*at, "flavors"),
                    f"list this queue's flavors with quotas: {', '.join(bare)} offer no accelerator "
                    "capacity to derive a quota from",
                )
    for j, flavor in enumerate(cq.flavors):
        where = (*at, "flavors", j)
        if flavor.name not in known:
            if flavors_known:
                yield RuleError(
                    (*where, "name"),
                    f"unknown flavor {flavor.name!r}; known: {', '.join(dict.fromkeys(known)) or 'none'}",
                )
        elif flavor.name not in derived and flavor.name not in unsure and not flavor.quotas:
            yield RuleError(
                (*where, "quotas"),
                f"flavor {flavor.name!r} has no TPU or GPU pools to derive a quota from; give its quotas",
            )
        for resource, q in flavor.quotas.items():
            limits = {"nominal": q.nominal, "borrowingLimit": q.borrowing_limit, "lendingLimit": q.lending_limit} if (
                isinstance(q, QuotaLimits)) else {None: q}
            for key, amount in limits.items():
                problem = quantity.unlimited_quota_problem(resource, amount) if amount is not None else None
                if problem:
                    yield RuleError((*where, "quotas", resource, *([key] if key else [])), problem)
            if isinstance(q, QuotaLimits) and q.lending_limit is not None:
                if quantity.value(q.lending_limit) > quantity.value(q.nominal):
                    yield RuleError(
                        (*where, "quotas", resource, "lendingLimit"),
                        f"lendingLimit {q.lending_limit} exceeds nominal {q.nominal} (Kueue rejects it)",
                    )
