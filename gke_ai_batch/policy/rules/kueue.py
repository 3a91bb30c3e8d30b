"""Kueue rules: pinned charts, ClusterQueues whose flavors exist and whose quotas the node
pools can back, and queues that keep their top-priority work off interruptible capacity."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from gke_ai_batch.domain import catalogue
from gke_ai_batch.domain import regions, versions
from gke_ai_batch.model.facts import ClusterFacts
from gke_ai_batch.model.recorded import Judgement, unknowns

from .base import (
    CLUSTER,
    CLUSTER_QUEUE,
    EMPTY,
    LOCAL_QUEUE,
    RESOURCE_FLAVOR,
    UNKNOWN,
    WORKLOAD_PRIORITY_CLASS,
    Resource,
    as_dict,
    as_int,
    as_list,
    by_cluster,
    describe,
    dig,
    fmt,
    k8s_labels,
    k8s_name,
    k8s_namespace,
    kind_of,
    of_type,
    quantity,
)
from .fleet import dispatch_config
from gke_ai_batch.model.computeclass import class_pools
from gke_ai_batch.model.facts import INTERRUPTIBLE, cluster_facts, flavor_capacity, selects, stack_pools
from .workloads import PRIORITY_LABEL, QUEUE_LABEL, queue_managed

ACCELERATORS = (catalogue.TPU_RESOURCE, catalogue.GPU_RESOURCE)


def helm_chart_pinned(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    chart = props.get("chart")
    if isinstance(chart, str) and chart.startswith((".", "/")):
        return  # a chart in the repository is pinned by the commit
    version = props.get("version")
    if version == UNKNOWN:
        return
    if not version:
        yield (
            f"chart {chart} has no version: each install or upgrade would take whatever is newest; "
            "pin an exact release such as 0.19.2"
        )
    elif not isinstance(version, str) or not versions.CHART_VERSION_RX.fullmatch(version):
        yield (
            f"chart {chart} version {version!r} is not one exact release (no ranges, wildcards or 'v' prefix); "
            "pin one such as 0.19.2"
        )


def queue_flavors(props: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(flavor name, its entry with resources) for every flavor of a ClusterQueue, in order."""
    for group in as_list(dig(props, "spec", "resourceGroups")):
        for entry in as_list(dig(group, "flavors")):
            name = dig(entry, "name")
            if isinstance(name, str) and name != UNKNOWN:
                yield name, as_dict(entry)


def _flavor_labels(resources: Sequence[Resource]) -> dict[str, Mapping[str, Any]]:
    return {k8s_name(f): as_dict(dig(f.props, "spec", "nodeLabels")) for f in of_type(resources, RESOURCE_FLAVOR)}


