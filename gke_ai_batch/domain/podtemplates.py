"""Where the pods of a Kubernetes object are: its pod templates, and a workload's pod sets.

One parser for the admission model (gke_ai_batch/model/objects.py), the policy pack
(gke_ai_batch/policy/rules/workloads.py) and synth's report, so that what one counts the others count.
Standard library only; it reads rendered manifests and recorded properties alike, and a
malformed object yields no template rather than an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Kinds whose spec.template is a pod template (k8s.io/api batch/v1 JobSpec, apps/v1
# DeploymentSpec, StatefulSetSpec, DaemonSetSpec, ReplicaSetSpec, core/v1
# ReplicationControllerSpec).
POD_CONTROLLER_KINDS = ("Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController")
# The pod annotation by which pods consume a ProvisioningRequest's capacity (GKE docs,
# how-to/provisioningrequest; kubernetes/autoscaler cluster-autoscaler/apis/provisioningrequest).
CONSUME_ANNOTATION = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        obj = _dict(obj).get(key)
    return obj


def pod_templates(kind: str, obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod templates of an object (the object's body: spec, metadata...): a Job's, a
    Deployment's and the other controllers' spec.template, a CronJob's Job's
    (spec.jobTemplate.spec.template), a JobSet's replicated jobs' (JobSet API
    jobset.x-k8s.io/v1alpha2 ReplicatedJob.template is a JobTemplateSpec); a Pod is its own and
    a PodTemplate has one (template)."""
    if kind in POD_CONTROLLER_KINDS:
        return [_dict(_dig(obj, "spec", "template"))]
    if kind == "CronJob":
        return [_dict(_dig(obj, "spec", "jobTemplate", "spec", "template"))]
    if kind == "Pod":
        return [obj]
    if kind == "PodTemplate":
        return [_dict(_dict(obj).get("template"))]
    if kind == "JobSet":
        return [_dict(_dig(rj, "template", "spec", "template")) for rj in _list(_dig(obj, "spec", "replicatedJobs"))]
    return []


@dataclass(frozen=True)
class PodSet:
    name: str
    spec: Mapping[str, Any]  # the pod template's spec
    replicas: int  # JobSet replicated-job replicas; 1 for a Job
    pods_per_replica: int
    # The pod template's annotations: admission webhooks act on them when the pods are created
    # (the Cloud Storage FUSE sidecar: gke_ai_batch/domain/gcsfuse.py), after Kueue counted the
    # template.
    annotations: Mapping[str, Any] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return self.replicas * self.pods_per_replica


def job_pods(spec: Mapping[str, Any]) -> int:
    """Kueue's pod count for a Job: parallelism, capped by completions
    (pkg/controller/jobs/job/job_controller.go:podsCount; jobset_controller.go:PodsCountPerReplica).
    Kubernetes runs no more either: "the actual number of pods running in steady state will be
    less than this number when ((.spec.completions - .status.successful) < .spec.parallelism)"
    (JobSpec.parallelism, k8s.io/api batch/v1 types.go), and its Job validation sets no bound
    between the two, so parallelism above completions is valid."""
    parallelism = spec.get("parallelism", 1)
    completions = spec.get("completions", parallelism)
    return min(parallelism, completions)


def _annotations(template: Mapping[str, Any]) -> Mapping[str, Any]:
    return _dict(_dig(template, "metadata", "annotations"))


def workload_pod_sets(manifests: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], tuple[PodSet, ...]] | None:
    """The object that makes a sample workload's pods and its pod sets: a JobSet (one pod set
    per replicated job), else a ProvisioningRequest (one per podSet, from the PodTemplate it
    references; the Job that consumes it runs on what it provisioned, so its pods are these),
    else a Job. None when nothing there runs pods."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for m in manifests:
        by_kind.setdefault(m.get("kind", ""), []).append(m)
    if "JobSet" in by_kind:
        m = by_kind["JobSet"][0]
        return m, tuple(
            PodSet(rj["name"], rj["template"]["spec"]["template"].get("spec") or {}, rj.get("replicas", 1),
                   job_pods(rj["template"]["spec"]), _annotations(rj["template"]["spec"]["template"]))
            for rj in m["spec"].get("replicatedJobs") or ()
        )
    if "ProvisioningRequest" in by_kind:
        request = by_kind["ProvisioningRequest"][0]
        templates = {t["metadata"]["name"]: t for t in by_kind.get("PodTemplate", ())}
        pod_sets = []
        for i, ps in enumerate(request["spec"].get("podSets") or ()):
            template = templates.get(ps["podTemplateRef"]["name"])
            if template is not None:
                pod_sets.append(PodSet(f"podset-{i}", template["template"].get("spec") or {}, 1, ps.get("count", 1),
                                       _annotations(template["template"])))
        return request, tuple(pod_sets)
    if "Job" in by_kind:
        m = by_kind["Job"][0]
        return m, (PodSet("main", m["spec"]["template"].get("spec") or {}, 1, job_pods(m["spec"]),
                          _annotations(m["spec"]["template"])),)
    return None
