"""Sample workloads as manifests. Pod specs derive from the target: nodeSelector, accelerator
limits, tolerations, and host networking for multi-host TPU slices on Standard clusters."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import naming
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.config.workloads import JobSetWorkload, JobWorkload, ProvisioningRequestWorkload
from gke_ai_batch.model import podsecurity
from gke_ai_batch.model.objects import EXCLUSIVE_ANNOTATION, PRIORITY_LABEL, QUEUE_LABEL  # noqa: F401 (re-exported)
from gke_ai_batch.domain.podtemplates import CONSUME_ANNOTATION, pod_templates
from gke_ai_batch.plan import topology
from gke_ai_batch.plan import checkpoints
from gke_ai_batch.plan.kueue import PROVISIONING_CLASS

# pulumi-kubernetes waits for a Job to complete; a queued sample may wait for hours.
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
MAX_RUN_ANNOTATION = "provreq.kueue.x-k8s.io/maxRunDurationSeconds"
CLASS_ANNOTATION = "cluster-autoscaler.kubernetes.io/provisioning-class-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


@dataclass(frozen=True)
class Target:
    """What a workload's pods run on, resolved from a pool entry or a bare shape."""

    node_selector: dict[str, str]
    accelerator: dict[str, int]  # resource -> per pod
    tolerations: list[dict[str, str]]
    vms: int  # pods per slice (multi-host TPU) or 1
    multi_host: bool
    host_network: bool
    tpu: bool


@dataclass(frozen=True)
class WorkloadPlan:
    name: str
    kind: str
    namespace: str
    manifests: list[dict[str, Any]]  # in creation order
    queue: str | None
    priority: str | None
    target: Target
    image: str
    checkpoints: bool = False  # mounts its team's checkpoint bucket


def plan_workloads(cfg: StackConfig, project: str = "my-project") -> list[WorkloadPlan]:
    plans = [_plan(cfg, wl) for wl in cfg.workloads]
    for wl, plan in zip(cfg.workloads, plans):
        _mount_checkpoints(cfg, wl, plan.manifests, project)
        topology.annotate(wl, plan.manifests)
    return plans


def _mount_checkpoints(cfg: StackConfig, wl, manifests: list[dict[str, Any]], project: str) -> None:
    """Every pod template of a workload that mounts its team's checkpoint bucket gets the FUSE
    annotations, the volume and the team's service account (gke_ai_batch/plan/checkpoints.py)."""
    annotations = checkpoints.pod_annotations(wl)
    if not annotations:
        return
    for manifest in manifests:
        for template in pod_templates(manifest.get("kind", ""), manifest):
            template.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
            checkpoints.mount(cfg, wl, template["spec"], project)


def resolve_target(cfg: StackConfig, wl) -> Target:
    if wl.pool is not None:
        entry = cfg.pool(wl.pool)
        taints = naming.pool_taints(entry)
        tolerations = [_toleration(t) for t in taints]
        if entry.tpu is not None:
            tslice = entry.tpu.slice
            # Same shape may exist on other capacity; GKE's own label pins this one.
            selector = {**tslice.node_labels, **naming.gke_capacity_labels(entry.capacity)}
            return Target(
                node_selector=selector,
                accelerator={catalogue.TPU_RESOURCE: tslice.chips_per_vm},
                tolerations=tolerations,
                vms=tslice.vms,
                multi_host=tslice.multi_host,
                host_network=cfg.uses_host_network(wl),
                tpu=True,
            )
        accel = {catalogue.GPU_RESOURCE: entry.gpu.count} if entry.gpu else {}
        return Target({catalogue.NODEPOOL_LABEL: entry.name}, accel, tolerations, 1, False, False, False)
    if wl.tpu is not None:
        tslice = wl.tpu.slice
        return Target(
            node_selector=dict(tslice.node_labels),
            accelerator={catalogue.TPU_RESOURCE: tslice.chips_per_vm},
            tolerations=[],
            vms=tslice.vms,
            multi_host=tslice.multi_host,
            host_network=cfg.uses_host_network(wl),
            tpu=True,
        )
    if wl.gpu is not None:
        return Target(
            {catalogue.GPU_ACCELERATOR_LABEL: wl.gpu.type}, {catalogue.GPU_RESOURCE: wl.gpu.count}, [], 1, False, False, False
        )
    return Target({}, {}, [], 1, False, False, False)


