"""report.md: what a stack will create, as a PR comment a reviewer reads before `pulumi up`.

Everything comes from the derived plan (the same numbers the components register and the
policy rules check) and from synth's recording (resource options such as protect). Output is
deterministic: plan order, no timestamps, sets sorted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gke_ai_batch.domain.findings import MANDATORY, Finding
from gke_ai_batch.model import podsecurity
from gke_ai_batch.model.objects import NAMESPACE_NAME_LABEL
from gke_ai_batch.domain.podtemplates import workload_pod_sets
from gke_ai_batch.domain.catalogue import GPU_RESOURCE, TPU_RESOURCE
from gke_ai_batch.plan.podsecurity import pod_specs
from gke_ai_batch.domain import naming, quantity, urns
from gke_ai_batch.domain.naming import scope_of

from .. import policy
from . import admission, checkpoints, computeclasses, cost as cost_view, topology, fleet as fleet_view, maintenance, metrics, preemption, quota, replacement, reservations
from .diagram import diagram
from .md import DASH, code, codes, plural, table

NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
ACCELERATORS = (TPU_RESOURCE, GPU_RESOURCE)


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
    protected = _protected(result)
    lines = _title(result.stack, plan) if fleet is None else fleet_view.title(result.stack, fleet)
    sections = [
        ("Policy", _policy(violations)),
        ("Capacity per flavor", _flavors(plan)) if fleet is None else ("Fleet", fleet_view.section(fleet, result.recording)),
        ("Node pools", _pools(plan, protected) if fleet is None else fleet_view.pools(result)),
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


# -- header -------------------------------------------------------------------------------


def _title(stack: str, plan) -> list[str]:
    c = plan.config.cluster
    mode = "Standard" if c.standard else "Autopilot"
    where = code(c.location)
    # Where nodes run: the cluster's node locations and each pool's own (a TPU slice's zone).
    zones = sorted({*c.node_locations, *(z for p in plan.pools for z in p.zones)})
    if zones:
        where += f" (nodes in {codes(zones)})"
    prod = "**production** (protected)" if plan.config.production else "not production"
    extra = "" if c.standard else " (Autopilot: GKE creates nodes per workload)"
    total = (
        f"**Total:** {plural(len(plan.pools), 'node pool')}{' + system pool' if plan.system_pool else ''}{extra}, "
        f"{plural(plan.slices, 'TPU slice')}, {plural(plan.vms, 'VM')} at most, "
        f"{plural(plan.tpu_chips, 'TPU chip')}, {plural(plan.gpus, 'GPU')}"
    )
    return [
        f"## `{stack}`: cluster `{c.name}`",
        "",
        f"{mode} · {where} · {_version_text(c)} · {prod}",
        "",
        total,
    ]


def _version_text(c) -> str:
    if c.existing:
        return f"existing cluster (not created here) at GKE {code(c.version)}"
    return f"release channel {c.release_channel}"


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


# -- policy -------------------------------------------------------------------------------


def _policy(violations: Sequence[Finding | Mapping[str, Any]]) -> list[str]:
    """The policy pack's findings (policy.json's entries are read as findings too)."""
    if not violations:
        return ["✅ All policy rules pass."]
    found = [v if isinstance(v, Finding) else policy.finding(v) for v in violations]
    mandatory = [f for f in found if f.severity == MANDATORY]
    others = [f for f in found if f.severity != MANDATORY]
    head = []
    if mandatory:
        head.append(f"❌ **{plural(len(mandatory), 'mandatory violation')}: `pulumi up` must not run.**")
    if others:
        head.append(f"⚠️ {plural(len(others), 'advisory finding')}.")
    rows = [
        [
            "**mandatory**" if f.severity == MANDATORY else f.severity or DASH,
            code(f.rule or DASH),
            _resource(f.urn or ""),
            f.message,
        ]
        for f in mandatory + others
    ]
    return [" ".join(head), "", *table(["enforcement", "policy", "resource", "message"], rows)]


def _resource(urn: str) -> str:
    try:
        parsed = urns.parse(urn)
    except urns.UrnError:  # a stack-level finding names no resource
        return code(urn) if urn else DASH
    return f"{code(parsed.name)} ({parsed.type.rsplit(':', 1)[-1]})"


# -- capacity -----------------------------------------------------------------------------


def _resource_of(flavor, plan) -> str | None:
    """The accelerator a flavor is counted in: its pools' kind, or what its queues grant."""
    if flavor.accelerator_resource:
        return flavor.accelerator_resource
    granted = {r for q in plan.queues for r in q.quotas.get(flavor.name, {})}
    return next((r for r in ACCELERATORS if r in granted), None)


