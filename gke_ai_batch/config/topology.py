"""`gke-ai-batch:topologies`: Kueue Topology-Aware Scheduling (TAS).

A topology lists node labels from the widest domain to the narrowest (a Kueue `Topology`,
kueue.x-k8s.io/v1beta2, schema/upstream/kueue.x-k8s.io/v1beta2/Topology.json); a declared flavor
names one with `topologyName`, and a sample asks for one domain of a level with
`topology: {required: LABEL}` or `{preferred: LABEL}` (the pod-template annotations of
gke_ai_batch/domain/topology.py). docs/batch-layer.md, "Topology-aware scheduling"."""

from __future__ import annotations

from typing import Annotated, Iterator

from pydantic import AfterValidator, Field, field_validator, model_validator

from gke_ai_batch.config.base import K8sName, Model, RuleError, check_qualified_name, raise_all
from gke_ai_batch.config.checks import valid
from gke_ai_batch.domain import naming, topology

# A level is a node label key (TopologyLevel.nodeLabel: a qualified name, at most 316 characters).
LevelLabel = Annotated[str, AfterValidator(lambda v: check_qualified_name(v, "node label"))]


class TopologyConfig(Model):
    name: K8sName
    """The Topology's name, which a flavor's topologyName refers to."""
    levels: list[LevelLabel] = Field(min_length=1, max_length=topology.MAX_LEVELS)
    """Node labels, the widest domain first: e.g. cloud.google.com/gce-topology-block,
    cloud.google.com/gce-topology-subblock, kubernetes.io/hostname (A4, A3 Ultra), or
    cloud.google.com/gke-nodepool, kubernetes.io/hostname (TPU slices)."""

    @field_validator("levels")
    @classmethod
    def _levels(cls, levels: list[str]) -> list[str]:
        raise_all(level_problems(levels))
        return levels


def level_problems(levels: list[str]) -> Iterator[RuleError]:
    """The Topology CRD's validations of spec.levels (x-kubernetes-validations in
    apis/kueue/v1beta2/topology_types.go, v0.19.2): the API server refuses the object otherwise."""
    for i, label in enumerate(levels):
        if label in levels[:i]:
            yield RuleError(i, f"{label} is listed twice: a Topology's levels must be unique")
        if label == topology.HOSTNAME_LABEL and i != len(levels) - 1:
            yield RuleError(i, f"{label} can only be the lowest (last) level of a Topology (the Topology CRD refuses it higher)")


class SliceTopology(Model):
    """Kueue TAS slices: the pod set's pods in groups of `size`, each group whole in one domain
    of `level` (kueue.x-k8s.io/podset-slice-required-topology and podset-slice-size)."""

    level: LevelLabel
    """The level whose single domain holds each slice, e.g. kubernetes.io/hostname."""
    size: int = Field(ge=1)
    """Pods per slice: at least 1 and at most the pod set's pods (Kueue's webhook refuses more)."""


class WorkloadTopology(Model):
    """One domain of a level for all of a sample's pods: `required` (Kueue admits the workload
    only where one domain holds them all) or `preferred` (Kueue tries, then spreads); and/or
    `slice`: groups of pods each whole in one domain of a (narrower) level."""

    required: LevelLabel | None = None
    preferred: LevelLabel | None = None
    slice: SliceTopology | None = None
    """{level: LABEL, size: N}: each N pods in one domain of that level (Kueue TAS slices)."""

    @model_validator(mode="after")
    def _one(self):
        if self.required is not None and self.preferred is not None:
            raise RuleError((), "give one of required or preferred: the level whose single domain should hold the pods")
        if self.required is None and self.preferred is None and self.slice is None:
            raise RuleError((), "give one of required or preferred (the level whose single domain should hold the pods), or slice")
        return self

    @property
    def mode(self) -> str | None:
        if self.required is not None:
            return "required"
        return "preferred" if self.preferred is not None else None

    @property
    def level(self) -> str | None:
        return self.required or self.preferred


def duplicate_names(topologies: list[TopologyConfig]) -> Iterator[RuleError]:
    names: set[str] = set()
    for i, t in valid(topologies):
        if t.name in names:
            yield RuleError(("topologies", i, "name"), f"topology {t.name!r} is declared twice")
        names.add(t.name)


