"""Deterministic names and labels that the program derives from a stack file.

Names never carry random suffixes: a Job selects its node pool by name, and a rename must
show up in review as the replacement it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gke_ai_batch.domain import catalogue

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

# Labels GKE itself puts on nodes of these capacity types (GKE docs concepts/spotvms, "Spot VMs
# on GKE": cloud.google.com/gke-spot=true; how-to/dws-flex-start-training: gke-flex-start=true;
# how-to/provisioningrequest: gke-queued=true, with the matching NoSchedule taint).
GKE_CAPACITY_LABELS = {
    "spot": ("cloud.google.com/gke-spot", "true"),
    "flexStart": ("cloud.google.com/gke-flex-start", "true"),
    "queued": ("cloud.google.com/gke-queued", "true"),
}
# A Kubernetes taint effect as the GKE API spells it in a node pool's nodeConfig.taints
# (NodeTaint.Effect, cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig#effect).
GKE_TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
QUEUED_TAINT = {"key": GKE_CAPACITY_LABELS["queued"][0], "value": GKE_CAPACITY_LABELS["queued"][1], "effect": "NoSchedule"}
# GKE's custom ComputeClasses (GKE docs concepts/about-custom-compute-classes): a Pod selects one
# with the node label cloud.google.com/compute-class: NAME, and on Standard GKE taints the nodes it
# creates for the class cloud.google.com/compute-class=NAME:NoSchedule ("Request ComputeClasses in
# workloads": GKE adds the matching toleration to Pods that select the class; a node pool that is
# to serve the class carries both by hand, "Configure manually-created node pools"). GKE refuses a
# class whose name starts with gke or autopilot ("Limitations": those names are its own classes').
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
COMPUTE_CLASS_RESERVED_PREFIXES = ("gke", "autopilot")
# GKE rejects a Pod that selects a custom ComputeClass and also a system node label for which the
# ComputeClass spec has a field: the class decides it (GKE docs concepts/about-custom-compute-classes,
# "Node selectors for system node labels"). The labels and their priority fields (the ComputeClass
# CRD, GoogleCloudPlatform/compute-class-api api/cloud.google.com/v1/types.go): an accelerator, a
# TPU topology, Spot, flex-start, a machine family. Judged on Autopilot (model/placement.py), where
# GKE admits every Pod; a Standard cluster's Pods are not refused for it here.
COMPUTE_CLASS_FIELD_LABELS = {
    catalogue.GPU_ACCELERATOR_LABEL: "gpu.type",
    catalogue.TPU_ACCELERATOR_LABEL: "tpu.type",
    catalogue.TPU_TOPOLOGY_LABEL: "tpu.topology",
    "cloud.google.com/gke-spot": "spot",
    "cloud.google.com/gke-flex-start": "flexStart",
    "cloud.google.com/machine-family": "machineFamily",
}


def compute_class_taint(name: str) -> dict[str, str]:
    """The taint GKE puts on a Standard cluster's nodes of custom ComputeClass `name`."""
    return {"key": COMPUTE_CLASS_LABEL, "value": name, "effect": "NoSchedule"}


SYSTEM_POOL = "system"
# Namespaces every cluster has (kubernetes.io docs, namespaces#initial-namespaces); teams may use
# them but the program must not create them.
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# The ServiceAccount every namespace has, which every pod that names none runs as (kubernetes.io
# docs, concepts/security/service-accounts, "Default service accounts"; kubernetes
# pkg/controller/serviceaccount/serviceaccounts_controller.go, DefaultServiceAccountsControllerOptions).
DEFAULT_SERVICE_ACCOUNT = "default"


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


def gke_capacity_labels(capacity: str) -> dict[str, str]:
    """The label GKE itself puts on nodes of this capacity type (config name), if any."""
    label = GKE_CAPACITY_LABELS.get(capacity)
    return dict([label]) if label else {}


def own_labels(pool) -> dict[str, str]:
    """The labels the program asks GKE to put on a pool entry's nodes (nodeConfig.labels): the
    pool's own, and our capacity label on accelerator pools."""
    labels: dict[str, str] = dict(pool.labels)
    if pool.tpu is not None or pool.gpu is not None:
        labels[CAPACITY_LABEL] = CAPACITY_VALUES[pool.capacity]
    return labels


def accelerator_labels(pool) -> dict[str, str]:
    """GKE's accelerator labels on a pool entry's nodes (a TPU slice's accelerator and topology,
    a GPU's type)."""
    if pool.tpu is not None:
        return dict(pool.tpu.slice.node_labels)
    if pool.gpu is not None:
        return {catalogue.GPU_ACCELERATOR_LABEL: pool.gpu.type}
    return {}