def _quota_sum(plan, flavor: str, resource: str) -> tuple[float, int, str]:
    """(total nominal, how many queues grant it, total as written when it is one quantity)."""
    values = [q.quotas[flavor][resource] for q in plan.queues if resource in q.quotas.get(flavor, {})]
    total = sum(_value(v) for v in values)
    shown = str(values[0]) if len(values) == 1 else _number(total)
    return total, len(values), shown


def _flavors(plan) -> list[str]:
    if not plan.flavors:
        return ["No ResourceFlavors: Kueue has nothing to admit onto."]
    rows = []
    for f in plan.flavors:
        pools = [p for p in plan.pools if p.entry in f.entries]
        resource = _resource_of(f, plan)
        capacity = f.capacity.get(resource) if resource else None
        if resource is None:
            quota = DASH
        else:
            total, granted, shown = _quota_sum(plan, f.name, resource)
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
                _capacity_kind(plan, f),
                f.slices if f.slices else DASH,
                _node_range(pools) if pools else DASH,
                _chips(capacity, resource) if capacity is not None else DASH,
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


def _capacity_kind(plan, flavor) -> str:
    cc = next((f.compute_class for f in plan.config.flavors or [] if f.name == flavor.name), None)
    if cc is not None:
        priorities = next(c.priorities for c in plan.config.compute_classes if c.name == cc)
        order = " → ".join(dict.fromkeys(p.capacity for p in priorities))
        return f"{order} (ComputeClass {code(cc)})"
    caps = []
    for e in plan.config.node_pools:
        if e.name in flavor.entries and e.capacity not in caps:
            caps.append(e.capacity)
    text = ", ".join(caps) or DASH
    if flavor.queued:
        check = plan.config.kueue.provisioning_admission_check
        text += f" (admission check {code(check)})" if caps else f"queued (admission check {code(check)})"
    return text


def _chips(amount, resource: str | None) -> str:
    if resource == TPU_RESOURCE:
        return f"{amount} TPU chips"
    if resource == GPU_RESOURCE:
        return plural(amount, "GPU")
    return str(amount)


def _node_range(pools) -> str:
    floor = sum(_floor(p) for p in pools)
    ceiling = sum(p.nodes for p in pools)
    return str(ceiling) if floor == ceiling else f"{floor}..{ceiling}"


def _floor(pool) -> int:
    # From the plan, not the NodePool arguments: TPU pools carry per-zone limits, the others
    # total ones.
    return pool.floor


# -- node pools ---------------------------------------------------------------------------


def _protected(result, scope: str | None = None) -> dict[str, bool]:
    """Each node pool's protection by its GKE name; of cluster `scope` only when given (the
    clusters of a fleet each have a pool named `system`)."""
    recording = result.recording
    if recording is None:
        return {}
    # By the pool's GKE name: its logical name carries the cluster's scope in a fleet.
    return {
        r.inputs.get("name", r.name): bool(r.options.get("protect"))
        for r in recording.resources
        if r.type == NODE_POOL_TYPE and (scope is None or scope_of(r.name, r.inputs.get("name", r.name)) == scope)
    }


