"""Workload rules: Jobs and JobSets go through Kueue at a known priority, only TPU pods of
Standard clusters reach into the node (privileged, host PID/IPC, hostPath, added
capabilities), and every image names one build.

Only Jobs and JobSets are workloads for the queue rules. Bare Pods are not (the Kueue webhook probe in
kueue-system is one), and a Job that consumes a ProvisioningRequest is GKE's path without
Kueue: it is exempt from the queue rules by name, below."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import images
from gke_ai_batch.domain import podtemplates
from gke_ai_batch.model import podsecurity
from gke_ai_batch.model.objects import PRIORITY_LABEL, QUEUE_LABEL

from .base import (
    CLUSTER,
    CRON_JOB,
    EMPTY,
    JOB,
    JOBSET,
    LOCAL_QUEUE,
    POD,
    POD_CONTROLLERS,
    POD_TEMPLATE,
    PRIORITY_CLASS,
    UNKNOWN,
    WORKLOAD_PRIORITY_CLASS,
    WORKLOADS,
    Resource,
    as_dict,
    as_list,
    describe,
    dig,
    is_type,
    k8s_labels,
    k8s_name,
    k8s_namespace,
    of_type,
)
from gke_ai_batch.domain.podtemplates import CONSUME_ANNOTATION
from gke_ai_batch.model.facts import is_autopilot


# Every kind that carries a pod template: a rule on pods that skipped one would pass a
# Deployment's pods that it refuses in a Job's.
POD_TYPES = (*WORKLOADS, POD, POD_TEMPLATE, CRON_JOB, *POD_CONTROLLERS)
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def pod_templates(type_: str, props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod templates of a recorded resource of POD_TYPES (gke_ai_batch/domain/podtemplates.py
    reads them; the type token's last part is the kind)."""
    if not is_type(type_, *POD_TYPES):
        return []
    return podtemplates.pod_templates(type_.rpartition(":")[2], props)


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for key in CONTAINER_LISTS for c in as_list(spec.get(key)) if isinstance(c, Mapping)]


def consumes_provisioning_request(type_: str, props: Mapping[str, Any]) -> bool:
    """A Job on GKE's ProvisioningRequest path without Kueue: its pods land on nodes provisioned
    for a named request, so it is deliberately not queue-managed."""
    return is_type(type_, JOB) and any(
        dig(t, "metadata", "annotations", CONSUME_ANNOTATION) for t in pod_templates(type_, props)
    )


def queue_managed(r: Resource) -> bool:
    return is_type(r.type, *WORKLOADS) and not consumes_provisioning_request(r.type, r.props)