def flavors_exist(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    known = _flavor_labels(resources)
    for queue in of_type(resources, CLUSTER_QUEUE):
        for name, _ in queue_flavors(queue.props):
            if name not in known:
                yield (
                    queue.urn,
                    (
                        f"ClusterQueue {k8s_name(queue)} names flavor {name!r}, which is no ResourceFlavor of this "
                        f"stack (known: {', '.join(sorted(known)) or 'none'}); Kueue keeps the queue inactive until "
                        "it exists"
                    ),
                )


def quota_within_capacity(
    resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY
) -> Iterator[tuple[str, str]]:
    """google.com/tpu and nvidia.com/gpu nominal quotas against the accelerators of the node
    pools each flavor's nodeLabels select, at their ceiling, cluster by cluster (a fleet's
    manager against its workers' pools: its quota is theirs added up). Skipped where GKE makes
    nodes no pool describes (Autopilot, node auto-provisioning) or the stack has no cluster."""
    parts = by_cluster(resources)
    for scope, mine in parts.items():
        yield from _quota_within(mine, _backing_pools(parts, scope))


def _backing_pools(parts: Mapping[str, Sequence[Resource]], scope: str) -> Callable[[Resource], list | None]:
    """queue -> the node pools behind it: its cluster's own, or, for a queue that admits
    through a MultiKueue check, those of the workers the check's MultiKueueConfig lists
    (MultiKueue runs every job on one of them). None where one of those clusters has nodes no
    pool describes (Autopilot, node auto-provisioning) or is not in the stack."""
    config_of = dispatch_config(parts[scope])
    known: dict[tuple, list | None] = {}

    def pools_of(scopes: tuple) -> list | None:
        if scopes not in known:
            found: list | None = []
            for s in scopes:
                cluster = cluster_facts(parts.get(s, [])) if isinstance(s, str) else None
                if cluster is None or cluster.makes_nodes:
                    found = None
                    break
                # A ComputeClass's priorities are pools too, of a ceiling known only to GKE.
                found += [*stack_pools(parts[s]), *class_pools(parts[s])]
            known[scopes] = found
        return known[scopes]

    def pools_for(queue: Resource) -> list | None:
        multikueue, config = config_of(queue)
        if not multikueue:
            return pools_of((scope,))
        return pools_of(tuple(as_list(dig(config.props, "spec", "clusters"))) if config is not None else (None,))

    return pools_for


def _quota_within(resources: Sequence[Resource], pools_for: Callable[[Resource], list | None]) -> Iterator[tuple[str, str]]:
    flavors = _flavor_labels(resources)
    # Which pools back a (flavor, resource) depends on neither the queue nor the quota, only on
    # the pools behind the queue: work it out once, not per queue (hundreds of queues x
    # hundreds of pools at scale).
    backing_of: dict[tuple[int, str, str], tuple[list, int | None]] = {}
    for queue in of_type(resources, CLUSTER_QUEUE):
        pools = pools_for(queue)
        if pools is None:
            continue
        for name, entry in queue_flavors(queue.props):
            if name not in flavors:
                continue  # kueue-flavors-exist reports it
            for item in as_list(entry.get("resources")):
                resource = dig(item, "name")
                nominal = quantity(dig(item, "nominalQuota"))
                if resource not in ACCELERATORS or not nominal:
                    continue
                key = (id(pools), name, resource)
                if key not in backing_of:
                    backing = [p for p in pools if p.resource == resource and selects(flavors[name], p)]
                    unknown = any(p.accelerators is None for p in backing)
                    backing_of[key] = backing, None if unknown else sum(p.accelerators for p in backing)
                backing, capacity = backing_of[key]
                if capacity is None:
                    continue
                if nominal > capacity:
                    provided = (
                        ", ".join(f"{p.name} {p.accelerators}" for p in backing)
                        or "no node pool carries its nodeLabels"
                    )
                    yield (
                        queue.urn,
                        (
                            f"ClusterQueue {k8s_name(queue)}: nominal quota {fmt(nominal)} {resource} on flavor {name} "
                            f"exceeds the {capacity} its node pools provide ({provided}); Kueue would admit work "
                            "that can never be scheduled"
                        ),
                    )


def interruptible_only(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """Cluster by cluster (a fleet's manager judged by its workers' pools, where its jobs run):
    see _interruptible_only."""
    parts = by_cluster(resources)
    for scope, mine in parts.items():
        yield from _interruptible_only(mine, _backing_pools(parts, scope))


def _interruptible_only(resources: Sequence[Resource], pools_for: Callable[[Resource], list | None]) -> Iterator[tuple[str, str]]:
    """A priority is non-preemptible when it is the highest WorkloadPriorityClass value of the
    stack: no workload outranks it, so Kueue never preempts it. (A PriorityClass with
    preemptionPolicy Never is the opposite notion: it never preempts others.) A ClusterQueue
    that admits such a workload should have a flavor off spot, flex-start or queued capacity,
    or the work Kueue protects is still reclaimed or time-limited by GKE."""
    values = {
        k8s_name(r): as_int(r.props.get("value"))
        for r in of_type(resources, WORKLOAD_PRIORITY_CLASS)
        if as_int(r.props.get("value")) is not None
    }
    if not values:
        return
    top = max(values.values())
    protected = {name for name, value in values.items() if value == top}
    cluster_queue_of = {
        (k8s_namespace(q.props), k8s_name(q)): dig(q.props, "spec", "clusterQueue")
        for q in of_type(resources, LOCAL_QUEUE)
    }
    served: dict[str, list[str]] = {}
    for wl in filter(queue_managed, resources):
        labels = k8s_labels(wl.props)
        if labels.get(PRIORITY_LABEL) in protected:
            target = cluster_queue_of.get((k8s_namespace(wl.props), labels.get(QUEUE_LABEL)))
            if isinstance(target, str):
                served.setdefault(target, []).append(f"{describe(wl.type, wl.props)} ({labels[PRIORITY_LABEL]})")
    if not served:
        return
    own = [*stack_pools(resources), *class_pools(resources)]
    flavors = _flavor_labels(resources)
    for queue in of_type(resources, CLUSTER_QUEUE):
        name = k8s_name(queue)
        if name not in served:
            continue
        pools = pools_for(queue)
        pools = own if pools is None else pools
        homes: dict[str, set[str]] = {}
        for flavor, _ in queue_flavors(queue.props):
            models = flavor_capacity(flavors[flavor], pools) if flavor in flavors else None
            if models is None or not models <= set(INTERRUPTIBLE):
                break  # a home that is not interruptible, or one the stack cannot tell
            homes[flavor] = models
        else:
            if homes:
                where = ", ".join(f"{f} ({'/'.join(sorted(m))})" for f, m in homes.items())
                yield (
                    queue.urn,
                    (
                        f"ClusterQueue {name} admits {', '.join(served[name])} at the stack's top priority ({top}), "
                        f"but every flavor it has is interruptible capacity: {where}; decide: add an on-demand or "
                        "reservation flavor so that this work has a home GKE does not reclaim, or, if interruptible "
                        "capacity is the plan for it, settle this advisory with \"queue-interruptible-only\": "
                        "\"disabled\" in policy/config/<stack>.json"
                    ),
                )


def admissible(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str | None, str]]:
    """The admission model over one cluster's resources (gke_ai_batch/model/recorded.py), the
    judge the stack program runs before it registers anything: every workload Kueue would never
    admit or kube-scheduler never place, and every ClusterQueue Kueue would refuse or that could
    never serve a team, with the model's reason. A program with no stack file gets the same
    verdicts here. Without a recorded Cluster (a cluster the program did not create) it is taken
    as Standard with only the recorded node pools, unless this rule's settings declare it
    Autopilot or with node auto-provisioning."""
    if unknowns(resources):
        return  # judged where the values are known: the next preview or synth
    declared = None
    if not of_type(resources, CLUSTER) and (config.get("autopilot") or config.get("autoProvisioning")):
        autopilot = config.get("autopilot") is True
        declared = ClusterFacts(autopilot, True, regions.DEFAULT_ZONES_PER_REGION)
    urns: dict[tuple[str, str, str], str] = {}
    for r in resources:
        if r.type.startswith("kubernetes:"):
            kind, name = kind_of(r.type), k8s_name(r)
            urns.setdefault((kind, k8s_namespace(r.props), name), r.urn)
            urns.setdefault((kind, "", name), r.urn)
    try:
        problems = Judgement(resources, declared).problems
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        # An object of a shape the Kubernetes API server refuses (a container list that is a
        # number, a ClusterQueue flavor with no name): the model reads objects as the API admits
        # them, and the API's refusal is the finding; the pack must not fail the preview.
        return
    for problem in problems:
        message = problem.message if problem.path is None else f"{problem.where}: {problem.message}"
        yield urns.get(problem.subject), message
