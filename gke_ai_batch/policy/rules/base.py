"""What every rule shares: the Rule and Resource records, type tokens, and tolerant readers
for property trees that may be partial or hold values only known after deploy."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gke_ai_batch.model import clusters as _clusters
from gke_ai_batch.domain.registered import (  # noqa: F401 (re-exported for the rules)
    ADMISSION_CHECK,
    CLUSTER,
    CLUSTER_QUEUE,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    CRON_JOB,
    EMPTY,
    GCP_SERVICE_ACCOUNT,
    HELM_RELEASES,
    JOB,
    JOBSET,
    K8S_SERVICE_ACCOUNT,
    LOCAL_QUEUE,
    MULTIKUEUE_CLUSTER,
    MULTIKUEUE_CONFIG,
    NODE_POOL,
    POD,
    POD_CONTROLLERS,
    POD_TEMPLATE,
    PRIORITY_CLASS,
    RESOURCE_FLAVOR,
    STACK,
    ROLE,
    ROLE_BINDING,
    UNKNOWN,
    WORKLOAD_PRIORITY_CLASS,
    WORKLOADS,
    as_dict,
    as_int,
    as_list,
    dig,
    is_list,
    is_type,
    of_type,
)
from gke_ai_batch.domain import quantity as _quantity


class Resource(NamedTuple):
    """One resource as a stack rule sees it: synth's Registration or CrossGuard's PolicyResource."""

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]
    protect: bool = False
    """The resource option: the engine refuses to delete (or replace) it while set."""
    provider: str = ""
    """The URN of the provider it is applied through ("" for the default one): for a Kubernetes
    object, which cluster holds it."""
    parent: str = ""
    """The URN of its parent resource ("" for none): a cluster component's provider and children."""
    dependencies: tuple[str, ...] = ()
    """The URNs it depends on: a node pool whose cluster is known only after deploy waits for its Cluster."""


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


def clusters_in(resources: Sequence[Resource]) -> Callable[[Resource], str]:
    """Resource -> the label of the cluster it is on, as by_cluster groups `resources`: a
    Kubernetes object's is the cluster its provider reaches, never the scope its name carries
    (two clusters of a library program may hold objects of one name each). A stack program's
    labels are its naming scopes ("" alone, a fleet's worker or "manager"), so its verdicts
    read as before."""
    where = {id(r): label for label, mine in by_cluster(resources).items() for r in mine}
    return lambda r: where.get(id(r), "")


def by_cluster(resources: Sequence[Resource]) -> dict[str, list[Resource]]:
    """The stack's resources per cluster ("" alone in a program of one cluster, and the
    resources of no cluster otherwise): a Kubernetes object on the cluster its provider reaches,
    a GKE cluster or node pool on the one it names (gke_ai_batch/model/clusters.py)."""
    key = tuple(map(id, resources))
    for seen, parts in _PARTITIONS:
        if seen == key:
            return {scope: list(mine) for scope, mine in parts.items()}
    parts = _clusters.partition(resources)
    # Several rules ask it of the same resources: keep the last few (each entry holds its
    # resources, so no id in a key is reused while it is kept).
    _PARTITIONS.insert(0, (key, parts))
    del _PARTITIONS[4:]
    return {scope: list(mine) for scope, mine in parts.items()}


_PARTITIONS: list[tuple[tuple[int, ...], dict[str, list[Resource]]]] = []


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
