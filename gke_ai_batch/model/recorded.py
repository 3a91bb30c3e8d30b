"""The admission model over what a program registers: one cluster's recorded resources in, the
model's world, a verdict for every workload and the queues Kueue would refuse out.

The one seam every judge goes through, so that a stack and any other program that uses the
library get the same answers: the stack program feeds it its plan's objects in the shape they
are registered in (gke_ai_batch/plan/admission.py; it must judge before anything registers,
and a real engine cannot record first), synth's report reads the program's judgement, and the
policy pack (`kueue-admissible`) feeds it what `pulumi preview` or synth recorded. A resource is
anything with `type`, `name` and `props` (gke_ai_batch.domain.registered.Registered; synth's
and CrossGuard's records alike), its props camelCase as the engine receives them:
- `gcp:container/nodePool:NodePool`: machine type, node labels, taints, accelerators, TPU
  placement topology, node counts and capacity settings make a NodeGroup as GKE builds it
  (gke_ai_batch/model/facts.py reads them);
- `gcp:container/cluster:Cluster`: Autopilot, node auto-provisioning. None recorded means a
  cluster that exists already: Standard, unless the caller declares its facts;
- the Kueue Helm release's values: whether waitForPodsReady is on;
- Kubernetes objects: ResourceFlavor, ClusterQueue, LocalQueue, Namespace and NamespacePatch,
  WorkloadPriorityClass, and the workloads (JobSet, Job, ProvisioningRequest with its
  PodTemplate and the Job that consumes it).

Every finding names its subject as (kind, namespace, name); the stack program maps subjects to
the stack file's key paths, any other program shows the object."""

from __future__ import annotations

import re
from dataclasses import replace
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from gke_ai_batch.domain import catalogue, kueue_releases, naming, quantity
from gke_ai_batch.domain.findings import Finding, Subject
from gke_ai_batch.domain.podtemplates import CONSUME_ANNOTATION, pod_templates
from gke_ai_batch.domain.registered import (
    ADMISSION_CHECK,
    CLUSTER_QUEUE,
    COMPUTE_CLASS,
    HELM_RELEASES,
    JOB,
    JOBSET,
    LOCAL_QUEUE,
    NAMESPACE,
    NAMESPACE_PATCH,
    NODE_POOL,
    POD_TEMPLATE,
    PROVISIONING_REQUEST,
    RESOURCE_FLAVOR,
    TOPOLOGY,
    UNKNOWN,
    WORKLOAD_PRIORITY_CLASS,
    as_dict,
    as_int,
    as_list,
    dig,
    is_type,
    of_type,
)
from gke_ai_batch.model import computeclass, facts, placement, selection
from gke_ai_batch.model.model import Verdict, judge, queue_problems, simulate
from gke_ai_batch.model.multikueue import MULTIKUEUE_CONTROLLER
from gke_ai_batch.model.objects import ClusterQueue, Flavor, NodeGroup, Workload, World, workload_from_manifests
from gke_ai_batch.model.placement import checked_keys

_K8S_EFFECTS = {gke: k8s for k8s, gke in naming.GKE_TAINT_EFFECTS.items()}
# Kueue 0.19 turns waitForPodsReady on when the Configuration omits it, unless this gate is
# enabled (kubernetes-sigs/kueue#11855; gke_ai_batch/domain/kueue_releases.py FEATURE_GATES).
_WAIT_GATE = "DisableWaitForPodsReady"
_WAIT_KEY = re.compile(r"^waitForPodsReady:", re.MULTILINE)


Problem = Finding
"""Something Kueue or kube-scheduler would refuse or never run: a Finding (severity "error") whose
subject is the object and whose path, if any, the field at fault below it ("flavors[1]")."""


