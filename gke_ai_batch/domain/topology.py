"""Kueue Topology-Aware Scheduling (TAS): the node labels GKE sets for it and the names Kueue reads.

Kueue's TAS packs a pod set into one domain of a level of a `Topology` (kueue.x-k8s.io/v1beta2;
kubernetes-sigs/kueue apis/kueue/v1beta2/topology_types.go at v0.19.2, the CRD vendored as
schema/upstream/kueue.x-k8s.io/v1beta2/Topology.json). TAS is a beta feature gate, on by
default since Kueue v0.14 (kueue.sigs.k8s.io docs/tasks/run/topology_aware_scheduling), older
than kueue_releases.MIN_RELEASE, so no gate is written for it. Pure data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gke_ai_batch.domain import catalogue, naming

# The pod-template annotations a pod set asks for a domain with; the value is a level's node
# label (topology_types.go PodSetRequiredTopologyAnnotation, PodSetPreferredTopologyAnnotation).
REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
ANNOTATIONS = {"required": REQUIRED_ANNOTATION, "preferred": PREFERRED_ANNOTATION}
# TAS slices: the pod set is cut into slices of SLICE_SIZE pods, each placed whole in one domain
# of the SLICE level (topology_types.go PodSetSliceRequiredTopologyAnnotation,
# PodSetSliceSizeAnnotation; the size "is required if podset-slice-required-topology is set").
SLICE_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"

# Topology.spec.levels: minItems 1, maxItems 16, unique; kubernetes.io/hostname only as the
# lowest level (the CRD's x-kubernetes-validations).
MAX_LEVELS = 16
HOSTNAME_LABEL = "kubernetes.io/hostname"

# GKE's physical topology labels on A4 / A3 Ultra nodes, from the widest to the narrowest
# (cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas, "Topology of
# GKE nodes"): a block, a sub-block inside it, the host. Their domains' sizes depend on where
# GCE placed the VMs, so the model cannot bound them below the pools' node count.
BLOCK_LABEL = "cloud.google.com/gce-topology-block"
SUBBLOCK_LABEL = "cloud.google.com/gce-topology-subblock"
HOST_LABEL = "cloud.google.com/gce-topology-host"

# The levels a flavor's domains are counted for: each node pool (a TPU slice is one node pool:
# GKE docs tpus "multi-host TPU slice node pool") and each node.
NODEPOOL_LABEL = catalogue.NODEPOOL_LABEL
KNOWN_LEVELS = (BLOCK_LABEL, SUBBLOCK_LABEL, HOST_LABEL, NODEPOOL_LABEL, HOSTNAME_LABEL)


# -- the levels a node carries -------------------------------------------------------------------
# Kueue's TAS counts a flavor's nodes only if each carries every level of its Topology: the nodes
# cache keeps a node for the flavor when it has the flavor's labels and "contains all required
# topology levels" (kubernetes-sigs/kueue v0.19.2 pkg/util/tas/node.go NodeMatchesFlavor, called
# by pkg/cache/scheduler/tas_nodes_cache.go nodesCache.find, from which tas_flavor.go
# cachedOrBuiltTree builds the flavor's topology tree and snapshot). A level that none of the
# flavor's nodes carries leaves the flavor no node: nothing under it is ever admitted.

# Labels every GKE node carries: Kubernetes' well-known node labels that the kubelet sets
# (hostname, os, arch, with the deprecated beta forms) and the cloud controller sets (instance
# type, zone, region) (kubernetes.io docs reference/labels-annotations-taints), and GKE's
# node pool label.
EVERY_NODE_LABELS = frozenset({
    HOSTNAME_LABEL, "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    NODEPOOL_LABEL,
})
# The only kubernetes.io and k8s.io prefixes under which a kubelet may set labels of its own
# (NodeRestriction admission plugin, kubernetes.io docs access-authn-authz/admission-controllers
# #noderestriction); a node pool may set none in those domains (config.pools RESERVED_NODE_DOMAINS),
# so another key there is on no GKE node. Under these two, GKE's own (masq-agent-ds-ready, ...)
# are not enumerated here: taken as carried.
KUBELET_PREFIXES = ("kubelet.kubernetes.io", "node.kubernetes.io")
K8S_DOMAINS = ("kubernetes.io", "k8s.io")
# GKE's domains: it sets labels there that this catalogue does not enumerate (gke-os-distribution,
# machine-family, ...), taken as carried, but for those it sets only on some nodes, below.
GKE_DOMAINS = ("cloud.google.com", "gke.io")
# GKE labels a node with its accelerator, its provisioning model and its ComputeClass only when it
# has them (the GPU, TPU, Spot, flex-start, queued and ComputeClass docs cited in
# catalogue.py and naming.py): carried exactly when the pool's labels (naming.carried_labels) say.
CONDITIONAL_LABELS = frozenset({
    catalogue.GPU_ACCELERATOR_LABEL, catalogue.TPU_ACCELERATOR_LABEL, catalogue.TPU_TOPOLOGY_LABEL,
    naming.COMPUTE_CLASS_LABEL, *(label for label, _ in naming.GKE_CAPACITY_LABELS.values()),
})
# GKE's physical-topology labels come from the VM's physical host topology, which Compute Engine
# reports only for these machine series and for VMs placed by a compact placement policy (Compute
# Engine docs instances/view-instance-topology, "Limitations": A4X Max, A4X, A4, A3 Ultra, A3 Mega,
# A3 High with 8 GPUs, H4D; GKE docs ai-hypercomputer schedule-gke-workloads-tas, "Topology of
# GKE nodes"). A multi-host TPU slice's pool is placed compactly (plan/pools.py placement_policy).
PHYSICAL_TOPOLOGY_LABELS = (BLOCK_LABEL, SUBBLOCK_LABEL, HOST_LABEL)
PHYSICAL_TOPOLOGY_MACHINES = ("a4x-", "a4-", "a3-ultragpu-", "a3-megagpu-", "a3-highgpu-8g", "h4d-")


def _in(domain: str, domains: Iterable[str]) -> bool:
    return any(domain == d or domain.endswith("." + d) for d in domains)


def uncarried_levels(
    levels: Iterable[str], labels: Mapping[str, str], machine_type: str, compact: bool = False,
    labels_known: bool = True,
) -> list[str]:
    """The levels that nodes of one shape do not carry: `labels` are every label the pool puts on
    them (naming.carried_labels), `machine_type` theirs, `compact` whether a compact placement
    policy places them; `labels_known` False where the nodes may carry labels of their own that
    `labels` omits (a recorded ComputeClass's nodePoolConfig). A label GKE may set that the
    catalogue does not enumerate is taken as carried: only what is known missing is returned."""
    out = []
    for level in levels:
        if level in labels or level in EVERY_NODE_LABELS:
            continue
        domain = level.rpartition("/")[0]
        if level in PHYSICAL_TOPOLOGY_LABELS:
            if not compact and not machine_type.startswith(PHYSICAL_TOPOLOGY_MACHINES):
                out.append(level)
        elif level in CONDITIONAL_LABELS:
            out.append(level)
        elif _in(domain, K8S_DOMAINS):
            if not _in(domain, KUBELET_PREFIXES):
                out.append(level)
        elif not _in(domain, GKE_DOMAINS) and labels_known:
            out.append(level)
    return out
