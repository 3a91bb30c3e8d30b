"""Metrics: Managed Prometheus collection of Kueue's and JobSet's metrics, GKE's DCGM and TPU
metrics, and the dashboard. Each rule has a refusal (exit 2, the stack file's line and key path,
the rule in the message) and a near miss that synth renders."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import base_config, by_name, synth_refused, synth_rendered, synth_stack
from support import manifests as M
from gke_ai_batch.synth import report as report_md
from gke_ai_batch.domain import metrics as facts
from gke_ai_batch.domain import versions
from gke_ai_batch.plan.metrics import SCRAPER

ROOT = Path(__file__).resolve().parents[1]
CLUSTER_TYPE = "gcp:container/cluster:Cluster"
DASHBOARD_TYPE = "gcp:monitoring/dashboard:Dashboard"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
GPU = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}
TPU = {"name": "v5e", "tpu": {"version": "v5e", "topology": "2x4"}, "capacity": "spot"}
EXISTING = {
    "name": "shared",
    "existing": True,
    "endpoint": "gke-0123456789abcdef0123456789abcdef-123456789012.us-central1.gke.goog",
    "nodeServiceAccount": "shared-nodes@test-project.iam.gserviceaccount.com",
    "nodeLocations": ["us-central1-a"],
}
K = "gke-ai-batch:metrics"


@pytest.fixture(scope="module")
def validator(shared_schemas) -> M.Validator:
    return M.Validator(shared_schemas)


def config(metrics, pools=(GPU,), existing_version: str | None = None) -> dict:
    c = base_config(
        nodePools=copy.deepcopy(list(pools)),
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
    )
    if existing_version is not None and versions.minor_of(existing_version) < versions.minor_of(versions.EXISTING_CLUSTER_MIN):
        # Below the oldest minor an existing cluster may run (Kueue's): a cluster created at that
        # patch, which a catalogue of older minors offers.
        minor = versions.minor_text(versions.minor_of(existing_version))
        c["gke-ai-batch:cluster"]["minMasterVersion"] = minor
        c["gke-ai-batch:catalogue"] = {"channels": {"REGULAR": {"minors": [minor], "patches": [existing_version]}}}
    elif existing_version is not None:
        c["gke-ai-batch:cluster"] = {**EXISTING, "version": existing_version}
    else:
        c["gke-ai-batch:cluster"]["minMasterVersion"] = "1.34"
    if metrics is not None:
        c[K] = copy.deepcopy(metrics)
    return c


refused, rendered = synth_refused, synth_rendered


def below(floor: str) -> str:
    """The exact patch just below a floor."""
    major, minor, patch, gke = versions.patch_key(floor)
    return f"{major}.{minor}.{patch}-gke.{gke - 1}"


# (id, metrics, pools, the cluster's version or None (an existing cluster's; below Kueue's floor, a created one's), key path, words)
REFUSALS = [
    ("DCGM on a control plane below its floor", {"dcgm": True}, [GPU], below(versions.DCGM_METRICS_MIN),
     f"{K}.dcgm", f"GKE's managed DCGM metrics need GKE {versions.DCGM_METRICS_MIN} or later"),
    ("TPU metrics on a control plane below their floor", {"tpu": True}, [TPU], below(versions.TPU_METRICS_MIN),
     f"{K}.tpu", f"TPU utilization metrics need GKE {versions.TPU_METRICS_MIN} or later"),
    ("DCGM without managed collection", {"managedPrometheus": False}, [GPU], None,
     f"{K}.dcgm", "collected by Managed Service for Prometheus, and metrics.managedPrometheus is false"),
    ("a dashboard with nothing to chart", {"managedPrometheus": False, "dcgm": False}, [GPU], None,
     f"{K}.dashboard", "the dashboard would have no chart"),
    ("a metrics key the schema does not know", {"dcgmm": True}, [GPU], None, f"{K}.dcgmm", "dcgm"),
]

# The nearest configuration GKE accepts, per refusal.
NEAR_MISSES = [
    ("DCGM at exactly its floor", {"dcgm": True}, [GPU], versions.DCGM_METRICS_MIN),
    ("TPU metrics at exactly their floor", {"tpu": True}, [TPU], versions.TPU_METRICS_MIN),
    ("DCGM with managed collection", {"managedPrometheus": True}, [GPU], None),
    ("no dashboard when nothing is charted", {"managedPrometheus": False, "dcgm": False, "dashboard": False}, [GPU], None),
    ("a dashboard of TPU charts alone", {"managedPrometheus": False, "tpu": True}, [TPU], None),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refusals_name_the_key_and_the_rule(tmp_path, case):
    _, metrics, pools, version, path, words = case
    refused(tmp_path, config(metrics, pools, version), path, words)


@pytest.mark.parametrize("case", NEAR_MISSES, ids=[c[0] for c in NEAR_MISSES])
def test_near_misses_render(tmp_path, case):
    _, metrics, pools, version = case
    rendered(tmp_path, config(metrics, pools, version))


def test_the_dcgm_floor_on_a_created_cluster_is_the_channels(tmp_path):
    # Defaults resolve per pool: with a GPU pool the DCGM floor applies to what the channel
    # resolves to, and every minor a channel offers today is above it.
    result = rendered(tmp_path, config({}))
    monitoring = by_name(result, CLUSTER_TYPE, "cluster")["inputs"]["monitoringConfig"]
    assert monitoring["managedPrometheus"] == {"enabled": True}
    assert monitoring["enableComponents"][-1] == "DCGM"
    assert set(facts.DEFAULT_COMPONENTS) <= set(monitoring["enableComponents"])


def test_without_the_key_nothing_is_collected_or_changed(tmp_path):
    result = rendered(tmp_path, config(None))
    assert "monitoringConfig" not in by_name(result, CLUSTER_TYPE, "cluster")["inputs"]
    assert not [r for r in result.recording.resources if r.type in (POD_MONITORING, DASHBOARD_TYPE)]
    assert "No metrics" in report_md.render(result, [])


def test_a_tpu_stack_collects_no_dcgm(tmp_path):
    result = rendered(tmp_path, config({}, [TPU]))
    monitoring = by_name(result, CLUSTER_TYPE, "cluster")["inputs"]["monitoringConfig"]
    assert "DCGM" not in monitoring["enableComponents"]
    dashboard = json.loads(by_name(result, DASHBOARD_TYPE, "dashboard")["inputs"]["dashboardJson"])
    titles = [t["widget"]["title"] for t in dashboard["mosaicLayout"]["tiles"]]
    assert titles[-1] == "TPU duty cycle per node (v5e)" and not any("GPU" in t for t in titles)


def test_an_existing_cluster_keeps_its_monitoring_and_declares_dcgm(tmp_path):
    # This program registers no Cluster for an existing cluster: its DCGM package is declared
    # (dcgm: true), never assumed, and checked against the cluster's version.
    result = rendered(tmp_path, config({}, [GPU], "1.35.7-gke.1222000"))
    assert not [r for r in result.recording.resources if r.type == CLUSTER_TYPE]
    dashboard = json.loads(by_name(result, DASHBOARD_TYPE, "dashboard")["inputs"]["dashboardJson"])
    assert not any("GPU" in t["widget"]["title"] for t in dashboard["mosaicLayout"]["tiles"])
    declared = rendered(tmp_path, config({"dcgm": True}, [GPU], "1.35.7-gke.1222000"))
    dashboard = json.loads(by_name(declared, DASHBOARD_TYPE, "dashboard")["inputs"]["dashboardJson"])
    assert any("GPU" in t["widget"]["title"] for t in dashboard["mosaicLayout"]["tiles"])
    assert "declared on the existing cluster" in report_md.render(declared, [])


def test_kueue_exports_quota_metrics_when_its_metrics_are_collected(tmp_path):
    result = rendered(tmp_path, config({}))
    assert "enableClusterQueueResources: true" in json.dumps(result.plan.kueue_values)
    off = rendered(tmp_path, config({"managedPrometheus": False, "dcgm": False, "dashboard": False}))
    assert "enableClusterQueueResources" not in json.dumps(off.plan.kueue_values)


@pytest.mark.parametrize("stack", ["prod", "gpu-dws"])
def test_shipped_stacks_collect_kueue_jobset_and_gpus_with_a_dashboard(stack, validator):
    result = synth_stack(stack)
    assert result.error is None, result.error
    monitorings = [r.to_json() for r in result.recording.resources if r.type == POD_MONITORING]
    selected = {m["inputs"]["metadata"]["namespace"]: m["inputs"]["spec"]["selector"]["matchLabels"] for m in monitorings}
    assert selected == {"kueue-system": dict(facts.KUEUE.pod_labels), "jobset-system": dict(facts.JOBSET.pod_labels)}
    for m in monitorings:
        assert validator.validate(m["inputs"]) == []
    cluster = by_name(result, CLUSTER_TYPE, "cluster")["inputs"]
    assert "DCGM" in cluster["monitoringConfig"]["enableComponents"]
    dashboard = json.loads(by_name(result, DASHBOARD_TYPE, "dashboard")["inputs"]["dashboardJson"])
    queries = " ".join(t["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"]["prometheusQuery"]
                       for t in dashboard["mosaicLayout"]["tiles"])
    for metric in (facts.KUEUE_PENDING, facts.KUEUE_ADMITTED_ACTIVE, facts.KUEUE_RESOURCE_USAGE, facts.DCGM_GPU_UTIL):
        assert metric in queries
    section = report_md.render(result, []).split("### Metrics", 1)[1].split("\n### ", 1)[0]
    assert "PodMonitoring `kueue-system/kueue`" in section and "Dashboard `gke-ai-batch" in section


def test_the_collectors_may_read_the_token_and_the_token_may_read_metrics():
    from gke_ai_batch.plan.metrics import TOKEN, scrape_manifests

    objs = scrape_manifests()
    bindings = [o for o in objs if o["kind"] == "RoleBinding"]
    assert {(s["namespace"], s["name"]) for b in bindings for s in b["subjects"]} == set(facts.COLLECTORS)
    roles = [o for o in objs if o["kind"] == "Role"]
    assert all(r["rules"][0]["resourceNames"] == [TOKEN] for r in roles)
    (reader,) = [o for o in objs if o["kind"] == "ClusterRole"]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def test_a_pod_monitoring_with_a_namespaced_secret_is_refused(validator):
    # The vendored CRD's own CEL rule, evaluated offline: a near miss (no namespace) passes.
    from gke_ai_batch.domain.metrics import KUEUE
    from gke_ai_batch.plan.metrics import pod_monitoring

    good = pod_monitoring(KUEUE, "kueue-system")
    assert validator.validate(good) == []
    bad = copy.deepcopy(good)
    bad["spec"]["endpoints"][0]["authorization"]["credentials"]["secret"]["namespace"] = "default"
    assert any("Namespace not allowed on PodMonitoring secret references" in p for p in validator.validate(bad))


def test_the_vendored_pod_monitoring_schema_is_the_shared_copy():
    # ../shared beside the repository (.ci/run), or beside a worktree's parent.
    copies = [d / "shared" / "schemas-extra" / "monitoring.googleapis.com" / "v1" / "PodMonitoring.json"
              for d in (ROOT.parent, ROOT.parent.parent)]
    vendored = ROOT / "schema" / "upstream-extra" / "monitoring.googleapis.com" / "v1" / "PodMonitoring.json"
    for shared in [c for c in copies if c.exists()][:1]:
        assert vendored.read_bytes() == shared.read_bytes(), "refresh it: schema/upstream-extra/README.md"
    assert json.loads(vendored.read_text())["properties"]["spec"]["required"] == ["endpoints", "selector"]


def test_component_args_are_checked_by_the_stack_rules():
    from gke_ai_batch.components.metrics import Metrics
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        Metrics("m", {"cluster_name": "Bad_Name", "managed_prometheus": False, "dcgm": True, "dashbord": True})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("Metrics m: args.dashbord: unknown arg (did you mean 'dashboard'?)"), lines
    assert any(line.startswith("Metrics m: args.cluster_name: 'Bad_Name'") for line in lines), lines
    with pytest.raises(ArgsError, match=r"Metrics m: args.dcgm: .*metrics.managedPrometheus is false"):
        Metrics("m", {"cluster_name": "ml", "managed_prometheus": False, "dcgm": True})


def test_the_scrapers_cluster_binding_passes_probe_namespaced_rbac_only_for_urls():
    # Near miss: the ClusterRole reads /metrics alone. Refusal: the same binding once the role
    # also reads an object kind, which a Role in the namespace could have granted.
    from gke_ai_batch.policy import rules

    def violations(tamper) -> list:
        resources = []
        for r in synth_stack("gpu-dws").recording.resources:
            inputs = copy.deepcopy(r.inputs)
            if r.type == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole" and inputs["metadata"]["name"] == SCRAPER:
                tamper(inputs)
            resources.append(rules.Resource(r.urn, r.type, r.name, inputs))
        return list(rules.run(rules.by_name("probe-namespaced-rbac"), resources))

    assert violations(lambda inputs: None) == []
    found = violations(lambda inputs: inputs["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}))
    assert len(found) == 2 and all("cluster-wide rights" in str(v) for v in found), found


def test_an_installed_kueue_is_not_reconfigured_and_the_report_says_the_quota_chart_needs_it(tmp_path):
    cfg = config({}, [GPU], "1.35.7-gke.1222000")
    cfg["gke-ai-batch:kueue"] = {"installed": "0.19.2"}
    result = rendered(tmp_path, cfg)
    assert not result.plan.kueue.resource_metrics
    assert "the dashboard's quota chart stays empty" in report_md.render(result, [])
    cfg["gke-ai-batch:kueue"] = {"installed": "0.19.2", "resourceMetrics": True}
    assert "the dashboard's quota chart stays empty" not in report_md.render(rendered(tmp_path, cfg), [])


PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components.metrics import Metrics

p = k8s.Provider("ml-shared", kubeconfig="{}")
Metrics("a", {"cluster_name": "ml-shared", "tpu_pools": ["v6e"]}, pulumi.ResourceOptions(provider=p))
Metrics("b", {"cluster_name": "ml-other", "dashboard": False}, pulumi.ResourceOptions(provider=p))
"""


