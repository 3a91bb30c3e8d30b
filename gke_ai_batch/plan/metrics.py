"""What gke-ai-batch:metrics registers: the cluster's monitoring_config, the objects that let
Managed Service for Prometheus (GMP) scrape Kueue and JobSet, and the Cloud Monitoring
dashboard's JSON. Pure functions of a few plain values, so the Metrics component
(gke_ai_batch/components/metrics.py) derives the same from its args; docs/metrics.md."""

from __future__ import annotations

import json
from typing import Any, Iterable

from gke_ai_batch.config.metrics import Collected
from gke_ai_batch.domain import metrics as m
from gke_ai_batch.domain.metrics import Scraped
from gke_ai_batch.plan.kueue import JOBSET_NAMESPACE, KUEUE_NAMESPACE

RBAC = "rbac.authorization.k8s.io/v1"
MONITORING = "monitoring.googleapis.com/v1"
SCRAPER = "gke-ai-batch-metrics"
TOKEN = f"{SCRAPER}-token"
TOKEN_KEY = "token"  # the key the token controller writes (kubernetes.io/service-account-token)
LABELS = {"app.kubernetes.io/part-of": "gke-ai-batch", "app.kubernetes.io/component": "metrics"}
SCRAPED = ((m.KUEUE, KUEUE_NAMESPACE), (m.JOBSET, JOBSET_NAMESPACE))


def monitoring_config_args(c: Collected) -> dict[str, Any] | None:
    """pulumi-gcp ClusterMonitoringConfig for a cluster this program creates, or None (an
    existing cluster's monitoring is set where it is managed)."""
    if c.existing:
        return None
    return monitoring_config(c.managed_prometheus, c.dcgm)


def monitoring_config(managed_prometheus: bool = False, dcgm: bool = False) -> dict[str, Any]:
    """GKE's default system components, DCGM's added when asked for (setting the list replaces
    GKE's defaults), and Managed Service for Prometheus on or off."""
    components = [*m.DEFAULT_COMPONENTS, *([m.DCGM_COMPONENT] if dcgm else [])]
    return {"enable_components": components, "managed_prometheus": {"enabled": managed_prometheus}}


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def scrape_manifests(scraped: Iterable[tuple[Scraped, str]] = SCRAPED) -> list[dict[str, Any]]:
    """For each controller and its namespace: a service account whose token may read /metrics,
    that token as a Secret, the collectors' right to read it, and the PodMonitoring; then one
    ClusterRole for /metrics bound to each service account. In creation order."""
    out: list[dict[str, Any]] = []
    subjects = []
    for target, ns in scraped:
        subjects.append({"kind": "ServiceAccount", "name": SCRAPER, "namespace": ns})
        out += [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(SCRAPER, ns)},
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {**_meta(TOKEN, ns), "annotations": {"kubernetes.io/service-account.name": SCRAPER}},
                "type": "kubernetes.io/service-account-token",
            },
            {
                "apiVersion": RBAC,
                "kind": "Role",
                "metadata": _meta(TOKEN, ns),
                "rules": [
                    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [TOKEN], "verbs": ["get", "list", "watch"]}
                ],
            },
            {
                "apiVersion": RBAC,
                "kind": "RoleBinding",
                "metadata": _meta(TOKEN, ns),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": TOKEN},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": where} for where, sa in m.COLLECTORS],
            },
            pod_monitoring(target, ns),
        ]
    out += [
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": _meta(SCRAPER),
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        },
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": _meta(SCRAPER),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SCRAPER},
            "subjects": subjects,
        },
    ]
    return out


def pod_monitoring(target: Scraped, namespace: str) -> dict[str, Any]:
    # HTTPS with the scraper's token; the serving certificate is the controller's own
    # self-signed one, which Kueue's chart's ServiceMonitor skips verifying too
    # (charts/kueue/values.yaml metrics.serviceMonitor.tlsConfig).
    return {
        "apiVersion": MONITORING,
        "kind": "PodMonitoring",
        "metadata": _meta(target.what.lower(), namespace),
        "spec": {
            "selector": {"matchLabels": dict(target.pod_labels)},
            "endpoints": [
                {
                    "port": target.port,
                    "path": target.path,
                    "scheme": "https",
                    "interval": m.SCRAPE_INTERVAL,
                    "tls": {"insecureSkipVerify": True},
                    "authorization": {"type": "Bearer", "credentials": {"secret": {"name": TOKEN, "key": TOKEN_KEY}}},
                }
            ],
        },
    }


def _tile(i: int, title: str, query: str) -> dict[str, Any]:
    return {
        "xPos": (i % 2) * 24,
        "yPos": (i // 2) * 16,
        "width": 24,
        "height": 16,
        "widget": {
            "title": title,
            "xyChart": {"dataSets": [{"timeSeriesQuery": {"prometheusQuery": query}, "plotType": "LINE"}]},
        },
    }


def dashboard_panels(cluster: str, c: Collected, gpu_pools: list[str], tpu_pools: list[str]) -> list[tuple[str, str]]:
    """(title, PromQL) per chart. GMP labels each series with the cluster's name (`cluster`);
    GKE's system metrics carry it as `cluster_name`."""
    on = f'cluster="{cluster}"'
    panels: list[tuple[str, str]] = []
    if c.kueue_panels:
        by = "cluster_queue, flavor, resource"
        panels += [
            ("Pending workloads per cluster queue", f"sum by (cluster_queue, status) ({m.KUEUE_PENDING}{{{on}}})"),
            ("Admitted workloads per cluster queue", f"sum by (cluster_queue) ({m.KUEUE_ADMITTED_ACTIVE}{{{on}}})"),
            (
                "Quota used per flavor (share of nominal quota)",
                f"sum by ({by}) ({m.KUEUE_RESOURCE_USAGE}{{{on}}}) / (sum by ({by}) ({m.KUEUE_NOMINAL_QUOTA}{{{on}}}) > 0)",
            ),
        ]
    if c.dcgm:
        pools = f" ({', '.join(gpu_pools)})" if gpu_pools else ""
        panels.append((f"GPU utilization per node{pools}", f"avg by (Hostname) ({m.DCGM_GPU_UTIL}{{{on}}})"))
    if c.tpu:
        pools = f" ({', '.join(tpu_pools)})" if tpu_pools else ""
        panels.append(
            (
                f"TPU duty cycle per node{pools}",
                f'avg by (node_name) ({m.TPU_DUTY_CYCLE}{{monitored_resource="k8s_node", cluster_name="{cluster}"}})',
            )
        )
    return panels


def dashboard_json(cluster: str, c: Collected, gpu_pools: list[str], tpu_pools: list[str]) -> str:
    """The dashboard as Cloud Monitoring's API takes it (projects.dashboards, a mosaic layout of
    48 columns), as one deterministic string."""
    tiles = [_tile(i, title, q) for i, (title, q) in enumerate(dashboard_panels(cluster, c, gpu_pools, tpu_pools))]
    body = {"displayName": f"gke-ai-batch {cluster}", "mosaicLayout": {"columns": 48, "tiles": tiles}}
    return json.dumps(body, sort_keys=True)
