"""The report's view of a MultiKueue fleet (gke_ai_batch/plan/fleet.py): the clusters, the
capacity each worker holds per flavor against the manager's summed quotas, the MultiKueue
settings the manager runs with, which workers serve each manager queue (every cluster has every
team and queue; a worker without a queue's flavors keeps it idle), and the access each worker
grants the manager.

The per-plan sections of report.md render the manager's plan; this module answers the
questions only the FleetPlan can: where the capacity is, and how a job gets there."""

from __future__ import annotations

from typing import Any

import yaml

from gke_ai_batch.config.fleet import DISPATCHERS, MANAGER_SCOPE
from gke_ai_batch.plan.multikueue import kubeconfig_secret_name
from gke_ai_batch.domain.naming import scope_of

# The package, not names from it: it imports this module before it defines them.
from ..engine import is_masked
from . import sections as shared
from . import admission, replacement
from .md import DASH, code, codes, plural, table

SECRET_TYPE = "kubernetes:core/v1:Secret"
_DISPATCHER_NAMES = {v: k for k, v in DISPATCHERS.items()}


def section(fleet, recording) -> list[str]:
    return [
        *_clusters(fleet),
        "",
        "**Capacity per flavor and worker.** The manager runs no workload: every chip and GPU is on a worker. "
        "The manager's ClusterQueue quotas are its workers' quotas added up, so it admits up to the "
        "fleet's total; MultiKueue then dispatches each admitted workload whole to one worker, whose own queue "
        "admits it against that worker's quota.",
        "",
        *_capacity(fleet),
        "",
        *_multikueue(fleet),
        "",
        "**Every team and queue on every cluster.** The manager and each worker have every team's namespace "
        "(labels, NetworkPolicy, the team's RBAC), its LocalQueue and every ClusterQueue, so a workload keeps its "
        "namespace and queue wherever it lands and a team reads its jobs on any cluster. A worker with none of a "
        "queue's flavors has it **idle**: no resource groups, so it admits nothing, and MultiKueue sends it none "
        "of that queue's workloads.",
        "",
        *_mirrors(fleet),
        "",
        "**The manager's access to each worker.**",
        "",
        *_access(fleet, recording),
    ]


def landing(fleet) -> list[str]:
    """Where each sample can land: per worker that serves its queue, the admission model's
    answer on that worker (gke_ai_batch/plan/fleet.py FleetPlan.landing). MultiKueue offers it to
    each of them; the first whose Kueue admits it runs it."""
    if not fleet.landing:
        return ["No sample workloads."]
    names = [w.name for w in fleet.workers]
    rows = []
    for workload, verdicts in fleet.landing.items():
        cells = []
        for name in names:
            if name not in verdicts:
                cells.append(DASH)
            else:
                refusal = verdicts[name]
                cells.append("can land" if refusal is None else f"never: {refusal.message}")
        rows.append([code(workload), *cells])
    return [
        "Per worker that serves the sample's queue (— where it has the queue idle): the admission model's answer on that "
        "worker's own queues and nodes. A sample no worker could ever run is refused before anything is created.",
        "",
        *table(["sample", *[f"worker {code(n)}" for n in names]], rows),
    ]


# -- clusters -------------------------------------------------------------------------------


def _clusters(fleet) -> list[str]:
    rows = [_cluster_row(fleet.manager, f"manager (scope {code(MANAGER_SCOPE)})")]
    rows += [_cluster_row(w.plan, f"worker {code(w.name)}") for w in fleet.workers]
    return table(["cluster", "role", "project", "location", "GKE mode", "node pools"], rows)


def _cluster_row(plan, role: str) -> list[str]:
    c = plan.config.cluster
    where = code(c.location) + (f" (nodes in {codes(c.node_locations)})" if c.node_locations else "")
    pools = [f"{code(e.name)} ({e.capacity}{_times(plan, e.name)})" for e in plan.config.node_pools]
    if plan.system_pool is not None:
        pools.append(f"{code(plan.system_pool['name'])} (system, CPU)")
    if not c.standard:
        pools = ["none: Autopilot creates nodes per workload"]
    return [code(c.name), role, code(plan.project), where, "Standard" if c.standard else "Autopilot",
            ", ".join(pools) or DASH]