def workload_queue_label(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if consumes_provisioning_request(type_, props):
        return
    if not k8s_labels(props).get(QUEUE_LABEL):
        yield (
            f"{describe(type_, props)} has no {QUEUE_LABEL} label: Kueue ignores it, so it would start at once "
            "outside every quota; label it with the team's LocalQueue"
        )


def workload_known_queue(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    local_queues = {(k8s_namespace(q.props), k8s_name(q)) for q in of_type(resources, LOCAL_QUEUE)}
    for wl in filter(queue_managed, resources):
        queue = k8s_labels(wl.props).get(QUEUE_LABEL)
        if not isinstance(queue, str) or not queue or queue == UNKNOWN:
            continue  # workload-queue-label reports a missing label
        namespace = k8s_namespace(wl.props)
        if (namespace, queue) not in local_queues:
            known = sorted(name for ns, name in local_queues if ns == namespace)
            yield (
                wl.urn,
                (
                    f"{describe(wl.type, wl.props)} names LocalQueue {queue!r}, which this stack does not create in "
                    f"namespace {namespace} (it has: {', '.join(known) or 'none'}); Kueue would hold it as inadmissible"
                ),
            )


def workload_known_priority(
    resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY
) -> Iterator[tuple[str, str]]:
    """A workload without a priority is fine (Kueue and kube-scheduler use 0); one that names a
    priority must name a class the stack creates, or Kueue rejects it and the API server
    refuses its pods."""
    workload_classes = {k8s_name(r) for r in of_type(resources, WORKLOAD_PRIORITY_CLASS)}
    pod_classes = {k8s_name(r) for r in of_type(resources, PRIORITY_CLASS)}
    for wl in of_type(resources, *WORKLOADS):
        what = describe(wl.type, wl.props)
        label = k8s_labels(wl.props).get(PRIORITY_LABEL)
        if label and label != UNKNOWN and label not in workload_classes:
            yield (
                wl.urn,
                (
                    f"{what}: label {PRIORITY_LABEL}={label} names no WorkloadPriorityClass of this stack "
                    f"(known: {', '.join(sorted(workload_classes)) or 'none'})"
                ),
            )
        for name in sorted(
            {dig(t, "spec", "priorityClassName") for t in pod_templates(wl.type, wl.props)} - {None, ""}
        ):
            if name != UNKNOWN and name not in pod_classes:
                yield (
                    wl.urn,
                    (
                        f"{what}: priorityClassName {name} names no PriorityClass of this stack "
                        f"(known: {', '.join(sorted(pod_classes)) or 'none'})"
                    ),
                )


# The Pod Security baseline checks that reach the node's processes, files or kernel. Host
# networking and host ports reach only its network; multi-host TPU slices use both, and they
# stay with the namespace's Pod Security level (namespace-pod-security).
NODE_ACCESS = {"Privileged Containers", "Capabilities", "HostPath Volumes"}
NODE_NAMESPACES = ("spec.hostPID", "spec.hostIPC")


def node_access(spec: Mapping[str, Any]) -> list[podsecurity.Violation]:
    """What in a pod spec reaches into its node, as Pod Security admission judges it
    (gke_ai_batch/model/podsecurity.py, after k8s.io/pod-security-admission/policy)."""
    return [
        v for v in podsecurity.violations(spec, "baseline")
        if v.rule in NODE_ACCESS or (v.rule == "Host Namespaces" and v.path in NODE_NAMESPACES)
    ]


def workload_privileged_tpu_only(
    resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY
) -> Iterator[tuple[str, str]]:
    """Node access (privileged containers, host PID or IPC, hostPath volumes, capabilities
    beyond the baseline set) is for TPU device access on Standard nodes (GKE before 1.28): the
    pod must select TPU nodes, and Autopilot admits no privileged pods at all. Every kind with
    a pod template counts, so that a Deployment or CronJob cannot carry what a Job may not."""
    autopilot = any(is_autopilot(c.props) for c in of_type(resources, CLUSTER))
    for wl in of_type(resources, *POD_TYPES):
        for template in pod_templates(wl.type, wl.props):
            spec = as_dict(template.get("spec"))
            found = node_access(spec)
            if not found:
                continue
            what = describe(wl.type, wl.props)
            if not _selects_tpu(spec):
                yield (
                    wl.urn,
                    (
                        f"{what} reaches into its node ({'; '.join(v.render() for v in found)}) without selecting TPU nodes "
                        f"({catalogue.TPU_ACCELERATOR_LABEL}); privileged containers, host PID/IPC, hostPath volumes "
                        "and added capabilities are allowed only for TPU device access"
                    ),
                )
            privileged = [
                str(c.get("name", "?")) for c in containers(spec) if dig(c, "securityContext", "privileged") is True
            ]
            if autopilot and privileged:
                yield (
                    wl.urn,
                    f"{what} runs privileged container(s) {', '.join(privileged)} on an Autopilot cluster, which "
                    "rejects privileged pods; drop privileged",
                )


def _selects_tpu(spec: Mapping[str, Any]) -> bool:
    if dig(spec, "nodeSelector", catalogue.TPU_ACCELERATOR_LABEL):
        return True
    terms = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    return bool(terms) and all(
        any(dig(e, "key") == catalogue.TPU_ACCELERATOR_LABEL for e in as_list(dig(t, "matchExpressions")))
        for t in as_list(terms)
    )


def image_pinned(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    """Every container image names one build. Untagged means :latest to the runtime, and
    :latest moves: the pods of one multi-host slice can start different code. With
    requireDigest (production), a tag is not enough either: a registry lets a tag be pushed
    again, a digest names content."""
    for template in pod_templates(type_, props):
        spec = as_dict(template.get("spec"))
        for c in containers(spec):
            image = c.get("image")
            if not isinstance(image, str) or image == UNKNOWN:
                continue
            what = f"{describe(type_, props)} container {c.get('name', '?')}"
            problem = images.pin_problem(image)
            if problem is not None:
                yield f"{what}: {problem}"
            elif config.get("requireDigest") and not images.has_digest(image):
                yield (
                    f"{what}: {image!r} is pinned by tag only; this stack requires digests "
                    "(image@sha256:<64 hex digits>), since a tag can be pushed again"
                )
