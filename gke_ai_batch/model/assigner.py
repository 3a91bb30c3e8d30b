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
  by borrowing is taken, with TryNextFlavor a later flavor that fits without borrowing wins.

Potential capacity is pkg/cache/scheduler/resource_node.go:potentialAvailable for a queue in a
flat cohort: its own nominal quota plus what the other queues of the cohort can lend (their
nominal quota, or their lendingLimit), capped at nominal + borrowingLimit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gke_ai_batch.model import selection
from gke_ai_batch.model.objects import ClusterQueue, PodSet, World
from gke_ai_batch.model.requests import drop_excluded, pod_requests, show, times

SOURCE = "kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go"


@dataclass(frozen=True)
class Attempt:
    flavor: str
    reason: str  # why it was passed over


@dataclass
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]  # the whole pod set, after exclusions
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    borrowed: dict[tuple[str, str], int] = field(default_factory=dict)  # (flavor, resource) -> amount
    attempts: list[Attempt] = field(default_factory=list)
    error: str | None = None


@dataclass
class Assignment:
    queue: str
    pod_sets: list[PodSetAssignment]

    @property
    def error(self) -> str | None:
        return next((p.error for p in self.pod_sets if p.error), None)

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
    """Flavors for every pod set of a workload; `used` is what queues already hold
    ((queue, flavor, resource) -> amount), empty for "can this ever be admitted"."""
    used = used or {}
    mine: dict[tuple[str, str], int] = {}  # what earlier pod sets of this workload took
    out = Assignment(cq.name, [])
    for ps in pod_sets:
        requests = times(drop_excluded(pod_requests(ps.spec), world.excluded_prefixes), ps.count)
        if cq.group_of("pods") is not None:
            requests["pods"] = ps.count  # a queue that covers pods counts them (assignFlavors)
        result = PodSetAssignment(ps.name, ps.count, requests)
        out.pod_sets.append(result)
        for resource, qty in requests.items():
            if cq.group_of(resource) is None and qty > 0:
                covered = sorted({r for g in cq.groups for r in g.covered})
                result.error = (
                    f"resource {resource} unavailable in ClusterQueue {cq.name}: no resource group covers it "
                    f"(covered: {', '.join(covered) or 'none'})"
                )
                break
        if result.error:
            break
        for group in cq.groups:
            wanted = {r: q for r, q in requests.items() if r in group.covered}
            if not wanted:
                continue
            chosen = _choose(world, cq, group, ps, wanted, mine, used, result)
            if chosen is None:
                reasons = "; ".join(a.reason for a in result.attempts) or "the group has no flavors"
                result.error = f"no flavor of ClusterQueue {cq.name} can take it: {reasons}"
                break
            flavor, borrowed = chosen
            for r, q in wanted.items():
                result.flavors[r] = flavor
                mine[(flavor, r)] = mine.get((flavor, r), 0) + q
            result.borrowed.update({(flavor, r): v for r, v in borrowed.items()})
        if result.error:
            break
    return out


def _choose(world, cq, group, ps, wanted, mine, used, result) -> tuple[str, dict[str, int]] | None:
    fallback: tuple[str, dict[str, int]] | None = None
    for flavor_name, _ in group.flavors:
        flavor = world.flavors.get(flavor_name)
        if flavor is None:
            result.attempts.append(Attempt(flavor_name, f"flavor {flavor_name} not found"))
            continue
        taint = selection.untolerated(flavor.node_taints, [*(ps.spec.get("tolerations") or ()), *flavor.tolerations])
        if taint is not None:
            result.attempts.append(Attempt(flavor_name, f"untolerated taint {selection.taint_text(taint)} in flavor {flavor_name}"))
            continue
        if not selection.matches(ps.spec, flavor.node_labels, keys=set(flavor.node_labels)):
            result.attempts.append(Attempt(flavor_name, f"flavor {flavor_name} doesn't match node affinity ({_labels(flavor.node_labels)})"))
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
            result.attempts.append(Attempt(flavor_name, short))
            continue
        if wait:
            # Fits once running work finishes or is preempted: Kueue keeps looking
            # (whenCanPreempt defaults to TryNextFlavor), this flavor is the fallback.
            result.attempts.append(Attempt(flavor_name, wait))
            fallback = fallback or (flavor_name, borrowed)
            continue
        if not borrowed:
            return flavor_name, {}
        if cq.when_can_borrow != "TryNextFlavor":
            return flavor_name, borrowed
        result.attempts.append(Attempt(flavor_name, f"flavor {flavor_name} fits only by borrowing (whenCanBorrow: TryNextFlavor)"))
        fallback = fallback or (flavor_name, borrowed)
    return fallback


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "no labels"
