"""Kueue Topology-Aware Scheduling in the model: the domains a TAS flavor's nodes make at each
level of its Topology, and whether one domain can hold a pod set that asks for it.

Kueue admits a pod set with kueue.x-k8s.io/podset-required-topology only when a single domain
of that level has room for all its pods, and otherwise leaves it pending; with
podset-preferred-topology it tries that level, then wider ones, then spreads the pods
(kubernetes-sigs/kueue apis/kueue/v1beta2/topology_types.go, PodSetRequiredTopologyAnnotation and
PodSetPreferredTopologyAnnotation; pkg/cache/tas_flavor_snapshot.go FindTopologyAssignmentsForFlavor,
v0.19.2). A flavor without a topologyName, or whose Topology lacks the level, is skipped for it
(pkg/scheduler/flavorassigner/tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS).

A domain's size is known for two levels: a node pool (cloud.google.com/gke-nodepool: a TPU slice
is one) holds its pool's nodes, a host (kubernetes.io/hostname, cloud.google.com/gce-topology-host)
one node. Where GCE puts VMs in blocks and sub-blocks is known only once they exist, so at those
levels the model bounds a domain by all the flavor's nodes and refuses only what no domain could
hold.

A pod set may also ask for slices (kueue.x-k8s.io/podset-slice-required-topology and
podset-slice-size): its pods in groups of the slice size, each group whole in one domain of the
slice level. Kueue's job webhook refuses the annotations unless both are given, the size is a
whole number from 1 to the pod set's count (pkg/controller/jobframework/tas_validation.go
ValidateTASPodSetRequest and ValidateSliceSizeAnnotationUpperBound, v0.19.2), and its scheduler
never places slices on a Topology without the slice level, with the slice level above (wider
than) the pod set's own, or where the slice level's domains hold fewer whole slices than the pod
set has (pkg/cache/scheduler/tas_flavor_snapshot.go findTopologyAssignment: "no requested
topology level for slices", "podset slice topology %s is above the podset topology %s", and
findLevelWithFitDomains, which needs count / sliceSize slices).

Kueue counts a domain's capacity over the nodes that exist, Ready and schedulable
(site/content/en/docs/concepts/topology_aware_scheduling.md, "Capacity calculation"), and
reaches the cluster autoscaler only through a ProvisioningRequest admission check on the
flavor ("ClusterAutoscaler support"): a pod set whose flavor's nodes all scale from zero (or are
Autopilot's, or a ComputeClass's), with no admission check there, is never admitted, since the autoscaler adds nodes only for pending pods
and Kueue creates none before admission. Standard library only."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gke_ai_batch.domain import gcsfuse, topology
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.domain.podtemplates import PodSet
from gke_ai_batch.model.objects import Flavor, NodeGroup, World
from gke_ai_batch.model.outcome import WAIT
from gke_ai_batch.model.placement import Placement

PER_NODE = (topology.HOSTNAME_LABEL, topology.HOST_LABEL)
RULE = "topology"
"""The rule id of a pod set Kueue's TAS would never admit, or may make wait."""


def _never(message: str) -> tuple[Finding, ...]:
    return (Finding(RULE, message),)


def _wait(message: str) -> tuple[Finding, ...]:
    return (Finding(RULE, message, severity=WAIT),)


@dataclass(frozen=True)
class Domains:
    level: str
    count: int | None  # None: where GCE places the VMs decides
    hosts: int  # nodes in the largest domain (an upper bound where count is None)


def request(ps: PodSet) -> tuple[str, str] | None:
    """(required | preferred, level) of a pod set's TAS annotation, if it has one."""
    for mode, key in topology.ANNOTATIONS.items():
        value = ps.annotations.get(key)
        if isinstance(value, str):
            return mode, value
    return None


def slice_request(ps: PodSet) -> tuple[str | None, str | None]:
    """(slice level, slice size as written) of a pod set's slice annotations."""
    level = ps.annotations.get(topology.SLICE_ANNOTATION)
    size = ps.annotations.get(topology.SLICE_SIZE_ANNOTATION)
    return (level if isinstance(level, str) else None, size if isinstance(size, str) else None)


