"""Library args that would fail at `pulumi up` or mean nothing are refused on construction, at
their arg path, by the rule a stack file's key has; the closest value that works is accepted."""

from __future__ import annotations

import pytest

from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.queues import ClusterQueue
from gke_ai_batch.components.storage import CheckpointBucket
from gke_ai_batch.components.metrics import Metrics
from gke_ai_batch.config.errors import ArgsError
from support.programs import run_program

REF = {"name": "ml", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
SA = "ml-nodes@acme-ml.iam.gserviceaccount.com"
TPU = {"version": "v6e", "topology": "4x4"}
CPU_FLAVOR = {"name": "cpu", "node_labels": {"pool": "cpu"}}
BUCKET = {"bucket": "acme-ckpt", "location": "us-central1", "project": "acme-ml", "project_number": "123456",
          "namespace": "research"}


def _refused(make, name, args) -> list[str]:
    with pytest.raises(ArgsError) as refused:
        make(name, args)
    return str(refused.value).splitlines()


# What each refusal below is closest to, accepted: one program, recorded once.
ACCEPTED = f"""
import pulumi
from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.queues import ClusterQueue, ResourceFlavor
from gke_ai_batch.components.storage import CheckpointBucket
from gke_ai_batch.components.metrics import Metrics

REF = {REF!r}
TpuSlices("sa", {{"cluster": {{**REF, "node_service_account": {SA!r}}}, **{TPU!r}}})
TpuSlices("sa-output", {{"cluster": {{**REF, "node_service_account": pulumi.Output.from_input({SA!r}),
                                     "project": pulumi.Output.from_input("acme-ml")}}, **{TPU!r}}})
ClusterQueue("dws", {{"flavors": [{{**{CPU_FLAVOR!r}, "queued": True, "quotas": {{"cpu": 4}}}}], "provisioning_check": "dws-prov",
                     "admission_checks": ["fleet"]}})
ResourceFlavor("tas", {{**{CPU_FLAVOR!r}, "topology_name": "default"}})
CheckpointBucket("ckpt", {BUCKET!r})
Metrics("metrics", {{"cluster_name": "ml", "project": pulumi.Output.from_input("acme-ml")}})
"""


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    return run_program(tmp_path_factory.mktemp("libvals"), ACCEPTED)


def _inputs(recording, type_: str) -> dict[str, dict]:
    return {r.name: r.inputs for r in recording.resources if r.type == type_}


@pytest.mark.parametrize(
    ("key", "value", "line"),
    [
        ("node_service_account", 5, "TpuSlices p: args.cluster.node_service_account: must be a string or an Output, not int"),
        ("project", 5, "TpuSlices p: args.cluster.project: must be a string or an Output, not int"),
        ("project", "Acme ML", "TpuSlices p: args.cluster.project: 'Acme ML' is not a Google Cloud project id"),
    ],
)
def test_a_cluster_ref_key_of_the_wrong_kind_is_refused(key, value, line):
    lines = _refused(TpuSlices, "p", {"cluster": {**REF, key: value}, **TPU})
    assert len(lines) == 1 and lines[0].startswith(line), lines


def test_a_cluster_ref_account_and_project_as_strings_or_outputs_reach_the_pools(accepted):
    pools = _inputs(accepted, "gcp:container/nodePool:NodePool")
    assert pools["sa-0"]["nodeConfig"]["serviceAccount"] == SA
    assert pools["sa-output-0"]["nodeConfig"]["serviceAccount"] == SA
    assert pools["sa-output-0"]["project"] == "acme-ml"


def test_a_provisioning_check_that_is_not_a_name_is_refused():
    flavors = [{**CPU_FLAVOR, "quotas": {"cpu": 4}}]
    assert _refused(ClusterQueue, "q", {"flavors": flavors, "provisioning_check": 1}) == [
        "ClusterQueue q: args.provisioning_check: Input should be a valid string, got 1"
    ]
    [line] = _refused(ClusterQueue, "q", {"flavors": flavors, "provisioning_check": "DWS_prov"})
    assert line.startswith("ClusterQueue q: args.provisioning_check: 'DWS_prov'"), line


def test_an_admission_check_that_is_no_kubernetes_name_is_refused():
    flavors = [{**CPU_FLAVOR, "quotas": {"cpu": 4}}]
    [line] = _refused(ClusterQueue, "q", {"flavors": flavors, "admission_checks": ["fleet", "Bad_Name"]})
    assert line.startswith("ClusterQueue q: args.admission_checks[1]: 'Bad_Name' is not a valid Kubernetes name"), line


def test_a_provisioning_check_and_admission_checks_named_as_kubernetes_names_are_in_the_queue(accepted):
    [queue] = _inputs(accepted, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue").values()
    assert "dws-prov" in str(queue["spec"]) and "fleet" in str(queue["spec"])


def test_a_flavors_topology_name_that_is_not_a_string_is_refused_and_a_name_is_rendered(accepted):
    from gke_ai_batch.components.queues import ResourceFlavor

    assert _refused(ResourceFlavor, "f", {**CPU_FLAVOR, "topology_name": 5}) == [
        "ResourceFlavor f: args.topology_name: Input should be a valid string, got 5"
    ]
    [flavor] = _inputs(accepted, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor").values()
    assert flavor["spec"]["topologyName"] == "default"


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ({"bucket": 12345}, "CheckpointBucket b: args.bucket: must be a string, not int"),
        ({"location": 5}, "CheckpointBucket b: args.location: must be a string, not int"),
        ({"project": 5}, "CheckpointBucket b: args.project: must be a string, not int"),
        ({"project": "Acme ML"}, "CheckpointBucket b: args.project: 'Acme ML' is not a Google Cloud project id"),
    ],
)
def test_a_checkpoint_bucket_name_location_or_project_of_the_wrong_kind_is_refused(change, line):
    lines = _refused(CheckpointBucket, "b", {**BUCKET, **change})
    assert len(lines) == 1 and lines[0].startswith(line), lines


def test_a_checkpoint_bucket_of_plain_strings_is_made(accepted):
    [bucket] = _inputs(accepted, "gcp:storage/bucket:Bucket").values()
    assert (bucket["name"], bucket["project"], bucket["location"]) == ("acme-ckpt", "acme-ml", "US-CENTRAL1")


def test_a_metrics_project_that_is_a_number_is_refused_and_an_output_passes(accepted):
    assert _refused(Metrics, "m", {"cluster_name": "ml", "project": 5}) == [
        "Metrics m: args.project: must be a string or an Output, not int"
    ]
    assert [r.name for r in accepted.resources if r.type == "gke-ai-batch:index:Metrics"] == ["metrics"]


# An existing cluster's version: Kueue runs on Kubernetes 1.29 or newer (versions.EXISTING_CLUSTER_MIN).
EXISTING = {**REF, "version": "1.28.15-gke.1159000", "endpoint": "gke-0123abcd.us-east5.gke.goog", "node_service_account": SA}
BELOW = "is Kubernetes 1.28, and Kueue runs on Kubernetes 1.29 or newer"
AT_FLOOR = "1.29.0-gke.1000000"


def test_an_existing_cluster_below_kueues_kubernetes_is_refused():
    from gke_ai_batch.components.cluster import ExistingCluster
    from gke_ai_batch.components.nodepools import CpuPool

    [line] = _refused(ExistingCluster, "c", EXISTING)
    assert line.startswith("ExistingCluster c: args.version: GKE 1.28.15-gke.1159000 " + BELOW), line
    [line] = _refused(CpuPool, "p", {"cluster": EXISTING, "machine_type": "n2-standard-8", "max_nodes": 2})
    assert line.startswith("CpuPool p: args.cluster.version: GKE 1.28.15-gke.1159000 " + BELOW), line


def test_an_existing_cluster_at_kueues_kubernetes_is_accepted(tmp_path):
    recording = run_program(tmp_path, f"""
from gke_ai_batch.components.cluster import ExistingCluster
from gke_ai_batch.components.nodepools import CpuPool
c = ExistingCluster("c", {{**{EXISTING!r}, "version": {AT_FLOOR!r}}})
CpuPool("p", {{"cluster": c.ref(), "machine_type": "n2-standard-8", "max_nodes": 2}})
""")
    assert [r.name for r in recording.resources if r.type == "gcp:container/nodePool:NodePool"] == ["p"]


def _existing_stack(version: str) -> dict:
    return {
        "gcp:project": "acme-ml",
        "gcp:region": "us-east5",
        "gke-ai-batch:cluster": {"name": "ml-shared", "existing": True, "version": version,
                                 "endpoint": "gke-0123abcd.us-east5.gke.goog", "nodeServiceAccount": SA},
        "gke-ai-batch:nodePools": [{"name": "cpu", "machineType": "n2-standard-8", "maxNodes": 2, "zones": ["us-east5-b"]}],
    }


def test_a_stacks_existing_cluster_below_kueues_kubernetes_is_refused_and_at_it_renders(tmp_path):
    from conftest import synth_refused, synth_rendered

    synth_refused(tmp_path, _existing_stack("1.28.15-gke.1159000"), "gke-ai-batch:cluster.version", BELOW)
    synth_rendered(tmp_path, _existing_stack(AT_FLOOR))


# The Managed Lustre CSI driver a program turns on (GkeCluster addons.lustre_csi_driver): the
# stack's checkpoints.lustre rule, region and version floor (versions.LUSTRE_CSI_MIN).
def _lustre(location: str, patch: str | None = None) -> dict:
    args = {"name": "ml", "location": location, "project": "acme-ml", "addons": {"lustre_csi_driver": True}}
    if patch is not None:
        # A catalogue whose only 1.33 patch is `patch`: the alias 1.33 resolves to it.
        args.update(min_master_version="1.33", catalogue={"channels": {"REGULAR": {"minors": ["1.33"], "patches": [patch]}}})
    return args


def test_a_library_clusters_lustre_driver_where_managed_lustre_is_not_or_below_its_version_is_refused():
    from gke_ai_batch.components.cluster import GkeCluster
    from gke_ai_batch.domain import versions

    [line] = _refused(GkeCluster, "c", _lustre("us-east5"))
    assert line.startswith("GkeCluster c: args.addons.lustre_csi_driver: Managed Lustre has no instances in us-east5"), line
    [line] = _refused(GkeCluster, "c", _lustre("us-central1", "1.33.2-gke.1110999"))
    assert line.startswith(
        f"GkeCluster c: args.addons.lustre_csi_driver: the Managed Lustre CSI driver and its volumes need GKE {versions.LUSTRE_CSI_MIN} or later"
    ), line


def test_a_library_clusters_lustre_driver_in_a_lustre_region_at_its_version_is_enabled(tmp_path):
    from gke_ai_batch.domain import versions

    recording = run_program(tmp_path, f"""
from gke_ai_batch.components.cluster import GkeCluster
GkeCluster("c", {_lustre("us-central1", versions.LUSTRE_CSI_MIN)!r})
""")
    [cluster] = [r.inputs for r in recording.resources if r.type == "gcp:container/cluster:Cluster"]
    assert cluster["addonsConfig"]["lustreCsiDriverConfig"] == {"enabled": True}


# GKE's DCGM package a program turns on (GkeCluster monitoring.dcgm): the stack's metrics.dcgm
# rules, collection by managed Prometheus and the GKE floor (versions.DCGM_METRICS_MIN).
def test_a_library_clusters_dcgm_without_managed_collection_or_below_its_version_is_refused():
    from gke_ai_batch.components.cluster import GkeCluster
    from gke_ai_batch.domain import versions

    base = {"name": "ml", "location": "us-central1", "project": "acme-ml"}
    [line] = _refused(GkeCluster, "c", {**base, "monitoring": {"dcgm": True}})
    assert line.startswith("GkeCluster c: args.monitoring.dcgm: GKE's managed DCGM metrics are collected by Managed Service for Prometheus"), line
    old = {"min_master_version": "1.30", "catalogue": {"channels": {"REGULAR": {"minors": ["1.30"], "patches": ["1.30.1-gke.1203999"]}}}}
    [line] = _refused(GkeCluster, "c", {**base, **old, "monitoring": {"dcgm": True, "managed_prometheus": True}})
    assert line.startswith(f"GkeCluster c: args.monitoring.dcgm: GKE's managed DCGM metrics need GKE {versions.DCGM_METRICS_MIN} or later"), line


def test_a_library_clusters_dcgm_with_managed_collection_at_its_version_is_enabled(tmp_path):
    from gke_ai_batch.domain import versions

    at = {"min_master_version": "1.30", "catalogue": {"channels": {"REGULAR": {"minors": ["1.30"], "patches": [versions.DCGM_METRICS_MIN]}}}}
    recording = run_program(tmp_path, f"""
from gke_ai_batch.components.cluster import GkeCluster
GkeCluster("c", {{"name": "ml", "location": "us-central1", "project": "acme-ml", **{at!r},
                  "monitoring": {{"dcgm": True, "managed_prometheus": True}}}})
""")
    [cluster] = [r.inputs for r in recording.resources if r.type == "gcp:container/cluster:Cluster"]
    assert "DCGM" in cluster["monitoringConfig"]["enableComponents"]
    assert cluster["monitoringConfig"]["managedPrometheus"] == {"enabled": True}


# Quotas Kueue would not enforce as written: an int64 of its units (cpu in millicores) or more is
# read as unlimited (quantity.quota_limit), a number outside int64 is no Kubernetes amount, and a
# whole number a double cannot hold reaches Kubernetes rounded (Pulumi sends numbers as doubles).
INT64_OUT = 10**40


@pytest.mark.parametrize(
    ("resource", "quota", "path", "words"),
    [
        ("cpu", INT64_OUT, "quotas.cpu", f"{INT64_OUT} is outside the 64-bit integer range"),
        ("cpu", "1e40", "quotas.cpu", "1e40 of cpu is at least 9223372036854775 cores, whose millicores"),
        ("cpu", "9223372036854775", "quotas.cpu", "Kueue reads such a quota as unlimited"),
        ("google.com/tpu", "9223372036854775807", 'quotas["google.com/tpu"]', "at least 9223372036854775807, the most an int64 holds"),
        ("memory", 2**53 + 1, "quotas.memory", "9007199254740993 would reach Kubernetes as 9007199254740992"),
        ("cpu", {"nominal": 4, "borrowing_limit": "8Ei"}, "quotas.cpu.borrowing_limit", "8Ei of cpu is at least"),
    ],
)
def test_a_quota_kueue_would_not_enforce_as_written_is_refused(resource, quota, path, words):
    lines = _refused(ClusterQueue, "q", {"flavors": [{**CPU_FLAVOR, "quotas": {resource: quota}}], "cohort": "ml"})
    assert len(lines) == 1 and lines[0].startswith(f"ClusterQueue q: args.flavors[0].{path}: "), lines
    assert words in lines[0], lines


def test_the_largest_quotas_kueue_enforces_are_rendered(tmp_path):
    quotas = {"cpu": "9223372036854774999m", "google.com/tpu": "9223372036854775806", "memory": 2**53}
    recording = run_program(tmp_path, f"""
from gke_ai_batch.components.queues import ClusterQueue
ClusterQueue("q", {{"flavors": [{{**{CPU_FLAVOR!r}, "quotas": {quotas!r}}}]}})
""")
    [queue] = [r.inputs for r in recording.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"]
    [flavor] = queue["spec"]["resourceGroups"][0]["flavors"]
    assert {r["name"]: r["nominalQuota"] for r in flavor["resources"]} == quotas


def _quota_stack(quotas: dict) -> dict:
    from conftest import base_config

    return base_config(
        nodePools=[{"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}}],
        clusterQueues=[{"name": "cq", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": quotas}]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}],
    )


def test_a_stacks_quota_kueue_would_not_enforce_is_refused_with_the_librarys_message(tmp_path):
    from conftest import synth_refused

    at = 'gke-ai-batch:clusterQueues[0].flavors[0].quotas'
    synth_refused(tmp_path, _quota_stack({"cpu": INT64_OUT}), f"{at}.cpu", f"{INT64_OUT} is outside the 64-bit integer range")
    synth_refused(tmp_path, _quota_stack({"google.com/tpu": 16, "cpu": "1e40"}), f"{at}.cpu",
                  "1e40 of cpu is at least 9223372036854775 cores, whose millicores")


def test_a_stacks_largest_enforced_quota_renders(tmp_path):
    from conftest import synth_rendered

    synth_rendered(tmp_path, _quota_stack({"google.com/tpu": 16, "cpu": "9223372036854774999m"}))


def test_a_cluster_ref_projects_form_is_said_with_the_other_problems():
    lines = _refused(TpuSlices, "p", {"cluster": {**REF, "project": "p"}, "version": "v6e", "topology": "4x5"})
    assert [line.split(":")[1].strip() for line in lines] == ["args.cluster.project", "args.topology"], lines
