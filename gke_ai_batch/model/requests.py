"""What a pod asks the scheduler and Kueue for, as Kueue and kube-scheduler compute it.

- A pod's request is the sum over its containers, or the largest init container if that is
  more, per resource (k8s.io/component-helpers/resource.PodRequests, which Kueue calls in
  pkg/workload/workload.go:totalRequestsFromPodSets at v0.19.2; sidecar init containers are not
  used by this program).
- A resource given only as a limit is requested at the limit: the API server defaults
  requests to limits (pkg/apis/core/v1/defaults.go SetDefaults_ResourceList), and Kueue does the
  same for its own accounting (pkg/workload/resources.go:UseLimitsAsMissingRequestsInPod).
- Kueue drops resources whose names start with a Configuration
  `resources.excludeResourcePrefixes` entry (pkg/workload/workload.go:dropExcludedResources)
  and multiplies by the pod set's count.

Amounts are integers in Kueue's units: millicores for cpu, base units (bytes, devices) for the
rest (pkg/resources/resource.go ResourceValue: MilliValue for cpu, Value otherwise)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from gke_ai_batch.domain import gcsfuse, quantity

CPU = "cpu"
MEMORY = "memory"
MAX_AMOUNT = quantity.AMOUNT_MAX


def amount(resource: str, q: Any) -> int:
    """A quantity in Kueue's integer units, rounded up as resource.Quantity.Value() does."""
    v = quantity.value(q)
    if v is None:
        raise ValueError(f"{q!r} is not a quantity")
    if resource == CPU:
        v *= 1000
    if not math.isfinite(v) or v >= MAX_AMOUNT:
        return MAX_AMOUNT  # Kueue's amounts saturate at int64 (pkg/resources/amount.go)
    # Quantities such as '0.1' are not exact in binary floating point: round at 1e-6 first.
    return math.ceil(round(v, 6))


def show(resource: str, value: int) -> str:
    """An amount back as a quantity a person reads: '500m', '16', '4Gi', '1.5Gi'."""
    if resource == CPU:
        cores, millis = divmod(value, 1000)
        return str(cores) if not millis else f"{cores}.{millis:03d}".rstrip("0")
    if resource == MEMORY or resource.endswith("storage"):
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value >= size:
                n = value / size
                return f"{n:g}{suffix}" if round(n, 2) == n else f"{n:.2f}{suffix}"
    return str(value)


def container_requests(container: Mapping[str, Any]) -> dict[str, int]:
    res = container.get("resources") or {}
    requests = dict(res.get("limits") or {})
    requests.update(res.get("requests") or {})
    return {r: amount(r, q) for r, q in requests.items()}


def pod_requests(spec: Mapping[str, Any]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        for r, v in container_requests(c).items():
            total[r] = total.get(r, 0) + v
    for c in spec.get("initContainers") or ():
        for r, v in container_requests(c).items():
            total[r] = max(total.get(r, 0), v)
    for r, q in (spec.get("overhead") or {}).items():
        total[r] = total.get(r, 0) + amount(r, q)
    return total


def scheduled_pod_requests(spec: Mapping[str, Any], annotations: Mapping[str, Any] | None) -> dict[str, int]:
    """What kube-scheduler sees a pod of this template request: pod_requests, plus the Cloud
    Storage FUSE sidecar GKE's webhook adds when the pod is created (gke_ai_batch/domain/gcsfuse.py).
    Kueue counts the template before any pod exists, so its quota does not include the sidecar,
    but the node must hold it: the sidecar is a container (or, where GKE injects it as a native
    sidecar, a restartable init container, which kube-scheduler adds to the containers' sum too:
    k8s.io/component-helpers/resource.PodRequests)."""
    total = pod_requests(spec)
    for r, q in gcsfuse.sidecar_requests(annotations).items():
        total[r] = total.get(r, 0) + amount(r, q)
    return total


def drop_excluded(requests: Mapping[str, int], prefixes: Iterable[str]) -> dict[str, int]:
    prefixes = tuple(prefixes)
    return {r: v for r, v in requests.items() if not (prefixes and r.startswith(prefixes))}


def times(requests: Mapping[str, int], count: int) -> dict[str, int]:
    return {r: v * count for r, v in requests.items()}
