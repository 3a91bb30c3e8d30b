"""Kueue Topology-Aware Scheduling (TAS): the node labels GKE sets for it and the names Kueue reads.

Kueue's TAS packs a pod set into one domain of a level of a `Topology` (kueue.x-k8s.io/v1beta2;
kubernetes-sigs/kueue apis/kueue/v1beta2/topology_types.go at v0.19.2, the CRD vendored as
schema/upstream/kueue.x-k8s.io/v1beta2/Topology.json). TAS is a beta feature gate, on by
default since Kueue v0.14 (kueue.sigs.k8s.io docs/tasks/run/topology_aware_scheduling), older
than kueue_releases.MIN_RELEASE, so no gate is written for it. Pure data."""

from __future__ import annotations

from gke_ai_batch.domain import catalogue

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
