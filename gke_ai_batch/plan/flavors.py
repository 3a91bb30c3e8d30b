"""ResourceFlavors: declared in the stack, or derived one per accelerator shape and capacity.

A flavor's node labels are what its pools' nodes carry (so Kueue's injected nodeSelector lands
pods on exactly those nodes), its tolerations cover every taint on them, and its capacity is
what the pools provide at their ceiling: a TPU flavor of 3 slices x 8 chips holds 24
google.com/tpu, and the cpu and memory its nodes leave to pods (allocatable, after GKE's
reservations), so that queues cover every resource a real pod requests (docs/batch-layer.md, "Quotas cover cpu and memory")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gke_ai_batch.domain import catalogue


from gke_ai_batch.domain import naming
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.model.facts import allocatable
from gke_ai_batch.model.requests import CPU, MEMORY
from gke_ai_batch.plan.computeclasses import class_flavor_labels, class_flavor_tolerations
from gke_ai_batch.plan.pools import PoolPlan


_ACCELERATORS = {"tpu": catalogue.TPU_RESOURCE, "gpu": catalogue.GPU_RESOURCE}


@dataclass(frozen=True)
class FlavorPlan:
    name: str
    entries: tuple[str, ...]  # node pool entries
    pools: tuple[str, ...]  # GKE node pools
    kind: str | None  # tpu | gpu | cpu | None (no pools)
    node_labels: dict[str, str]
    tolerations: tuple[dict[str, str], ...]
    queued: bool
    capacity: dict[str, int]  # resource -> amount the pools provide (cpu in millicores, memory in bytes)
    slices: int
    vms: int
    topology_name: str | None = None  # a Kueue Topology (gke-ai-batch:topologies)

    @property
    def accelerator_resource(self) -> str | None:
        return _ACCELERATORS.get(self.kind or "")

    def args(self) -> dict[str, Any]:
        """The flavor as a component's FlavorArgs (gke_ai_batch/components/queues.py): what a
        ResourceFlavor registers and a ClusterQueue's default quota is, as plain data."""
        out: dict[str, Any] = {"name": self.name, "node_labels": dict(self.node_labels)}
        out["tolerations"] = [dict(t) for t in self.tolerations]
        out["capacity"] = dict(self.capacity)
        out["queued"] = self.queued
        if self.accelerator_resource is not None and self.accelerator_resource not in self.capacity:
            # Nodes GKE makes on demand (a ComputeClass's): no capacity to read the kind off.
            out["accelerator"] = self.accelerator_resource
        if self.topology_name is not None:
            out["topology_name"] = self.topology_name
        return out

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> FlavorPlan:
        """The inverse of args(): a flavor given as data, its kind read off its capacity (the
        accelerator resource it holds, if any)."""
        capacity = dict(args.get("capacity") or {})
        given = args.get("accelerator")
        kind = next((k for k, r in _ACCELERATORS.items() if r in capacity or r == given), None)
        return cls(
            name=args["name"],
            entries=(),
            pools=(),
            kind=kind,
            node_labels=dict(args.get("node_labels") or {}),
            tolerations=tuple(dict(t) for t in args.get("tolerations") or ()),
            queued=bool(args.get("queued", False)),
            capacity=capacity,
            slices=0,
            vms=0,
            topology_name=args.get("topology_name"),
        )

    def manifest(self) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if self.node_labels:
            spec["nodeLabels"] = dict(self.node_labels)
        if self.tolerations:
            spec["tolerations"] = [dict(t) for t in self.tolerations]
        if self.topology_name is not None:
            spec["topologyName"] = self.topology_name
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": self.name},
            "spec": spec,
        }


def entry_flavor(entry: NodePoolConfig, pools: list[PoolPlan] | tuple[PoolPlan, ...]) -> FlavorPlan:
    """The flavor of one pool entry alone (a pool component's `flavor`): for TPU and GPU the
    flavor the stack derives for its shape and capacity, had it no other pool; for CPU, one
    named after the pool that selects its nodes by every label they carry, GKE's pool name
    included (a stack derives no CPU flavor: docs/library.md says why)."""
    members = [entry.name]
    name = naming.derived_flavor_name(entry)
    labels = None
    if name is None:
        name, labels = entry.name, naming.node_labels(entry, entry.name)
    return _flavor(name, members, labels, None, False, {entry.name: entry}, {entry.name: list(pools)})


