"""Metrics as a component any Pulumi program can use: Metrics(name, args, opts) has Managed
Service for Prometheus scrape Kueue and JobSet (a PodMonitoring each, with the token and RBAC
their HTTPS metrics endpoints need) and adds a Cloud Monitoring dashboard for the cluster.

Args mirror the stack's gke-ai-batch:metrics key in snake_case, with the cluster's name, and
are checked on construction by the stack config's own rules (gke_ai_batch/config/metrics.py),
every problem at once, at its arg path. The Kubernetes provider comes from `opts` (a child's
provider defaults to its parent's, per package); the dashboard uses the program's Google Cloud
provider. The cluster's own monitoring_config (managed collection, DCGM) is the cluster's
argument, not this component's: gke_ai_batch/plan/cluster.py sets it for a stack's cluster.

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations
as objects."""

from typing import NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import accepted, declared_args, depends_on_of, project_problems, type_token, validated
from gke_ai_batch.config.metrics import MetricsOnCluster
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan import Plan
from gke_ai_batch.plan.metrics import dashboard_json, scrape_manifests


class MetricsArgs(TypedDict):
    cluster_name: str
    """The GKE cluster's name: GMP labels every series with it, and the dashboard filters on it."""
    project: NotRequired[str]
    """The dashboard's project (default: the Google Cloud provider's)."""
    managed_prometheus: NotRequired[bool]
    """PodMonitorings for Kueue and JobSet, and Kueue's charts (default true); the cluster must
    have managed collection on."""
    dcgm: NotRequired[bool]
    """Chart GPU utilization from GKE's managed DCGM metrics (default: when gpu_pools are listed)."""
    tpu: NotRequired[bool]
    """Chart TPU duty cycle (default: when tpu_pools are listed)."""
    dashboard: NotRequired[bool]
    """A Cloud Monitoring dashboard for the cluster (default true)."""
    gpu_pools: NotRequired[list[str]]
    """GPU node pools, named in the GPU chart's title."""
    tpu_pools: NotRequired[list[str]]
    """TPU node pools, named in the TPU chart's title."""


def _checked(name: str, args: MetricsArgs) -> MetricsOnCluster:
    # Every arg but the project decides what is registered and is checked on construction.
    kept, problems = declared_args("Metrics", name, args, MetricsArgs, inputs=("project",))
    # The dashboard's project passes through, and may be an Output; a number is not a project.
    problems += project_problems(kept, "args", True)
    model, found = validated(MetricsOnCluster, {k: v for k, v in kept.items() if k != "project"})
    return accepted("Metrics", name, model, problems + found)


class Metrics(Component):
    """Kueue's and JobSet's metrics collected by Managed Service for Prometheus, and a dashboard:
    pending and admitted workloads per cluster queue, quota used per flavor, accelerator
    utilization per node. The Kubernetes objects wait for what the component depends on (the
    Kueue and JobSet releases: their namespaces)."""

    dashboard_id: pulumi.Output[str]
    """The dashboard's resource id (projects/<number>/dashboards/<id>), or "" without one."""

    def __init__(self, name: str, args: MetricsArgs, opts: pulumi.ResourceOptions | None = None):
        checked = _checked(name, args)
        super().__init__(type_token(type(self)), name, None, opts)
        self.config: MetricsOnCluster = checked
        c = checked.collected
        waits = depends_on_of(opts)
        self.objects: list[pulumi.Resource] = []
        if c.managed_prometheus:
            for manifest in scrape_manifests():
                self.objects.append(
                    k8s_objects.apply(
                        manifest,
                        pulumi.ResourceOptions(parent=self, depends_on=waits),
                        name=child_name(name, "metrics", k8s_objects.resource_name(manifest)),
                    )
                )
        self.dashboard: gcp.monitoring.Dashboard | None = None
        if c.dashboard:
            self.dashboard = gcp.monitoring.Dashboard(
                child_name(name, "metrics", "dashboard"),
                dashboard_json=dashboard_json(checked.cluster_name, c, list(checked.gpu_pools), list(checked.tpu_pools)),
                project=args.get("project"),
                # What the component depends on includes, in a stack, the cluster and so the
                # project's Cloud Monitoring API.
                opts=pulumi.ResourceOptions(parent=self, depends_on=waits),
            )
        self.dashboard_id = self.dashboard.id if self.dashboard is not None else pulumi.Output.from_input("")
        self.register_outputs({"dashboard_id": self.dashboard_id})


def stack_metrics_args(plan: Plan) -> dict:
    """Metrics' args for a stack's metrics key, its defaults resolved against the stack's pools
    (gke_ai_batch/components/platform.py)."""
    cfg = plan.config
    c = cfg.collected
    return {
        "cluster_name": cfg.cluster.name,
        "project": plan.project,
        "managed_prometheus": c.managed_prometheus,
        "dcgm": c.dcgm,
        "tpu": c.tpu,
        "dashboard": c.dashboard,
        "gpu_pools": [p.name for p in cfg.node_pools if p.kind == "gpu"],
        "tpu_pools": [p.name for p in cfg.node_pools if p.kind == "tpu"],
    }