def topology_problems(cfg) -> Iterator[RuleError]:
    """The stack's topologies, the flavors that name them and the samples that ask for a level."""
    yield from duplicate_names(cfg.topologies)
    names, levels = declared_levels(cfg)
    for i, f in enumerate(cfg.flavors or ()):
        yield from flavor_topology_problems(cfg, i, f, names, levels)
    for i, wl in enumerate(cfg.workloads):
        yield from workload_topology_problems(cfg, i, wl, levels)


def declared_levels(cfg) -> tuple[list[str], dict[str, list[str]]]:
    """The declared topologies' names, and each one's levels."""
    return [t.name for t in cfg.topologies], {t.name: t.levels for t in cfg.topologies}


def flavor_topology_problems(cfg, i: int, f, names: list[str], levels: dict[str, list[str]]) -> Iterator[RuleError]:
    """The topology rules about one declared flavor, flavors[i]."""
    if f.topology_name is None:
        return
    if f.topology_name not in levels:
        yield RuleError(
            ("flavors", i, "topologyName"),
            f"no topology {f.topology_name!r} in gke-ai-batch:topologies ({', '.join(names) or 'none declared'})",
        )
    if not f.pools and not f.node_labels and f.compute_class is None:
        # ResourceFlavor CRD: "at least one nodeLabel is required when topology is set".
        yield RuleError(
            ("flavors", i, "topologyName"),
            "a ResourceFlavor with a topologyName needs nodeLabels (the ResourceFlavor CRD refuses it): "
            "give pools or nodeLabels",
        )
    elif f.topology_name in levels:
        yield from _uncarried(cfg, i, f, levels[f.topology_name])


def _flavor_nodes(cfg, flavor) -> list[tuple[str, dict[str, str], str, bool]]:
    """(pool, the labels its nodes carry, their machine type, compactly placed) for each node
    shape of a declared flavor: its pools, the pools its nodeLabels select, or its ComputeClass's
    priorities. [] where the nodes are Autopilot's, an existing cluster's own, or unknown (refused
    at their own key)."""
    pools = {p.name: p for p in cfg.node_pools}
    if flavor.compute_class is not None:
        cc = next((c for c in cfg.compute_classes if c.name == flavor.compute_class), None)
        if cc is None:
            return []
        return [
            (f"ComputeClass {cc.name}[{j}]",
             naming.carried_labels({naming.COMPUTE_CLASS_LABEL: cc.name}, naming.accelerator_labels(p), p.capacity),
             p.node_machine_type or "", p.tpu is not None and p.tpu.slice.multi_host)
            for j, p in enumerate(cc.priorities)
        ]
    if flavor.pools:
        members = [pools[name] for name in flavor.pools if name in pools]
    elif cfg.cluster.existing:
        return []  # its labels may select the cluster's own pools too, which the stack does not know
    else:
        wanted = flavor.node_labels or {}
        members = [p for p in cfg.node_pools if all(naming.node_labels(p).get(k) == v for k, v in wanted.items())]
    return [
        (p.name, naming.node_labels(p), p.node_machine_type, p.tpu is not None and p.tpu.slice.multi_host)
        for p in members
    ]


def _uncarried(cfg, i: int, flavor, levels: list[str]) -> Iterator[RuleError]:
    """Kueue's TAS counts a flavor's node only if it carries every level of the Topology
    (kubernetes-sigs/kueue v0.19.2 pkg/util/tas/node.go NodeMatchesFlavor, from
    pkg/cache/scheduler/tas_nodes_cache.go nodesCache.find): where no node of the flavor carries
    them all, nothing under it is ever admitted (which labels GKE nodes carry:
    gke_ai_batch/domain/topology.py uncarried_levels)."""
    nodes = _flavor_nodes(cfg, flavor)
    missing = {name: topology.uncarried_levels(levels, labels, machine, compact) for name, labels, machine, compact in nodes}
    if not nodes or not all(missing.values()):
        return
    lacking = sorted({level for m in missing.values() for level in m}, key=levels.index)
    which = "; ".join(f"{name} lacks " + ", ".join(m) for name, m in missing.items())
    yield RuleError(
        ("flavors", i, "topologyName"),
        f"Topology {flavor.topology_name}'s level{'s' if len(lacking) > 1 else ''} {', '.join(lacking)} "
        f"{'are' if len(lacking) > 1 else 'is'} on no node of flavor {flavor.name} ({which}), and Kueue's TAS counts only "
        "nodes that carry every level (NodeMatchesFlavor): nothing under this flavor would ever be admitted; "
        "use levels its nodes carry (e.g. cloud.google.com/gke-nodepool, kubernetes.io/hostname), or label its pools",
    )


