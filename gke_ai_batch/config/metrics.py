"""`gke-ai-batch:metrics`: what Google Cloud Managed Service for Prometheus collects (Kueue's and
JobSet's metrics), GKE's managed DCGM (GPU) package, TPU utilization and a Cloud Monitoring
dashboard per cluster. The facts live in gke_ai_batch/domain/metrics.py and the version floors
in gke_ai_batch/domain/versions.py; docs/metrics.md explains the choices.

Without the key nothing is collected or changed. With it, each part defaults to what the
stack's pools can use: DCGM with a GPU pool, TPU utilization with a TPU pool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from pydantic import model_validator

from gke_ai_batch.config.base import GkeName, Model, RuleError, raise_all
from gke_ai_batch.domain import versions

AT = "metrics"


class MetricsConfig(Model):
    """Metrics a team needs to see idle chips and pending demand (docs/metrics.md)."""

    managed_prometheus: bool = True
    """Managed Service for Prometheus collects Kueue's and JobSet's metrics (a PodMonitoring
    each). On a cluster this program creates it also turns managed collection on; on an existing
    cluster it states that managed collection is on there."""
    dcgm: bool | None = None
    """GKE's managed DCGM metrics of the GPU nodes (from the GKE version docs/metrics.md names). Default: on
    when the stack has a GPU pool and creates its cluster; on an existing cluster true states
    that the cluster collects them already (this program cannot change its monitoring)."""
    tpu: bool | None = None
    """TPU utilization (GKE system metrics, from the GKE version docs/metrics.md names) on the
    dashboard. Default: on when the stack has a TPU pool."""
    dashboard: bool = True
    """A Cloud Monitoring dashboard for the cluster: pending and admitted workloads per cluster
    queue, quota used per flavor, accelerator utilization per node."""


@dataclass(frozen=True)
class Collected:
    """What a stack's metrics key amounts to, its defaults resolved against its pools."""

    managed_prometheus: bool
    dcgm: bool
    tpu: bool
    dashboard: bool
    existing: bool

    @property
    def kueue_panels(self) -> bool:
        return self.managed_prometheus

    @property
    def any_panel(self) -> bool:
        return self.managed_prometheus or self.dcgm or self.tpu


def collected(m: MetricsConfig, *, gpu_pools: bool, tpu_pools: bool, existing: bool) -> Collected:
    dcgm = m.dcgm if m.dcgm is not None else (gpu_pools and not existing)
    tpu = m.tpu if m.tpu is not None else tpu_pools
    return Collected(m.managed_prometheus, dcgm, tpu, m.dashboard, existing)


def metrics_problems(
    m: MetricsConfig,
    c: Collected,
    version_floor: Callable[[tuple, str, str], Iterator[RuleError]],
    at: tuple = (AT,),
    prometheus: str = "metrics.managedPrometheus",
) -> Iterator[RuleError]:
    """`version_floor(at, minimum, what)`: the stack's check of a feature's GKE version floor
    (the created cluster's channel default or minor alias, or an existing cluster's version);
    `at`: where the metrics key is, relative to the model that checks it; `prometheus`: the key
    that turns managed collection on, as the caller spells it."""
    chosen = "" if m.dcgm is not None else " (on by default with a GPU pool; dcgm: false turns it off)"
    if c.dcgm:
        # GKE refuses to enable the DCGM component on a control plane below the floor
        # (GKE docs how-to/dcgm-metrics, "Requirements").
        yield from version_floor((*at, "dcgm"), versions.DCGM_METRICS_MIN, f"GKE's managed DCGM metrics{chosen}")
        if not c.managed_prometheus:
            # GKE's DCGM package is collected by managed collection: enabling it installs
            # DCGM-Exporter and a ClusterPodMonitoring "to send metrics to Managed Service for
            # Prometheus" (GKE docs how-to/dcgm-metrics, overview). Without managed collection
            # no collector reads that ClusterPodMonitoring, and no DCGM metric ever arrives.
            yield RuleError(
                (*at, "dcgm"),
                f"GKE's managed DCGM metrics{chosen} are collected by Managed Service for Prometheus, and "
                f"{prometheus} is false; turn it on or set dcgm: false",
            )
    if c.tpu:
        chosen = "" if m.tpu is not None else " (on by default with a TPU pool; tpu: false turns it off)"
        yield from version_floor((*at, "tpu"), versions.TPU_METRICS_MIN, f"TPU utilization metrics{chosen}")
    if c.dashboard and not c.any_panel:
        yield RuleError(
            (*at, "dashboard"),
            "the dashboard would have no chart: Kueue's charts need managedPrometheus, the accelerator "
            "charts dcgm (GPU pools) or tpu (TPU pools); turn one on or set dashboard: false",
        )


def _no_floor(at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
    return iter(())


class MetricsOnCluster(MetricsConfig):
    """The Metrics component's args (gke_ai_batch/components/metrics.py) as a stack spells them:
    the metrics key, for a cluster named here. The component renders collection and the
    dashboard only; a cluster's monitoring_config (DCGM, managed collection) and its version
    floors are the cluster's, checked where the cluster is declared."""

    cluster_name: GkeName
    """The GKE cluster's name: GMP labels every series with it, and the dashboard filters on it."""
    gpu_pools: list[GkeName] = []
    """GPU node pools, named in the GPU chart's title; dcgm defaults to on when any are listed."""
    tpu_pools: list[GkeName] = []
    """TPU node pools, named in the TPU chart's title; tpu defaults to on when any are listed."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(metrics_problems(self, self.collected, _no_floor, ()))
        return self

    @property
    def collected(self) -> Collected:
        return collected(self, gpu_pools=bool(self.gpu_pools), tpu_pools=bool(self.tpu_pools), existing=False)
