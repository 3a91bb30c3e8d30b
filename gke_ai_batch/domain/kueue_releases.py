"""What each Kueue release understands, of everything this program writes for it.

The Kueue manager decodes its Configuration strictly (pkg/config/config.go: a codec factory
with serializer.EnableStrict), refuses an integration it does not know
(pkg/config/validation.go validateIntegrations) and a feature gate it does not know
(k8s.io/component-base featuregate: "unrecognized feature gate"): in each case it exits at
start, and every Kueue webhook, which fails closed, refuses every job until someone fixes the
install. So a gate, Configuration field or integration that the chosen `kueue.version` lacks
must be refused before install, not found by the crash loop.

One table: per name the program can write, the first release that has it (and the last, if one
dropped it). Sources are paths in https://github.com/kubernetes-sigs/kueue at the release tags
(apis/config/v1beta2/configuration_types.go, pkg/features/kube_features.go,
pkg/controller/jobs/<framework>), read for v0.15.0 to v0.19.2. Pure data and pure functions: no
pydantic, no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.domain import versions

Release = tuple[int, int, int]

# The oldest release the program installs, or accepts as installed already: the first that
# serves kueue.x-k8s.io/v1beta2 and reads a v1beta2 Configuration, which the program emits
# (apis/kueue/v1beta2 and apis/config/v1beta2 appear in v0.15.0: kubernetes-sigs/kueue#7304
# "v1beta2: Expose the v1beta2 API for CRD serving" and #7375 "Graduate Config API to v1beta2",
# both in the v0.15.0 release notes, kubernetes-sigs/kueue#7626). An older Kueue has no such API:
# every ClusterQueue, LocalQueue and WorkloadPriorityClass the program creates would be refused.
MIN_RELEASE: Release = (0, 15, 0)


@dataclass(frozen=True)
class Since:
    kind: str  # "feature gate", "Configuration field" or "integration"
    first: Release
    source: str
    last: Release | None = None  # the last release that has it, if a later one dropped it


def _field(source: str = "apis/config/v1beta2/configuration_types.go", first: Release = MIN_RELEASE) -> Since:
    return Since("Configuration field", first, source)


def _integration(path: str, first: Release = MIN_RELEASE) -> Since:
    return Since("integration", first, f"pkg/controller/jobs/{path}")


# Configuration fields, by their path in the Configuration; every one the program writes
# (gke_ai_batch/plan/kueue.py kueue_manager_config, gke_ai_batch/plan/multikueue.py).
CONFIG_FIELDS: dict[str, Since] = {
    name: _field()
    for name in (
        "apiVersion",
        "kind",
        "health.healthProbeBindAddress",
        "metrics.bindAddress",
        "webhook.port",
        "leaderElection.leaderElect",
        "leaderElection.resourceName",
        "controller.groupKindConcurrency",
        "clientConnection.qps",
        "clientConnection.burst",
        "manageJobsWithoutQueueName",
        "managedJobsNamespaceSelector",
        "integrations.frameworks",
        "waitForPodsReady.timeout",
        "waitForPodsReady.blockAdmission",
        "waitForPodsReady.recoveryTimeout",
        "fairSharing.preemptionStrategies",
        "multiKueue.gcInterval",
        "multiKueue.origin",
        "multiKueue.workerLostTimeout",
        "multiKueue.dispatcherName",
    )
} | {
    # MultiKueue.IncrementalDispatcherConfig: configuration_types.go:372 at v0.19.0, absent
    # at v0.18.6 (whose Incremental dispatcher adds a fixed 3 workers per round:
    # pkg/controller/workloaddispatcher/incrementaldispatcher.go:175, batchSize := 3).
    "multiKueue.incrementalDispatcherConfig": _field(first=(0, 19, 0)),
}

FEATURE_GATES: dict[str, Since] = {
    # kube_features.go:52 and 556-558 at v0.19.0 (alpha, off); the same release turned
    # waitForPodsReady on when the Configuration omits it (apis/config/v1beta2/defaults.go:99-108),
    # which is what the gate undoes. Before it, an omitted waitForPodsReady is off.
    "DisableWaitForPodsReady": Since("feature gate", (0, 19, 0), "pkg/features/kube_features.go"),
}

# Integration framework names (Configuration integrations.frameworks), each registered by its
# package's FrameworkName.
INTEGRATIONS: dict[str, Since] = {
    "batch/job": _integration("job"),
    "jobset.x-k8s.io/jobset": _integration("jobset"),
    "kubeflow.org/mpijob": _integration("mpijob"),
    "kubeflow.org/paddlejob": _integration("kubeflow/jobs/paddlejob"),
    "kubeflow.org/pytorchjob": _integration("kubeflow/jobs/pytorchjob"),
    "kubeflow.org/tfjob": _integration("kubeflow/jobs/tfjob"),
    "kubeflow.org/xgboostjob": _integration("kubeflow/jobs/xgboostjob"),
    "kubeflow.org/jaxjob": _integration("kubeflow/jobs/jaxjob"),
    "trainer.kubeflow.org/trainjob": _integration("trainjob"),
    "ray.io/rayjob": _integration("rayjob"),
    "ray.io/rayservice": _integration("rayservice", (0, 17, 0)),
    "ray.io/raycluster": _integration("raycluster"),
    "workload.codeflare.dev/appwrapper": _integration("appwrapper"),
    "sparkoperator.k8s.io/sparkapplication": _integration("sparkapplication", (0, 17, 0)),
    "pod": _integration("pod"),
    "deployment": _integration("deployment"),
    "statefulset": _integration("statefulset"),
    "leaderworkerset.x-k8s.io/leaderworkerset": _integration("leaderworkerset"),
}


def release(version: str) -> Release:
    """'0.19.2' as (0, 19, 2); the caller has checked it is an exact release
    (config.batch.check_chart_version). A pre-release counts as its release (0.20.0-rc.1 as
    0.20.0): its features are the release's."""
    m = versions.CHART_VERSION_RX.fullmatch(version)
    if m is None:
        raise ValueError(f"{version!r} is not an exact release such as 0.19.2")
    return int(m["major"]), int(m["minor"]), int(m["patch"])


def text(r: Release) -> str:
    return ".".join(map(str, r))


def has(version: str, since: Since) -> bool:
    r = release(version)
    return since.first <= r and (since.last is None or r <= since.last)


def lacks(version: str, name: str, since: Since) -> str | None:
    """Why Kueue `version` would refuse `name`, or None when it has it."""
    if has(version, since):
        return None
    if release(version) < since.first:
        when = f"it came in Kueue {text(since.first)}"
    else:
        when = f"Kueue {text(since.last)} was the last release with it"  # type: ignore[arg-type]
    return (
        f"Kueue {version} has no {since.kind} {name} ({when}; kubernetes-sigs/kueue {since.source}), and its "
        "manager refuses to start with one it does not know"
    )
