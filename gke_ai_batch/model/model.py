"""Who can run where: for each workload, whether Kueue can ever admit it and kube-scheduler
place it, with a reason for every "no"; for each ClusterQueue, what it can admit at most.

A verdict is "never" only for what no amount of waiting fixes (a resource no queue covers, a
quota below the request, pods no node can hold). Borrowing, preemption and capacity that GKE
provisions on request (queued provisioning, flex-start, spot) are waits, reported, not refused."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gke_ai_batch.domain.findings import ERROR, Finding
from gke_ai_batch.model import assigner, outcome, placement, topology
from gke_ai_batch.model.objects import UNMANAGED_JOB_NAMESPACES, ClusterQueue, Workload, World, selector_matches
from gke_ai_batch.model.outcome import WAIT, Mode
from gke_ai_batch.model.requests import drop_excluded, pod_requests, show, times


LOCAL_QUEUE, NAMESPACE, STOP_POLICY = "local-queue", "namespace", "stop-policy"
ADMISSION_CHECK, CAPACITY = "admission-check", "capacity"
QUEUE = "queue"
"""The rule id of a ClusterQueue Kueue refuses, or that can never admit a team's work."""

RULES = {
    LOCAL_QUEUE: "kueue v0.19.2 pkg/cache/queue/manager.go (ErrLocalQueueDoesNotExistOrInactive: a workload waits for its LocalQueue)",
    NAMESPACE: "kueue v0.19.2 pkg/workload/resources.go:ValidateAdmissibility (namespaceSelector)",
    STOP_POLICY: "kueue v0.19.2 apis/kueue/v1beta2/clusterqueue_types.go (ClusterQueueSpec.stopPolicy)",
    assigner.RULE: assigner.SOURCE,
    ADMISSION_CHECK: "kueue v0.19.2 pkg/controller/admissionchecks/provisioning (a ProvisioningRequest check admits once GKE provisions)",
    CAPACITY: "GKE concepts/spot-vms and concepts/dws (flex-start): nodes GKE may reclaim or creates when it has them",
    placement.RULE: "kube-scheduler NodeAffinity, TaintToleration, NodeResourcesFit filters",
    topology.RULE: "kueue v0.19.2 pkg/scheduler/flavorassigner/tas_flavorassigner.go, pkg/cache/scheduler/tas_flavor_snapshot.go",
    QUEUE: "kueue v0.19.2 pkg/webhooks/clusterqueue_webhook.go and the ClusterQueue CRD's limits",
}
"""Every rule a verdict's reasons or a queue problem name, and the upstream source it follows."""


@dataclass(frozen=True)
class Verdict:
    """One workload's answer, as Kueue's flavor assigner and kube-scheduler would give it on an
    empty cluster: its mode (gke_ai_batch/model/outcome.py: NO_FIT means never) and the reasons,
    in the order they were found: the first error is why it can never run, the WAIT ones what
    it may wait for though it can run (a refused workload may have both)."""

    workload: Workload
    cluster_queue: str | None
    mode: Mode
    reasons: tuple[Finding, ...] = ()
    assignment: assigner.Assignment | None = None
    placements: tuple[placement.Placement, ...] = ()

    @property
    def admissible(self) -> bool:
        return self.mode != Mode.NO_FIT

    @property
    def refusal(self) -> Finding | None:
        """Why it can never run: the first error among its reasons; None when it can."""
        return outcome.refusal(self.reasons)

    @property
    def waits(self) -> tuple[Finding, ...]:
        return outcome.waits(self.reasons)

    @property
    def flavors(self) -> list[str]:
        return self.assignment.flavors if self.assignment else []


def _verdict(wl: Workload, cluster_queue: str | None, reasons: list[Finding], assignment=None, placements=()) -> Verdict:
    mode = Mode.NO_FIT if outcome.refusal(reasons) else assignment.mode if assignment else Mode.FIT
    return Verdict(wl, cluster_queue, mode, tuple(reasons), assignment, tuple(placements))


