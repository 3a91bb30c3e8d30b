"""The report's admission section: for each sample workload, whether and where Kueue admits
it and kube-scheduler places it (gke_ai_batch/model), and what it waits for; for each
ClusterQueue, the largest workload it can admit."""

from __future__ import annotations

from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.model import queue_limits, workload_keys
from gke_ai_batch.model.requests import show

from .md import DASH, code, codes, table


def workloads(admission) -> list[str]:
    if not admission.verdicts:
        return ["No sample workloads."]
    rows = []
    for key, v in _keyed(admission.verdicts):
        where = sorted({g for p in v.placements for g in p.groups})
        notes = [p.note for p in v.placements if p.note]
        borrowed = ", ".join(f"{show(r, n)} {r} of {code(f)}" for (f, r), n in sorted(v.assignment.borrowed.items())) if v.assignment else ""
        rows.append([
            code(key),
            code(v.cluster_queue) if v.cluster_queue else "not queued",
            codes(v.flavors) or DASH,
            borrowed or "none",
            (_pools(where) if where else "; ".join(dict.fromkeys(notes)) or DASH),
            "✅ " + _at_once(admission, key) if v.refusal is None else f"❌ never: {v.refusal.message}",
            "<br>".join(w.message for w in v.waits) or DASH,
        ])
    swaps = hotswap(admission)
    return [
        *table(["workload", "cluster queue", "flavors", "borrows", "node pools that fit", "all samples at once", "may wait for"], rows),
        *(["", "**Hotswap:**", *swaps] if swaps else []),
        "",
        "Each sample is judged as Kueue v0.19's flavor assigner and kube-scheduler's filters would judge it on an "
        "empty cluster (resources covered, flavor labels and taints, quota plus what the cohort lends, a node "
        "pool whose nodes hold the pods, one pool per replica under exclusive placement); a stack with a "
        "sample that could never run is refused by `python -m synth` and `pulumi up`. *All samples at once* "
        "submits every sample together in priority order.",
    ]


def hotswap(admission) -> list[str]:
    """Pairs of samples that run side by side on the same pools with exclusive placement, one
    of a higher PriorityClass: when a pool under the higher one fails, JobSet recreates its
    replica, and kube-scheduler preempts the lower one's pods (pod priority) to place it on the
    healthy pool at once (JobSet's failure policy; kube-scheduler's DefaultPreemption)."""
    prio = admission.world.priorities
    running = [
        v for key, v in _keyed(admission.verdicts)
        if v.admissible and v.workload.exclusive_key and _at_once(admission, key) == ADMITTED
    ]
    lines = []
    for hi in running:
        for lo in running:
            p_hi, p_lo = prio.get(hi.workload.priority_class or "", 0), prio.get(lo.workload.priority_class or "", 0)
            shared = {g for p in hi.placements for g in p.groups} & {g for p in lo.placements for g in p.groups}
            if hi is lo or p_hi <= p_lo or not shared:
                continue
            lines.append(
                f"- {code(hi.workload.name)} ({p_hi}) and {code(lo.workload.name)} ({p_lo}) run side by side on "
                f"{_pools(sorted(shared))}: if a pool under {code(hi.workload.name)} fails, JobSet recreates it and "
                f"kube-scheduler preempts {code(lo.workload.name)}'s pods to place it on a healthy pool at once; "
                f"{code(lo.workload.name)} waits until a pool is free again."
            )
    return lines


ADMITTED = "admitted"


def _at_once(admission, key: str) -> str:
    """A sample's lot when every sample is submitted at once: admitted, why it waits, or
    "runs" for one Kueue does not queue."""
    if key not in admission.at_once:
        return "runs"
    wait = admission.at_once[key]
    return ADMITTED if wait is None else wait.message


def _keyed(verdicts) -> list:
    """(key, verdict): the key the model's answers use for its workload (workload_keys)."""
    return list(zip(workload_keys([v.workload for v in verdicts]), verdicts))


def _pools(names: list[str]) -> str:
    if len(names) > 6:
        return f"{codes(names[:5])} and {len(names) - 5} more"
    return codes(names)


def queues(admission) -> list[str]:
    world = admission.world
    if not world.queues:
        return ["No ClusterQueues."]
    rows = [[code(cq.name), largest(world, cq)] for cq in world.queues.values()]
    return [*table(["cluster queue", "largest workload it can admit, per flavor"], rows), "", LARGEST]


LARGEST = (
    "Nominal quota plus what other queues of the cohort can lend, within `borrowingLimit`: a workload that "
    "asks for more on every flavor is never admitted."
)


def largest(world, cq) -> str:
    """The largest workload ClusterQueue `cq` can admit, per flavor, as a table cell; a
    resource the flavor admits none of (`nvidia.com/gpu` of a TPU flavor) is left out."""
    by_flavor: dict[str, list[str]] = {}
    for lim in queue_limits(world, cq):
        if not lim.most:
            continue
        text = f"{show(lim.resource, lim.most)} {lim.resource}"
        if lim.most != lim.nominal:
            text += f" ({show(lim.resource, lim.nominal)} own)"
        by_flavor.setdefault(lim.flavor, []).append(text)
    return "<br>".join(f"{code(f)}: {', '.join(parts)}" for f, parts in by_flavor.items()) or DASH


# -- admission.json ---------------------------------------------------------------------------


def compute(result) -> dict:
    """admission.json: the model's verdict on each sample and the largest workload each
    ClusterQueue can admit, for tools (the PR diff compares two renders' admission.json). A
    fleet's entries are keyed `worker/name`: each worker judges the sample on its own queues."""
    fleet = result.fleet
    if fleet is None and result.admission is None:
        # A program whose objects are on several clusters, or known only after deploy: no one
        # world to judge here (gke_ai_batch/synth/program.py admission_from_recording); the pack judges each.
        return {"workloads": {}, "queues": {}}
    if fleet is None:
        # A program of several clusters: {label: Judgement}, each entry keyed `cluster/name` as a fleet's.
        judged = result.admission.items() if isinstance(result.admission, dict) else [("", result.admission)]
        worlds = [(scope, judgement.world) for scope, judgement in judged]
        verdicts = {
            f"{scope}/{key}" if scope else key: _entry(v.refusal, v.cluster_queue)
            for scope, judgement in judged
            for key, v in _keyed(judgement.verdicts)
        }
    else:
        from gke_ai_batch.plan.admission import Admission

        worlds = [(w.name, Admission(w.plan).world) for w in fleet.workers]
        verdicts = {
            f"{worker}/{workload}": _entry(refusal, None)
            for workload, by_worker in fleet.landing.items()
            for worker, refusal in by_worker.items()
        }
    queues = {}
    for scope, world in worlds:
        for cq in world.queues.values():
            queues[f"{scope}/{cq.name}" if scope else cq.name] = {
                f"{lim.flavor}/{lim.resource}": {"most": show(lim.resource, lim.most), "nominal": show(lim.resource, lim.nominal)}
                for lim in queue_limits(world, cq)
            }
    return {"workloads": verdicts, "queues": queues}


def _entry(refusal: Finding | None, cluster_queue: str | None) -> dict:
    """One workload's admission.json entry: admissible, or the rule and reason it never is."""
    return {
        "admissible": refusal is None,
        "clusterQueue": cluster_queue,
        "reason": refusal.message if refusal else None,
        "rule": refusal.rule if refusal else None,
    }