# strconv.ParseInt(value, 10, 32): an optional sign and decimal digits, within int32.
_INT32 = re.compile(r"[+-]?[0-9]+", re.ASCII)


def slice_size(ps: PodSet) -> int | None:
    """The slice size Kueue reads, when the annotations ask for slices and its webhook takes them."""
    level, size = slice_request(ps)
    if level is None or size is None or slice_refusal(ps) is not None:
        return None
    return int(size)


def slice_refusal(ps: PodSet) -> str | None:
    """Why Kueue's job webhook refuses a pod set's slice annotations (ValidateTASPodSetRequest,
    ValidateSliceSizeAnnotationUpperBound; its messages quoted), or None."""
    level, size = slice_request(ps)
    slice_key, size_key = topology.SLICE_ANNOTATION, topology.SLICE_SIZE_ANNOTATION
    if level is None and size is None:
        return None
    if size is None:
        return f"{size_key} \"must be set when '{slice_key}' is specified\""
    if level is None:
        return f"{size_key} \"may not be set when '{slice_key}' is not specified\""
    if not _INT32.fullmatch(size) or not -(2**31) <= int(size) < 2**31:
        return f"{size_key} {size!r} \"must be a numeric value\""
    if int(size) < 1:
        return f"{size_key} {size} \"must be greater than or equal to 1\""
    if int(size) > ps.count:
        return f"{size_key} {int(size)} \"must not be greater than pod set count {ps.count}\""
    return None


def flavor_groups(world: World, flavor: Flavor) -> list[NodeGroup]:
    return [g for g in world.node_groups if all(g.labels.get(k) == v for k, v in flavor.node_labels.items())]


def domains(world: World, flavor: Flavor) -> list[Domains]:
    """Per level of the flavor's Topology, its domains over the flavor's nodes at their ceiling."""
    groups = [g for g in flavor_groups(world, flavor) if g.nodes > 0]
    out = []
    for level in world.topologies.get(flavor.topology_name or "", ()):
        if level in PER_NODE:
            out.append(Domains(level, sum(g.nodes for g in groups), 1 if groups else 0))
        elif level == topology.NODEPOOL_LABEL:
            out.append(Domains(level, len(groups), max((g.nodes for g in groups), default=0)))
        else:
            out.append(Domains(level, None, sum(g.nodes for g in groups)))
    return out


def _room(level: str, groups: list[NodeGroup], p: Placement) -> int:
    """Pods of this pod set the largest domain of `level` holds."""
    if level in PER_NODE:
        return max((p.per_node[g.name] for g in groups), default=0)
    if level == topology.NODEPOOL_LABEL:
        return max((p.per_node[g.name] * g.nodes for g in groups), default=0)
    return sum(p.per_node[g.name] * g.nodes for g in groups)


def _domain_pods(level: str, groups: list[NodeGroup], p: Placement) -> list[list[int]]:
    """Per domain of `level`, the pods of this pod set each of its nodes holds: a host is one
    node, a node pool its nodes; a level whose domains GCE decides is bounded by all the nodes."""
    if level in PER_NODE:
        return [[p.per_node[g.name]] for g in groups for _ in range(g.nodes)]
    if level == topology.NODEPOOL_LABEL:
        return [[p.per_node[g.name]] * g.nodes for g in groups]
    return [[p.per_node[g.name] for g in groups for _ in range(g.nodes)]]


