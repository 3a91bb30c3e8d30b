"""What a recorded GKE custom ComputeClass (cloud.google.com/v1) means for admission: the nodes
GKE may create for it, one node shape per priority, in the class's order.

A Pod selects a class with the node label cloud.google.com/compute-class: NAME (Kueue injects
it from the flavor); GKE then creates nodes of the first priority it can get, else the next
(GKE docs concepts/about-custom-compute-classes). So the class's nodes carry its label, the
labels GKE puts on any node of the priority's accelerator and capacity type, and, on Standard,
its taint (gke_ai_batch.domain.naming.compute_class_taint). With whenUnsatisfiable
DoNotScaleUp (the CRD's default) GKE creates no node outside the priorities: a pod no priority
holds stays pending.

Standard library only (the policy pack imports it)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.domain import catalogue, naming
from gke_ai_batch.domain.registered import COMPUTE_CLASS, as_dict, as_int, as_list, dig, of_type
from gke_ai_batch.model import facts
from gke_ai_batch.model.objects import NodeGroup
from gke_ai_batch.model.requests import CPU, MAX_AMOUNT, MEMORY, amount, show

DEFAULT_WHEN_UNSATISFIABLE = "DoNotScaleUp"


@dataclass(frozen=True)
class ClassPriority:
    """One priority of a class: the facts of a pool GKE may create, and its node shape."""

    pool: facts.PoolFacts
    machine_type: str
    slice_hosts: int | None


def _capacity(p: Mapping[str, Any]) -> str:
    """The provisioning model, as facts.capacity_of names a pool's."""
    if dig(p, "flexStart", "enabled") is True:
        return "flex-start"
    if p.get("spot") is True:
        return "spot"
    if dig(p, "reservations", "affinity") == "Specific":
        return "reservation"
    return "on-demand"


def _tpu_machine_type(accelerator: Any, count: int | None) -> tuple[catalogue.TpuGeneration | None, str]:
    for gen in catalogue.TPU_GENERATIONS.values():
        if gen.accelerator == accelerator:
            per_vm = [m for m, n in gen.machine_types.items() if n == count]
            return gen, (per_vm[0] if per_vm else gen.default_machine_type)
    return None, ""


def class_priorities(name: str, spec: Mapping[str, Any]) -> list[ClassPriority]:
    out = []
    for i, p in enumerate(as_list(spec.get("priorities"))):
        if not isinstance(p, Mapping):
            continue
        capacity = _capacity(p)
        accelerator: dict[str, str] = {}
        resource, per_node, slice_hosts = None, 0, None
        machine_type = p.get("machineType") if isinstance(p.get("machineType"), str) else ""
        tpu, gpu = as_dict(p.get("tpu")), as_dict(p.get("gpu"))
        if tpu:
            count = as_int(tpu.get("count"))
            gen, machine_type = _tpu_machine_type(tpu.get("type"), count)
            if gen is not None:
                per_node = gen.machine_types[machine_type]
                resource = catalogue.TPU_RESOURCE
                accelerator[catalogue.TPU_ACCELERATOR_LABEL] = gen.accelerator
                topology = tpu.get("topology")
                if isinstance(topology, str):
                    accelerator[catalogue.TPU_TOPOLOGY_LABEL] = topology
                    try:
                        slice_hosts = catalogue.topology_chips(topology) // per_node
                    except ValueError:
                        slice_hosts = None
        elif gpu:
            if isinstance(gpu.get("type"), str):
                accelerator[catalogue.GPU_ACCELERATOR_LABEL] = gpu["type"]
            resource, per_node = catalogue.GPU_RESOURCE, as_int(gpu.get("count")) or 0
        labels = naming.carried_labels({naming.COMPUTE_CLASS_LABEL: name}, accelerator, facts.CONFIG_CAPACITY[capacity])
        pool = facts.PoolFacts(f"{name}[{i}]", capacity, labels, resource, per_node, None)
        out.append(ClassPriority(pool, machine_type, slice_hosts))
    return out


def recorded_classes(resources: Sequence[Any]) -> dict[str, tuple[str, list[ClassPriority]]]:
    """class name -> (whenUnsatisfiable, its priorities), for every recorded ComputeClass."""
    out = {}
    for r in of_type(resources, COMPUTE_CLASS):
        name = dig(r.props, "metadata", "name")
        name = name if isinstance(name, str) else r.name
        spec = as_dict(r.props.get("spec"))
        when = spec.get("whenUnsatisfiable")
        out[name] = (when if isinstance(when, str) else DEFAULT_WHEN_UNSATISFIABLE, class_priorities(name, spec))
    return out


def class_pools(resources: Sequence[Any]) -> list[facts.PoolFacts]:
    """Each recorded class priority as the facts of a pool GKE may create (no known ceiling)."""
    return [p.pool for _, priorities in recorded_classes(resources).values() for p in priorities]