def node_group(r: Any, pool: facts.PoolFacts) -> NodeGroup:
    """A recorded node pool's nodes as GKE builds them, given its facts (facts.pool_facts)."""
    node = as_dict(r.props.get("nodeConfig"))
    machine_type = node.get("machineType") if isinstance(node.get("machineType"), str) else ""
    gen = facts.tpu_generation(machine_type)
    capacity = facts.CONFIG_CAPACITY[pool.capacity]
    # The taints GKE puts on the nodes whatever the pool asks (GKE docs: concepts/tpus, concepts/gpus,
    # how-to/provisioningrequest), as gke_ai_batch.domain.naming.gke_taints lists them for a pool entry.
    gke: list[dict[str, str]] = []
    if gen is not None:
        gke.append(dict(catalogue.TPU_TAINT))
    elif pool.resource == catalogue.GPU_RESOURCE:
        gke.append(dict(catalogue.GPU_TAINT))
    if capacity == "queued":
        gke.append(dict(naming.QUEUED_TAINT))
    own = [
        {"key": t.get("key"), "value": t.get("value", ""), "effect": _K8S_EFFECTS.get(t.get("effect"), t.get("effect"))}
        for t in as_list(node.get("taints"))
        if isinstance(t, Mapping)
    ]
    taints = [*gke, *(t for t in own if t not in gke)]
    gpus = pool.per_node if pool.resource == catalogue.GPU_RESOURCE else 0
    alloc = facts.allocatable(machine_type, gpus)
    if pool.resource is not None:
        alloc[pool.resource] = pool.per_node
    slice_hosts = None
    topology = pool.labels.get(catalogue.TPU_TOPOLOGY_LABEL)
    if gen is not None and topology:
        slice_hosts = catalogue.topology_chips(topology) // gen.machine_types[machine_type]
    return NodeGroup(
        name=pool.name,
        labels=pool.labels,
        taints=tuple(taints),
        allocatable=alloc,
        nodes=pool.max_nodes or 0,
        machine_type=machine_type,
        capacity=capacity,
        slice_hosts=slice_hosts,
        zones=tuple(z for z in as_list(r.props.get("nodeLocations")) if isinstance(z, str)),
        from_zero=facts.scales_from_zero(r.props),
    )


def _meta(r: Any) -> tuple[str, str]:
    name, namespace = dig(r.props, "metadata", "name"), dig(r.props, "metadata", "namespace")
    return (name if isinstance(name, str) else r.name), (namespace if isinstance(namespace, str) and namespace else "default")


def wait_for_pods_ready(resources: Sequence[Any]) -> bool:
    """Whether the Kueue the program installs evicts workloads whose pods are not ready in time;
    Kueue's default (on since v0.19) where the program installs none."""
    for r in of_type(resources, *HELM_RELEASES):
        if "kueue" not in str(r.props.get("chart", "")):
            continue
        values = as_dict(r.props.get("values"))
        conf = dig(values, "managerConfig", "controllerManagerConfigYaml")
        if isinstance(conf, str) and _WAIT_KEY.search(conf):
            return True
        gates = as_list(dig(values, "controllerManager", "featureGates"))
        if any(isinstance(g, Mapping) and g.get("name") == _WAIT_GATE and g.get("enabled") is True for g in gates):
            return False
        version = r.props.get("version")
        try:
            return kueue_releases.has(version, kueue_releases.FEATURE_GATES[_WAIT_GATE])
        except (TypeError, ValueError):
            return True
    return True


# What the model reads of a ResourceFlavor and a ClusterQueue, with the types their CRDs give
# (kueue v0.19.2 apis/kueue/v1beta2 resourceflavor_types.go, clusterqueue_types.go; the API server
# refuses an object of other types, so it never exists to admit anything): a str, a quantity,
# a mapping of str, a list of such. A recorded object that does not fit is not judged here.
_STR, _QUANTITY = str, (str, int, float)
_FLAVOR_SPEC = {"nodeLabels": {str: _STR}, "nodeTaints": [dict], "tolerations": [dict], "topologyName": _STR}
_RESOURCE = {"name": _STR, "nominalQuota": _QUANTITY, "borrowingLimit": _QUANTITY, "lendingLimit": _QUANTITY}
_QUEUE_SPEC = {
    "cohortName": _STR,
    "namespaceSelector": dict,
    "stopPolicy": _STR,
    "flavorFungibility": {"whenCanBorrow": _STR},
    "admissionChecksStrategy": {"admissionChecks": [{"name": _STR, "onFlavors": [_STR]}]},
    "resourceGroups": [{"coveredResources": [_STR], "flavors": [{"name": _STR, "resources": [_RESOURCE]}]}],
}


def _fits(value: Any, shape: Any) -> bool:
    """Whether `value` has `shape`: a type (or tuple of types), [item shape], {str: value shape},
    or {key: shape} of the keys that may be present (None is an absent key)."""
    if value is None:
        return True
    if isinstance(shape, list):
        return isinstance(value, list) and all(v is not None and _fits(v, shape[0]) for v in value)
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return False
        if list(shape) == [str]:
            return all(isinstance(k, str) and isinstance(v, shape[str]) for k, v in value.items())
        return all(_fits(value.get(k), sub) for k, sub in shape.items())
    return isinstance(value, shape) and not isinstance(value, bool)


