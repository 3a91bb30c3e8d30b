"""report.md of a program without a stack file (`python -m synth --program`): there is no plan,
so every section is read off what the program registered (node pools, ResourceFlavors,
ClusterQueues, LocalQueues) with the policy pack's own readings of a recorded node pool
(gke_ai_batch/model/facts.py), or says that it needs a stack file. Nothing is guessed: a column the
recording does not tell is a dash."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gke_ai_batch.domain.findings import Finding

from gke_ai_batch.domain.catalogue import GPU_RESOURCE, TPU_RESOURCE, TPU_TOPOLOGY_LABEL
from gke_ai_batch.policy.rules import Resource
from gke_ai_batch.policy.rules.base import CLUSTER, NODE_POOL, as_dict, as_list, dig
from gke_ai_batch.model.facts import PoolFacts, flavor_capacity, selects, stack_pools
from gke_ai_batch.model.recorded import well_formed

from gke_ai_batch.model.clusters import partition

from ..manifests import manifest_registrations
from ..policy import resources_of
from . import sections as shared
from . import admission, cost as cost_view
from .md import DASH, code, codes, plural, table

# A Kueue object with a field of another type than its CRD's: no such object will exist.
REFUSED = "refused by the API server: a field is not of its CRD's type"
# Sections of a stack's report that read its plan and have no recorded counterpart yet.
NEEDS_STACK_FILE = (
    "quota to request", "namespaces (Pod Security, network isolation)", "priorities",
    "sample workloads", "flow diagram", "changes that force replacement",
)
NO_MODEL = [
    "Not computed here: the program declares values known only after deploy. The policy pack's "
    "`kueue-admissible` judges them once known (`gke_ai_batch/model/recorded.py`)."
]


def render(result, violations: Sequence[Finding | Mapping[str, Any]]) -> str:
    recording = result.recording
    resources = resources_of(recording)
    pools = stack_pools(resources)
    listed = {r.urn for r in manifest_registrations(recording)}
    # Each cluster alone (gke_ai_batch/model/clusters.py): its pools, and the objects its provider
    # applies; a program of one cluster is one group, "", and its tables have no cluster column.
    groups = [(label, mine) for label, mine in partition(resources).items() if label] or [("", resources)]
    clusters = [(label, mine, [r.props for r in mine if r.urn in listed]) for label, mine in groups]
    verdicts = result.admission
    sections = [
        ("Policy", shared.policy_findings(violations)),
        ("Node pools", _per_cluster(clusters, _pools)),
        ("Capacity per flavor", _per_cluster(clusters, _flavors)),
        ("Cost", cost_view.section(result.cost if result.cost is not None else cost_view.compute(result))),
        ("Cluster queues", _per_cluster(clusters, _queues)),
        ("Teams", _per_cluster(clusters, _teams)),
        ("Admission: can each sample run, and where", _judged(verdicts, admission.workloads)),
        ("Largest workload per cluster queue", _judged(verdicts, admission.queues)),
        ("Not shown without a stack file", [
            f"A program has no stack file, hence no plan: {', '.join(NEEDS_STACK_FILE)} are in a stack's report only."
        ]),
    ]
    lines = _title(result, resources, pools)
    for heading, body in sections:
        lines += ["", f"### {heading}", "", *body]
    return "\n".join(lines) + "\n"


def _per_cluster(clusters, section) -> list[str]:
    """One table over every cluster, with a first column naming each row's cluster when there
    are several: `section(pools, docs)` gives (headers, rows, align) or lines to show as they are."""
    tables = [(label, section(pools, docs)) for label, pools, docs in clusters]
    if len(tables) == 1 or not all(isinstance(t, tuple) for _, t in tables):
        if len(tables) == 1:
            only = tables[0][1]
            return table(*only) if isinstance(only, tuple) else only
        out: list[str] = []
        for label, t in tables:
            body = table(*t) if isinstance(t, tuple) else t
            out += [f"Cluster {code(label)}:", "", *body, ""]
        return out[:-1]
    headers, _, align = tables[0][1]
    rows = [[code(label), *row] for label, (_, rs, _) in tables for row in rs]
    return table(["cluster", *headers], rows, ["l", *align])


def _judged(verdicts, section) -> list[str]:
    """The admission model's section: one cluster's; for several, one table whose first column
    names each row's cluster, then what each section says below its table."""
    if verdicts is None:
        return NO_MODEL
    if not isinstance(verdicts, Mapping):
        return section(verdicts)
    head: list[str] = []
    rows: list[str] = []
    after: list[str] = []
    for label, judgement in verdicts.items():
        lines = section(judgement)
        at = [i for i, line in enumerate(lines) if line.startswith("|")]
        if not at:  # no table (no samples, no queues): said once per cluster
            after += [f"Cluster {code(label)}: {line[:1].lower()}{line[1:]}" if line else line for line in lines]
            continue
        first, last = at[0], at[-1]
        head = head or [f"| cluster {lines[first]}", f"| --- {lines[first + 1]}"]
        rows += [f"| {code(label)} {line}" for line in lines[first + 2:last + 1]]
        rest = lines[last + 1:]
        after += [line for line in rest if line not in after]
    return [*head, *rows, *after] if head else after