def _times(plan, entry: str) -> str:
    n = sum(1 for p in plan.pools if p.entry == entry)
    return f", {plural(n, 'slice')}" if any(p.entry == entry and p.tpu is not None for p in plan.pools) else ""


# -- capacity -------------------------------------------------------------------------------


def _capacity(fleet) -> list[str]:
    rows = []
    for flavor in fleet.manager.flavors:
        resource = shared.resource_of(flavor, fleet.manager)
        held = [(w, f) for w in fleet.workers for f in w.plan.flavors if f.name == flavor.name]
        for w, f in held:
            pools = [p for p in w.plan.pools if p.entry in f.entries]
            rows.append([
                code(flavor.name),
                f"worker {code(w.name)}",
                shared.capacity_kind(w.plan, f),
                f.slices or DASH,
                shared.node_range(pools) if pools else DASH,
                _amount(f.capacity.get(resource) if resource else None, resource),
                _quota(w.plan, f.name, resource),
            ])
        pools = [p for w, f in held for p in w.plan.pools if p.entry in f.entries]
        rows.append([
            code(flavor.name),
            f"**manager** (sum of {plural(len(held), 'worker')})",
            "MultiKueue: runs none of it",
            flavor.slices or DASH,
            shared.node_range(pools) if pools else DASH,
            _amount(flavor.capacity.get(resource) if resource else None, resource),
            _quota(fleet.manager, flavor.name, resource),
        ])
    if not rows:
        return ["No ResourceFlavors: no worker offers a flavor, and the manager has nothing to admit onto."]
    return table(
        ["flavor", "cluster", "capacity", "slices", "VMs", "chips / GPUs", "quota (all queues)"],
        rows,
        ["l", "l", "l", "r", "r", "r", "r"],
    )


def _amount(amount, resource: str | None) -> str:
    return shared.chips(amount, resource) if amount is not None else DASH


def _quota(plan, flavor: str, resource: str | None) -> str:
    if resource is None:
        return DASH
    total, granted, _ = shared.quota_sum(plan, flavor, resource)
    return f"{shared.number(total)} {resource}" if granted else "no queue uses it"


# -- MultiKueue settings ----------------------------------------------------------------------


def configuration(plan) -> dict[str, Any]:
    """The manager's `multiKueue` block, read back from the Kueue Configuration the chart gets."""
    text = plan.kueue_values["managerConfig"]["controllerManagerConfigYaml"]
    return yaml.safe_load(text).get("multiKueue") or {}


def _multikueue(fleet) -> list[str]:
    settings = configuration(fleet.manager)
    dispatcher = settings.get("dispatcherName", "")
    name = _DISPATCHER_NAMES.get(dispatcher)
    if name == "Incremental":
        step = (settings.get("incrementalDispatcherConfig") or {}).get("stepSize")
        how = f"Incremental: offers each workload to {step} more workers per round, in the MultiKueueConfig's order"
    elif name == "AllAtOnce":
        how = "AllAtOnce: offers each workload to every worker and keeps the first that admits it"
    else:
        how = "not a dispatcher Kueue ships"
    rows = [
        ["dispatcher", f"{code(dispatcher) if dispatcher else DASH} ({how})"],
        ["gcInterval", f"{_value(settings, 'gcInterval')}: how often the manager deletes worker copies whose "
                       "workload is gone from the manager"],
        ["origin", f"{_value(settings, 'origin')}: the label value of the objects this manager creates on workers; "
                   "a second manager sharing a worker needs another, or each deletes the other's workloads"],
        ["workerLostTimeout", f"{_value(settings, 'workerLostTimeout')}: how long a workload admitted on a worker "
                              "that stops answering stays there before the manager requeues it"],
    ]
    chain = _chain(fleet)
    return [
        "**MultiKueue settings in force** (the manager's Kueue Configuration, `multiKueue`).",
        "",
        *table(["setting", "value"], rows),
        *(["", chain] if chain else []),
    ]


def _value(settings: dict[str, Any], key: str) -> str:
    return code(settings[key]) if key in settings else DASH