def _queue_flavors(cfg, wl) -> tuple[list, list] | None:
    """The declared flavors of the sample's ClusterQueue (all, when the queue lists none), and
    those Kueue may put the sample on: narrowed to its pool's where any lists it. None when the
    team or queue is unknown (refused at its own key)."""
    team = next((t for t in cfg.teams if t.namespace == wl.team and wl.local_queue in (None, t.local_queue)), None)
    cq = next((q for q in cfg.cluster_queues if team is not None and q.name == team.cluster_queue), None)
    if cq is None:
        return None
    names = [f if isinstance(f, str) else f.name for f in cq.flavors] or [f.name for f in cfg.flavors or ()]
    flavors = [f for f in cfg.flavors or () if f.name in names]
    return flavors, [f for f in flavors if wl.pool in f.pools] or flavors


def workload_topology_problems(cfg, i: int, wl, levels: dict[str, list[str]]) -> Iterator[RuleError]:
    """The topology rules about one sample, workloads[i]."""
    # Kueue's flavor assigner skips a flavor without a topologyName ("Flavor %q does not support
    # TopologyAwareScheduling") or whose Topology lacks the requested level ("Flavor %q does not
    # contain the requested level"): kubernetes-sigs/kueue
    # pkg/scheduler/flavorassigner/tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS, v0.19.2.
    # A sample whose flavors all fail that stays pending for ever.
    if wl.pool is not None and wl.pool not in {p.name for p in cfg.node_pools}:
        return  # an unknown pool is refused at its own key
    found = _queue_flavors(cfg, wl) if wl.kind != "provisioningRequest" else ([], [])
    if found is None:
        return
    queue, flavors = found
    if wl.topology is None:
        yield from _untopological(i, queue, flavors)
        return
    at = ("workloads", i, "topology", wl.topology.mode or "slice")
    if wl.kind == "provisioningRequest":
        yield RuleError(at, "a provisioningRequest sample is not queued in Kueue, so no Topology places its pods")
        return
    what = ", ".join(f"{f.name} (topology {f.topology_name})" if f.topology_name else f"{f.name} (no topologyName)" for f in flavors)
    if wl.topology.level is not None and not any(wl.topology.level in levels.get(f.topology_name or "", ()) for f in flavors):
        yield RuleError(
            at,
            f"Kueue admits a pod set that asks for a {wl.topology.level} domain only to a flavor whose Topology "
            f"has that level, and its queue's flavors have none: {what or 'no declared flavors (gke-ai-batch:flavors)'}",
        )
    elif wl.topology.slice is not None and not any(
        wl.topology.slice.level in levels.get(f.topology_name or "", ()) for f in flavors
    ):
        # "no requested topology level for slices" (pkg/cache/scheduler/tas_flavor_snapshot.go, v0.19.2).
        yield RuleError(
            ("workloads", i, "topology", "slice", "level"),
            f"Kueue places slices in {wl.topology.slice.level} domains only on a flavor whose Topology has that level, "
            f"and its queue's flavors have none: {what or 'no declared flavors (gke-ai-batch:flavors)'}",
        )


def _untopological(i: int, queue: list, flavors: list) -> Iterator[RuleError]:
    """A pod set without a topology request goes only to a flavor without a topologyName ("Flavor
    %q supports only TopologyAwareScheduling"), unless every flavor of its ClusterQueue has one
    (isTASImplied: the request is then implied; tas_flavorassigner.go, v0.19.2)."""
    if not flavors or not all(f.topology_name for f in flavors) or all(f.topology_name for f in queue):
        return
    yield RuleError(
        ("workloads", i),
        f"its queue mixes flavors with and without a topologyName and the ones it can run on "
        f"({', '.join(f.name for f in flavors)}) all have one: Kueue places a pod set without a topology request "
        "only on a flavor without one (\"supports only TopologyAwareScheduling\"); give the sample a topology, "
        "or every flavor of its queue a topologyName",
    )