def node_groups(name: str, priorities: Sequence[ClassPriority], standard: bool) -> list[NodeGroup]:
    """The nodes GKE may create for class `name`, one group per priority, as the placement model
    judges node pools. Auto-created: GKE adds node pools as pods need them, so their count is
    bounded by quota and the cluster's limits, not by a pool's ceiling."""
    out = []
    for p in priorities:
        pool = p.pool
        taints = []
        if pool.resource == catalogue.TPU_RESOURCE:
            taints.append(dict(catalogue.TPU_TAINT))
        elif pool.resource == catalogue.GPU_RESOURCE:
            taints.append(dict(catalogue.GPU_TAINT))
        if standard:
            taints.append(naming.compute_class_taint(name))
        gpus = pool.per_node if pool.resource == catalogue.GPU_RESOURCE else 0
        alloc = facts.allocatable(p.machine_type, gpus)
        if pool.resource is not None:
            alloc[pool.resource] = pool.per_node
        out.append(NodeGroup(
            name=f"ComputeClass {pool.name}",
            labels=pool.labels,
            taints=tuple(taints),
            allocatable=alloc,
            nodes=AUTO_CREATED_NODES,
            machine_type=p.machine_type,
            capacity=facts.CONFIG_CAPACITY[pool.capacity],
            slice_hosts=p.slice_hosts,
            auto_created=True,
            from_zero=True,
        ))
    return out


# The model's stand-in for "as many nodes as pods need": GKE's limit per Standard cluster
# (https://cloud.google.com/kubernetes-engine/quotas), far above what one workload asks.
AUTO_CREATED_NODES = 15_000


def flavor_quota(queue_quotas: Iterable[Mapping[str, Any]], flavors: Collection[str]) -> dict[str, int]:
    """resource -> the nominal quotas every ClusterQueue gives `flavors`, added up (Kueue's units:
    millicores, bytes, devices). `queue_quotas`: per queue, flavor -> resource -> nominalQuota.

    Kueue admits no more on a flavor at once than this: a queue uses its nominal quota and
    borrows only what queues of its cohort leave unused (Kueue docs concepts/cluster_queue,
    "Borrowing"), so a cohort's usage of a flavor never passes the sum of its nominal quotas.
    A Cohort object's own quota is not added (this program registers none)."""
    out: dict[str, int] = {}
    for quotas in queue_quotas:
        for flavor, resources in quotas.items():
            if flavor not in flavors or not isinstance(resources, Mapping):
                continue
            for resource, nominal in resources.items():
                try:
                    value = amount(resource, nominal)
                except ValueError:
                    continue  # a quota not known before deploy, or not a quantity: nothing to add
                out[resource] = min(out.get(resource, 0) + value, MAX_AMOUNT)
    return {r: v for r, v in out.items() if v > 0}


def nodes_at_limits(priority: ClassPriority, quota: Mapping[str, int]) -> tuple[int | None, str]:
    """(nodes, how) GKE creates for one priority when the pods Kueue admits on the class's
    flavors use all of `quota` (flavor_quota) on that priority's nodes; None with the reason when
    no quota bounds them.

    An accelerator priority: the accelerator quota over a node's accelerators, rounded up (a
    multi-host TPU priority in whole slices): the nodes that hold the quota when each is full.
    Pods that use part of a node's accelerators can make GKE create more nodes, one per pod
    at worst. A CPU priority: the nodes whose allocatable cpu and memory hold the quota."""
    pool = priority.pool
    if pool.resource is not None:
        held = quota.get(pool.resource, 0)
        if not held or not pool.per_node:
            return None, f"no ClusterQueue gives quota of {pool.resource} on the flavors that select the class"
        nodes = math.ceil(held / pool.per_node)
        how = f"{show(pool.resource, held)} {pool.resource} ÷ {pool.per_node} per node"
        if priority.slice_hosts:
            nodes = math.ceil(nodes / priority.slice_hosts) * priority.slice_hosts
            how += f", in slices of {priority.slice_hosts} VMs"
        return min(nodes, AUTO_CREATED_NODES), how
    alloc = facts.allocatable(priority.machine_type)
    needs = [(math.ceil(quota[r] / alloc[r]), r) for r in (CPU, MEMORY) if quota.get(r) and alloc.get(r)]
    if not alloc:
        return None, f"the catalogue does not size machine type {priority.machine_type or '(none)'}"
    if not needs:
        return None, "no ClusterQueue gives cpu or memory quota on the flavors that select the class"
    nodes, resource = max(needs)
    return min(nodes, AUTO_CREATED_NODES), (
        f"{show(resource, quota[resource])} {resource} ÷ {show(resource, alloc[resource])} allocatable per node")

