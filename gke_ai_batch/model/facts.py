"""What a recorded cluster or node pool means: Autopilot or Standard, the TPU slice a pool
holds, the labels its nodes carry, how many accelerators it provides at its ceiling.

Every accelerator number comes from gke_ai_batch.domain.catalogue, the table the plan derives pools
and flavors from. The admission model's world (gke_ai_batch/model/recorded.py), the policy pack
and synth's diff read recorded resources through these, so they cannot disagree about a pool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.domain import catalogue, machines, naming, regions
from gke_ai_batch.model import selection
from gke_ai_batch.model.requests import CPU, MEMORY

from gke_ai_batch.domain.registered import CLUSTER, NODE_POOL, UNKNOWN, as_dict, as_int, as_list, dig, of_type

# The config name of each provisioning model, by the name capacity_of gives it.
CONFIG_CAPACITY = {value: key for key, value in naming.CAPACITY_VALUES.items()}
# Capacity that GKE may reclaim (spot) or that exists only while a request lasts (flex-start,
# and queued provisioning, which is flex-start behind a ProvisioningRequest).
INTERRUPTIBLE = ("spot", "flex-start", "queued")


def tpu_generation(machine_type: Any) -> catalogue.TpuGeneration | None:
    if not isinstance(machine_type, str):  # recorded inputs are any JSON: a list or mapping is no key
        return None
    for gen in catalogue.TPU_GENERATIONS.values():
        if machine_type in gen.machine_types:
            return gen
    return None


def single_host_topology(gen: catalogue.TpuGeneration, machine_type: str) -> str | None:
    """The shape GKE gives a TPU pool without a topology: one VM's worth of chips."""
    per_vm = gen.machine_types[machine_type]
    for topology in catalogue.tpu_topologies_for_machine(gen, machine_type):
        if catalogue.topology_chips(topology) == per_vm:
            return topology
    return None


def is_autopilot(props: Mapping[str, Any]) -> bool:
    return props.get("enableAutopilot") is True


def auto_provisioning(props: Mapping[str, Any]) -> bool:
    return dig(props, "clusterAutoscaling", "enabled") is True


@dataclass(frozen=True)
class ClusterFacts:
    autopilot: bool
    makes_nodes: bool  # Autopilot or node auto-provisioning: GKE may add nodes no pool describes
    zones: int  # where a pool without nodeLocations puts its nodes


# The library's component for a cluster the program did not create: its registered outputs say
# the cluster's mode (gke_ai_batch/components/cluster.py; gke_ai_batch/model/clusters.py reads it too).
EXISTING_CLUSTER = "gke-ai-batch:index:ExistingCluster"


def cluster_facts(resources: Sequence[Any]) -> ClusterFacts | None:
    """The cluster's facts: the recorded Cluster's; for a cluster the program did not create,
    those its ExistingCluster declares when it is Autopilot; else None (a Standard cluster that
    exists already, of which only the recorded node pools are known)."""
    clusters = of_type(resources, CLUSTER)
    if not clusters:
        declared = of_type(resources, EXISTING_CLUSTER)
        if declared and declared[0].props.get("mode") == "autopilot":
            # Autopilot makes a node for each pod: the zones a pool would use do not apply.
            return ClusterFacts(True, True, regions.DEFAULT_ZONES_PER_REGION)
        return None
    props = clusters[0].props
    autopilot = is_autopilot(props)
    locations = [z for z in as_list(props.get("nodeLocations")) if z != UNKNOWN]
    if locations:
        zones = len(locations)
    elif isinstance(props.get("location"), str) and regions.ZONE_RX.fullmatch(props["location"]):
        zones = 1
    else:
        zones = regions.DEFAULT_ZONES_PER_REGION
    return ClusterFacts(autopilot, autopilot or auto_provisioning(props), zones)


@dataclass(frozen=True)
class PoolFacts:
    name: str
    capacity: str  # on-demand | spot | reservation | flex-start | queued
    labels: dict[str, str]  # what its nodes carry
    resource: str | None  # google.com/tpu | nvidia.com/gpu | None (CPU)
    per_node: int  # accelerators per node
    max_nodes: int | None  # ceiling across zones; None if not known before deploy

    @property
    def accelerators(self) -> int | None:
        return None if self.max_nodes is None else self.per_node * self.max_nodes


def capacity_of(props: Mapping[str, Any]) -> str:
    """The provisioning model, from the pool's settings rather than our label (which says what
    the flavor selects, not what GKE does)."""
    node = as_dict(props.get("nodeConfig"))
    if dig(props, "queuedProvisioning", "enabled") is True:
        return "queued"
    if node.get("flexStart") is True:
        return "flex-start"
    if node.get("spot") is True or node.get("preemptible") is True:
        return "spot"
    # ANY_RESERVATION too: its nodes are reserved or on-demand, never reclaimed, and the config
    # writes both as capacity reservation (gke_ai_batch/config/reservations.py).
    if dig(node, "reservationAffinity", "consumeReservationType") in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
        return "reservation"
    return "on-demand"


