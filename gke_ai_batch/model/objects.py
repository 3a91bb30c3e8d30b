"""The objects the model reasons about, read from the Kubernetes manifests the program emits
(ResourceFlavor, ClusterQueue, LocalQueue, Namespace, Job, JobSet, ProvisioningRequest) and
from node pools as GKE builds them. Reading manifests rather than config means the program's
plan and a recorded `pulumi preview` (the policy pack) are judged by the same code.

Standard library only: the policy pack imports this package in its own small virtualenv."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gke_ai_batch.domain.podtemplates import PodSet, job_pods, workload_pod_sets  # noqa: F401 (re-exported)
from gke_ai_batch.model.requests import amount

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
EXCLUSIVE_ANNOTATION = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Namespaces whose Jobs Kueue leaves alone (the Configuration's managedJobsNamespaceSelector,
# which the chart also puts on its job webhooks). Kueue's default excludes kube-system and its
# own namespace (kueue v0.19.2 apis/config/v1beta2/defaults.go); with
# manageJobsWithoutQueueName on, a Job GKE or an install runs in any other system namespace
# would wait forever for a queue, so those are excluded as well: Kubernetes' initial namespaces
# (kubernetes.io docs, namespaces#initial-namespaces), JobSet's, and the ones GKE creates for
# its managed components (Managed Service for Prometheus: gmp-system, gmp-public,
# gke-gmp-system; gke-managed-* for CSI drivers and observability; GKE docs,
# "GKE-managed namespaces"). Teams cannot use any of them (config refuses kube-*, gke-*, gmp-*
# and the install namespaces).
UNMANAGED_JOB_NAMESPACES = (
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "kueue-system",
    "jobset-system",
    "gmp-system",
    "gmp-public",
    "gke-gmp-system",
    "gke-managed-system",
    "gke-managed-cim",
    "gke-managed-filestorecsi",
    "gke-managed-parallelstorecsi",
    "gke-managed-dpv2-observability",
    "gke-managed-volumepopulator",
)
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"


@dataclass(frozen=True)
class Flavor:
    name: str
    node_labels: Mapping[str, str]
    node_taints: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()
    topology_name: str | None = None  # a Kueue Topology (TAS)

    @classmethod
    def from_manifest(cls, m: Mapping[str, Any]) -> "Flavor":
        spec = m.get("spec") or {}
        topology = spec.get("topologyName")
        return cls(
            m["metadata"]["name"],
            dict(spec.get("nodeLabels") or {}),
            tuple(spec.get("nodeTaints") or ()),
            tuple(spec.get("tolerations") or ()),
            topology if isinstance(topology, str) else None,
        )


@dataclass(frozen=True)
class Quota:
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[tuple[str, Mapping[str, Quota]], ...]  # in the queue's order

    @property
    def flavor_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.flavors)


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    cohort: str | None
    groups: tuple[ResourceGroup, ...]
    namespace_selector: Mapping[str, Any] | None
    checks: Mapping[str, tuple[str, ...]]  # flavor -> admission checks that apply on it
    stop_policy: str = "None"
    when_can_borrow: str = "MayStopSearch"  # the v1beta2 CRD default

    @classmethod
    def from_manifest(cls, m: Mapping[str, Any], check_controllers: Mapping[str, str] | None = None) -> "ClusterQueue":
        spec = m.get("spec") or {}
        groups = []
        for g in spec.get("resourceGroups") or ():
            flavors = []
            for f in g.get("flavors") or ():
                quotas = {}
                for r in f.get("resources") or ():
                    res = r["name"]
                    quotas[res] = Quota(
                        amount(res, r.get("nominalQuota", 0)),
                        None if r.get("borrowingLimit") is None else amount(res, r["borrowingLimit"]),
                        None if r.get("lendingLimit") is None else amount(res, r["lendingLimit"]),
                    )
                flavors.append((f["name"], quotas))
            groups.append(ResourceGroup(tuple(g.get("coveredResources") or ()), tuple(flavors)))
        all_flavors = [n for g in groups for n in g.flavor_names]
        checks: dict[str, list[str]] = {f: [] for f in all_flavors}
        for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or ():
            for f in c.get("onFlavors") or all_flavors:
                checks.setdefault(f, []).append(c["name"])
        return cls(
            name=m["metadata"]["name"],
            cohort=spec.get("cohortName") or None,
            groups=tuple(groups),
            namespace_selector=spec.get("namespaceSelector"),
            checks={f: tuple(c) for f, c in checks.items()},
            stop_policy=spec.get("stopPolicy") or "None",
            when_can_borrow=(spec.get("flavorFungibility") or {}).get("whenCanBorrow", "MayStopSearch"),
        )

    def group_of(self, resource: str) -> ResourceGroup | None:
        return next((g for g in self.groups if resource in g.covered), None)

    def quota(self, flavor: str, resource: str) -> Quota | None:
        for g in self.groups:
            for name, quotas in g.flavors:
                if name == flavor and resource in quotas:
                    return quotas[resource]
        return None

    @property
    def flavor_names(self) -> tuple[str, ...]:
        return tuple(n for g in self.groups for n in g.flavor_names)


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # JobSet | Job | ProvisioningRequest
    namespace: str
    local_queue: str | None
    priority_class: str | None
    pod_sets: tuple[PodSet, ...]
    exclusive_key: str | None = None  # JobSet exclusive placement: one replica per value of this node label
    suspended: bool = False

    @property
    def queued(self) -> bool:
        return self.local_queue is not None


def workload_from_manifests(manifests: Sequence[Mapping[str, Any]]) -> Workload | None:
    """The workload a sample's manifests make: a JobSet, a queued Job, or a ProvisioningRequest
    with the Job that consumes it (gke_ai_batch/domain/podtemplates.py). None when nothing there
    runs pods."""
    found = workload_pod_sets(manifests)
    if found is None:
        return None
    m, pod_sets = found
    if m["kind"] == "JobSet":
        annotations = m["metadata"].get("annotations") or {}
        return _workload(m, "JobSet", pod_sets, annotations.get(EXCLUSIVE_ANNOTATION))
    if m["kind"] == "ProvisioningRequest":
        return _workload(m, "ProvisioningRequest", pod_sets, None)
    return _workload(m, "Job", pod_sets, None, suspended=bool(m["spec"].get("suspend")))


def _workload(m, kind, pod_sets, exclusive, suspended=False) -> Workload:
    meta = m["metadata"]
    labels = meta.get("labels") or {}
    return Workload(
        name=meta["name"],
        kind=kind,
        namespace=meta.get("namespace", "default"),
        local_queue=labels.get(QUEUE_LABEL),
        priority_class=labels.get(PRIORITY_LABEL) or None,
        pod_sets=pod_sets,
        exclusive_key=exclusive,
        suspended=suspended,
    )


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one shape: a GKE node pool (a TPU slice is one pool)."""

    name: str
    labels: Mapping[str, str]  # as GKE sets them on the nodes
    taints: tuple[Mapping[str, Any], ...]
    allocatable: Mapping[str, int]  # per node, in Kueue's units (cpu in millicores)
    nodes: int  # the pool's ceiling
    machine_type: str
    capacity: str  # onDemand | spot | reservation | flexStart | queued
    slice_hosts: int | None = None  # TPU: VMs of the slice this pool is
    zones: tuple[str, ...] = ()
    auto_created: bool = False  # GKE creates node pools of this shape as pods need them (a ComputeClass priority)
    from_zero: bool = False  # no node exists until a pending pod asks the autoscaler for one


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics; Kueue reads a nil namespaceSelector as matching nothing."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or ():
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or ()
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


@dataclass(frozen=True)
class World:
    """Everything admission and placement depend on, for one cluster."""

    flavors: Mapping[str, Flavor]
    queues: Mapping[str, ClusterQueue]
    local_queues: Mapping[tuple[str, str], str]  # (namespace, name) -> ClusterQueue
    namespaces: Mapping[str, Mapping[str, str]]  # name -> labels
    node_groups: tuple[NodeGroup, ...]
    excluded_prefixes: tuple[str, ...] = ()
    autopilot: bool = False
    auto_provisioning: bool = False  # Standard with node auto-provisioning
    wait_for_pods_ready: bool = True
    priorities: Mapping[str, int] = field(default_factory=dict)
    compute_classes: Mapping[str, str] = field(default_factory=dict)  # custom ComputeClass -> whenUnsatisfiable
    topologies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # Kueue Topology -> its levels' node labels

    def namespace_labels(self, name: str) -> dict[str, str]:
        # The API server labels every namespace with its own name (NamespaceDefaultLabelName).
        return {**self.namespaces.get(name, {}), NAMESPACE_NAME_LABEL: name}
