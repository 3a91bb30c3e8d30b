"""How a registered resource reads, wherever it was recorded (synth's engine, CrossGuard's
PolicyResource, or a plan's objects in the same shape): the type tokens of what the library
registers and tolerant readers for property trees that may be partial or hold values only known
after deploy. The admission model (gke_ai_batch/model/recorded.py) and the policy pack read
resources through these."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

# How synth records a value that is only known after deploy, and what the CrossGuard adapter
# turns the SDK's unknown sentinels into, so that rules see one marker on both paths.
UNKNOWN = "[unknown]"

EMPTY: Mapping[str, Any] = {}

# The root stack resource: its properties in a stack policy are the program's exports.
STACK = "pulumi:pulumi:Stack"
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
GCP_SERVICE_ACCOUNT = "gcp:serviceaccount/account:Account"
HELM_RELEASES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
# Kueue and JobSet objects match any API version, so a version bump cannot silently switch a rule off.
RESOURCE_FLAVOR = "kubernetes:kueue.x-k8s.io/*:ResourceFlavor"
TOPOLOGY = "kubernetes:kueue.x-k8s.io/*:Topology"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/*:ClusterQueue"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/*:LocalQueue"
ADMISSION_CHECK = "kubernetes:kueue.x-k8s.io/*:AdmissionCheck"
MULTIKUEUE_CLUSTER = "kubernetes:kueue.x-k8s.io/*:MultiKueueCluster"
MULTIKUEUE_CONFIG = "kubernetes:kueue.x-k8s.io/*:MultiKueueConfig"
WORKLOAD_PRIORITY_CLASS = "kubernetes:kueue.x-k8s.io/*:WorkloadPriorityClass"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/*:PriorityClass"
JOB = "kubernetes:batch/v1:Job"
POD = "kubernetes:core/v1:Pod"
POD_TEMPLATE = "kubernetes:core/v1:PodTemplate"
K8S_SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
ROLE = "kubernetes:rbac.authorization.k8s.io/*:Role"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/*:ClusterRole"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/*:RoleBinding"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/*:ClusterRoleBinding"
JOBSET = "kubernetes:jobset.x-k8s.io/*:JobSet"
WORKLOADS = (JOB, JOBSET)
CRON_JOB = "kubernetes:batch/*:CronJob"
NAMESPACE = "kubernetes:core/v1:Namespace"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
PROVISIONING_REQUEST = "kubernetes:autoscaling.x-k8s.io/*:ProvisioningRequest"
# GKE's custom ComputeClass (cloud.google.com/v1).
COMPUTE_CLASS = "kubernetes:cloud.google.com/*:ComputeClass"
# Controllers whose spec.template is a pod template.
POD_CONTROLLERS = (
    "kubernetes:apps/*:Deployment",
    "kubernetes:apps/*:StatefulSet",
    "kubernetes:apps/*:DaemonSet",
    "kubernetes:apps/*:ReplicaSet",
    "kubernetes:core/v1:ReplicationController",
)


class Registered(NamedTuple):
    """One resource as registered: its type token, logical name and inputs (camelCase, as the
    engine receives them). synth's Registration, CrossGuard's PolicyResource and the policy
    pack's Resource have these fields too."""

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]


def is_type(type_: str, *patterns: str) -> bool:
    return _is_type(type_, patterns)


@functools.cache
def _is_type(type_: str, patterns: tuple[str, ...]) -> bool:
    # Every rule asks it of every resource: a stack has a few dozen type tokens and the
    # rules a few dozen patterns, but at 256 slices there are ~16,000 questions.
    return any(fnmatchcase(type_, p) for p in patterns)


def of_type(resources: Iterable[Any], *patterns: str) -> list[Any]:
    return [r for r in resources if is_type(r.type, *patterns)]


def dig(obj: Any, *path: str | int, default: Any = None) -> Any:
    """obj[p0][p1]...; default where any step is missing or not a container."""
    for key in path:
        if isinstance(key, int):
            if not is_list(obj) or not -len(obj) <= key < len(obj):
                return default
        elif not isinstance(obj, Mapping) or key not in obj:
            return default
        obj = obj[key]
    return obj


def is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def as_list(value: Any) -> list[Any]:
    return list(value) if is_list(value) else []


def as_dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else EMPTY


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None
