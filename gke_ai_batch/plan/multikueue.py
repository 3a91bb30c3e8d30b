"""The manager side of a MultiKueue fleet, as pure functions: the Configuration's `multiKueue`
block, the AdmissionCheck -> MultiKueueConfig -> MultiKueueCluster -> Secret chain, and the
rules Kueue applies to a ClusterQueue that uses the check.

Sources are Kueue v0.19.2 (the chart version this project installs); paths are relative to
https://github.com/kubernetes-sigs/kueue/tree/v0.19.2.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping, Sequence

from gke_ai_batch.model.multikueue import MULTIKUEUE_CONTROLLER, cluster_queue_problems  # noqa: F401 (re-exported)
from gke_ai_batch.config.base import check_k8s_name as _k8s_name
from gke_ai_batch.domain import kueue_releases
from gke_ai_batch.plan.kueue import KUEUE_API, KUEUE_NAMESPACE, admission_check_manifest, go_duration
from gke_ai_batch.config.fleet import DISPATCHERS, WORKERS_MAX, MultiKueueSettings  # noqa: F401 (re-exported)
from gke_ai_batch.domain.versions import MANAGED_BY_MINOR, managed_by_problem  # noqa: F401 (re-exported)
from gke_ai_batch.domain.multikueue_worker import kubeconfig_secret_name  # noqa: F401 (re-exported)

# apis/kueue/v1beta2/multikueue_types.go:24: the key Kueue reads the kubeconfig from
# (getKubeConfigFromSecret, pkg/controller/admissionchecks/multikueue/multikueuecluster.go:1074).
KUBECONFIG_KEY = "kubeconfig"
# MultiKueueConfig.spec.clusters: +kubebuilder:validation:MinItems=1, MaxItems=20
# (apis/kueue/v1beta2/multikueue_types.go:155-156; schema/upstream/.../MultiKueueConfig.json).
MIN_WORKERS, MAX_WORKERS = 1, WORKERS_MAX


def multikueue_configuration(settings: MultiKueueSettings, kueue_version: str) -> dict[str, Any]:
    """The Configuration's `multiKueue` block.

    Every field is written, defaults included: the chart takes the Configuration as one
    string, so what is written is what the manager runs, a Kueue upgrade that changes a default
    does not change the fleet's behaviour unseen, and the report shows the values in force.
    `incrementalDispatcherConfig` is the exception: Kueue refuses it under AllAtOnce, and a
    release before it has a fixed step of 3 (gke_ai_batch/domain/kueue_releases.py; config refuses
    incrementalStepSize there)."""
    out: dict[str, Any] = {
        "gcInterval": go_duration(settings.gc_interval),
        "origin": settings.origin,
        "workerLostTimeout": go_duration(settings.worker_lost_timeout),
        "dispatcherName": DISPATCHERS[settings.dispatcher],
    }
    step_field = kueue_releases.CONFIG_FIELDS["multiKueue.incrementalDispatcherConfig"]
    if settings.dispatcher == "Incremental" and kueue_releases.has(kueue_version, step_field):
        # defaults.go:140-143 fills stepSize 3; written out for the same reason as the rest.
        out["incrementalDispatcherConfig"] = {"stepSize": settings.incremental_step_size or 3}
    return out


# -- the manager's objects ------------------------------------------------------------------------


def encode_kubeconfig(kubeconfig: str) -> str:
    """A kubeconfig as a Secret's `data` value. `data`, not `stringData`: the API server never
    returns stringData, and pulumi-kubernetes has diffed it forever on that account
    (pulumi-kubernetes#2507, #2513)."""
    return base64.b64encode(kubeconfig.encode()).decode()


def kubeconfig_secret(worker: str, data: Any) -> dict[str, Any]:
    """The Secret a MultiKueueCluster reads, in Kueue's own namespace: Kueue looks the name up
    there and nowhere else (getKubeConfigFromSecret, multikueuecluster.go:1063-1079). `data` is
    the base64 kubeconfig: a string here, a Pulumi secret Output when a component passes it."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": kubeconfig_secret_name(worker), "namespace": KUEUE_NAMESPACE},
        "type": "Opaque",
        "data": {KUBECONFIG_KEY: data},
    }


def _placeholder(worker: str) -> str:
    return encode_kubeconfig(f"# the kubeconfig of worker {worker} is written at deploy time\n")


def worker_name_problems(fleet_name: str, workers: Sequence[str]) -> list[str]:
    out = []
    for what, name in [("fleet name", fleet_name), *(("worker name", w) for w in workers)]:
        try:
            _k8s_name(name)
        except ValueError as exc:
            out.append(f"{what}: {exc}")
    if not MIN_WORKERS <= len(workers) <= MAX_WORKERS:
        out.append(f"{len(workers)} workers: a MultiKueueConfig lists {MIN_WORKERS} to {MAX_WORKERS} clusters")
    repeated = sorted({w for w in workers if list(workers).count(w) > 1})
    if repeated:
        out.append(f"workers listed more than once: {', '.join(repeated)} (MultiKueueConfig clusters must be unique)")
    return out


def multikueue_manifests(
    fleet_name: str, workers: Sequence[str], kubeconfigs: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """AdmissionCheck `fleet_name` -> MultiKueueConfig `fleet_name` -> one MultiKueueCluster per
    worker (named after it) -> Secret multikueue-<worker> in kueue-system, key `kubeconfig`.

    `workers` is in order of preference: the Incremental dispatcher follows it. `kubeconfigs`
    maps a worker to its Secret's data value (see `kubeconfig_secret`); a worker without one
    gets a placeholder, which is only the Secret's shape."""
    problems = worker_name_problems(fleet_name, workers)
    if problems:
        raise ValueError("; ".join(problems))
    kubeconfigs = kubeconfigs or {}
    check = admission_check_manifest(fleet_name, MULTIKUEUE_CONTROLLER, "MultiKueueConfig", fleet_name)
    config = {
        "apiVersion": KUEUE_API,
        "kind": "MultiKueueConfig",
        "metadata": {"name": fleet_name},
        "spec": {"clusters": list(workers)},
    }
    clusters = [
        {
            "apiVersion": KUEUE_API,
            "kind": "MultiKueueCluster",
            "metadata": {"name": w},
            "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret_name(w)}}},
        }
        for w in workers
    ]
    secrets = [kubeconfig_secret(w, kubeconfigs.get(w, _placeholder(w))) for w in workers]
    return [check, config, *clusters, *secrets]


# The manager's objects in creation order, each after what it names: a MultiKueueCluster names
# its Secret, a MultiKueueConfig its clusters, an AdmissionCheck its MultiKueueConfig.
CREATION_ORDER = ("Secret", "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck")


def manager_manifests(
    fleet_name: str,
    workers: Sequence[str],
    checks: Sequence[tuple[str, Sequence[str]]],
    kubeconfigs: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Every worker's Secret and MultiKueueCluster once, then each check's MultiKueueConfig and
    AdmissionCheck over its own `(name, workers)`, in CREATION_ORDER (`checks` in their given
    order). A check over only some workers serves a queue only they serve (plan/fleet.py
    dispatch_checks)."""
    shared = [m for m in multikueue_manifests(fleet_name, workers, kubeconfigs) if m["kind"] in CREATION_ORDER[:2]]
    per_check = [
        m for name, subset in checks for m in multikueue_manifests(name, subset) if m["kind"] in CREATION_ORDER[2:]
    ]
    return sorted([*shared, *per_check], key=lambda m: CREATION_ORDER.index(m["kind"]))


# -- Job managedBy ------------------------------------------------------------------------------