def _title(result, resources: list[Resource], pools: list[PoolFacts]) -> list[str]:
    clusters = sorted({(r.props.get("cluster"), r.props.get("location")) for r in resources if r.type == NODE_POOL}, key=str)
    created = any(r.type == CLUSTER for r in resources)
    where = "; ".join(f"cluster {code(c)} in {code(loc)}" for c, loc in clusters if isinstance(c, str)) or "no node pools"
    chips = sum(p.accelerators or 0 for p in pools if p.resource == TPU_RESOURCE)
    gpus = sum(p.accelerators or 0 for p in pools if p.resource == GPU_RESOURCE)
    return [
        f"## `{result.stack}`: program `{result.program}`",
        "",
        f"{where} · {'created by the program' if created else 'an existing cluster (the program creates none)'}",
        "",
        f"**Total:** {plural(len(pools), 'node pool')}, {plural(len(resources), 'resource')}, "
        f"{plural(chips, 'TPU chip')}, {plural(gpus, 'GPU')} at most",
    ]


def _pools(mine: list[Resource], docs: list[dict[str, Any]]):
    recorded = [r for r in mine if r.type == NODE_POOL]
    if not recorded:
        return ["No node pools."]
    rows = []
    for r, p in zip(recorded, stack_pools(mine)):
        node = as_dict(r.props.get("nodeConfig"))
        rows.append([
            code(p.name),
            p.capacity,
            node.get("machineType") or DASH,
            _shape(p, node),
            ", ".join(str(z) for z in as_list(r.props.get("nodeLocations"))) or "the cluster's",
            _nodes(r.props),
            p.accelerators if p.resource and p.accelerators is not None else DASH,
            "yes" if r.protect else "no",
        ])
    return (
        ["pool", "capacity", "machine type", "TPU topology / GPU", "zones", "nodes", "chips / GPUs", "protected"],
        rows,
        ["l", "l", "l", "l", "l", "r", "r", "l"],
    )


def _shape(pool: PoolFacts, node) -> str:
    if pool.resource == TPU_RESOURCE:
        # The pack's reading: a single-host slice has no placementPolicy, its machine type says
        # its topology (facts.pool_facts).
        topology = pool.labels.get(TPU_TOPOLOGY_LABEL)
        return f"TPU {topology}" if topology else "TPU"
    gpus = [g for g in as_list(node.get("guestAccelerators")) if isinstance(g, dict)]
    if gpus:
        return f"{gpus[0].get('count')} × {gpus[0].get('type')} per node"
    return "CPU" if node.get("machineType") else DASH


def _nodes(props) -> str:
    auto = props.get("autoscaling")
    if isinstance(auto, dict):
        low = auto.get("totalMinNodeCount", auto.get("minNodeCount", 0))
        high = auto.get("totalMaxNodeCount", auto.get("maxNodeCount"))
        return f"{low}..{high} (autoscaled)" if high is not None else DASH
    count = props.get("nodeCount", props.get("initialNodeCount"))
    return str(count) if count is not None else DASH


