"""Kueue's flavor assignment, for one workload on an otherwise empty ClusterQueue: can the
workload ever be admitted, on which flavors, and does it have to borrow.

Follows kubernetes-sigs/kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go:
- assignFlavors: per pod set, every requested resource must be covered by a resource group of
  the queue, except zero requests ("resource %s unavailable in ClusterQueue", #8079);
- findFlavorForPodSets: a group's flavors are tried in order; checkFlavorForPodSets refuses a
  flavor whose nodeTaints the pod (plus the flavor's tolerations) does not tolerate, or whose
  nodeLabels the pod's nodeSelector/required affinity (restricted to the flavor's label keys)
  does not match;
- fitsResourceQuota: usage by earlier pod sets plus this pod set's request must not exceed the
  queue's potential capacity ("insufficient quota ... > maximum capacity"); within nominal quota
  it fits, above it the workload borrows from the cohort;
- fungibility: with whenCanBorrow MayStopSearch (the v1beta2 default) the first flavor that fits
  by borrowing is taken, with TryNextFlavor a later flavor that fits without borrowing wins;
- the answer: per pod set a PodSetAssignment with its FlavorAssignmentMode and the reasons for
  it (gke_ai_batch/model/outcome.py), the flavors passed over as attempts, and the workload's
  mode the worst of its pod sets'.

Potential capacity is pkg/cache/scheduler/resource_node.go:potentialAvailable for a queue in a
flat cohort: its own nominal quota plus what the other queues of the cohort can lend (their
nominal quota, or their lendingLimit), capped at nominal + borrowingLimit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.model import selection
from gke_ai_batch.model.objects import ClusterQueue, PodSet, World
from gke_ai_batch.model.outcome import WAIT, Mode, refusal, worst
from gke_ai_batch.model.requests import drop_excluded, pod_requests, show, times

SOURCE = "kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go"


RULE = "quota"
"""The rule id of the assigner's refusals (model.RULES cites SOURCE for it)."""


@dataclass(frozen=True)
class Attempt:
    """A flavor tried for a pod set and passed over: what it would have given (NO_FIT, or
    PREEMPT / FIT when a later flavor was preferred) and why (Kueue's FlavorAssignmentAttempt)."""

    flavor: str
    mode: Mode
    reason: str


@dataclass(frozen=True)
class PodSetAssignment:
    """One pod set's answer (Kueue's PodSetAssignment): the flavor of each resource, what it
    borrows, the flavors passed over, and its mode with the reasons for it (a NO_FIT's refusal,
    a PREEMPT's wait); FIT with no reasons when it is admitted as it is."""

    name: str
    count: int
    requests: Mapping[str, int]  # the whole pod set, after exclusions
    flavors: Mapping[str, str] = field(default_factory=dict)  # resource -> flavor
    borrowed: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (flavor, resource) -> amount
    attempts: tuple[Attempt, ...] = ()
    mode: Mode = Mode.FIT
    reasons: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Assignment:
    """A workload's pod sets on one ClusterQueue, up to the first that does not fit."""

    queue: str
    pod_sets: tuple[PodSetAssignment, ...]

    @property
    def mode(self) -> Mode:
        """The worst of its pod sets' (Kueue's Assignment.RepresentativeMode)."""
        return worst(p.mode for p in self.pod_sets)

    @property
    def refusal(self) -> Finding | None:
        return refusal(r for p in self.pod_sets for r in p.reasons)

    @property
    def flavors(self) -> list[str]:
        seen: list[str] = []
        for p in self.pod_sets:
            for f in p.flavors.values():
                if f not in seen:
                    seen.append(f)
        return seen

    @property
    def borrowed(self) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for p in self.pod_sets:
            for k, v in p.borrowed.items():
                out[k] = max(out.get(k, 0), v)
        return out


def available(
    world: World, cq: ClusterQueue, flavor: str, resource: str, usage: Mapping[tuple[str, str, str], int] | None = None
) -> int:
    """What the queue can still be granted of one flavor's resource, given what every queue
    already uses (queue, flavor, resource) -> amount. resource_node.go:available for a queue in a
    flat cohort; with no usage it is potentialAvailable."""
    usage = usage or {}

    def local(q) -> int:  # the part of a queue's quota it never lends (lendingLimit)
        return max(0, q.nominal - q.lending_limit) if q is not None and q.lending_limit is not None else 0

    quota = cq.quota(flavor, resource)
    nominal = quota.nominal if quota else 0
    used = usage.get((cq.name, flavor, resource), 0)
    if cq.cohort is None:
        return nominal - used
    subtree = cohort_used = 0
    for other in world.queues.values():
        if other.cohort != cq.cohort:
            continue
        q = other.quota(flavor, resource)
        nominal_other = q.nominal if q else 0
        subtree += nominal_other - local(q)
        cohort_used += max(0, usage.get((other.name, flavor, resource), 0) - local(q))
    from_cohort = subtree - cohort_used
    if quota is not None and quota.borrowing_limit is not None:
        stored = nominal - local(quota)
        from_cohort = min(from_cohort, stored - max(0, used - local(quota)) + quota.borrowing_limit)
    return max(0, local(quota) - used) + from_cohort


def potential_available(world: World, cq: ClusterQueue, flavor: str, resource: str) -> int:
    return available(world, cq, flavor, resource)


def assign(
    world: World, cq: ClusterQueue, pod_sets: tuple[PodSet, ...], used: Mapping[tuple[str, str, str], int] | None = None
) -> Assignment:
    """Flavors for every pod set of a workload, up to the first that does not fit; `used` is
    what queues already hold ((queue, flavor, resource) -> amount), empty for "can this ever
    be admitted"."""
    used = used or {}
    mine: dict[tuple[str, str], int] = {}  # what earlier pod sets of this workload took
    out: list[PodSetAssignment] = []
    for ps in pod_sets:
        result = _assign_pod_set(world, cq, ps, mine, used)
        out.append(result)
        if result.mode == Mode.NO_FIT:
            break
    return Assignment(cq.name, tuple(out))