def test_the_component_from_any_program_side_by_side(tmp_path):
    from support.programs import run_program

    recording = run_program(tmp_path, PROGRAM)
    urns = [r.urn for r in recording.resources]
    assert len(urns) == len(set(urns))
    by = {(r.type, r.name): r for r in recording.resources}
    assert ("gke-ai-batch:index:Metrics", "a") in by and ("gke-ai-batch:index:Metrics", "b") in by
    monitoring = by[(POD_MONITORING, "a-kueue-system/kueue")]
    assert "ml-shared" in monitoring.options["provider"]
    dashboards = [r for r in recording.resources if r.type == DASHBOARD_TYPE]
    assert [d.name for d in dashboards] == ["a-dashboard"]
    body = json.loads(dashboards[0].inputs["dashboardJson"])
    assert body["displayName"] == "gke-ai-batch ml-shared"
    assert [t["widget"]["title"] for t in body["mosaicLayout"]["tiles"]][-1] == "TPU duty cycle per node (v6e)"
    assert (POD_MONITORING, "b-jobset-system/jobset") in by


def test_an_existing_clusters_dashboard_has_the_monitoring_api(tmp_path):
    # The cluster's own APIs are on already; the dashboard is a Cloud Monitoring resource.
    from gke_ai_batch.plan.apis import MONITORING

    assert MONITORING in rendered(tmp_path, config({}, [GPU], "1.35.7-gke.1222000")).plan.apis
    assert MONITORING not in rendered(tmp_path, config({"dashboard": False}, [GPU], "1.35.7-gke.1222000")).plan.apis