# A workload's pod specs and counts, with the types of k8s.io/api core/v1 PodSpec and batch/v1
# JobSpec, and jobset v1alpha2 ReplicatedJob: what the API server refuses is never run.
_RESOURCES = {"requests": {str: _QUANTITY}, "limits": {str: _QUANTITY}}
_POD_SPEC = {
    "containers": [{"name": _STR, "resources": _RESOURCES}], "initContainers": [{"name": _STR, "resources": _RESOURCES}],
    "nodeSelector": {str: _STR}, "tolerations": [dict], "affinity": dict, "priorityClassName": _STR,
}
_JOB_SPEC = {"parallelism": int, "completions": int, "template": {"metadata": dict, "spec": _POD_SPEC}}
_WORKLOAD_SPEC = {
    "JobSet": {"replicatedJobs": [{"name": _STR, "replicas": int, "template": {"spec": _JOB_SPEC}}]},
    "Job": _JOB_SPEC,
    "PodTemplate": {"spec": _POD_SPEC},
    # autoscaling.x-k8s.io/v1 ProvisioningRequestSpec.PodSets (kubernetes/autoscaler
    # cluster-autoscaler/apis/provisioningrequest): a PodTemplate reference and a count.
    "ProvisioningRequest": {"podSets": [{"podTemplateRef": {"name": _STR}, "count": int}]},
}


def _well_formed_workload(manifests: Sequence[Mapping[str, Any]]) -> bool:
    for m in manifests:
        kind = m.get("kind")
        shape = _WORKLOAD_SPEC.get(kind)
        spec = m.get("template") if kind == "PodTemplate" else m.get("spec")
        if shape is None:
            continue
        counts = [v for pods in _job_specs(kind, spec) for v in (pods.get("parallelism"), pods.get("completions")) if v is not None]
        quantities = [q for c in _containers(kind, spec) for part in ("requests", "limits")
                      for q in as_dict(dig(c, "resources", part)).values()]
        if not (_fits(spec, shape) and all(n >= 0 for n in counts) and all(quantity.value(q) is not None for q in quantities)):
            return False
    return True


def _job_specs(kind: Any, spec: Any) -> list[Mapping[str, Any]]:
    if kind == "JobSet":
        return [as_dict(dig(rj, "template", "spec")) for rj in as_list(as_dict(spec).get("replicatedJobs"))]
    return [as_dict(spec)] if kind == "Job" else []


def _containers(kind: Any, spec: Any) -> list[Any]:
    pods = [dig(j, "template", "spec") for j in _job_specs(kind, spec)] if kind != "PodTemplate" else [dig(spec, "spec")]
    return [c for p in pods for key in ("containers", "initContainers") for c in as_list(as_dict(p).get(key))]


def well_formed(props: Mapping[str, Any]) -> bool:
    """Whether a recorded ResourceFlavor or ClusterQueue has the types the model reads as its CRD
    gives them (_FLAVOR_SPEC, _QUEUE_SPEC); one that has not is refused by the API server."""
    spec = _QUEUE_SPEC if props.get("kind") == "ClusterQueue" else _FLAVOR_SPEC
    quantities = [q for g in as_list(dig(props, "spec", "resourceGroups")) for f in as_list(as_dict(g).get("flavors"))
                  for res in as_list(as_dict(f).get("resources")) for k, q in as_dict(res).items() if k != "name"]
    return (isinstance(dig(props, "metadata", "name"), str) and _fits(props.get("spec"), spec)
            and all(quantity.value(q) is not None for q in quantities))