def _of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == kind]


def _flavors(mine: list[Resource], docs: list[dict[str, Any]]):
    pools = stack_pools(mine)
    flavors = _of_kind(docs, "ResourceFlavor")
    if not flavors:
        return ["No ResourceFlavors: Kueue has nothing to admit onto."]
    queues = _of_kind(docs, "ClusterQueue")
    rows = []
    for f in flavors:
        if not well_formed(f):
            rows.append([code(str(dig(f, "metadata", "name"))), REFUSED, DASH, DASH, DASH])
            continue
        name = dig(f, "metadata", "name")
        labels = as_dict(dig(f, "spec", "nodeLabels"))
        selected = [p for p in pools if selects(labels, p)]
        capacity = flavor_capacity(labels, pools)
        resources = sorted({p.resource for p in selected if p.resource})
        total = sum(p.accelerators or 0 for p in selected if p.resource)
        granted = [q for cq in queues for q in _quotas(cq, name)]
        # A flavor no pool backs (a ComputeClass's, nodes made elsewhere) shows the accelerator
        # quota its queues give; one whose quota is cpu and memory alone shows none, as a stack's.
        shown = resources or [TPU_RESOURCE, GPU_RESOURCE]
        quota = [f"{q['name']} {q['nominalQuota']}" for q in granted if q["name"] in shown]
        rows.append([
            code(name),
            codes(p.name for p in selected) if selected else "none of this program's pools",
            ", ".join(sorted(capacity)) if capacity else DASH,
            f"{total} {'TPU chips' if resources == [TPU_RESOURCE] else 'GPUs' if resources == [GPU_RESOURCE] else ''}".strip()
            if selected and resources else DASH,
            "<br>".join(quota) or (DASH if granted else "no queue uses it"),
        ])
    return (["flavor", "pools (by node labels)", "capacity", "chips / GPUs", "quota (each queue)"], rows,
            ["l", "l", "l", "r", "r"])


def _quotas(cluster_queue: dict[str, Any], flavor: str | None) -> list[dict[str, Any]]:
    return [
        r
        for group in as_list(dig(cluster_queue, "spec", "resourceGroups"))
        for f in as_list(as_dict(group).get("flavors"))
        if as_dict(f).get("name") == flavor
        for r in as_list(as_dict(f).get("resources"))
        if isinstance(r, dict) and "name" in r and "nominalQuota" in r
    ]


def _queues(mine: list[Resource], docs: list[dict[str, Any]]):
    queues = _of_kind(docs, "ClusterQueue")
    if not queues:
        return ["No ClusterQueues: Kueue admits nothing this program declares."]
    rows = []
    for cq in queues:
        if not well_formed(cq):
            rows.append([code(str(dig(cq, "metadata", "name"))), DASH, REFUSED, DASH, DASH])
            continue
        spec = as_dict(cq.get("spec"))
        flavors = [as_dict(f) for g in as_list(spec.get("resourceGroups")) for f in as_list(as_dict(g).get("flavors"))]
        rows.append([
            code(dig(cq, "metadata", "name")),
            code(spec["cohortName"]) if spec.get("cohortName") else DASH,
            "<br>".join(
                f"{code(f.get('name'))}: " + (", ".join(f"{q['name']} {q['nominalQuota']}" for q in _quotas(cq, f.get("name")))
                                              or "no quota")
                for f in flavors
            ) or DASH,
            shared.checks(spec) or DASH,
            shared.namespaces(spec.get("namespaceSelector")),
        ])
    return ["queue", "cohort", "flavors: nominal quota", "admission checks", "namespaces"], rows, ["l"] * 5


def _teams(mine: list[Resource], docs: list[dict[str, Any]]):
    local = _of_kind(docs, "LocalQueue")
    if not local:
        return ["No LocalQueues: no namespace can submit to Kueue."]
    rows = [[code(dig(q, "metadata", "namespace") or "default"), code(dig(q, "metadata", "name")),
             code(dig(q, "spec", "clusterQueue"))] for q in local]
    return ["namespace", "local queue", "cluster queue"], rows, ["l"] * 3