def _pools(plan, protected: dict[str, bool]) -> list[str]:
    cfg = plan.config
    if not cfg.cluster.standard:
        return ["Autopilot: no node pools; GKE creates nodes for each workload's nodeSelector."]
    rows = []
    for p in plan.pools:
        rows.append(
            [
                code(p.name),
                p.capacity,
                p.machine_type,
                _shape(p),
                ", ".join(p.zones) or "GKE default",
                _nodes(p),
                p.chips if p.kind != "cpu" else DASH,
                "yes" if protected.get(p.name) else "no",
            ]
        )
    system = plan.system_pool
    if system is not None:
        scale = system["autoscaling"]
        rows.append(
            [
                code(system["name"]),
                "onDemand",
                system["node_config"]["machine_type"],
                "system (CPU)",
                ", ".join(cfg.cluster.node_locations) or "GKE default",
                f"{scale['total_min_node_count']}..{scale['total_max_node_count']}",
                DASH,
                "yes" if protected.get(system["name"]) else "no",
            ]
        )
    if not rows:
        return ["No node pools."]
    return table(
        ["pool", "capacity", "machine type", "TPU topology / GPU", "zones", "nodes", "chips / GPUs", "protected"],
        rows,
        ["l", "l", "l", "l", "l", "r", "r", "l"],
    )


def _shape(pool) -> str:
    if pool.tpu is not None:
        s = pool.tpu
        hosts = f"{s.vms} VMs × {s.chips_per_vm} chips" if s.multi_host else f"1 VM × {s.chips_per_vm} chips"
        return f"{s.generation.version} {s.topology} ({hosts})"
    accel = pool.args["node_config"].get("guest_accelerators") or []
    if accel:
        return f"{accel[0]['count']} × {accel[0]['type']} per node"
    return "CPU"


def _nodes(pool) -> str:
    if not pool.autoscaled:
        return str(pool.nodes)
    return f"{_floor(pool)}..{pool.nodes} (autoscaled)"


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
                _checks(spec) or DASH,
                _namespaces(spec.get("namespaceSelector")),
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


def _checks(spec) -> str:
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks", [])
    # No onFlavors: the check applies to every flavor of the queue (admissioncheck.NewAdmissionChecks,
    # pkg/util/admissioncheck/admissioncheck.go:169-184 in Kueue v0.19.2).
    return "; ".join(
        f"{code(c['name'])} on {codes(c['onFlavors']) if c.get('onFlavors') else 'every flavor'}" for c in strategy
    )


def _namespaces(selector) -> str:
    if selector is None:
        return "none (no namespaceSelector)"
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return "all"
    parts = [f"{k}={v}" for k, v in selector.get("matchLabels", {}).items()]
    for expr in selector.get("matchExpressions", []):
        if expr["key"] == NAMESPACE_NAME_LABEL and expr["operator"] == "In":
            parts.append(codes(expr["values"]))
        else:
            values = f" ({', '.join(expr.get('values', []))})" if expr.get("values") else ""
            parts.append(f"{expr['key']} {expr['operator']}{values}")
    return "; ".join(parts)


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
            f"{code(w.name)} ({', '.join(sorted({v.check for v in found}))})"
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
                ", ".join(f"{_number(n)} {r}" for r, n in accel.items()) or DASH,
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

    def add(count: int, pod_spec: dict[str, Any]) -> None:
        nonlocal pods
        pods += count
        for container in pod_spec.get("containers", []):
            requests = (container.get("resources") or {}).get("requests") or {}
            for r in ACCELERATORS:
                if r in requests:
                    accel[r] = accel.get(r, 0) + count * _value(requests[r])

    found = workload_pod_sets(workload.manifests)
    for pod_set in found[1] if found is not None else ():
        add(pod_set.count, pod_set.spec)
    return pods, accel


# -- flow ---------------------------------------------------------------------------------


def _flow(plan, fleet=None) -> list[str]:
    def edge_label(queue, flavor_name: str) -> str | None:
        flavor = next(f for f in plan.flavors if f.name == flavor_name)
        resource = _resource_of(flavor, plan)
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


# -- numbers ------------------------------------------------------------------------------


def _value(q) -> float:
    try:
        return quantity.value(q)
    except (TypeError, ValueError):
        return 0.0


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
