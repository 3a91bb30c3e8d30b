"""Deterministic names and labels that the program derives from a stack file.

Names never carry random suffixes: a Job selects its node pool by name, and a rename must
show up in review as the replacement it is.
"""

from __future__ import annotations

from . import catalogue

# A label of ours on every accelerator node, so that flavors of the same shape but different
# capacity (on-demand vs spot, say) select disjoint nodes. GKE labels spot, flex-start and
# queued nodes itself, but nothing marks an on-demand node as such.
CAPACITY_LABEL = "gke-ai-batch/capacity"
CAPACITY_VALUES = {
    "onDemand": "on-demand",
    "spot": "spot",
    "reservation": "reservation",
    "flexStart": "flex-start",
    "queued": "queued",
}
_FLAVOR_SUFFIX = {
    "onDemand": "",
    "spot": "-spot",
    "reservation": "-reserved",
    "flexStart": "-flex",
    "queued": "-queued",
}

# Labels GKE itself puts on nodes of these capacity types.
GKE_CAPACITY_LABELS = {
    "spot": ("cloud.google.com/gke-spot", "true"),
    "flexStart": ("cloud.google.com/gke-flex-start", "true"),
    "queued": ("cloud.google.com/gke-queued", "true"),
}
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"}
SYSTEM_POOL = "system"


def slice_pool_name(entry: str, index: int) -> str:
    return f"{entry}-{index}"


def derived_flavor_name(pool) -> str | None:
    """The ResourceFlavor a pool entry falls into when flavors are derived; None for CPU pools."""
    suffix = _FLAVOR_SUFFIX[pool.capacity]
    if pool.tpu is not None:
        return f"{pool.tpu.slice.accelerator}-{pool.tpu.topology}{suffix}"
    if pool.gpu is not None:
        return f"{pool.gpu.type}{suffix}"
    return None


def pool_node_labels(pool) -> dict[str, str]:
    """Labels the pool's nodes carry that a ResourceFlavor may select on: GKE's accelerator
    labels plus our capacity label (the pool's own labels are added by the caller)."""
    labels: dict[str, str] = {}
    if pool.tpu is not None:
        labels.update(pool.tpu.slice.node_labels)
    elif pool.gpu is not None:
        labels[catalogue.GPU_ACCELERATOR_LABEL] = pool.gpu.type
    if pool.tpu is not None or pool.gpu is not None:
        labels[CAPACITY_LABEL] = CAPACITY_VALUES[pool.capacity]
    return labels


def pool_taints(pool) -> list[dict[str, str]]:
    """Every taint the pool's nodes carry: GKE's accelerator and queued-provisioning taints and
    the pool's own."""
    taints: list[dict[str, str]] = []
    if pool.tpu is not None:
        taints.append(dict(catalogue.TPU_TAINT))
    elif pool.gpu is not None:
        taints.append(dict(catalogue.GPU_TAINT))
    if pool.capacity == "queued":
        taints.append(dict(QUEUED_TAINT))
    taints.extend({"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints)
    return taints


def workload_policy_name(cluster: str, entry: str) -> str:
    return f"{cluster}-{entry}"
