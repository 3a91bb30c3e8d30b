"""Existing-cluster mode: a stack that names a cluster it did not create gets its pools, Kueue,
JobSet and batch layer on it, and the cluster's declared facts drive the cluster-dependent checks."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from conftest import ROOT, synth_config, synth_stack
from support.diagnostics import assert_names

STACK_FILE = ROOT / "stacks" / "Pulumi.existing-cluster.yaml"
CLUSTER = "gke-ai-batch:cluster"


def existing() -> dict:
    """The shipped example's config, without its samples (the checks here are the cluster's)."""
    config = copy.deepcopy(yaml.safe_load(STACK_FILE.read_text())["config"])
    config.pop("gke-ai-batch:workloads")
    return config


def refused(tmp_path, config: dict, path: str, words: str) -> None:
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    assert result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


def test_the_example_creates_no_cluster_and_has_its_pools_kueue_and_queue():
    result = synth_stack("existing-cluster")
    assert result.exit_code == 0, result.error
    types = [(r.type, r.name) for r in result.recording.resources]
    assert not [t for t in types if t[0] == "gcp:container/cluster:Cluster"]
    pools = sorted(n for t, n in types if t == "gcp:container/nodePool:NodePool")
    assert pools == ["h100-dws", "v6e-spot-0", "v6e-spot-1"]  # no system pool
    assert ("kubernetes:helm.sh/v3:Release", "kueue") in types
    assert ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "research") in types
    # No service account, no project role: the existing nodes' account is declared.
    assert not [t for t in types if t[0] in ("gcp:serviceaccount/account:Account", "gcp:projects/iAMMember:IAMMember")]
    apis = sorted(n for t, n in types if t == "gcp:projects/service:Service")
    assert apis == ["api-compute", "api-container"]


def test_the_example_pools_run_as_the_declared_account_on_the_declared_cluster():
    result = synth_stack("existing-cluster")
    pool = next(r.to_json() for r in result.recording.resources if r.name == "h100-dws" and r.type.endswith("NodePool"))
    text = json.dumps(pool)
    assert '"ml-shared"' in text and "ml-shared-nodes@acme-ml.iam.gserviceaccount.com" in text


def test_the_example_report_shows_the_admission_verdicts_and_the_declared_version():
    report = synth_stack("existing-cluster").extra_files["report.md"]
    assert "existing cluster (not created here) at GKE `1.35.7-gke.1222000`" in report
    assert "| `v6e-smoke` | `research` |" in report and "✅ admitted" in report
    assert "release channel" not in report.splitlines()[2]


@pytest.mark.parametrize(
    "key, value",
    [
        ("releaseChannel", "STABLE"),
        ("minMasterVersion", "1.35"),
        ("controlPlane", {"dnsEndpoint": True}),
        ("privateNodes", True),
        ("databaseEncryption", {"keyName": "projects/acme-ml/locations/us-east5/keyRings/r/cryptoKeys/k"}),
        ("systemPool", {"machineType": "e2-standard-4"}),
        ("deletionProtection", True),
    ],
)
def test_creation_only_settings_are_refused_with_an_existing_cluster(tmp_path, key, value):
    config = existing()
    config[CLUSTER][key] = value
    refused(tmp_path, config, f"{CLUSTER}.{key}", "is decided when a cluster is created")


def test_every_creation_only_setting_is_listed_at_once(tmp_path):
    config = existing()
    config[CLUSTER].update(releaseChannel="STABLE", binaryAuthorization=True)
    result = synth_config(tmp_path, config)
    for key in ("releaseChannel", "binaryAuthorization"):
        assert_names(result.error, tmp_path / "Pulumi.test.yaml", f"{CLUSTER}.{key}", "existing: true")


@pytest.mark.parametrize("key", ["version", "endpoint", "nodeServiceAccount"])
def test_an_existing_cluster_needs_its_facts(tmp_path, key):
    config = existing()
    del config[CLUSTER][key]
    refused(tmp_path, config, f"{CLUSTER}.{key}", "required for an existing cluster")


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("version", "1.35", "not an exact GKE version"),
        ("endpoint", "34.1.2.3", "not a GKE DNS endpoint"),
        # Another region's endpoint is another cluster's (the stack's cluster is in us-east5).
        ("endpoint", "gke-0123abcd-123456789012.us-west1.gke.goog", "not a DNS endpoint of a cluster in us-east5"),
        ("endpoint", "gke-x.y.gke.goog", "its location part is 'y'"),
    ],
)
def test_declared_facts_are_checked(tmp_path, key, value, words):
    config = existing()
    config[CLUSTER][key] = value
    refused(tmp_path, config, f"{CLUSTER}.{key}", words)


@pytest.mark.parametrize("key, value", [("version", "1.35.7-gke.1222000"), ("endpoint", "gke-abc.us-east5.gke.goog")])
def test_existing_only_facts_are_refused_on_a_cluster_this_program_creates(tmp_path, key, value):
    config = existing()
    cluster = config[CLUSTER]
    del cluster["existing"], cluster["version"], cluster["endpoint"]
    cluster[key] = value
    refused(tmp_path, config, f"{CLUSTER}.{key}", "only for an existing cluster")


def test_a_pool_outside_the_existing_clusters_region_is_refused(tmp_path):
    config = existing()
    config["gke-ai-batch:nodePools"][1]["zones"] = ["us-east1-b"]
    refused(tmp_path, config, "gke-ai-batch:nodePools[1].zones[0]", "not in the cluster's region us-east5")


FLEX = "1.33.0-gke.1712000"  # versions.FLEX_START_MIN["tpu"], as GKE's docs state it


def flex_at(version: str) -> dict:
    config = existing()
    config[CLUSTER]["version"] = version
    config["gke-ai-batch:nodePools"][0]["capacity"] = "flexStart"
    config["gke-ai-batch:clusterQueues"][0]["flavors"][0]["name"] = "tpu-v6e-slice-4x4-flex"
    return config


def test_a_flex_start_pool_below_the_declared_versions_floor_is_refused(tmp_path):
    refused(tmp_path, flex_at("1.33.0-gke.1711999"), "gke-ai-batch:nodePools[0].capacity", f"need GKE {FLEX} or later; the existing cluster runs 1.33.0-gke.1711999")


def test_a_flex_start_pool_at_the_declared_versions_floor_is_accepted(tmp_path):
    result = synth_config(tmp_path, flex_at(FLEX))
    assert result.exit_code == 0, result.error


def test_a_fleet_manager_cannot_be_an_existing_cluster(tmp_path):
    config = copy.deepcopy(yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text())["config"])
    facts = {k: v for k, v in existing()[CLUSTER].items() if k in ("existing", "version", "endpoint", "nodeServiceAccount")}
    config[CLUSTER] = {"name": config[CLUSTER]["name"], **facts}
    # The manager's own region (us-central1) in its endpoint, so the fleet rule is the one said.
    config[CLUSTER]["endpoint"] = facts["endpoint"].replace(".us-east5.", ".us-central1.")
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", f"{CLUSTER}.existing", "a fleet's manager is a cluster this program creates")