def carried_labels(
    own: Mapping[str, str], accelerator: Mapping[str, str], capacity: str | None = None, pool_name: str | None = None
) -> dict[str, str]:
    """The labels GKE nodes carry: the pool's nodeConfig.labels, then what GKE itself sets (its
    accelerator labels, its capacity label for `capacity` (a config name), and, given the GKE
    pool's name, cloud.google.com/gke-nodepool). GKE's win: it sets them on the node whatever the
    pool asks, though config refuses a pool label in GKE's domain (config.pools.
    RESERVED_NODE_DOMAINS), so for a valid stack no key is in both. One merge for config, the
    plan's admission model and the policy pack (gke_ai_batch/model/facts.py, from a recorded pool)."""
    labels = {**own, **accelerator}
    if capacity is not None:
        labels.update(gke_capacity_labels(capacity))
    if pool_name is not None:
        labels[catalogue.NODEPOOL_LABEL] = pool_name
    return labels


def pool_node_labels(pool) -> dict[str, str]:
    """The labels a flavor derived from a pool entry selects on: every one its nodes carry but
    GKE's capacity label (our capacity label names the capacity) and the pool's name (a flavor
    spans the slices of an entry, each its own pool)."""
    return carried_labels(own_labels(pool), accelerator_labels(pool))


def node_labels(pool, pool_name: str | None = None) -> dict[str, str]:
    """Every label the nodes of a pool entry carry (with gke-nodepool when given the GKE pool's
    name): what a flavor's or a workload's nodeSelector is judged against."""
    return carried_labels(own_labels(pool), accelerator_labels(pool), pool.capacity, pool_name)


def pool_taints(pool) -> list[dict[str, str]]:
    """Every taint the pool's nodes carry: GKE's accelerator and queued-provisioning taints and
    the pool's own."""
    taints = gke_taints(pool)
    taints.extend({"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints)
    return taints


def gke_taints(pool) -> list[dict[str, str]]:
    """The taints a pool's nodes carry whatever the stack says: GKE's accelerator taint and the
    queued-provisioning one."""
    taints: list[dict[str, str]] = []
    if pool.tpu is not None:
        taints.append(dict(catalogue.TPU_TAINT))
    elif pool.gpu is not None:
        taints.append(dict(catalogue.GPU_TAINT))
    if pool.capacity == "queued":
        taints.append(dict(QUEUED_TAINT))
    return taints


def workload_policy_name(cluster: str, entry: str) -> str:
    return f"{cluster}-{entry}"


# -- logical names of one cluster's resources ---------------------------------------------------
# Pulumi builds a URN from the parent's type chain and the resource's own logical name, never the
# parent's name, so two clusters' components registering the same child names ("cluster", "k8s",
# a Namespace "ml", ...) collide, and the engine refuses the second ("Duplicate resource URN";
# pulumi/pulumi pkg/diag/errors.go GetDuplicateResourceURNError). Pulumi's guidance for
# components is to make children's names unique by deriving them from something unique to the
# instance (https://www.pulumi.com/docs/iac/concepts/resources/components/, "naming";
# https://www.pulumi.com/docs/iac/concepts/resources/names/): here the cluster's scope. Only
# logical names change: GKE and Kubernetes names stay the planned ones, on every cluster alike.
SCOPE_SEPARATOR = "/"
# A scope is a GKE name (RFC 1035 label, at most 40 characters; the GKE API's Cluster.name rule,
# as gke_ai_batch.config.base.GkeName): it also names synth's manifests/<scope>.yaml, so nothing
# in it may act on a path.
_SCOPE_RX = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?", re.ASCII)
KUBERNETES_PROVIDER = "k8s"
"""The logical name (before scoping) of each cluster's Kubernetes provider."""


def check_scope(scope: str) -> str:
    if not isinstance(scope, str) or not _SCOPE_RX.fullmatch(scope):
        raise ValueError(
            f"{scope!r} is not a cluster scope: lowercase letters, digits and '-', starting with a letter, "
            "ending with a letter or digit, at most 40 characters"
        )
    return scope


def scoped(scope: str, name: str) -> str:
    """The logical name of `name` in cluster `scope`: `name` itself for "" (a single-cluster
    stack, whose URNs must not change), else "<scope>/<name>"."""
    if scope == "":
        return name
    return f"{check_scope(scope)}{SCOPE_SEPARATOR}{name}"


def scope_of(name: str, base: str) -> str | None:
    """The scope in which `base` has the logical name `name` (the inverse of scoped); None if
    `name` is not `base` in any scope."""
    if name == base:
        return ""
    scope, sep, rest = name.partition(SCOPE_SEPARATOR)
    if sep and rest == base and _SCOPE_RX.fullmatch(scope):
        return scope
    return None


def child_name(name: str, base: str, child: str) -> str:
    """The logical name of a component's `child`, from the component's `name`: where `name` is
    `base` in a cluster's scope (the stack program names its components so), the child's name
    in that scope, as the stack's URNs have always had it; else "<name>-<child>", so that two
    instances of a component side by side never register one URN twice."""
    scope = scope_of(name, base)
    return scoped(scope, child) if scope is not None else f"{name}-{child}"
