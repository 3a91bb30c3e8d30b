"""The Mermaid flowchart: node pools -> flavors -> cluster queues -> local queues -> namespaces.

Node ids are positional (P0, F0, Q0, ...) in plan order, so the same stack always draws the
same text and names never need to be valid ids; labels carry the names, quoted."""

from __future__ import annotations

from .md import plural


def _label(text: str) -> str:
    return '"' + text.replace('"', "#quot;") + '"'


def diagram(plan, accelerator_quota, sources: list[tuple[str, list[str]]] | None = None) -> list[str]:
    """accelerator_quota(queue, flavor) -> short edge label or None. `sources`: where the
    flavors' nodes are when not in the plan's own pools (a fleet manager's: its workers), as
    (label, flavor names) in order."""
    cfg = plan.config
    out = ["```mermaid", "flowchart LR"]
    edges: list[str] = []

    entry_ids: dict[str, str] = {}
    for flavor in plan.flavors:
        for entry in flavor.entries:
            if entry not in entry_ids:
                entry_ids[entry] = f"P{len(entry_ids)}"
                out.append(f"  {entry_ids[entry]}[{_label(_pool_label(plan, entry))}]")
    source = None
    for i, (text, _) in enumerate(sources or []):
        out.append(f"  W{i}[{_label(text)}]")
    if sources is None and any(not f.entries for f in plan.flavors):
        source = "GKE"
        text = "Autopilot nodes" if not cfg.cluster.standard else "auto-provisioned nodes"
        out.append(f"  {source}[{_label(text)}]")

    flavor_ids = {f.name: f"F{i}" for i, f in enumerate(plan.flavors)}
    for f in plan.flavors:
        out.append(f"  {flavor_ids[f.name]}{{{{{_label(f.name)}}}}}")
        for entry in f.entries:
            edges.append(f"  {entry_ids[entry]} --> {flavor_ids[f.name]}")
        if not f.entries and source:
            edges.append(f"  {source} --> {flavor_ids[f.name]}")

    for i, (_, names) in enumerate(sources or []):
        edges += [f"  W{i} --> {flavor_ids[n]}" for n in names if n in flavor_ids]

    queue_ids = {q.name: f"Q{i}" for i, q in enumerate(plan.queues)}
    cohorts: dict[str, list] = {}
    for q in plan.queues:
        if q.cohort:
            cohorts.setdefault(q.cohort, []).append(q)
        else:
            out.append(f"  {queue_ids[q.name]}[[{_label(q.name)}]]")
    for i, (cohort, members) in enumerate(cohorts.items()):
        out.append(f"  subgraph C{i}[{_label('cohort ' + cohort)}]")
        for q in members:
            out.append(f"    {queue_ids[q.name]}[[{_label(q.name)}]]")
        out.append("  end")
    for q in plan.queues:
        for fname in q.flavors:
            text = accelerator_quota(q, fname)
            arrow = f"-->|{_label(text)}|" if text else "-->"
            edges.append(f"  {flavor_ids[fname]} {arrow} {queue_ids[q.name]}")

    ns_ids: dict[str, str] = {}
    for i, team in enumerate(plan.teams):
        lq = f"L{i}"
        out.append(f"  {lq}([{_label(team.local_queue)}])")
        if team.namespace not in ns_ids:
            ns_ids[team.namespace] = f"N{len(ns_ids)}"
            out.append(f"  {ns_ids[team.namespace]}({_label('ns ' + team.namespace)})")
        if team.cluster_queue in queue_ids:
            edges.append(f"  {queue_ids[team.cluster_queue]} --> {lq}")
        edges.append(f"  {lq} --> {ns_ids[team.namespace]}")

    if len(out) == 2:
        out.append(f"  EMPTY[{_label('no flavors, queues or teams')}]")
    out += edges
    out.append("```")
    return out


def _pool_label(plan, entry: str) -> str:
    pools = [p for p in plan.pools if p.entry == entry]
    if not pools:
        return entry
    first = pools[0]
    if first.tpu is not None:
        return f"{entry} ({plural(len(pools), 'slice')} of {first.tpu.topology})"
    return f"{entry} ({first.floor}..{first.nodes} nodes)"