def world(resources: Sequence[Any], cluster: facts.ClusterFacts | None = None, pools: Sequence[facts.PoolFacts] = ()) -> World:
    """The model's world for one cluster's resources. `cluster`: the declared facts of a cluster
    the program did not create; by default the recorded Cluster's, or a Standard cluster.
    `pools`: the node pools' facts, when the caller has them already."""
    cluster = cluster or facts.cluster_facts(resources)
    recorded = of_type(resources, NODE_POOL)
    pools = pools or [facts.pool_facts(r, cluster) for r in recorded]
    namespaces: dict[str, dict[str, str]] = {ns: {} for ns in naming.BUILTIN_NAMESPACES}
    for r in of_type(resources, NAMESPACE, NAMESPACE_PATCH):
        labels = as_dict(dig(r.props, "metadata", "labels"))
        namespaces[_meta(r)[0]] = {k: v for k, v in labels.items() if isinstance(v, str)}
    priorities = {}
    for r in of_type(resources, WORKLOAD_PRIORITY_CLASS):
        value = as_int(r.props.get("value"))
        if value is not None:
            priorities[_meta(r)[0]] = value
    local_queues = {}
    for r in of_type(resources, LOCAL_QUEUE):
        cq = dig(r.props, "spec", "clusterQueue")
        if isinstance(cq, str):
            name, namespace = _meta(r)
            local_queues[(namespace, name)] = cq
    autopilot = bool(cluster and cluster.autopilot)
    classes = computeclass.recorded_classes(resources)
    class_groups = [g for name, (_, ps) in classes.items() for g in computeclass.node_groups(name, ps, not autopilot)]
    return World(
        flavors={f.name: f for f in (Flavor.from_manifest(r.props) for r in of_type(resources, RESOURCE_FLAVOR)
                                     if well_formed(r.props))},
        queues={q.name: q for q in (ClusterQueue.from_manifest(r.props) for r in of_type(resources, CLUSTER_QUEUE)
                                    if well_formed(r.props))},
        local_queues=local_queues,
        namespaces=namespaces,
        node_groups=(*(node_group(r, pool) for r, pool in zip(recorded, pools)), *class_groups),
        autopilot=autopilot,
        auto_provisioning=bool(cluster and cluster.makes_nodes and not autopilot),
        wait_for_pods_ready=wait_for_pods_ready(resources),
        priorities=priorities,
        compute_classes={name: when for name, (when, _) in classes.items()},
        topologies=topologies(resources),
    )