@dataclass(frozen=True)
class PoolSpec:
    """One pool entry as its component takes it: the validated entry, its GKE node pools as
    planned, and the flavor of the entry alone (entry_flavor)."""

    entry: NodePoolConfig
    pools: tuple[PoolPlan, ...]
    flavor: FlavorPlan


def pool_spec(entry: NodePoolConfig, pools: list[PoolPlan] | tuple[PoolPlan, ...]) -> PoolSpec:
    return PoolSpec(entry, tuple(pools), entry_flavor(entry, pools))


def plan_flavors(cfg: StackConfig, pools: list[PoolPlan]) -> list[FlavorPlan]:
    by_entry: dict[str, list[PoolPlan]] = {}
    for p in pools:
        by_entry.setdefault(p.entry, []).append(p)
    entries = {e.name: e for e in cfg.node_pools}
    if cfg.flavors is None:
        groups: dict[str, list[str]] = {}
        for entry in cfg.node_pools:
            name = naming.derived_flavor_name(entry)
            if name is not None:
                groups.setdefault(name, []).append(entry.name)
        return [_flavor(name, members, None, None, False, entries, by_entry) for name, members in groups.items()]
    classes = {cc.name: cc for cc in cfg.compute_classes}
    return [
        replace(_class_kind(_flavor(
            f.name,
            f.pools,
            f.node_labels if f.compute_class is None else class_flavor_labels(f.compute_class),
            _declared_tolerations(f, cfg.cluster.standard),
            f.queued_provisioning,
            entries,
            by_entry,
        ), classes.get(f.compute_class)), topology_name=f.topology_name)
        for f in cfg.flavors
    ]


def _class_kind(flavor: FlavorPlan, cc) -> FlavorPlan:
    """A compute class's flavor is of its priorities' kind (tpu, gpu or cpu) when they agree, so
    that queues order it as they order pools of that kind."""
    kinds = {p.kind for p in cc.priorities} if cc is not None else set()
    return replace(flavor, kind=kinds.pop()) if len(kinds) == 1 else flavor


def _flavor(name, members, labels, tolerations, queued, entries, by_entry) -> FlavorPlan:
    configs = [entries[m] for m in members]
    plans = [p for m in members for p in by_entry[m]]
    if labels is None:
        labels = _common_labels([naming.pool_node_labels(c) for c in configs])
    if tolerations is None:
        tolerations = _tolerations(configs)
    kind = configs[0].kind if configs else None
    capacity: dict[str, int] = {}
    if kind in ("tpu", "gpu"):
        resource = catalogue.TPU_RESOURCE if kind == "tpu" else catalogue.GPU_RESOURCE
        capacity[resource] = sum(p.chips for p in plans)
    sized = [allocatable(p.machine_type, _gpus(entries[p.entry])) for p in plans]
    if plans and all(sized):
        for resource in (CPU, MEMORY):
            capacity[resource] = sum(p.nodes * a[resource] for p, a in zip(plans, sized))
    return FlavorPlan(
        name=name,
        entries=tuple(members),
        pools=tuple(p.name for p in plans),
        kind=kind,
        node_labels=dict(labels),
        tolerations=tuple(tolerations),
        queued=queued or any(c.capacity == "queued" for c in configs),
        capacity=capacity,
        slices=sum(1 for p in plans if p.tpu is not None),
        vms=sum(p.nodes for p in plans),
    )


def _declared_tolerations(flavor, standard: bool) -> list[dict[str, str]] | None:
    """A declared flavor's tolerations: stated, those of its compute class's nodes, or None to
    derive them from its pools."""
    if flavor.tolerations is not None:
        return [t.model_dump(exclude_none=True) for t in flavor.tolerations]
    if flavor.compute_class is not None:
        return class_flavor_tolerations(flavor.compute_class, standard)
    return None


def _gpus(entry) -> int:
    return entry.gpu.count if entry.gpu is not None else 0


def _common_labels(label_sets: list[dict[str, str]]) -> dict[str, str]:
    if not label_sets:
        return {}
    common = dict(label_sets[0])
    for labels in label_sets[1:]:
        common = {k: v for k, v in common.items() if labels.get(k) == v}
    return common


def _tolerations(configs) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for config in configs:
        for taint in naming.pool_taints(config):
            toleration = {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
            if not taint["value"]:
                toleration = {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
            if toleration not in out:
                out.append(toleration)
    return out
