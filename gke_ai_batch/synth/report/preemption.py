"""Who can preempt whom, in the report's words: the reasoning is the admission model's
(gke_ai_batch/model/preemption.py, which cites Kueue's preemption API); this module says it
as a reviewer reads it."""

from __future__ import annotations

from gke_ai_batch.model import preemption as model
from gke_ai_batch.model.preemption import Policy

from .md import DASH, code, codes

NO_PRIORITY = "no priority (0)"

READING = "Read `in q: x` as: a workload of that priority waiting in ClusterQueue `q` may evict `x`."
RULE = (
    "Kueue preempts only to admit a pending workload, and only as that workload's ClusterQueue "
    "allows: `withinClusterQueue: LowerPriority` evicts lower-priority workloads of the same queue "
    "(`LowerOrNewerEqualPriority`: also equal-priority ones created later); `reclaimWithinCohort` "
    "takes nominal quota back from other queues of the cohort that borrow it (`LowerPriority`: "
    "lower-priority workloads only, `Any`: any priority); `borrowWithinCohort: LowerPriority` lets a "
    "borrowing workload evict lower-priority ones in the cohort. A workload without a priority class "
    "has priority 0. Separately, kube-scheduler preempts lower-PriorityClass pods whenever a "
    "higher-priority pod does not fit on a node, whatever the queues say (this is how a hotswap "
    "workload takes over a slice)."
)


def policy(queue) -> Policy:
    return model.policy(queue.manifest)


def in_words(p: Policy, fair_sharing: bool = False) -> str:
    """One queue's preemption settings as a reviewer reads them."""
    if not p.declared:
        return "none (Kueue's default: never preempts)"
    parts = [
        {
            "Never": "never preempts within the queue",
            "LowerPriority": "preempts lower priority within the queue",
            "LowerOrNewerEqualPriority": "preempts lower priority, and newer equal priority, within the queue",
        }[p.within]
    ]
    reclaim = {"Never": "never", "LowerPriority": "lower priority", "Any": "any"}[p.reclaim]
    if p.cohort:
        by_share = " (by fair share)" if fair_sharing and p.reclaim != "Never" else ""
        parts.append(f"reclaims from cohort: {reclaim}{by_share}")
        if p.borrow == "LowerPriority" and fair_sharing:
            # Kueue's API: borrowWithinCohort is for classical preemption only.
            parts.append("borrowWithinCohort set but unused: fair sharing is on")
        elif p.borrow == "LowerPriority":
            limit = f" up to priority {p.threshold}" if p.threshold is not None else ""
            parts.append(f"while borrowing, preempts lower priority in the cohort{limit}")
    elif p.reclaim != "Never" or p.borrow != "Never":
        parts.append("cohort settings have no effect (no cohort)")
    return "; ".join(parts)


def can_preempt(priorities, queues, fair_sharing: bool = False) -> dict[str, list[str]]:
    """priority name -> lines saying which workloads Kueue may evict to admit it, and where."""
    policies = [policy(q) for q in queues]
    members = model.cohorts(policies)
    out: dict[str, list[str]] = {}
    for prio in priorities:
        # The same reach through several queues is one line naming them all.
        found: dict[tuple[str, str], list[str]] = {}
        for p in policies:
            for reach in model.reaches(prio, priorities, p, members, fair_sharing):
                found.setdefault(_words(reach, fair_sharing), []).append(p.queue)
        lines = [f"in {codes(qs)}{where}: {targets}" for (targets, where), qs in found.items()]
        out[prio.name] = lines or [DASH]
    return out


def _words(reach: model.Reach, fair_sharing: bool) -> tuple[str, str]:
    """(whom, where) as the report says them."""
    victims = ["any priority" if v == "any" else NO_PRIORITY if v is None else code(v) for v in reach.victims]
    victims += [f"newer {code(n)}" for n in reach.newer]
    if reach.how == "queue":
        return ", ".join(victims), ""
    if reach.how == "reclaim":
        return ", ".join(victims), f", from {codes(reach.others)} " + ("by fair share" if fair_sharing else "over nominal quota")
    return ", ".join(victims), f", borrowing from {codes(reach.others)}"