def topologies(resources: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    """Kueue Topology -> its levels' node labels, widest first."""
    out = {}
    for r in of_type(resources, TOPOLOGY):
        levels = [as_dict(level).get("nodeLabel") for level in as_list(dig(r.props, "spec", "levels"))]
        out[_meta(r)[0]] = tuple(label for label in levels if isinstance(label, str))
    return out


def workload_manifests(resources: Sequence[Any]) -> list[list[Mapping[str, Any]]]:
    """The workloads' objects, one list per workload in registration order: a JobSet; a
    ProvisioningRequest with the PodTemplates it references and the Jobs whose pods consume it;
    any other Job."""
    templates = {tuple(reversed(_meta(r))): r.props for r in of_type(resources, POD_TEMPLATE)}
    # Each request's group first, so that a Job registered before its request still joins it.
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in of_type(resources, PROVISIONING_REQUEST):
        name, namespace = _meta(r)
        groups[(namespace, name)] = [
            templates[(namespace, ref)]
            for ps in as_list(dig(r.props, "spec", "podSets"))
            if isinstance(ref := dig(ps, "podTemplateRef", "name"), str) and (namespace, ref) in templates
        ] + [r.props]
    out: list[list[Mapping[str, Any]]] = []
    for r in resources:
        if is_type(r.type, JOBSET):
            out.append([r.props])
        elif is_type(r.type, PROVISIONING_REQUEST):
            name, namespace = _meta(r)
            out.append(groups[(namespace, name)])
        elif is_type(r.type, JOB):
            namespace = _meta(r)[1]
            consumed = {dig(t, "metadata", "annotations", CONSUME_ANNOTATION) for t in pod_templates("Job", r.props)}
            request = next((groups[(namespace, c)] for c in consumed if (namespace, c) in groups), None)
            if request is not None:
                request.append(r.props)
            else:
                out.append([r.props])
    return out


# What the model reads: node pools and these Kubernetes objects.
_READ = (NODE_POOL, COMPUTE_CLASS, NAMESPACE, NAMESPACE_PATCH, WORKLOAD_PRIORITY_CLASS, LOCAL_QUEUE, RESOURCE_FLAVOR, CLUSTER_QUEUE,
         ADMISSION_CHECK, JOB, JOBSET, PROVISIONING_REQUEST, POD_TEMPLATE)
# A node pool's inputs that name where it goes or what it runs as, which the model never reads
# and a program often passes as another resource's output (unknown until that one exists).
_UNREAD = frozenset({"cluster", "project", "location", "serviceAccount", "policyName"})


def _holds_unknown(value: Any) -> bool:
    if value == UNKNOWN:
        return True
    if isinstance(value, Mapping):
        return any(k not in _UNREAD and _holds_unknown(v) for k, v in value.items())
    return isinstance(value, (list, tuple)) and any(_holds_unknown(v) for v in value)


def unknowns(resources: Sequence[Any]) -> list[Any]:
    """The resources the model reads that hold a value only known after deploy (as `pulumi
    preview` sees another resource's output): what they mean for admission cannot be judged yet."""
    return [r for r in of_type(resources, *_READ) if _holds_unknown(r.props)]


def _subject(m: Mapping[str, Any], kind: str | None = None) -> Subject:
    meta = as_dict(m.get("metadata"))
    return (kind or str(m.get("kind", "")), str(meta.get("namespace") or "default"), str(meta.get("name", "")))


class Judgement:
    """The model's answers for one cluster's resources, computed once: the world, a verdict per
    workload (with the objects that make it), what runs when all are submitted at once, and
    every Problem."""

    def __init__(self, resources: Sequence[Any], cluster: facts.ClusterFacts | None = None):
        cluster = cluster or facts.cluster_facts(resources)
        self._pools = [facts.pool_facts(r, cluster) for r in of_type(resources, NODE_POOL)]
        # A custom ComputeClass's priorities: the pools GKE may create for it.
        self._class_pools = computeclass.class_pools(resources)
        self.world = world(resources, cluster, self._pools)
        multikueue = {
            _meta(r)[0] for r in of_type(resources, ADMISSION_CHECK) if dig(r.props, "spec", "controllerName") == MULTIKUEUE_CONTROLLER
        }
        # ClusterQueues that dispatch through MultiKueue: a worker cluster runs their workloads'
        # pods, this one (the manager) only creates and mirrors them (Kueue docs,
        # concepts/multikueue: "The worker cluster acts like a standalone Kueue cluster"), so
        # where they land is judged on the workers, not on this cluster's nodes.
        self.dispatched = {
            q.name for q in self.world.queues.values() if any(c in multikueue for cs in q.checks.values() for c in cs)
        }
        self.workloads: list[tuple[Workload, tuple[Subject, ...]]] = []
        for manifests in workload_manifests(resources):
            if not _well_formed_workload(manifests):
                continue
            wl = workload_from_manifests(manifests)
            # The API server refuses an object whose name or namespace is not a string.
            if wl is not None and isinstance(wl.name, str) and isinstance(wl.namespace, str):
                self.workloads.append((wl, tuple(_subject(m) for m in manifests)))

    @cached_property
    def capacity_types(self) -> dict[str, set[str]]:
        """flavor -> the provisioning models (config names) of the nodes it selects."""
        out = {}
        pools = [*self._pools, *self._class_pools]
        for name, flavor in self.world.flavors.items():
            found = facts.flavor_capacity(flavor.node_labels, pools) or set()
            out[name] = {facts.CONFIG_CAPACITY[c] for c in found}
        return out

    @cached_property
    def verdicts(self) -> list[Verdict]:
        return [judge(self.world, wl, self.capacity_types) for wl, _ in self.workloads]

    @cached_property
    def at_once(self) -> dict[str, Finding | None]:
        return simulate(self.world, self.verdicts)

    @cached_property
    def problems(self) -> list[Finding]:
        out = []
        for v in self.verdicts:
            refusal = v.refusal
            if refusal is None or (refusal.rule == placement.RULE and v.cluster_queue in self.dispatched):
                continue
            wl = v.workload
            where = f"{wl.kind} {wl.namespace}/{wl.name}"
            if v.cluster_queue:
                where += f" (LocalQueue {wl.local_queue} → ClusterQueue {v.cluster_queue})"
            out.append(replace(refusal, message=f"{where} can never run: {refusal.message}", subject=(wl.kind, wl.namespace, wl.name)))
        out += queue_problems(self.world)
        out += self._flavors_without_nodes()
        return out

    def _flavors_without_nodes(self) -> list[Finding]:
        """A queue's flavor whose nodeLabels no node carries: Kueue admits onto it and the pods
        never schedule (only where GKE makes no nodes of its own)."""
        w = self.world
        if w.autopilot or w.auto_provisioning:
            return []
        out = []
        modelled = {k for g in w.node_groups for k in g.labels}
        # Per flavor, not per queue's use of it: many queues share a few flavors.
        has_nodes: dict[str, bool] = {}
        for cq in w.queues.values():
            if cq.name in self.dispatched:
                continue
            for j, name in enumerate(cq.flavor_names):
                flavor = w.flavors.get(name)
                if flavor is None:
                    continue
                if name not in has_nodes:
                    spec = {"nodeSelector": dict(flavor.node_labels)}
                    keys = checked_keys(spec, modelled)
                    has_nodes[name] = any(selection.matches(spec, g.labels, keys=keys) for g in w.node_groups)
                if not has_nodes[name]:
                    labels = ", ".join(f"{k}={v}" for k, v in sorted(flavor.node_labels.items()))
                    out.append(Finding(
                        "flavor-nodes",
                        f"ResourceFlavor {name} selects nodes labelled {labels}, and no node pool's nodes carry "
                        "them: Kueue would admit work there that never schedules",
                        subject=("ClusterQueue", "", cq.name),
                        path=f"flavors[{j}]",
                    ))
        return out