def _whole_slices(slice_level: str, groups: list[NodeGroup], p: Placement, size: int, within: str | None = None) -> int:
    """Whole slices of `size` pods, each inside one `slice_level` domain, that the flavor's nodes
    hold, or (`within`) the largest domain of that level. A host holds its own; a node pool the
    slices of its hosts, or itself; a level GCE decides is bounded by all the flavor's nodes."""
    if within in PER_NODE:
        return max((p.per_node[g.name] // size for g in groups), default=0)
    if within == topology.NODEPOOL_LABEL and slice_level in (*PER_NODE, topology.NODEPOOL_LABEL):
        return max((sum(sum(d) // size for d in _domain_pods(slice_level, [g], p)) for g in groups), default=0)
    return sum(sum(d) // size for d in _domain_pods(slice_level, groups, p))


def uncarried(world: World, name: str, flavor: Flavor) -> str | None:
    """Why no node of a TAS flavor counts for Kueue: each lacks a level of its Topology, and
    Kueue's TAS keeps a node for the flavor only if it carries every level (kueue v0.19.2
    pkg/util/tas/node.go NodeMatchesFlavor, from pkg/cache/scheduler/tas_nodes_cache.go
    nodesCache.find), so nothing under the flavor is ever admitted. None where one does, or
    where the flavor has no node groups (placement says so). Which labels GKE puts on which
    nodes: gke_ai_batch/domain/topology.py uncarried_levels."""
    levels = world.topologies.get(flavor.topology_name or "")
    groups = flavor_groups(world, flavor)
    if not levels or not groups:
        return None
    missing = {
        g.name: topology.uncarried_levels(levels, g.labels, g.machine_type, (g.slice_hosts or 0) > 1, not g.auto_created)
        for g in groups
    }
    if not all(missing.values()):
        return None
    which = "; ".join(f"{group} lacks " + ", ".join(m) for group, m in missing.items())
    return (
        f"no node of ResourceFlavor {name} carries every level of Topology {flavor.topology_name} ({which}), and Kueue's "
        "TAS counts only nodes that carry them all (NodeMatchesFlavor): Kueue never admits it"
    )


def _unprovisioned(
    world: World, name: str, flavor: Flavor, p: Placement, checks: Mapping[str, tuple[str, ...]] | None
) -> tuple[Finding, ...]:
    """A TAS flavor whose nodes (those the pod set fits) exist only once a pod asks for them (node
    pools scaling from zero, a ComputeClass's priorities, Autopilot's nodes) and that no admission
    check provisions: its pod set waits on nodes another flavor's pods bring up, or, with none,
    is never admitted."""
    if (checks or {}).get(name):
        return ()
    groups = [g for g in flavor_groups(world, flavor) if g.name in p.per_node]
    if world.autopilot and not groups:
        # Autopilot creates a node for each pending pod and keeps none spare (placement._autopilot;
        # GKE docs concepts/autopilot-overview), so before Kueue admits the pod set no node of the
        # flavor exists for TAS to count.
        return _never(
            f"ResourceFlavor {name}'s nodes are Autopilot's, which GKE creates only once a pending pod asks for them, "
            "and Kueue's TAS places a pod set only on nodes that exist, reaching the autoscaler only through a "
            "ProvisioningRequest admission check on the flavor: Kueue never admits it; put the flavor behind a "
            "ProvisioningRequest check (a stack's flavor: queuedProvisioning: true), or drop its topologyName"
        )
    if not groups or not all(g.from_zero for g in groups):
        return ()
    pools = ", ".join(g.name for g in groups)
    others = sorted(
        other.name
        for other in world.flavors.values()
        if other.topology_name is None and any(g in flavor_groups(world, other) for g in groups)
    )
    if others:
        return _wait(
            f"runs only on nodes of {pools} that other workloads keep up (ResourceFlavor {', '.join(others)}): Kueue's TAS "
            f"places pods on existing nodes only, and ResourceFlavor {name}'s scale from zero"
        )
    return _never(
        f"ResourceFlavor {name}'s nodes ({pools}) exist only once a pending pod asks the autoscaler for them, and "
        "Kueue's TAS places a pod set only on nodes that exist, reaching the autoscaler only through a "
        "ProvisioningRequest admission check on the flavor: Kueue never admits it; give the pool nodes that "
        "stay (a fixed size or minNodes above 0), or put the flavor behind a ProvisioningRequest check"
    )


def judge(
    world: World, ps: PodSet, flavors: list[str], p: Placement, checks: Mapping[str, tuple[str, ...]] | None = None
) -> tuple[Finding, ...]:
    """Why one pod set on its assigned flavors can never run (an error) or may wait, if either:
    at most one reason, none when TAS has nothing to say; `checks`: the ClusterQueue's
    admission checks per flavor."""
    refused = slice_refusal(ps)
    if refused is not None:
        return _never(f"Kueue's webhook refuses its slice annotations: {refused}")
    asked = request(ps)
    slice_level, size = slice_request(ps)[0], slice_size(ps)
    if asked is None and slice_level is None:
        # Kueue gives a pod set without a request a TAS flavor only where the request is implied
        # (isTASImplied: every flavor of its ClusterQueue has a topology), and places it alike.
        for name in flavors:
            flavor = world.flavors.get(name)
            if flavor is not None and flavor.topology_name is not None:
                never = uncarried(world, name, flavor)
                if never:
                    return _never(never)
                found = _unprovisioned(world, name, flavor, p, checks)
                if found:
                    return found
        return ()
    mode, level = asked if asked is not None else ("slices", slice_level)
    for name in flavors:
        flavor = world.flavors.get(name)
        if flavor is None:
            continue
        if flavor.topology_name is None:
            return _never(f"it asks for a {level} domain and ResourceFlavor {name} has no topologyName (Kueue: \"does not support TopologyAwareScheduling\")")
        levels = world.topologies.get(flavor.topology_name)
        if levels is None:
            return _never(f"ResourceFlavor {name} names Topology {flavor.topology_name}, which does not exist")
        if asked is not None and level not in levels:
            return _never(
                f"it asks for a {level} domain and Topology {flavor.topology_name} of ResourceFlavor {name} has no such "
                f"level ({', '.join(levels)})"
            )
        if slice_level is not None:
            if slice_level not in levels:
                return _never(
                    f"its slices ask for {slice_level} domains and Topology {flavor.topology_name} of ResourceFlavor {name} "
                    f"has no such level ({', '.join(levels)}; Kueue: \"no requested topology level for slices\")"
                )
            if asked is not None and levels.index(slice_level) < levels.index(level):
                return _never(
                    f"its slice level {slice_level} is wider than its {mode} level {level} in Topology {flavor.topology_name} "
                    f"(Kueue: \"podset slice topology {slice_level} is above the podset topology {level}\")"
                )
        never = uncarried(world, name, flavor)
        if never:
            return _never(never)
        found = _unprovisioned(world, name, flavor, p, checks)
        if found:
            return found
        groups = [g for g in flavor_groups(world, flavor) if g.name in p.per_node]
        if not groups:
            continue  # placement says why no node fits
        if slice_level is not None and size is not None:
            wanted = ps.count // size
            anywhere = _whole_slices(slice_level, groups, p, size)
            if anywhere < wanted:
                return _never(
                    f"its {ps.count} pods make {wanted} slices of {size} ({topology.SLICE_SIZE_ANNOTATION}), each in one "
                    f"{slice_level} domain, and those of ResourceFlavor {name} hold {anywhere} whole slices: Kueue never admits it"
                )
            if mode == "required":
                inside = _whole_slices(slice_level, groups, p, size, within=level)
                if inside < wanted:
                    return _never(
                        f"it requires one {level} domain for its {wanted} slices of {size} pods, each in one {slice_level} "
                        f"domain, and the largest {level} domain of ResourceFlavor {name} holds {inside}: Kueue never admits it"
                    )
        if asked is None:
            continue
        room = _room(level, groups, p)
        if room >= ps.count:
            continue
        where = f"the largest {level} domain of ResourceFlavor {name} holds {room}"
        if mode == "required":
            # Kueue sizes domains by the pod template; the FUSE sidecar is added when each pod
            # is created (gke_ai_batch/domain/gcsfuse.py), so Kueue may admit a pod set whose
            # pods, sidecar and all, then do not fit the nodes it chose.
            sidecar = gcsfuse.sidecar_requests(ps.annotations)
            outcome = (
                f"counting the {gcsfuse.SIDECAR_NAME} GKE adds to each pod, which Kueue does not see, so Kueue may admit "
                "it and kube-scheduler then leaves pods pending"
                if sidecar
                else "Kueue never admits it"
            )
            return _never(
                f"it requires one {level} domain for all {ps.count} pods ({topology.REQUIRED_ANNOTATION}) and {where}: "
                f"{outcome}"
            )
        return _wait(f"prefers one {level} domain for its {ps.count} pods and {where}: Kueue spreads it over more")
    return ()
