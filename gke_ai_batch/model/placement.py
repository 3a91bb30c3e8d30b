"""Can kube-scheduler place a pod set's pods on the cluster's nodes, all at once?

Pods get what Kueue injects at admission: the assigned flavors' nodeLabels join the pod's
nodeSelector and their tolerations join the pod's (kueue v0.19.2
pkg/podset/podset.go:Merge / FromAssignment). A node then has to pass kube-scheduler's filters
(kubernetes pkg/scheduler/framework/plugins): NodeAffinity (nodeSelector and required node
affinity), TaintToleration (NoSchedule/NoExecute taints tolerated) and NodeResourcesFit (every
request within the node's allocatable; extended resources such as google.com/tpu and
nvidia.com/gpu count like cpu).

Beyond one pod, a workload has to fit as a whole:
- JobSet exclusive placement (annotation alpha.jobset.sigs.k8s.io/exclusive-topology:
  cloud.google.com/gke-nodepool) gives each replicated-job replica a node pool of its own
  (jobset pkg/webhooks/pod_mutating_webhook.go, pod_admission_webhook.go): replicas need as many
  matching pools, each able to hold one replica's pods.
- A multi-host TPU slice runs one pod per host, all of them together: a replica (or a Job) on
  such a slice has as many pods as the slice has hosts (GKE "Plan TPUs in GKE", multi-host
  slices; JAX's distributed init waits for every host).
- Kueue's waitForPodsReady (on by default since v0.19) evicts an admitted workload whose pods
  are not all ready within the timeout, so the pod set must fit the nodes at once or it is
  admitted, evicted and requeued for ever."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gke_ai_batch.domain import catalogue, gcsfuse, naming
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.model import selection
from gke_ai_batch.model.objects import Flavor, NodeGroup, PodSet, World
from gke_ai_batch.model.outcome import Mode
from gke_ai_batch.model.requests import pod_requests, scheduled_pod_requests, show

GPU_LABEL = catalogue.GPU_ACCELERATOR_LABEL
TPU_LABEL = catalogue.TPU_ACCELERATOR_LABEL
COMPUTE_CLASS_LABEL = naming.COMPUTE_CLASS_LABEL
# kubelet's default --max-pods on GKE Standard nodes (GKE "Configure maximum Pods per node").
MAX_PODS_PER_NODE = 110


RULE = "placement"
"""The rule id of a pod set kube-scheduler could never place."""


@dataclass(frozen=True)
class Placement:
    """Where a pod set's pods can go: the node pools that take them (and how many per node),
    why the others cannot, and either why none ever will (`refusal`) or a note on how they
    are placed (waves, nodes GKE creates)."""

    pod_set: str
    groups: Sequence[str] = ()  # node pools that can take its pods
    per_node: Mapping[str, int] = field(default_factory=dict)
    misses: Sequence[str] = ()  # why the other pools cannot
    refusal: Finding | None = None
    note: str | None = None  # placement not checked, and why

    @property
    def mode(self) -> Mode:
        return Mode.NO_FIT if self.refusal is not None else Mode.FIT


def injected_spec(spec: Mapping[str, Any], flavors: list[Flavor]) -> dict[str, Any]:
    """The pod as the scheduler sees it: Kueue's injected flavor labels and tolerations, and
    the toleration the ExtendedResourceToleration admission plugin (on in GKE: "GKE adds the
    tolerations to Pods that request GPUs", concepts/gpus; kubernetes PR #55839) adds for each
    extended resource the pod requests (google.com/tpu, nvidia.com/gpu)."""
    out = dict(spec)
    selector = dict(spec.get("nodeSelector") or {})
    tolerations = list(spec.get("tolerations") or ())
    for f in flavors:
        selector.update(f.node_labels)
        tolerations += [t for t in f.tolerations if t not in tolerations]
    for r in pod_requests(spec):
        if "/" in r and not r.startswith(("kubernetes.io/", "requests.")):
            tolerations.append({"key": r, "operator": "Exists", "effect": "NoSchedule"})
    out["nodeSelector"] = selector
    out["tolerations"] = tolerations
    return out


# Label domains kubelet and GKE set on every node (zone, hostname, arch, instance type, ...):
# the model enumerates the ones it derives decisions from; a selector on another key of these
# domains is taken as met rather than refused on what the model does not know.
WELL_KNOWN_DOMAINS = ("kubernetes.io/", "node.kubernetes.io/", "topology.kubernetes.io/", "topology.gke.io/",
                      "beta.kubernetes.io/", "failure-domain.beta.kubernetes.io/", "cloud.google.com/")


def checked_keys(spec: Mapping[str, Any], modelled: set[str]) -> set[str]:
    keys = set(spec.get("nodeSelector") or {}) | {e.get("key") for t in selection.required_terms(spec) for e in t}
    return {k for k in keys if k in modelled or not k.startswith(WELL_KNOWN_DOMAINS)}


def fits_node(
    spec: Mapping[str, Any], requests: Mapping[str, int], group: NodeGroup, modelled: set[str] | None = None
) -> tuple[int, str | None]:
    """How many of these pods one node of the group holds, or 0 and why not."""
    keys = checked_keys(spec, modelled if modelled is not None else set(group.labels))
    if not selection.matches(spec, group.labels, keys=keys):
        wanted = {k: v for k, v in (spec.get("nodeSelector") or {}).items() if group.labels.get(k) != v}
        what = ", ".join(f"{k}={v}" for k, v in sorted(wanted.items())) or "the required node affinity"
        return 0, f"{group.name}: nodes lack {what}"
    taint = selection.untolerated(group.taints, spec.get("tolerations") or ())
    if taint is not None:
        return 0, f"{group.name}: taint {selection.taint_text(taint)} is not tolerated"
    per_node = MAX_PODS_PER_NODE
    for r, need in requests.items():
        if need <= 0:
            continue
        if r not in group.allocatable and "/" not in r:
            continue  # a core resource the catalogue does not size (ephemeral-storage, hugepages): unchecked
        have = group.allocatable.get(r, 0)  # an extended resource the node lacks is 0
        if need > have:
            return 0, (
                f"{group.name}: a pod requests {show(r, need)} {r}, a {group.machine_type} node has "
                f"{show(r, have)} allocatable"
            )
        per_node = min(per_node, have // need)
    return per_node, None


def place(world: World, ps: PodSet, flavors: list[Flavor], exclusive_key: str | None) -> Placement:
    spec = injected_spec(ps.spec, flavors)
    requests = scheduled_pod_requests(ps.spec, ps.annotations)
    groups: list[str] = []
    per_node: dict[str, int] = {}
    misses: list[str] = []

    def refused(message: str) -> Placement:
        return Placement(ps.name, tuple(groups), per_node, tuple(misses), refusal=Finding(RULE, message))

    def noted(note: str | None = None) -> Placement:
        return Placement(ps.name, tuple(groups), per_node, tuple(misses), note=note)

    chosen = (spec.get("nodeSelector") or {}).get(COMPUTE_CLASS_LABEL)
    custom = chosen if chosen in world.compute_classes else None
    if custom is not None and world.autopilot:
        clash = [k for k in spec.get("nodeSelector") or {} if k in naming.COMPUTE_CLASS_FIELD_LABELS]
        if clash:
            fields = ", ".join(f"{k} ({naming.COMPUTE_CLASS_FIELD_LABELS[k]})" for k in clash)
            return refused(
                f"its pods select ComputeClass {custom} and the system node label{'s' if len(clash) > 1 else ''} "
                f"{fields}, which the ComputeClass decides, and GKE rejects such Pods (about-custom-compute-classes, "
                "\"Node selectors for system node labels\"): let the class's priorities choose it (a sample on a "
                "ComputeClass flavor names no gpu or tpu shape; its requests say how many)"
            )
    if world.autopilot and custom is None:
        return _autopilot(ps.name, spec, requests)
    modelled = {k for g in world.node_groups for k in g.labels}
    for g in world.node_groups:
        fit, why = fits_node(spec, requests, g, modelled)
        if why:
            misses.append(why)
        else:
            groups.append(g.name)
            per_node[g.name] = fit
    if not groups:
        if custom is not None and world.compute_classes[custom] == "DoNotScaleUp":
            # GKE creates nodes for the class only as its priorities say (whenUnsatisfiable
            # DoNotScaleUp: "GKE doesn't create nodes", concepts/about-custom-compute-classes).
            mine = [m for m in misses if m.startswith(f"ComputeClass {custom}[")]
            return refused(f"no priority of ComputeClass {custom} can run its pods: " + "; ".join(
                mine or ["it has no priorities"]
            ))
        if custom is not None:
            return noted(f"no priority of ComputeClass {custom} fits; with whenUnsatisfiable ScaleUpAnyway GKE creates other nodes")
        if world.auto_provisioning:
            return noted("no node pool fits; node auto-provisioning may create one")
        error = "no node pool can run its pods: " + "; ".join(misses or ["the cluster has no node pools"])
        sidecar = gcsfuse.sidecar_requests(ps.annotations)
        if sidecar:
            error += (
                f" (each pod's requests include the {gcsfuse.SIDECAR_NAME} container GKE adds for its "
                f"{gcsfuse.VOLUMES_ANNOTATION} annotation: " + ", ".join(f"{r} {q}" for r, q in sidecar.items()) + ")"
            )
        return refused(error)
    by_name = {g.name: g for g in world.node_groups}
    matched = [by_name[n] for n in groups]
    takes_chips = requests.get(catalogue.TPU_RESOURCE, 0) > 0
    for g in matched:
        if takes_chips and g.slice_hosts and g.slice_hosts > 1 and ps.pods_per_replica % g.slice_hosts:
            return refused(
                f"{g.name} is a multi-host TPU slice of {g.slice_hosts} hosts that runs one pod per host, all "
                f"together; {ps.pods_per_replica} pods per {'replica' if ps.replicas > 1 or exclusive_key else 'Job'} "
                f"would leave the slice {'short' if ps.pods_per_replica < g.slice_hosts else 'split'}: use "
                f"{g.slice_hosts} (parallelism = completions = hosts)"
            )
    if exclusive_key:
        homes = [g for g in matched if per_node[g.name] * g.nodes >= ps.pods_per_replica]
        # GKE creates a node pool of an auto-created shape for each replica that needs one.
        if len(homes) < ps.replicas and not any(g.auto_created for g in homes):
            return refused(
                f"exclusive placement ({exclusive_key}) puts each of its {ps.replicas} replicas on a node pool of "
                f"its own, and only {len(homes)} pool{'s' if len(homes) != 1 else ''} can hold a replica of "
                f"{ps.pods_per_replica} pods ({', '.join(g.name for g in homes) or 'none'})"
            )
        return noted()
    room = sum(per_node[g.name] * g.nodes for g in matched)
    if room < ps.count:
        if all(g.capacity == "queued" for g in matched):
            # A ProvisioningRequest is all or nothing: GKE provisions every pod's node or none
            # (GKE "Dynamic Workload Scheduler", provisioningrequest).
            return refused(
                f"queued provisioning creates the nodes of all {ps.count} pods at once or none, and the pools "
                f"that fit them hold at most {room} ({', '.join(groups)})"
            )
        # Kueue's PodsReady counts succeeded pods as well as ready ones
        # (pkg/controller/jobs/job/job_controller.go PodsReady), so pods may run in waves.
        return noted(f"runs in waves: at most {room} of its {ps.count} pods at once")
    return noted()


def _autopilot(pod_set: str, spec: Mapping[str, Any], requests: Mapping[str, int]) -> Placement:
    """Autopilot makes a node for each pod's nodeSelector, within the requests its compute
    classes accept (gke_ai_batch/domain/autopilot.py cites GKE's "Autopilot resource requests")."""
    from gke_ai_batch.domain import autopilot

    selector = spec.get("nodeSelector") or {}
    accelerator = selector.get(GPU_LABEL) or selector.get(TPU_LABEL)
    count = requests.get(catalogue.GPU_RESOURCE, 0) or requests.get(catalogue.TPU_RESOURCE, 0)
    problems = autopilot.autopilot_problems(
        accelerator, count, requests.get("cpu", 0), requests.get("memory", 0),
        selector.get(COMPUTE_CLASS_LABEL, "general-purpose").lower() if accelerator is None else "general-purpose",
    )
    if problems:
        return Placement(pod_set, refusal=Finding(RULE, "Autopilot would not run its pods: " + "; ".join(problems)))
    return Placement(pod_set, note="Autopilot creates a node for each pod")