def judge(world: World, wl: Workload, capacity_types: dict[str, set[str]] | None = None) -> Verdict:
    """capacity_types: flavor -> the GKE provisioning models of its nodes (for the waits)."""
    if not wl.queued:
        placements, found = _place(world, wl, [])
        why = "not queued: the pods wait for the ProvisioningRequest's nodes" if wl.kind == "ProvisioningRequest" else "not queued"
        return _verdict(wl, None, [Finding(LOCAL_QUEUE, why, severity=WAIT), *found], placements=placements)
    cq_name = world.local_queues.get((wl.namespace, wl.local_queue))
    refused = _queue_refusal(world, wl, cq_name)
    if refused is not None:
        return _verdict(wl, cq_name, [refused])
    assert cq_name is not None  # _queue_refusal refuses a workload whose LocalQueue names none
    cq = world.queues[cq_name]
    assignment = assigner.assign(world, cq, wl.pod_sets)
    reasons = [r for p in assignment.pod_sets for r in p.reasons]
    if assignment.mode == Mode.NO_FIT:
        return _verdict(wl, cq_name, reasons, assignment)

    def wait(rule: str, message: str) -> None:
        reasons.append(Finding(rule, message, severity=WAIT))

    for (flavor, resource), amount in sorted(assignment.borrowed.items()):
        wait(assigner.RULE, f"borrows {show(resource, amount)} {resource} of {flavor} from cohort {cq.cohort}")
    for flavor in assignment.flavors:
        for check in cq.checks.get(flavor, ()):
            wait(ADMISSION_CHECK, f"admission check {check} on {flavor} (a ProvisioningRequest: GKE's DWS provisions the nodes first)")
        for model in sorted((capacity_types or {}).get(flavor, ())):
            if model == "flexStart":
                wait(CAPACITY, f"{flavor} is flex-start capacity: nodes are created when GKE has them")
            elif model == "spot":
                wait(CAPACITY, f"{flavor} is spot capacity: GKE may reclaim the nodes")
    placements, found = _place(world, wl, [world.flavors[f] for f in assignment.flavors if f in world.flavors])
    reasons += found
    for ps, psa, p in zip(wl.pod_sets, assignment.pod_sets, placements):
        for r in topology.judge(world, ps, sorted(set(psa.flavors.values())), p, cq.checks):
            reasons.append(replace(r, message=f"pod set {ps.name}{':' if r.severity == ERROR else ''} {r.message}"))
    return _verdict(wl, cq_name, reasons, assignment, placements)


def _queue_refusal(world: World, wl: Workload, cq_name: str | None) -> Finding | None:
    """Why the workload's queues can never admit it, before any flavor is tried; None if they may."""
    if cq_name is None or cq_name not in world.queues:
        return Finding(LOCAL_QUEUE, f"LocalQueue {wl.namespace}/{wl.local_queue} does not exist or names no ClusterQueue")
    cq = world.queues[cq_name]
    if wl.namespace in UNMANAGED_JOB_NAMESPACES:
        return Finding(NAMESPACE, (
            f"Kueue does not manage jobs in {wl.namespace}: the managedJobsNamespaceSelector excludes the "
            "system namespaces (gke_ai_batch/model/objects.py UNMANAGED_JOB_NAMESPACES), so the job "
            "stays suspended or runs outside every quota"
        ))
    if not selector_matches(cq.namespace_selector, world.namespace_labels(wl.namespace)):
        return Finding(NAMESPACE, (
            f"namespace {wl.namespace} doesn't match ClusterQueue {cq.name}'s namespaceSelector "
            f"({'none: Kueue reads a missing selector as no namespace' if cq.namespace_selector is None else cq.namespace_selector})"
        ))
    if cq.stop_policy != "None":
        # "if set to a value different from None, the ClusterQueue is considered Inactive, no
        # new reservation being made" (ClusterQueueSpec.stopPolicy,
        # apis/kueue/v1beta2/clusterqueue_types.go:132-144, v0.19.2): Hold lets what is admitted
        # finish, HoldAndDrain evicts it too; neither admits a workload created with the stack.
        return Finding(STOP_POLICY, (
            f"ClusterQueue {cq.name} is stopped (stopPolicy {cq.stop_policy}): Kueue admits nothing "
            "new from it; remove its stopPolicy (or set None), or drop the workload"
        ))
    return None