def _toleration(taint: dict[str, str]) -> dict[str, str]:
    if taint["value"]:
        return {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
    return {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}


def namespace_level(cfg: StackConfig, namespace: str) -> str:
    """The Pod Security level of a team namespace (its teams agree: gke_ai_batch/config/stack.py)."""
    return next((t.pod_security for t in cfg.teams if t.namespace == namespace), "baseline")


def _pod_spec(cfg: StackConfig, wl, target: Target, restart_policy: str = "Never") -> dict[str, Any]:
    resources = {**target.accelerator, **wl.resources}
    # In a restricted namespace the pods carry the restricted profile's fields (a privileged
    # container cannot: the API server refuses privileged with allowPrivilegeEscalation false,
    # and the pod security check refuses the workload anyway).
    harden = namespace_level(cfg, wl.team) == "restricted" and not wl.privileged
    container: dict[str, Any] = {"name": wl.container_name or wl.name, "image": wl.image}
    if wl.command:
        container["command"] = list(wl.command)
    if wl.args:
        container["args"] = list(wl.args)
    if wl.ports:
        container["ports"] = [{"containerPort": p} for p in wl.ports]
    if wl.privileged:
        container["securityContext"] = {"privileged": True}
    elif harden:
        container["securityContext"] = copy.deepcopy(podsecurity.RESTRICTED_CONTAINER_CONTEXT)
    if resources:
        container["resources"] = {"requests": dict(resources), "limits": dict(resources)}
    spec: dict[str, Any] = {"restartPolicy": restart_policy}
    if target.node_selector:
        spec["nodeSelector"] = dict(target.node_selector)
    if target.tolerations:
        spec["tolerations"] = [dict(t) for t in target.tolerations]
    if target.host_network:
        # Multi-host TPU slices talk over the host network (TPU runtime ports 8471/8431).
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if wl.priority:
        spec["priorityClassName"] = wl.priority
    if harden:
        spec["securityContext"] = copy.deepcopy(podsecurity.RESTRICTED_POD_CONTEXT)
    spec["containers"] = [container]
    return spec


def _kueue_metadata(cfg: StackConfig, wl, annotations: dict[str, str]) -> dict[str, Any]:
    team = cfg.team_queue(wl)
    labels = {**wl.labels, QUEUE_LABEL: team.local_queue}
    if wl.priority:
        labels[PRIORITY_LABEL] = wl.priority
    return {
        "name": wl.name,
        "namespace": wl.team,
        "labels": labels,
        "annotations": {**annotations, **SKIP_AWAIT},
    }


def _plan(cfg: StackConfig, wl) -> WorkloadPlan:
    target = resolve_target(cfg, wl)
    if isinstance(wl, JobSetWorkload):
        manifests = [_jobset(cfg, wl, target)]
        queue = cfg.team_queue(wl).local_queue
    elif isinstance(wl, JobWorkload):
        manifests = _job(cfg, wl, target)
        queue = cfg.team_queue(wl).local_queue
    else:
        manifests = _provisioning_request(cfg, wl, target)
        queue = None
    return WorkloadPlan(
        wl.name, wl.kind, wl.team, manifests, queue, wl.priority, target, wl.image, wl.checkpoints is not None
    )


def _jobset(cfg: StackConfig, wl: JobSetWorkload, target: Target) -> dict[str, Any]:
    annotations = {EXCLUSIVE_ANNOTATION: catalogue.NODEPOOL_LABEL} if wl.exclusive_placement else {}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": _kueue_metadata(cfg, wl, annotations),
        "spec": {
            "failurePolicy": {
                "maxRestarts": wl.failure_policy.max_restarts,
                "restartStrategy": wl.failure_policy.restart_strategy,
            },
            "replicatedJobs": [
                {
                    "name": "slice",
                    "replicas": wl.slices,
                    "template": {
                        "spec": {
                            "parallelism": target.vms,
                            "completions": target.vms,
                            "backoffLimit": 0,
                            "template": {"spec": _pod_spec(cfg, wl, target)},
                        }
                    },
                }
            ],
        },
    }


def _job(cfg: StackConfig, wl: JobWorkload, target: Target) -> list[dict[str, Any]]:
    annotations = {}
    if wl.max_run_duration_seconds is not None:
        annotations[MAX_RUN_ANNOTATION] = str(wl.max_run_duration_seconds)
    parallelism = wl.parallelism or target.vms
    completions = wl.completions or parallelism
    indexed = wl.indexed if wl.indexed is not None else target.multi_host
    spec: dict[str, Any] = {"parallelism": parallelism, "completions": completions}
    if indexed:
        spec["completionMode"] = "Indexed"
    backoff = wl.backoff_limit if wl.backoff_limit is not None else (0 if target.multi_host else None)
    if backoff is not None:
        spec["backoffLimit"] = backoff
    # Kueue's webhook suspends a queued Job anyway; saying so keeps it suspended if the
    # webhook were ever bypassed.
    spec["suspend"] = True
    pod = _pod_spec(cfg, wl, target, wl.restart_policy)
    manifests = []
    if target.multi_host:
        service = f"{wl.name}-hosts"
        pod = {"subdomain": service, **pod}
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": service, "namespace": wl.team},
                "spec": {"clusterIP": "None", "selector": {JOB_NAME_LABEL: wl.name}},
            }
        )
    spec["template"] = {"spec": pod}
    manifests.append(
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": _kueue_metadata(cfg, wl, annotations), "spec": spec}
    )
    return manifests


def _provisioning_request(cfg: StackConfig, wl: ProvisioningRequestWorkload, target: Target) -> list[dict[str, Any]]:
    template_name = f"{wl.name}-pods"
    pod = _pod_spec(cfg, wl, target)
    request_spec: dict[str, Any] = {
        "provisioningClassName": PROVISIONING_CLASS,
        "podSets": [{"count": wl.count, "podTemplateRef": {"name": template_name}}],
    }
    if wl.max_run_duration_seconds is not None:
        request_spec["parameters"] = {"maxRunDurationSeconds": str(wl.max_run_duration_seconds)}
    return [
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": template_name, "namespace": wl.team},
            "template": {"spec": pod},
        },
        {
            "apiVersion": "autoscaling.x-k8s.io/v1",
            "kind": "ProvisioningRequest",
            "metadata": {"name": wl.name, "namespace": wl.team, "annotations": dict(SKIP_AWAIT)},
            "spec": request_spec,
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": wl.name,
                "namespace": wl.team,
                **({"labels": dict(wl.labels)} if wl.labels else {}),
                "annotations": dict(SKIP_AWAIT),
            },
            "spec": {
                "parallelism": wl.count,
                "completions": wl.count,
                "template": {
                    "metadata": {
                        "annotations": {CONSUME_ANNOTATION: wl.name, CLASS_ANNOTATION: PROVISIONING_CLASS}
                    },
                    "spec": pod,
                },
            },
        },
    ]