def _chain(fleet) -> str:
    checks = [m for m in fleet.multikueue if m["kind"] == "AdmissionCheck"]
    configs = {m["metadata"]["name"]: m for m in fleet.multikueue if m["kind"] == "MultiKueueConfig"}
    lines = []
    for check in checks:
        ref = check["spec"]["parameters"]["name"]
        clusters = configs.get(ref, {}).get("spec", {}).get("clusters", [])
        lines.append(
            f"AdmissionCheck {code(check['metadata']['name'])} → MultiKueueConfig {code(ref)} → "
            f"MultiKueueClusters {codes(clusters)} (in this order)."
        )
    return " ".join(lines)


# -- queues per worker ----------------------------------------------------------------------


def _mirrors(fleet) -> list[str]:
    if not fleet.manager.queues:
        return ["No ClusterQueues on the manager: it admits nothing."]
    rows = []
    for q in fleet.manager.queues:
        mirrors = [(w, wq) for w in fleet.workers for wq in w.plan.queues if wq.name == q.name and wq.flavors]
        idle = [w.name for w in fleet.workers for wq in w.plan.queues if wq.name == q.name and not wq.flavors]
        rows.append([
            code(q.name),
            _accelerators(q, fleet.manager) or DASH,
            codes(q.admission_checks),
            "<br>".join(
                f"{code(w.name)}: {_accelerators(wq, w.plan) or 'no accelerator quota'}"
                + (f" (checks {shared.checks(wq.manifest.get('spec', {}))})" if shared.checks(wq.manifest.get("spec", {})) else "")
                for w, wq in mirrors
            ) or "**no worker**: MultiKueue can dispatch none of its workloads",
            codes(idle) or DASH,
        ])
    return table(["manager queue", "quota on the manager", "admission checks", "served on worker: quota",
                  "idle on worker (no quota)"], rows)


def _accelerators(queue, plan) -> str:
    parts = []
    for flavor, resources in queue.quotas.items():
        found = next((f for f in plan.flavors if f.name == flavor), None)
        resource = shared.resource_of(found, plan) if found else None
        if resource in resources:
            parts.append(f"{resources[resource]} {resource} of {code(flavor)}")
    return ", ".join(parts)


# -- access ---------------------------------------------------------------------------------


def _access(fleet, recording) -> list[str]:
    secrets = _manager_secrets(recording)
    lines = []
    for w in fleet.workers:
        account = next((m for m in w.rbac if m["kind"] == "ServiceAccount"), None)
        roles = {m["metadata"]["name"]: m for m in w.rbac if m["kind"] == "ClusterRole"}
        read = next((m for m in w.rbac if m["kind"] == "ClusterRoleBinding"), None)
        # The writes are bound per mirrored team namespace, with the team's own objects.
        writes = sorted(
            m["metadata"]["namespace"] for ms in w.plan.team_rbac.values() for m in ms
            if m["kind"] == "RoleBinding" and m["roleRef"]["kind"] == "ClusterRole" and m["roleRef"]["name"] in roles
        )
        if account and read and read["roleRef"]["name"] in roles:
            role = roles[read["roleRef"]["name"]]
            resources = sorted({r for rule in role.get("rules", []) for r in rule.get("resources", [])})
            write_role = next((n for n in roles if n != role["metadata"]["name"]), None)
            who = (f"ServiceAccount {code(_ns_name(account))}: reads cluster-wide through ClusterRoleBinding "
                   f"{code(read['metadata']['name'])} ({', '.join(resources)}); writes through ClusterRole "
                   f"{code(write_role or '?')} bound only in " + (", ".join(code(n) for n in writes) or "**no namespace**"))
        else:
            who = "**no ServiceAccount or binding**"
        name = kubeconfig_secret_name(w.name)
        secret = secrets.get(name)
        if secret is None:
            kept = f"**no kubeconfig Secret {code(name)} on the manager**: MultiKueue cannot reach this worker"
        elif is_masked(secret.inputs.get("data")):
            kept = (f"its kubeconfig is Secret {code(_ns_name(secret.inputs))} on the manager, a Pulumi secret "
                    "(encrypted in the state, masked in previews)")
        else:
            kept = f"⚠️ its kubeconfig Secret {code(_ns_name(secret.inputs))} on the manager is **not** a Pulumi secret"
        lines.append(f"- {code(w.name)}: the manager connects as {who}; {kept}.")
    return lines


