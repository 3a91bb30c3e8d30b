"""What the reports share: the title, the policy table, the node pool table and the cells of
capacity and queues, used by a stack's report (__init__.py), a fleet's (fleet.py) and a
program's (recorded.py), so that each reads the same numbers the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gke_ai_batch.domain import quantity, urns
from gke_ai_batch.domain.catalogue import GPU_RESOURCE, TPU_RESOURCE
from gke_ai_batch.domain.findings import MANDATORY, Finding
from gke_ai_batch.domain.naming import scope_of
from gke_ai_batch.model.objects import NAMESPACE_NAME_LABEL

from .. import policy
from .md import DASH, code, codes, plural, table

NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
ACCELERATORS = (TPU_RESOURCE, GPU_RESOURCE)


def title(stack: str, plan) -> list[str]:
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


def policy_findings(violations: Sequence[Finding | Mapping[str, Any]]) -> list[str]:
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


def resource_of(flavor, plan) -> str | None:
    """The accelerator a flavor is counted in: its pools' kind, or what its queues grant."""
    if flavor.accelerator_resource:
        return flavor.accelerator_resource
    granted = {r for q in plan.queues for r in q.quotas.get(flavor.name, {})}
    return next((r for r in ACCELERATORS if r in granted), None)


def quota_sum(plan, flavor: str, resource: str) -> tuple[float, int, str]:
    """(total nominal, how many queues grant it, total as written when it is one quantity)."""
    values = [q.quotas[flavor][resource] for q in plan.queues if resource in q.quotas.get(flavor, {})]
    total = sum(value(v) for v in values)
    shown = str(values[0]) if len(values) == 1 else number(total)
    return total, len(values), shown


def capacity_kind(plan, flavor) -> str:
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


def chips(amount, resource: str | None) -> str:
    if resource == TPU_RESOURCE:
        return f"{amount} TPU chips"
    if resource == GPU_RESOURCE:
        return plural(amount, "GPU")
    return str(amount)


def node_range(pools) -> str:
    floor = sum(_floor(p) for p in pools)
    ceiling = sum(p.nodes for p in pools)
    return str(ceiling) if floor == ceiling else f"{floor}..{ceiling}"


def _floor(pool) -> int:
    # From the plan, not the NodePool arguments: TPU pools carry per-zone limits, the others
    # total ones.
    return pool.floor


def protected(result, scope: str | None = None) -> dict[str, bool]:
    """Each node pool's protection by its GKE name; of cluster `scope` only when given (the
    clusters of a fleet each have a pool named `system`)."""
    recording = result.recording
    if recording is None:
        return {}
    # By the pool's GKE name: its logical name carries the cluster's scope in a fleet. The scope is
    # right here: this report is of a stack, whose program names every pool in its cluster's scope
    # (naming.scoped); a program's pools are grouped by the cluster they name (report/recorded.py).
    return {
        r.inputs.get("name", r.name): bool(r.options.get("protect"))
        for r in recording.resources
        if r.type == NODE_POOL_TYPE and (scope is None or scope_of(r.name, r.inputs.get("name", r.name)) == scope)
    }


def pools(plan, protected: dict[str, bool]) -> list[str]:
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


def checks(spec) -> str:
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks", [])
    # No onFlavors: the check applies to every flavor of the queue (admissioncheck.NewAdmissionChecks,
    # pkg/util/admissioncheck/admissioncheck.go:169-184 in Kueue v0.19.2).
    return "; ".join(
        f"{code(c['name'])} on {codes(c['onFlavors']) if c.get('onFlavors') else 'every flavor'}" for c in strategy
    )


def namespaces(selector) -> str:
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


def value(q) -> float:
    try:
        return quantity.value(q) or 0.0
    except (TypeError, ValueError):
        return 0.0


def number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
