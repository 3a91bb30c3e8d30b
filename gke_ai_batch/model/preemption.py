"""Who can preempt whom in Kueue: a ClusterQueue's spec.preemption, and per priority the
workloads Kueue may evict to admit it, and where.

Follows Kueue's ClusterQueue preemption API (kueue.x-k8s.io/v1beta2) and
pkg/scheduler/preemption/preemption.go at v0.19.2:
- withinClusterQueue LowerPriority: a pending workload that fits its queue's nominal quota
  evicts admitted workloads of the same queue with a lower priority;
  LowerOrNewerEqualPriority also those of equal priority created after it.
- reclaimWithinCohort: the pending workload takes its nominal quota back from other queues of
  the cohort that borrow it (LowerPriority: only lower-priority workloads; Any: any).
- borrowWithinCohort LowerPriority: a workload that needs to borrow evicts lower-priority
  workloads of other queues of the cohort (at most maxPriorityThreshold, when set); with fair
  sharing Kueue ignores it (fair sharing picks victims by share).
A workload without a priority class has priority 0 (no PriorityClass here is globalDefault)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NO_PRIORITY = None  # a victim without a priority class (priority 0)


@dataclass(frozen=True)
class Policy:
    queue: str
    cohort: str | None
    within: str
    reclaim: str
    borrow: str
    threshold: int | None
    declared: bool


def policy(manifest: Mapping[str, Any]) -> Policy:
    """A ClusterQueue manifest's preemption settings, with Kueue's defaults."""
    spec = manifest.get("spec", {})
    pre = spec.get("preemption")
    bwc = (pre or {}).get("borrowWithinCohort") or {}
    return Policy(
        queue=manifest["metadata"]["name"],
        cohort=spec.get("cohortName") or None,
        within=(pre or {}).get("withinClusterQueue", "Never"),
        reclaim=(pre or {}).get("reclaimWithinCohort", "Never"),
        borrow=bwc.get("policy", "Never"),
        threshold=bwc.get("maxPriorityThreshold"),
        declared=pre is not None,
    )


@dataclass(frozen=True)
class Reach:
    """Victims a pending workload may evict: names of priorities (None: no priority), or
    'any'; `how` is 'queue', 'reclaim' or 'borrow'; `others` the other queues of the cohort;
    `newer` the equal priorities of which only newer workloads are evicted."""

    victims: tuple[str | None, ...]
    how: str
    others: tuple[str, ...] = ()
    newer: tuple[str, ...] = ()


def reaches(prio, priorities: Sequence, p: Policy, cohort_members: Mapping[str, list[str]], fair_sharing: bool) -> Iterator[Reach]:
    """What a workload of priority `prio` pending in p's queue may evict. `prio` and each of
    `priorities` have .name and .value."""
    lower: list[str | None] = [o.name for o in priorities if o.value < prio.value]
    if prio.value > 0:
        lower.append(NO_PRIORITY)
    if p.within in ("LowerPriority", "LowerOrNewerEqualPriority"):
        newer = tuple(o.name for o in priorities if o.value == prio.value) if p.within == "LowerOrNewerEqualPriority" else ()
        if lower or newer:
            yield Reach(tuple(lower), "queue", newer=newer)
    others = tuple(q for q in cohort_members.get(p.cohort or "", []) if q != p.queue)
    if not others:
        return
    if p.reclaim == "Any":
        yield Reach(("any",), "reclaim", others)
    elif p.reclaim == "LowerPriority" and lower:
        yield Reach(tuple(lower), "reclaim", others)
    if p.borrow == "LowerPriority" and not fair_sharing:
        capped: list[str | None] = [
            o.name for o in priorities if o.value < prio.value and (p.threshold is None or o.value <= p.threshold)
        ]
        if prio.value > 0 and (p.threshold is None or p.threshold >= 0):
            capped.append(NO_PRIORITY)
        if capped:
            yield Reach(tuple(capped), "borrow", others)


def cohorts(policies: Sequence[Policy]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for p in policies:
        if p.cohort:
            members.setdefault(p.cohort, []).append(p.queue)
    return members
