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

Kueue counts a domain's capacity over the nodes that exist, Ready and schedulable
(site/content/en/docs/concepts/topology_aware_scheduling.md, "Capacity calculation"), and
reaches the cluster autoscaler only through a ProvisioningRequest admission check on the
flavor ("ClusterAutoscaler support"): a pod set whose flavor's nodes all scale from zero, with no
admission check there, is never admitted, since the autoscaler adds nodes only for pending pods
and Kueue creates none before admission. Standard library only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gke_ai_batch.domain import gcsfuse, topology
from gke_ai_batch.domain.podtemplates import PodSet
from gke_ai_batch.model.objects import Flavor, NodeGroup, World
from gke_ai_batch.model.placement import Placement

PER_NODE = (topology.HOSTNAME_LABEL, topology.HOST_LABEL)


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


def _unprovisioned(
    world: World, name: str, flavor: Flavor, p: Placement, checks: Mapping[str, tuple[str, ...]] | None
) -> tuple[str | None, str | None]:
    """A TAS flavor whose nodes (those the pod set fits) all scale from zero and that no admission
    check provisions: its pod set waits on nodes another flavor's pods bring up, or, with none,
    is never admitted."""
    groups = [g for g in flavor_groups(world, flavor) if g.name in p.per_node]
    if not groups or not all(g.from_zero for g in groups) or (checks or {}).get(name):
        return None, None
    pools = ", ".join(g.name for g in groups)
    others = sorted(
        other.name
        for other in world.flavors.values()
        if other.topology_name is None and any(g in flavor_groups(world, other) for g in groups)
    )
    if others:
        return None, (
            f"runs only on nodes of {pools} that other workloads keep up (ResourceFlavor {', '.join(others)}): Kueue's TAS "
            f"places pods on existing nodes only, and ResourceFlavor {name}'s scale from zero"
        )
    return (
        f"ResourceFlavor {name}'s nodes ({pools}) exist only once a pending pod asks the autoscaler for them, and "
        "Kueue's TAS places a pod set only on nodes that exist, reaching the autoscaler only through a "
        "ProvisioningRequest admission check on the flavor: Kueue never admits it; give the pool nodes that "
        "stay (a fixed size or minNodes above 0), or put the flavor behind a ProvisioningRequest check",
        None,
    )


def judge(
    world: World, ps: PodSet, flavors: list[str], p: Placement, checks: Mapping[str, tuple[str, ...]] | None = None
) -> tuple[str | None, str | None]:
    """(why it can never run, why it may wait) for one pod set on its assigned flavors; `checks`:
    the ClusterQueue's admission checks per flavor."""
    asked = request(ps)
    if asked is None:
        # Kueue gives a pod set without a request a TAS flavor only where the request is implied
        # (isTASImplied: every flavor of its ClusterQueue has a topology), and places it alike.
        for name in flavors:
            flavor = world.flavors.get(name)
            if flavor is not None and flavor.topology_name is not None:
                never, wait = _unprovisioned(world, name, flavor, p, checks)
                if never or wait:
                    return never, wait
        return None, None
    mode, level = asked
    for name in flavors:
        flavor = world.flavors.get(name)
        if flavor is None:
            continue
        if flavor.topology_name is None:
            return f"it asks for a {level} domain and ResourceFlavor {name} has no topologyName (Kueue: \"does not support TopologyAwareScheduling\")", None
        levels = world.topologies.get(flavor.topology_name)
        if levels is None:
            return f"ResourceFlavor {name} names Topology {flavor.topology_name}, which does not exist", None
        if level not in levels:
            return (
                f"it asks for a {level} domain and Topology {flavor.topology_name} of ResourceFlavor {name} has no such "
                f"level ({', '.join(levels)})",
                None,
            )
        groups = [g for g in flavor_groups(world, flavor) if g.name in p.per_node]
        if not groups:
            continue  # placement says why no node fits
        never, wait = _unprovisioned(world, name, flavor, p, checks)
        if never or wait:
            return never, wait
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
            return (
                f"it requires one {level} domain for all {ps.count} pods ({topology.REQUIRED_ANNOTATION}) and {where}: "
                f"{outcome}",
                None,
            )
        return None, f"prefers one {level} domain for its {ps.count} pods and {where}: Kueue spreads it over more"
    return None, None
