"""Who can preempt whom: a ClusterQueue's spec.preemption in words, and per priority the
workloads Kueue may evict to admit it.

The reading follows Kueue's ClusterQueue preemption API (kueue.x-k8s.io/v1beta2):
- withinClusterQueue LowerPriority: a pending workload that fits its queue's nominal quota
  evicts admitted workloads of the same queue with a lower priority;
  LowerOrNewerEqualPriority also those of equal priority created after it.
- reclaimWithinCohort: the pending workload takes its nominal quota back from other queues of
  the cohort that borrow it (LowerPriority: only lower-priority workloads; Any: any).
- borrowWithinCohort LowerPriority: a workload that needs to borrow evicts lower-priority
  workloads of other queues of the cohort (at most maxPriorityThreshold, when set).
A workload without a priority class has priority 0 (no PriorityClass here is globalDefault).
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class Policy:
    queue: str
    cohort: str | None
    within: str
    reclaim: str
    borrow: str
    threshold: int | None
    declared: bool


def policy(queue) -> Policy:
    spec = queue.manifest.get("spec", {})
    pre = spec.get("preemption")
    bwc = (pre or {}).get("borrowWithinCohort") or {}
    return Policy(
        queue=queue.name,
        cohort=queue.cohort,
        within=(pre or {}).get("withinClusterQueue", "Never"),
        reclaim=(pre or {}).get("reclaimWithinCohort", "Never"),
        borrow=bwc.get("policy", "Never"),
        threshold=bwc.get("maxPriorityThreshold"),
        declared=pre is not None,
    )


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
    cohort_members: dict[str, list[str]] = {}
    for p in policies:
        if p.cohort:
            cohort_members.setdefault(p.cohort, []).append(p.queue)
    out: dict[str, list[str]] = {}
    for prio in priorities:
        # The same reach through several queues is one line naming them all.
        found: dict[tuple[str, str], list[str]] = {}
        for p in policies:
            for targets, where in _reaches(prio, priorities, p, cohort_members, fair_sharing):
                found.setdefault((targets, where), []).append(p.queue)
        lines = [f"in {codes(qs)}{where}: {targets}" for (targets, where), qs in found.items()]
        out[prio.name] = lines or [DASH]
    return out


def _reaches(prio, priorities, p: Policy, cohort_members: dict[str, list[str]], fair_sharing: bool):
    """(whom, where) pairs for a workload of priority `prio` pending in p's queue; where is ""
    for its own queue, or how the cohort is reached."""
    lower = [code(o.name) for o in priorities if o.value < prio.value]
    if prio.value > 0:
        lower.append(NO_PRIORITY)
    if p.within in ("LowerPriority", "LowerOrNewerEqualPriority"):
        targets = list(lower)
        if p.within == "LowerOrNewerEqualPriority":
            targets += [f"newer {code(o.name)}" for o in priorities if o.value == prio.value]
        if targets:
            yield ", ".join(targets), ""
    others = [q for q in cohort_members.get(p.cohort or "", []) if q != p.queue]
    if not others:
        return
    # Under fair sharing the victims are whoever the share strategies pick, among these.
    reclaim = f", from {codes(others)} " + ("by fair share" if fair_sharing else "over nominal quota")
    if p.reclaim == "Any":
        yield "any priority", reclaim
    elif p.reclaim == "LowerPriority" and lower:
        yield ", ".join(lower), reclaim
    if p.borrow == "LowerPriority" and not fair_sharing:
        capped = [
            code(o.name)
            for o in priorities
            if o.value < prio.value and (p.threshold is None or o.value <= p.threshold)
        ]
        if prio.value > 0 and (p.threshold is None or p.threshold >= 0):
            capped.append(NO_PRIORITY)
        if capped:
            yield ", ".join(capped), f", borrowing from {codes(others)}"
