"""What every rule shares: the Rule and Resource records, type tokens, and tolerant readers
for property trees that may be partial or hold values only known after deploy."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from gke_ai_batch.domain import naming as _naming
from gke_ai_batch.domain import quantity as _quantity

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
# Controllers whose spec.template is a pod template.
POD_CONTROLLERS = (
    "kubernetes:apps/*:Deployment",
    "kubernetes:apps/*:StatefulSet",
    "kubernetes:apps/*:DaemonSet",
    "kubernetes:apps/*:ReplicaSet",
    "kubernetes:core/v1:ReplicationController",
)


class Resource(NamedTuple):
    """One resource as a stack rule sees it: synth's Registration or CrossGuard's PolicyResource."""

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]
    protect: bool = False
    """The resource option: the engine refuses to delete (or replace) it while set."""


ResourceCheck = Callable[[str, Mapping[str, Any], Mapping[str, Any]], Iterable[str]]
StackCheck = Callable[[Sequence[Resource], Mapping[str, Any]], Iterable[tuple["str | None", str]]]


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    enforcement: str  # the pack default: advisory | mandatory | disabled
    check: ResourceCheck | StackCheck
    types: tuple[str, ...] = ()
    """Resource rules: the type tokens (fnmatch patterns) the check runs on."""
    stack: bool = False
    config_schema: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-stack settings beside enforcementLevel (JSON schema properties)."""

    def applies_to(self, type_: str) -> bool:
        return is_type(type_, *self.types)


def is_type(type_: str, *patterns: str) -> bool:
    return _is_type(type_, patterns)


@functools.cache
def _is_type(type_: str, patterns: tuple[str, ...]) -> bool:
    # Every rule asks it of every resource: a stack has a few dozen type tokens and the
    # rules a few dozen patterns, but at 256 slices there are ~16,000 questions.
    return any(fnmatchcase(type_, p) for p in patterns)


def of_type(resources: Iterable[Resource], *patterns: str) -> list[Resource]:
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


def quantity(value: Any) -> float | None:
    """A Kubernetes quantity (16, '16', '1.5k') as a number; None if it is not one."""
    return _quantity.value(value)


def fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


# -- Kubernetes objects ---------------------------------------------------------------------


def k8s_name(r: Resource) -> str:
    name = dig(r.props, "metadata", "name")
    return name if isinstance(name, str) else r.name.rsplit("/", 1)[-1]


def k8s_namespace(props: Mapping[str, Any]) -> str:
    ns = dig(props, "metadata", "namespace")
    return ns if isinstance(ns, str) and ns else "default"


def cluster_of(r: Resource) -> str:
    """The naming scope of the cluster a Kubernetes object is applied to: "" in a stack of one
    cluster, the worker's name or "manager" in a fleet. Every object is registered under
    gke_ai_batch.domain.naming.scoped(scope, <namespace>/<name>), so a name and namespace on one cluster
    say nothing about another's."""
    meta = as_dict(r.props.get("metadata"))
    name, ns = meta.get("name"), meta.get("namespace")
    if not isinstance(name, str):
        return ""
    return _naming.scope_of(r.name, f"{ns}/{name}" if isinstance(ns, str) and ns else name) or ""


def by_cluster(resources: Sequence[Resource]) -> dict[str, list[Resource]]:
    """The stack's resources per cluster scope ("" alone in a stack of one cluster). A
    Kubernetes object's scope is cluster_of's; any other resource (the GKE cluster, its node
    pools, service accounts) is in the scope its logical name starts with, when that is a
    scope some Kubernetes object has, else in "" (a single-cluster stack's names, and
    resources of no one cluster, keep their own)."""
    k8s = [r for r in resources if r.type.startswith("kubernetes:")]
    scopes = {cluster_of(r) for r in k8s}
    out: dict[str, list[Resource]] = {}
    for r in resources:
        if r.type.startswith("kubernetes:"):
            scope = cluster_of(r)
        else:
            head, sep, _ = r.name.partition(_naming.SCOPE_SEPARATOR)
            scope = head if sep and head in scopes else ""
        out.setdefault(scope, []).append(r)
    return out


def per_cluster(check: StackCheck) -> StackCheck:
    """A stack rule judged on each cluster's resources alone: a namespace, a queue, a flavor
    or a priority class on one cluster says nothing about another's. A finding with no
    resource to blame names its cluster."""

    @functools.wraps(check)
    def run(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterable[tuple[str | None, str]]:
        for scope, mine in by_cluster(resources).items():
            for urn, message in check(mine, config):
                yield urn, (f"cluster {scope}: {message}" if urn is None and scope else message)

    return run


def k8s_labels(props: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_dict(dig(props, "metadata", "labels"))


def kind_of(type_: str) -> str:
    return type_.rsplit(":", 1)[-1]


def describe(type_: str, props: Mapping[str, Any]) -> str:
    """'JobSet ml-research/smoke' for messages."""
    name = dig(props, "metadata", "name", default="?")
    return f"{kind_of(type_)} {k8s_namespace(props)}/{name}"
