"""The report's Metrics section: what Managed Service for Prometheus and GKE collect, and the
dashboard's charts. Read from the resolved metrics key and the same functions the Metrics
component and the cluster's arguments use (gke_ai_batch/plan/metrics.py)."""

from __future__ import annotations

from gke_ai_batch.domain import metrics as m
from gke_ai_batch.plan.metrics import SCRAPED, dashboard_panels, monitoring_config_args

from .md import code, table

GUIDE = "docs/metrics.md"


def section(plan) -> list[str]:
    cfg = plan.config
    c = cfg.collected
    if c is None:
        return [
            "⚠️ No metrics: neither Kueue's pending demand nor the accelerators' utilization is collected. Set "
            f"`gke-ai-batch:metrics` ({GUIDE})."
        ]
    rows = []
    if c.managed_prometheus:
        for target, ns in SCRAPED:
            rows.append([target.what, f"PodMonitoring `{ns}/{target.what.lower()}`",
                         f"port `{target.port}` {target.path} (HTTPS, a token that may read it), every {m.SCRAPE_INTERVAL}"])
    gpu = ", ".join(p.name for p in cfg.node_pools if p.kind == "gpu") or "none in this stack"
    tpu = ", ".join(p.name for p in cfg.node_pools if p.kind == "tpu") or "none in this stack"
    if c.dcgm:
        how = "declared on the existing cluster" if c.existing else "GKE's DCGM package (`monitoring_config`)"
        rows.append(["GPU nodes (DCGM)", how, f"pools: {gpu}"])
    if c.tpu:
        rows.append(["TPU nodes", "GKE system metrics", f"pools: {tpu}"])
    lines = table(["what", "collected by", "from"], rows) if rows else ["Nothing is collected."]
    monitoring = monitoring_config_args(c)
    if monitoring is not None:
        lines += [
            "",
            f"Cluster monitoring: managed collection {'on' if c.managed_prometheus else 'off'}, components "
            f"{', '.join(code(x) for x in monitoring['enable_components'])}.",
        ]
    elif c.existing:
        lines += [
            "",
            f"Existing cluster `{cfg.cluster.name}`: its managed collection and DCGM package are set where it is "
            "managed; this stack relies on them as declared and does not change them.",
        ]
    if plan.kueue.resource_metrics:
        lines += ["", "Kueue exports each cluster queue's quota and usage per flavor (`enableClusterQueueResources`)."]
    elif c.managed_prometheus:
        lines += [
            "",
            "⚠️ Kueue does not export quota and usage per flavor (`kueue.resourceMetrics` is off, or not stated for "
            "the Kueue installed already): the dashboard's quota chart stays empty.",
        ]
    if c.dashboard:
        panels = dashboard_panels(cfg.cluster.name, c, [], [])
        lines += [
            "",
            f"Dashboard `gke-ai-batch {cfg.cluster.name}` (Cloud Monitoring, project `{plan.project}`):",
            "",
            *table(["chart", "PromQL"], [[title, code(q)] for title, q in panels]),
        ]
    return lines