def _place(world: World, wl: Workload, flavors) -> tuple[tuple[placement.Placement, ...], list[Finding]]:
    """Each pod set's placement, and the reasons they give the workload, in pod set order."""
    placements = tuple(placement.place(world, ps, flavors, wl.exclusive_key) for ps in wl.pod_sets)
    reasons = []
    for ps, p in zip(wl.pod_sets, placements):
        if p.note and p.groups:
            reasons.append(Finding(placement.RULE, f"pod set {ps.name} {p.note}", severity=WAIT))
        if p.refusal is not None:
            reasons.append(replace(p.refusal, message=f"pod set {ps.name}: {p.refusal.message}"))
    return placements, reasons


@dataclass(frozen=True)
class QueueLimit:
    flavor: str
    resource: str
    nominal: int
    most: int  # nominal plus what the cohort can lend, within borrowingLimit


def queue_limits(world: World, cq: ClusterQueue) -> list[QueueLimit]:
    """Per flavor and resource, the most one workload can be granted: Kueue's potential capacity."""
    out = []
    for g in cq.groups:
        for flavor, quotas in g.flavors:
            for resource, q in quotas.items():
                out.append(QueueLimit(flavor, resource, q.nominal, assigner.potential_available(world, cq, flavor, resource)))
    return out


# Kueue v0.19.2 limits on a ClusterQueue's resource groups: the CRD's maxItems
# (config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml: resourceGroups <= 16,
# coveredResources <= 64, flavors <= 64 per group) and the webhook's totals
# (pkg/webhooks/clusterqueue_webhook.go: validateTotalFlavors <= 256,
# validateTotalCoveredResources <= 256, validateFlavorResourceCombinations <= 512 per group).
KUEUE_MAX_GROUPS = 16
KUEUE_MAX_PER_GROUP = 64
KUEUE_MAX_TOTAL = 256
KUEUE_MAX_COMBINATIONS = 512


def queue_shape(cq: ClusterQueue) -> str | None:
    """Why Kueue's API refuses the queue's resource groups as rendered, or None."""
    groups = [(g.flavor_names, g.covered) for g in cq.groups]
    if len(groups) > KUEUE_MAX_GROUPS:
        return (
            f"these flavors make {len(groups)} resource groups (flavors with no resource in common "
            f"cannot share one); Kueue allows at most {KUEUE_MAX_GROUPS}"
        )
    for flavors, resources in groups:
        if len(flavors) > KUEUE_MAX_PER_GROUP or len(resources) > KUEUE_MAX_PER_GROUP:
            return (
                f"a resource group of {len(flavors)} flavors and {len(resources)} resources (from "
                f"{flavors[0]} on); Kueue allows at most {KUEUE_MAX_PER_GROUP} of each per group"
            )
        if len(flavors) * len(resources) > KUEUE_MAX_COMBINATIONS:
            return (
                f"a resource group of {len(flavors)} flavors x {len(resources)} resources = "
                f"{len(flavors) * len(resources)} quotas; Kueue allows at most {KUEUE_MAX_COMBINATIONS} per group"
            )
    flavors = sum(len(g[0]) for g in groups)
    resources = sum(len(g[1]) for g in groups)
    if flavors > KUEUE_MAX_TOTAL or resources > KUEUE_MAX_TOTAL:
        return (
            f"{flavors} flavors and {resources} resources across resource groups; Kueue allows at most "
            f"{KUEUE_MAX_TOTAL} of each in a ClusterQueue"
        )
    return None