def _assign_pod_set(world, cq, ps, mine: dict[tuple[str, str], int], used) -> PodSetAssignment:
    """One pod set's flavors, taking its quota into `mine` as each resource group is assigned."""
    requests = times(drop_excluded(pod_requests(ps.spec), world.excluded_prefixes), ps.count)
    if cq.group_of("pods") is not None:
        requests["pods"] = ps.count  # a queue that covers pods counts them (assignFlavors)

    def answer(mode=Mode.FIT, reasons=(), flavors=None, borrowed=None, attempts=()) -> PodSetAssignment:
        return PodSetAssignment(ps.name, ps.count, requests, flavors or {}, borrowed or {}, tuple(attempts), mode, tuple(reasons))

    for resource, qty in requests.items():
        if cq.group_of(resource) is None and qty > 0:
            covered = sorted({r for g in cq.groups for r in g.covered})
            return answer(Mode.NO_FIT, [Finding(RULE, (
                f"resource {resource} unavailable in ClusterQueue {cq.name}: no resource group covers it "
                f"(covered: {', '.join(covered) or 'none'})"
            ))])
    flavors: dict[str, str] = {}
    borrowed: dict[tuple[str, str], int] = {}
    attempts: list[Attempt] = []
    modes: list[Mode] = []
    reasons: list[Finding] = []
    for group in cq.groups:
        wanted = {r: q for r, q in requests.items() if r in group.covered}
        if not wanted:
            continue
        chosen, tried = _choose(world, cq, group, ps, wanted, mine, used)
        attempts += tried
        if chosen is None:
            why = "; ".join(a.reason for a in attempts) or "the group has no flavors"
            reasons.append(Finding(RULE, f"no flavor of ClusterQueue {cq.name} can take it: {why}"))
            return answer(Mode.NO_FIT, reasons, flavors, borrowed, attempts)
        flavor, took, mode = chosen
        modes.append(mode)
        if mode == Mode.PREEMPT:
            reasons.append(Finding(RULE, next(a.reason for a in tried if a.flavor == flavor), severity=WAIT))
        for r, q in wanted.items():
            flavors[r] = flavor
            mine[(flavor, r)] = mine.get((flavor, r), 0) + q
        borrowed.update({(flavor, r): v for r, v in took.items()})
    return answer(worst(modes), reasons, flavors, borrowed, attempts)


def _choose(world, cq, group, ps, wanted, mine, used) -> tuple[tuple[str, dict[str, int], Mode] | None, list[Attempt]]:
    """(flavor, what it borrows, its mode) for one resource group, or None; and the flavors
    passed over."""
    attempts: list[Attempt] = []
    fallback: tuple[str, dict[str, int], Mode] | None = None
    for flavor_name, _ in group.flavors:
        flavor = world.flavors.get(flavor_name)
        if flavor is None:
            attempts.append(Attempt(flavor_name, Mode.NO_FIT, f"flavor {flavor_name} not found"))
            continue
        taint = selection.untolerated(flavor.node_taints, [*(ps.spec.get("tolerations") or ()), *flavor.tolerations])
        if taint is not None:
            attempts.append(Attempt(flavor_name, Mode.NO_FIT, f"untolerated taint {selection.taint_text(taint)} in flavor {flavor_name}"))
            continue
        if not selection.matches(ps.spec, flavor.node_labels, keys=set(flavor.node_labels)):
            attempts.append(Attempt(flavor_name, Mode.NO_FIT, f"flavor {flavor_name} doesn't match node affinity ({_labels(flavor.node_labels)})"))
            continue
        borrowed: dict[str, int] = {}
        short = wait = None
        for r, q in wanted.items():
            val = mine.get((flavor_name, r), 0) + q
            most = potential_available(world, cq, flavor_name, r)
            if val > most:
                short = (
                    f"insufficient quota for {r} in flavor {flavor_name}: the workload needs {show(r, val)}, "
                    f"the queue can have at most {show(r, most)}"
                    + (" (nominal + what its cohort can lend)" if cq.cohort else " (its nominal quota; no cohort)")
                )
                break
            if val > available(world, cq, flavor_name, r, used):
                wait = f"insufficient unused quota for {r} in flavor {flavor_name}"
            quota = cq.quota(flavor_name, r)
            over = used.get((cq.name, flavor_name, r), 0) + val - (quota.nominal if quota else 0)
            if over > 0:
                borrowed[r] = over
        if short:
            attempts.append(Attempt(flavor_name, Mode.NO_FIT, short))
            continue
        if wait:
            # Fits once running work finishes or is preempted: Kueue keeps looking
            # (whenCanPreempt defaults to TryNextFlavor), this flavor is the fallback.
            attempts.append(Attempt(flavor_name, Mode.PREEMPT, wait))
            fallback = fallback or (flavor_name, borrowed, Mode.PREEMPT)
            continue
        if not borrowed:
            return (flavor_name, {}, Mode.FIT), attempts
        if cq.when_can_borrow != "TryNextFlavor":
            return (flavor_name, borrowed, Mode.FIT), attempts
        attempts.append(Attempt(flavor_name, Mode.FIT, f"flavor {flavor_name} fits only by borrowing (whenCanBorrow: TryNextFlavor)"))
        fallback = fallback or (flavor_name, borrowed, Mode.FIT)
    return fallback, attempts


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "no labels"