def _manager_secrets(recording) -> dict[str, Any]:
    if recording is None:
        return {}
    out = {}
    # The manager's by its naming scope: this report is of the fleet stack, whose program applies
    # each object through its cluster's provider under that cluster's scope (naming.scoped); a
    # library program's fleet is judged by the pack, which groups by provider (policy/rules/fleet.py).
    for r in recording.resources:
        meta = r.inputs.get("metadata") or {}
        if r.type == SECRET_TYPE and scope_of(r.name, f"{meta.get('namespace')}/{meta.get('name')}") == MANAGER_SCOPE:
            out[meta.get("name")] = r
    return out


def _ns_name(manifest: dict[str, Any]) -> str:
    meta = manifest.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name", "")


# -- the per-plan sections, for a fleet ---------------------------------------------------------


def title(stack: str, fleet) -> list[str]:
    """The manager's header, with the fleet's totals: the manager itself holds no capacity."""
    lines = shared.title(stack, fleet.manager)
    plans = [w.plan for w in fleet.workers]
    lines[0] = (f"## `{stack}`: MultiKueue manager `{fleet.manager.config.cluster.name}`, "
                f"{plural(len(plans), 'worker')}")
    lines[-1] = (
        f"**Total ({plural(len(plans), 'worker')}):** {plural(sum(len(p.pools) for p in plans), 'node pool')} "
        f"+ a system pool per cluster, {plural(sum(p.slices for p in plans), 'TPU slice')}, "
        f"{plural(sum(p.vms for p in plans), 'VM')} at most, {plural(sum(p.tpu_chips for p in plans), 'TPU chip')}, "
        f"{plural(sum(p.gpus for p in plans), 'GPU')}; the manager runs none of it (its system pool only)"
    )
    return lines


def clusters(fleet) -> list[tuple[str, str, Any]]:
    """(naming scope, heading, plan) of every cluster, the manager first."""
    out = [(MANAGER_SCOPE, f"**Manager {code(fleet.manager.config.cluster.name)}**", fleet.manager)]
    out += [(w.name, f"**Worker {code(w.name)}** (`fleet.workers[{i}]`)", w.plan) for i, w in enumerate(fleet.workers)]
    return out


def pools(result) -> list[str]:
    return _blocks([heading, "", *shared.pools(plan, shared.protected(result, scope))]
                   for scope, heading, plan in clusters(result.fleet))


def replacements(result) -> list[str]:
    return _blocks([
        *([[heading, "", *replacement.section(plan, shared.protected(result, scope), f"fleet.workers[{i - 1}]." if i else "")]
           for i, (scope, heading, plan) in enumerate(clusters(result.fleet))]),
        ["`fleet.workers[].name` is the worker's Pulumi naming scope, part of every URN of its resources: renaming a "
        f"worker {replacement.REPLACES} its cluster, node pools and everything on them, and the manager's "
        "MultiKueueCluster and kubeconfig Secret for it."],
    ])


def _blocks(blocks) -> list[str]:
    """Blocks of lines, a blank line between each two."""
    out: list[str] = []
    for block in blocks:
        out += ([""] if out else []) + list(block)
    return out


def largest(fleet) -> list[str]:
    """Per manager queue, the largest workload each worker serving it can admit: MultiKueue
    dispatches a workload whole to one worker, so the manager's summed quota is not the bound."""
    from gke_ai_batch.plan.admission import Admission

    worlds = [(w.name, Admission(w.plan).world) for w in fleet.workers]
    rows = [
        [code(q.name), code(name), admission.largest(world, world.queues[q.name])]
        for q in fleet.manager.queues
        for name, world in worlds
        if q.name in world.queues and world.queues[q.name].groups
    ]
    if not rows:
        return ["No worker serves a manager ClusterQueue."]
    return [
        *table(["manager queue", "on worker", "largest workload it can admit, per flavor"], rows),
        "",
        "MultiKueue runs each workload whole on one worker: a workload larger than every worker's queue admits is "
        "admitted on the manager (whose quota is their sum) and then waits forever. Per worker: the "
        + admission.LARGEST[0].lower() + admission.LARGEST[1:],
    ]


def flow_sources(fleet) -> list[tuple[str, list[str]]]:
    return [(f"worker {w.name} ({w.plan.config.cluster.location})", [f.name for f in w.plan.flavors]) for w in fleet.workers]
