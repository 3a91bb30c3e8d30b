"""report.md: what a stack will create, as a PR comment a reviewer reads before `pulumi up`.

Everything comes from the derived plan (the same numbers the components register and the
policy rules check) and from synth's recording (resource options such as protect). Output is
deterministic: plan order, no timestamps, sets sorted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.model import podsecurity
from gke_ai_batch.domain.podtemplates import workload_pod_sets
from gke_ai_batch.domain.catalogue import TPU_RESOURCE
from gke_ai_batch.plan.podsecurity import pod_specs
from gke_ai_batch.domain import naming

from . import admission, checkpoints, computeclasses, cost as cost_view, topology, fleet as fleet_view, maintenance, metrics, preemption, quota, replacement, reservations
from . import sections as shared
from .diagram import diagram
from .md import DASH, code, table


def render(result, violations: Sequence[Finding | Mapping[str, Any]]) -> str:
    """`violations`: the policy pack's findings (gke_ai_batch/synth/policy.py), or policy.json's entries."""
    plan = result.plan
    if plan is None and result.program is not None and result.recording is not None:
        from . import recorded  # a program without a stack file: no plan, only what it registered

        return recorded.render(result, violations)
    if plan is None:
        return f"## `{result.stack}`\n\nNothing synthesized: {result.error or 'no plan'}\n"
    # A fleet: `plan` is the manager's, which runs nothing; capacity, pools, the largest
    # workload and replacements are the workers' (gke_ai_batch/synth/report/fleet.py).
    fleet = result.fleet
    protected = shared.protected(result)
    lines = shared.title(result.stack, plan) if fleet is None else fleet_view.title(result.stack, fleet)
    sections = [
        ("Policy", shared.policy_findings(violations)),
        ("Capacity per flavor", _flavors(plan)) if fleet is None else ("Fleet", fleet_view.section(fleet, result.recording)),
        ("Node pools", shared.pools(plan, protected) if fleet is None else fleet_view.pools(result)),
        ("Maintenance", maintenance.section(plan)),
        ("Metrics", metrics.section(plan)),
        ("Cost", cost_view.section(result.cost if result.cost is not None else cost_view.compute(result))),
        ("Quota to request", quota.section([plan] if fleet is None else [fleet.manager, *(w.plan for w in fleet.workers)])),
        ("Cluster queues", _queues(plan)),
        ("Teams", _teams(plan)),
        ("Namespaces: Pod Security and network isolation", _isolation(plan)),
        ("Priorities: who can preempt whom", _priorities(plan)),
        ("Sample workloads", _workloads(plan)),
        ("Admission: can each sample run, and where",
         admission.workloads(result.admission) if fleet is None else fleet_view.landing(fleet)),
        ("Largest workload per cluster queue",
         admission.queues(result.admission) if fleet is None else fleet_view.largest(fleet)),
        ("Flow", _flow(plan, fleet)),
        ("Changes that force replacement",
         replacement.section(plan, protected) if fleet is None else fleet_view.replacements(result)),
    ]
    reserved = reservations.section(plan) if fleet is None else []
    if reserved:
        sections.insert(3, ("Reservations", reserved))
    if plan.config.compute_classes:
        sections.insert(3, ("Compute classes: capacity in priority order", computeclasses.section(plan)))
    domains = topology.section(result.admission.world, [v.workload for v in result.admission.verdicts]) if fleet is None else []
    if domains:
        # After the cluster queues, whose flavors these are.
        sections.insert(next(i for i, (h, _) in enumerate(sections) if h == "Cluster queues") + 1, ("Topology", domains))
    storage = checkpoints.section(plan)
    if storage:
        # After the teams' namespaces, whose service accounts the buckets grant.
        sections.insert(next(i for i, (h, _) in enumerate(sections) if h.startswith("Namespaces")) + 1,
                        ("Checkpoint storage", storage))
    overrides = _overrides(plan)
    if overrides:
        sections.insert(1, ("Catalogue overrides", overrides))
    for heading, body in sections:
        lines += ["", f"### {heading}", "", *body]
    return "\n".join(lines) + "\n"


# -- catalogue overrides ---------------------------------------------------------------------


def _overrides(plan) -> list[str]:
    """What the stack vouches for beyond the built-in zone and version catalogues
    (gke-ai-batch:catalogue); nothing when it relies on the catalogues alone."""
    lines = plan.config.catalogue.summary()
    if not lines:
        return []
    return [
        "⚠️ This stack relies on `gke-ai-batch:catalogue`, not on the built-in zone and version "
        "catalogues (gke_ai_batch/domain/regions.py, gke_ai_batch/domain/versions.py), for:",
        "",
        *[f"- {line}" for line in lines],
    ]


# -- capacity -----------------------------------------------------------------------------


def _flavors(plan) -> list[str]:
    if not plan.flavors:
        return ["No ResourceFlavors: Kueue has nothing to admit onto."]
    rows = []
    for f in plan.flavors:
        pools = [p for p in plan.pools if p.entry in f.entries]
        resource = shared.resource_of(f, plan)
        capacity = f.capacity.get(resource) if resource else None
        if resource is None:
            quota = DASH
        else:
            total, granted, shown = shared.quota_sum(plan, f.name, resource)
            if not granted:
                quota = "no queue uses it"
            elif capacity is not None and total > capacity:
                quota = f"**⚠️ {shown} {resource} > capacity {capacity}**"
            else:
                # Always with its Kueue resource, as the fleet report writes it: one column, one form.
                quota = f"{shown} {resource}"
        rows.append(
            [
                code(f.name),
                ", ".join(_entry_text(plan, e) for e in f.entries) or _poolless(plan, f),
                shared.capacity_kind(plan, f),
                f.slices if f.slices else DASH,
                shared.node_range(pools) if pools else DASH,
                shared.chips(capacity, resource) if capacity is not None else DASH,
                quota,
            ]
        )
    return table(
        ["flavor", "pools", "capacity", "slices", "VMs", "chips / GPUs", "quota (all queues)"],
        rows,
        ["l", "l", "l", "r", "r", "r", "r"],
    )


def _entry_text(plan, entry: str) -> str:
    n = sum(1 for p in plan.pools if p.entry == entry)
    return f"{code(entry)} ×{n}" if n > 1 else code(entry)


def _poolless(plan, flavor) -> str:
    source = "Autopilot nodes" if not plan.config.cluster.standard else "auto-provisioned"
    if naming.COMPUTE_CLASS_LABEL in flavor.node_labels:
        source = "created for its ComputeClass"
    labels = ", ".join(code(f"{k}={v}") for k, v in sorted(flavor.node_labels.items()))
    return f"none ({source}{': ' + labels if labels else ''})"


# -- queues, teams, priorities -------------------------------------------------------------


def _queues(plan) -> list[str]:
    if not plan.queues:
        return ["No ClusterQueues: Kueue admits nothing on this stack."]
    fair = plan.config.kueue.fair_sharing is not None
    rows = []
    for q in plan.queues:
        spec = q.manifest.get("spec", {})
        rows.append(
            [
                _queue_name(q, spec),
                code(q.cohort) if q.cohort else DASH,
                "<br>".join(_flavor_quota(q, spec, f) for f in q.flavors),
                preemption.in_words(preemption.policy(q), fair),
                shared.checks(spec) or DASH,
                shared.namespaces(spec.get("namespaceSelector")),
            ]
        )
    lines = table(["queue", "cohort", "flavors: nominal quota", "preemption", "admission checks", "namespaces"], rows)
    if plan.config.kueue.fair_sharing is not None:
        strategies = ", ".join(plan.config.kueue.fair_sharing.preemption_strategies)
        lines += [
            "",
            f"Fair sharing is on: between queues of a cohort Kueue picks whom to preempt by share ({strategies}), "
            "and `borrowWithinCohort` does not apply (Kueue allows it with classical preemption only).",
        ]
    return lines


def _queue_name(q, spec) -> str:
    notes = []
    if spec.get("queueingStrategy") == "StrictFIFO":
        notes.append("StrictFIFO")
    if spec.get("stopPolicy") not in (None, "None"):
        notes.append(f"stopPolicy {spec['stopPolicy']}")
    if "fairSharing" in spec:
        notes.append(f"fair-share weight {spec['fairSharing']['weight']}")
    return code(q.name) + (f" ({', '.join(notes)})" if notes else "")


def _flavor_quota(q, spec, flavor: str) -> str:
    limits: dict[str, dict[str, Any]] = {}
    for group in spec.get("resourceGroups", []):
        for f in group.get("flavors", []):
            if f["name"] == flavor:
                limits = {r["name"]: r for r in f["resources"]}
    parts = []
    for resource, nominal in q.quotas.get(flavor, {}).items():
        text = f"{resource} {nominal}"
        extra = []
        if "borrowingLimit" in limits.get(resource, {}):
            extra.append(f"borrow ≤ {limits[resource]['borrowingLimit']}")
        if "lendingLimit" in limits.get(resource, {}):
            extra.append(f"lend ≤ {limits[resource]['lendingLimit']}")
        parts.append(text + (f" ({', '.join(extra)})" if extra else ""))
    return f"{code(flavor)}: {', '.join(parts) or 'no quota'}"


def _teams(plan) -> list[str]:
    if not plan.teams:
        return ["No teams: there is no LocalQueue, so no namespace can submit to Kueue."]
    rows = [[code(t.namespace), code(t.local_queue), code(t.cluster_queue)] for t in plan.teams]
    return table(["namespace", "local queue", "cluster queue"], rows)


def _isolation(plan) -> list[str]:
    """Per team namespace its Pod Security level and NetworkPolicy; then each privileged
    namespace on a line of its own, with the sample workloads whose pods need it."""
    if not plan.teams:
        return ["No team namespaces."]
    created = {m["metadata"]["name"]: m for m in plan.namespaces}
    patched = {m["metadata"]["name"]: m for m in plan.namespace_patches}
    isolated = {m["metadata"]["namespace"] for m in plan.network_policies}
    rows, privileged = [], []
    for name, ns in {**created, **patched}.items():
        labels = ns["metadata"]["labels"]
        level = labels[podsecurity.ENFORCE_LABEL]
        version = labels[podsecurity.ENFORCE_LABEL + "-version"]
        watch = ", ".join(
            f"{label.rsplit('/', 1)[1]} {labels[label]}"
            for label in (podsecurity.WARN_LABEL, podsecurity.AUDIT_LABEL)
            if label in labels
        )
        policy = "ingress from the same namespace only" if name in isolated else "none: open to every pod"
        rows.append([code(name), "patched (exists in every cluster)" if name in patched else "created",
                     f"{code(level)} ({version})" + (f"; {watch}" if watch else ""), policy])
        if level == "privileged":
            privileged.append(name)
    lines = table(["namespace", "namespace object", "Pod Security enforce", "NetworkPolicy"], rows)
    for name in privileged:
        needs = [
            f"{code(w.name)} ({', '.join(sorted({v.rule for v in found}))})"
            for w in plan.workloads
            if w.namespace == name
            for found in [[v for spec in pod_specs(w.manifests) for v in podsecurity.violations(spec, "baseline")]]
            if found
        ]
        lines += ["", f"**Privileged namespace {code(name)}** (warn and audit at baseline): "
                  + (f"needed by {', '.join(needs)}." if needs else "no sample workload needs it.")]
    if isolated:
        lines += ["", "NetworkPolicies are enforced only with GKE Dataplane V2 (or Calico); they do not "
                      "restrict egress, nor pods on the host network."]
    return lines


def _priorities(plan) -> list[str]:
    ordered = sorted(plan.priorities, key=lambda p: (-p.value, p.name))
    lines: list[str] = []
    if ordered:
        reach = preemption.can_preempt(ordered, plan.queues, plan.config.kueue.fair_sharing is not None)
        rows = [[code(p.name), p.value, "<br>".join(reach[p.name])] for p in ordered]
        lines += table(["priority", "value", "can preempt (Kueue)"], rows, ["l", "r", "l"])
    else:
        lines.append("No priority classes: every workload has priority 0.")
    if plan.queues:
        lines += ["", (preemption.READING + " " if ordered else "") + preemption.RULE]
    return lines


# -- workloads ----------------------------------------------------------------------------


def _workloads(plan) -> list[str]:
    if not plan.workloads:
        return ["No sample workloads."]
    rows = []
    for w in plan.workloads:
        pods, accel = _demand(w)
        rows.append(
            [
                code(w.name),
                w.kind,
                code(w.namespace),
                code(w.queue) if w.queue else "not queued (ProvisioningRequest)",
                code(w.priority) if w.priority else DASH,
                pods,
                ", ".join(f"{shared.number(n)} {r}" for r, n in accel.items()) or DASH,
            ]
        )
    return table(
        ["workload", "kind", "namespace", "local queue", "priority", "pods", "accelerators"],
        rows,
        ["l", "l", "l", "l", "l", "r", "r"],
    )


def _demand(workload) -> tuple[int, dict[str, float]]:
    """Pods and accelerators the workload asks for at once, read from its manifests."""
    pods = 0
    accel: dict[str, float] = {}

    def add(count: int, pod_spec: Mapping[str, Any]) -> None:
        nonlocal pods
        pods += count
        for container in pod_spec.get("containers", []):
            requests = (container.get("resources") or {}).get("requests") or {}
            for r in shared.ACCELERATORS:
                if r in requests:
                    accel[r] = accel.get(r, 0) + count * shared.value(requests[r])

    found = workload_pod_sets(workload.manifests)
    for pod_set in found[1] if found is not None else ():
        add(pod_set.count, pod_set.spec)
    return pods, accel


# -- flow ---------------------------------------------------------------------------------


def _flow(plan, fleet=None) -> list[str]:
    def edge_label(queue, flavor_name: str) -> str | None:
        flavor = next(f for f in plan.flavors if f.name == flavor_name)
        resource = shared.resource_of(flavor, plan)
        amount = queue.quotas.get(flavor_name, {}).get(resource) if resource else None
        if amount is None:
            return None
        return f"{amount} TPU chips" if resource == TPU_RESOURCE else f"{amount} GPUs"

    if fleet is not None:
        return [
            *diagram(plan, edge_label, fleet_view.flow_sources(fleet)),
            "",
            "Workers → ResourceFlavors → the manager's ClusterQueues (boxed by cohort) → LocalQueues → namespaces; "
            "edges into a queue carry its nominal accelerator quota on the manager, the workers' added up.",
        ]
    return [
        *diagram(plan, edge_label),
        "",
        "Node pools → ResourceFlavors → ClusterQueues (boxed by cohort) → LocalQueues → namespaces; "
        "edges into a queue carry its nominal accelerator quota.",
    ]