def pool_facts(r: Any, cluster: ClusterFacts | None) -> PoolFacts:
    props = r.props
    node = as_dict(props.get("nodeConfig"))
    name = props.get("name") if isinstance(props.get("name"), str) else r.name
    capacity = capacity_of(props)
    own = {k: v for k, v in as_dict(node.get("labels")).items() if isinstance(v, str)}
    accelerator: dict[str, str] = {}
    machine_type = node.get("machineType")
    resource, per_node = None, 0
    gen = tpu_generation(machine_type)
    if gen is not None:
        topology = dig(props, "placementPolicy", "tpuTopology") or single_host_topology(gen, machine_type)
        accelerator[catalogue.TPU_ACCELERATOR_LABEL] = gen.accelerator
        if topology and topology != UNKNOWN:
            accelerator[catalogue.TPU_TOPOLOGY_LABEL] = topology
        resource, per_node = catalogue.TPU_RESOURCE, gen.machine_types[machine_type]
    else:
        gpus = [g for g in as_list(node.get("guestAccelerators")) if isinstance(g, Mapping)]
        if gpus:
            if isinstance(gpus[0].get("type"), str):
                accelerator[catalogue.GPU_ACCELERATOR_LABEL] = gpus[0]["type"]
            resource, per_node = catalogue.GPU_RESOURCE, sum(as_int(g.get("count")) or 0 for g in gpus)
    labels = naming.carried_labels(own, accelerator, CONFIG_CAPACITY[capacity], name)
    return PoolFacts(name, capacity, labels, resource, per_node, _max_nodes(props, cluster))


def _max_nodes(props: Mapping[str, Any], cluster: ClusterFacts | None) -> int | None:
    locations = as_list(props.get("nodeLocations"))
    zones = len(locations) if locations else (cluster.zones if cluster else 1)
    auto = props.get("autoscaling")
    if isinstance(auto, Mapping):
        total = as_int(auto.get("totalMaxNodeCount"))
        if total:
            return total
        per_zone = as_int(auto.get("maxNodeCount"))
        return per_zone * zones if per_zone is not None else None
    # nodeCount and initialNodeCount are per zone.
    for key in ("nodeCount", "initialNodeCount"):
        count = as_int(props.get(key))
        if count is not None:
            return count * zones
    return None


def scales_from_zero(props: Mapping[str, Any]) -> bool:
    """Whether a recorded node pool keeps no node while no pod asks for one: it autoscales with
    a minimum of 0 (GKE's default when the autoscaling block names none). A fixed size, or a
    minimum not known before deploy, is not."""
    auto = props.get("autoscaling")
    if not isinstance(auto, Mapping):
        return False
    present = [auto[k] for k in ("totalMinNodeCount", "minNodeCount") if auto.get(k) is not None]
    return all(as_int(v) == 0 for v in present)


def stack_pools(resources: Sequence[Any]) -> list[PoolFacts]:
    cluster = cluster_facts(resources)
    return [pool_facts(r, cluster) for r in of_type(resources, NODE_POOL)]


def selects(node_labels: Mapping[str, Any], pool: PoolFacts) -> bool:
    """Whether a flavor's nodeLabels land on this pool's nodes: Kueue injects them as the pods'
    nodeSelector, judged as the admission model judges placement."""
    return selection.matches({"nodeSelector": node_labels}, pool.labels)


def flavor_capacity(node_labels: Mapping[str, Any], pools: Sequence[PoolFacts]) -> set[str] | None:
    """The provisioning models behind a ResourceFlavor: named by its labels, or those of the
    pools it selects; None when neither tells (Autopilot, auto-provisioned nodes)."""
    ours = node_labels.get(naming.CAPACITY_LABEL)
    if isinstance(ours, str) and ours in naming.CAPACITY_VALUES.values():
        return {ours}
    for capacity, (label, value) in naming.GKE_CAPACITY_LABELS.items():
        if node_labels.get(label) == value:
            return {naming.CAPACITY_VALUES[capacity]}
    matched = {p.capacity for p in pools if selects(node_labels, p)}
    return matched or None


def allocatable(machine_type: str, gpus: int = 0) -> dict[str, int]:
    """cpu (millicores) and memory (bytes) that workload pods may request on one node of this
    machine type: node allocatable after GKE's reservations, less GKE's own DaemonSets. Empty
    for a machine type the catalogue does not size (its cpu and memory go unchecked)."""
    try:
        a = machines.workload_allocatable(machine_type, attached_gpus=gpus)
    except catalogue.CatalogueError:
        return {}
    return {CPU: a.cpu_millis, MEMORY: a.memory_bytes}