def queue_problems(world: World) -> list[Finding]:
    """ClusterQueues Kueue refuses, or that can never admit anything of some team: each a
    finding about the queue, at its field at fault."""
    out = [
        Finding(QUEUE, reason, subject=("ClusterQueue", "", cq.name), path="flavors")
        for cq in world.queues.values()
        if (reason := queue_shape(cq)) is not None
    ]
    for (namespace, lq), cq_name in sorted(world.local_queues.items()):
        cq = world.queues.get(cq_name)
        if cq is None:
            continue
        if not selector_matches(cq.namespace_selector, world.namespace_labels(namespace)):
            out.append(Finding(
                QUEUE,
                f"LocalQueue {namespace}/{lq} points at ClusterQueue {cq_name}, whose namespaceSelector "
                f"does not match namespace {namespace}: Kueue never admits its workloads",
                subject=("ClusterQueue", "", cq_name),
                path="namespaceSelector",
            ))
    return out


def workload_keys(workloads: list[Workload]) -> list[str]:
    """Each workload's key in the model's answers (simulate, admission.json), in order: its name
    where no other workload has it (a stack's samples have unique names), else
    `namespace/name`, else `Kind namespace/name`. A program may declare a JobSet `train` in two
    namespaces, or a Job and a JobSet of one name: Kubernetes keys an object by kind,
    namespace and name, and keying by name alone let one's answer overwrite the other's."""
    def counts(keys: list) -> dict:
        out: dict = {}
        for k in keys:
            out[k] = out.get(k, 0) + 1
        return out

    by_name = counts([w.name for w in workloads])
    by_place = counts([(w.namespace, w.name) for w in workloads])
    return [
        w.name if by_name[w.name] == 1
        else f"{w.namespace}/{w.name}" if by_place[(w.namespace, w.name)] == 1
        else f"{w.kind} {w.namespace}/{w.name}"
        for w in workloads
    ]


def simulate(world: World, verdicts: list[Verdict]) -> dict[str, Finding | None]:
    """What happens when every admissible sample is submitted at once to an empty cluster, in
    Kueue's order (higher priority first, then submission order, as BestEffortFIFO heads are
    ordered): workload key (workload_keys) -> None where it is admitted, else why it waits (a
    WAIT finding of the quota rule). Admission needs no preemption here, as nothing runs yet;
    what a later, higher-priority arrival may preempt is the report's preemption section."""
    usage: dict[tuple[str, str, str], int] = {}
    keyed = list(zip(workload_keys([v.workload for v in verdicts]), verdicts))
    order = sorted(
        ((key, v) for key, v in keyed if v.admissible and v.cluster_queue),
        key=lambda kv: -world.priorities.get(kv[1].workload.priority_class or "", 0),
    )
    out: dict[str, Finding | None] = {}
    for key, v in order:
        assert v.cluster_queue is not None and v.assignment is not None  # admissible and queued
        cq = world.queues[v.cluster_queue]
        need: dict[tuple[str, str], int] = {}
        for p in v.assignment.pod_sets:
            for r, f in p.flavors.items():
                need[(f, r)] = need.get((f, r), 0) + p.requests.get(r, 0)
        blocked = None
        for (f, r), n in need.items():
            left = assigner.available(world, cq, f, r, usage)
            if n > left:
                blocked = Finding(
                    assigner.RULE, f"waits for quota: needs {show(r, n)} {r} of {f}, {show(r, max(left, 0))} left", severity=WAIT
                )
                break
        if blocked:
            out[key] = blocked
            continue
        for (f, r), n in need.items():
            usage[(cq.name, f, r)] = usage.get((cq.name, f, r), 0) + n
        out[key] = None
    return out


def demand(world: World, wl: Workload) -> dict[str, int]:
    """What the whole workload asks Kueue for, after exclusions."""
    total: dict[str, int] = {}
    for ps in wl.pod_sets:
        for r, q in times(drop_excluded(pod_requests(ps.spec), world.excluded_prefixes), ps.count).items():
            total[r] = total.get(r, 0) + q
    return total
