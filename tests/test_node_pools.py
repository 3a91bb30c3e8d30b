"""The exact NodePool arguments GKE receives, per capacity type and TPU shape (as synth
records them: camelCase, the way the engine gets them)."""

from __future__ import annotations

import pytest

from conftest import base_config, by_name, synth_config

NODE_POOL = "gcp:container/nodePool:NodePool"
SA = "test-nodes@test-project.iam.gserviceaccount.com"
SECURE = {
    "serviceAccount": SA,
    "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
    "shieldedInstanceConfig": {"enableSecureBoot": True, "enableIntegrityMonitoring": True},
    "workloadMetadataConfig": {"mode": "GKE_METADATA"},
    "metadata": {"disable-legacy-endpoints": "true"},
}
COMMON = {"cluster": "test", "location": "us-central1", "project": "test-project", "nodeLocations": ["us-central1-a"]}


def pools(tmp_path, *entries, cluster=None):
    config = base_config(nodePools=list(entries))
    if cluster:
        config["gke-ai-batch:cluster"] = {**config["gke-ai-batch:cluster"], **cluster}
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    return result


def inputs(result, name):
    return by_name(result, NODE_POOL, name)["inputs"]


def test_on_demand_multi_host_tpu_slices(tmp_path):
    result = pools(tmp_path, {"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}, "slices": 2})
    for i in range(2):
        assert inputs(result, f"v6e-{i}") == {
            **COMMON,
            "name": f"v6e-{i}",
            "nodeCount": 4,
            "management": {"autoRepair": True, "autoUpgrade": True},
            "placementPolicy": {"type": "COMPACT", "tpuTopology": "4x4"},
            "nodeConfig": {
                "machineType": "ct6e-standard-4t",
                "labels": {"gke-ai-batch/capacity": "on-demand"},
                **SECURE,
            },
        }


def test_single_host_tpu_has_no_topology(tmp_path):
    result = pools(tmp_path, {"name": "v5e", "tpu": {"version": "v5e", "topology": "2x2"}})
    got = inputs(result, "v5e-0")
    assert got["nodeCount"] == 1
    assert "placementPolicy" not in got
    assert got["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"


def test_spot_tpu(tmp_path):
    result = pools(tmp_path, {"name": "s", "tpu": {"version": "v5e", "topology": "2x4"}, "capacity": "spot"})
    got = inputs(result, "s-0")
    assert got["nodeCount"] == 2
    assert got["nodeConfig"]["spot"] is True
    assert got["nodeConfig"]["labels"] == {"gke-ai-batch/capacity": "spot"}
    assert "reservationAffinity" not in got["nodeConfig"]
    assert "autoscaling" not in got


def test_reservation_tpu(tmp_path):
    result = pools(
        tmp_path,
        {"name": "r", "tpu": {"version": "v5p", "topology": "4x4x4"}, "capacity": "reservation", "reservation": "res-1"},
    )
    got = inputs(result, "r-0")
    assert got["nodeCount"] == 16
    assert got["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4x4"}
    assert got["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["res-1"],
    }


def test_flex_start_multi_host_tpu(tmp_path):
    result = pools(
        tmp_path,
        {"name": "f", "tpu": {"version": "v6e", "topology": "2x4"}, "capacity": "flexStart", "maxRunDuration": "48h"},
        cluster={"minMasterVersion": "1.34"},
    )
    assert inputs(result, "f-0") == {
        **COMMON,
        "name": "f-0",
        "initialNodeCount": 0,
        # Per zone (the slice's one zone): with total limits the provider would send
        # maxNodeCount 0, which GKE rejects for a TPU slice.
        "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2, "locationPolicy": "ANY"},
        "management": {"autoRepair": False, "autoUpgrade": True},
        "placementPolicy": {"type": "COMPACT", "tpuTopology": "2x4"},
        "nodeConfig": {
            "machineType": "ct6e-standard-4t",
            "labels": {"gke-ai-batch/capacity": "flex-start"},
            "flexStart": True,
            "maxRunDuration": "172800s",
            "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            **SECURE,
        },
    }


def test_flex_start_single_host_tpu_scales_to_one(tmp_path):
    result = pools(tmp_path, {"name": "f", "tpu": {"version": "v6e", "topology": "2x2"}, "capacity": "flexStart"})
    got = inputs(result, "f-0")
    assert got["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 1, "locationPolicy": "ANY"}
    assert "placementPolicy" not in got


def test_queued_multi_host_tpu_has_per_zone_limits_only(tmp_path):
    result = pools(tmp_path, {"name": "q", "tpu": {"version": "v6e", "topology": "4x4"}, "capacity": "queued", "slices": 2})
    for i in range(2):
        got = inputs(result, f"q-{i}")
        assert got["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
        assert len(got["nodeLocations"]) == 1  # one zone: per zone is the pool's total
        assert (got["initialNodeCount"], got["queuedProvisioning"]) == (0, {"enabled": True})
        assert got["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}


def test_regional_gpu_pool_keeps_total_limits(tmp_path):
    # Across three zones a per-zone limit would triple the pool; totals say what the stack says.
    result = pools(
        tmp_path,
        {"name": "g", "gpu": {"type": "nvidia-l4"}, "machineType": "g2-standard-8", "capacity": "flexStart", "maxNodes": 4},
        cluster={"nodeLocations": ["us-central1-a", "us-central1-b", "us-central1-c"]},
    )
    assert inputs(result, "g")["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}


def test_queued_gpu(tmp_path):
    result = pools(
        tmp_path,
        {
            "name": "q",
            "gpu": {"type": "nvidia-h100-80gb", "count": 8, "driverVersion": "latest"},
            "capacity": "queued",
            "maxNodes": 4,
            "gvnic": True,
        },
    )
    assert inputs(result, "q") == {
        **COMMON,
        "name": "q",
        "initialNodeCount": 0,
        "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"},
        "management": {"autoRepair": False, "autoUpgrade": True},
        "queuedProvisioning": {"enabled": True},
        "nodeConfig": {
            "machineType": "a3-highgpu-8g",
            "labels": {"gke-ai-batch/capacity": "queued"},
            "guestAccelerators": [
                {"type": "nvidia-h100-80gb", "count": 8, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
            ],
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            "gvnic": {"enabled": True},
            "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            **SECURE,
        },
    }


def test_on_demand_gpu_autoscales_between_min_and_max(tmp_path):
    result = pools(
        tmp_path, {"name": "g", "gpu": {"type": "nvidia-l4", "count": 2}, "machineType": "g2-standard-24", "minNodes": 1, "maxNodes": 3}
    )
    got = inputs(result, "g")
    assert got["autoscaling"] == {"totalMinNodeCount": 1, "totalMaxNodeCount": 3, "locationPolicy": "BALANCED"}
    assert got["initialNodeCount"] == 1
    assert got["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert "spot" not in got["nodeConfig"] and "flexStart" not in got["nodeConfig"]


def test_cpu_pool_carries_no_accelerator_settings(tmp_path):
    result = pools(tmp_path, {"name": "cpu", "machineType": "n2-standard-16", "maxNodes": 10, "capacity": "spot"})
    got = inputs(result, "cpu")
    assert got["nodeConfig"] == {"machineType": "n2-standard-16", "spot": True, **SECURE}
    assert got["autoscaling"]["locationPolicy"] == "ANY"


def test_tpu7x_multi_host_uses_a_workload_policy(tmp_path):
    result = pools(
        tmp_path,
        {"name": "iw", "tpu": {"version": "tpu7x", "topology": "2x2x2"}, "zones": ["us-central1-c"]},
        cluster={"minMasterVersion": "1.34"},
    )
    policy = by_name(result, "gcp:compute/resourcePolicy:ResourcePolicy", "test-iw")
    assert policy["inputs"] == {
        "name": "test-iw",
        "project": "test-project",
        "region": "us-central1",
        "workloadPolicy": {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "2x2x2"},
    }
    pool = by_name(result, NODE_POOL, "iw-0")
    assert pool["inputs"]["placementPolicy"] == {"type": "", "policyName": "test-iw", "tpuTopology": "2x2x2"}
    assert pool["inputs"]["nodeCount"] == 2
    assert policy["urn"] in pool["dependencies"]


def test_system_pool_and_cluster_security(tmp_path):
    result = pools(tmp_path)
    system = by_name(result, NODE_POOL, "system")["inputs"]
    assert system["autoscaling"] == {"totalMinNodeCount": 1, "totalMaxNodeCount": 3, "locationPolicy": "BALANCED"}
    assert system["nodeConfig"]["serviceAccount"] == SA
    cluster = by_name(result, "gcp:container/cluster:Cluster", "cluster")["inputs"]
    assert cluster["removeDefaultNodePool"] is True
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "test-project.svc.id.goog"}
    assert cluster["enableShieldedNodes"] is True
    assert cluster["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster["deletionProtection"] is True
    role = by_name(result, "gcp:projects/iAMMember:IAMMember", "nodes-role")["inputs"]
    assert role["role"] == "roles/container.defaultNodeServiceAccount"
    assert role["member"] == f"serviceAccount:{SA}"


def test_autopilot_cluster(tmp_path):
    config = base_config()
    config["gke-ai-batch:cluster"] = {"name": "ap", "mode": "autopilot", "privateNodes": True}
    result = synth_config(tmp_path, config)
    assert result.error is None
    cluster = by_name(result, "gcp:container/cluster:Cluster", "cluster")["inputs"]
    assert cluster["enableAutopilot"] is True
    assert "removeDefaultNodePool" not in cluster and "enableShieldedNodes" not in cluster
    assert cluster["clusterAutoscaling"]["autoProvisioningDefaults"]["serviceAccount"].startswith("ap-nodes@")
    assert cluster["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert not [r for r in result.recording.resources if r.type == NODE_POOL]


@pytest.mark.parametrize("production", [True, False])
def test_production_protects_cluster_every_pool_and_the_node_account(tmp_path, production):
    config = base_config(
        production=production,
        cluster={"name": "test", "nodeLocations": ["us-central1-a"], "privateNodes": True},
        nodePools=[
            {"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}},
            {"name": "g", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "capacity": "queued", "maxNodes": 2},
        ],
    )
    result = synth_config(tmp_path, config)
    stateful = [
        ("gcp:container/cluster:Cluster", "cluster"),
        (NODE_POOL, "system"),
        (NODE_POOL, "v6e-0"),
        (NODE_POOL, "g"),
        ("gcp:serviceaccount/account:Account", "nodes"),
    ]
    for type_, name in stateful:
        options = by_name(result, type_, name).get("options", {})
        assert options.get("protect", False) is production, name
        # Fixed names: a replacement has to delete the old object before creating the new one.
        assert options["deleteBeforeReplace"] is True
    # The autoscaler owns node counts: only autoscaled pools ignore them.
    assert by_name(result, NODE_POOL, "g")["options"]["ignoreChanges"] == ["initialNodeCount", "nodeCount"]
    assert "ignoreChanges" not in by_name(result, NODE_POOL, "v6e-0").get("options", {})
    # A TPU pool cannot be reshaped in place: a new topology or machine type is a new pool.
    assert by_name(result, NODE_POOL, "v6e-0")["options"]["replaceOnChanges"] == ["nodeConfig.machineType", "placementPolicy"]
    assert "replaceOnChanges" not in by_name(result, NODE_POOL, "g")["options"]
