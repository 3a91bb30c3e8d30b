"""Hostile and careless values for the day-one config rules: amounts of any size, versions and
machine types written oddly, and network references whose project is implied. Each case is
refused the way GKE, Kueue or the API server would refuse it (exit 2, the key's file:line and
the rule), never a crash, and each refusal has a near miss that renders."""

from __future__ import annotations

import pytest

from gke_ai_batch.domain import quantity
from conftest import base_config, synth_config
from support.diagnostics import assert_names

from test_dayone_k8srules import _gpu_stack

NS = "gke-ai-batch"


def _refused(tmp_path, config: dict, path: str, words: str) -> None:
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error or "rendered"
    assert result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


# -- extended resources of any size: a message, never a crash ------------------------------------


@pytest.mark.parametrize("amount", ["1e100", "9" * 40, "1e999999999", "1e9999999999999999999"])
def test_a_huge_extended_resource_is_refused_as_too_many_not_a_crash(tmp_path, amount):
    _refused(
        tmp_path, _gpu_stack(resources={"nvidia.com/gpu": amount}), f'{NS}:workloads[0].resources["nvidia.com/gpu"]',
        "GPUs per pod never fit a node with 1",
    )


@pytest.mark.parametrize("amount", ["1e-999999999", "1.00000000000000000000000000000000001", "0.0001m"])
def test_a_tiny_fraction_of_an_extended_resource_is_refused(tmp_path, amount):
    # The API server rounds a quantity up to whole milli-units (resource.Quantity.MilliValue),
    # so any positive fraction stays a fraction; Decimal's default context would round it away.
    _refused(
        tmp_path, _gpu_stack(resources={"nvidia.com/gpu": amount}), f'{NS}:workloads[0].resources["nvidia.com/gpu"]',
        "is an extended resource, counted in whole units",
    )


@pytest.mark.parametrize(
    "amount, whole",
    [("1e3", True), ("1Ki", True), ("0e-9999999999999999999", True), ("1e-9999999999999999999", False),
     ("9223372036854775806.5", False), ("1000000000n", True), ("5.", True)],
)
def test_whole_numbers_to_the_api_servers_precision(amount, whole):
    assert quantity.is_whole(amount) is whole


def test_a_whole_gpu_written_with_an_exponent_renders(tmp_path):
    result = synth_config(tmp_path, _gpu_stack(resources={"nvidia.com/gpu": "1e0"}))
    assert result.exit_code == 0, result.error


# -- chart versions: an exact SemVer release, without leading zeros ------------------------------


@pytest.mark.parametrize("version", ["0.019.2", "00.19.2", "0.19.02"])
def test_a_kueue_version_with_a_leading_zero_is_refused_at_its_line(tmp_path, version):
    # Before, the policy pack refused it after the render (exit 3), without the stack file's line.
    config = _gpu_stack()
    config[f"{NS}:kueue"] = {"version": version}
    _refused(tmp_path, config, f"{NS}:kueue.version", "no leading zeros")


def test_a_kueue_version_with_zeros_that_lead_nothing_renders(tmp_path):
    config = _gpu_stack()
    config[f"{NS}:kueue"] = {"version": "0.19.0"}
    assert synth_config(tmp_path, config).exit_code == 0


# -- machine types of series the catalogue does not size ------------------------------------------


@pytest.mark.parametrize("machine_type", ["c4-standard-0", "c4-standard-08", "c4-standard", "c4d-standard-8-08"])
def test_an_unsized_series_name_without_a_real_vcpu_count_is_refused(tmp_path, machine_type):
    config = base_config(nodePools=[{"name": "cpu", "machineType": machine_type, "maxNodes": 2}])
    _refused(tmp_path, config, f"{NS}:nodePools[0].machineType", "VCPUS a whole number from 1 without leading zeros")


@pytest.mark.parametrize(
    "machine_type", ["c4-standard-288-metal", "c4d-standard-384-lssd", "x4-960-16t", "z3-highmem-8-highlssd", "g1-small", "m2-hypermem-416"]
)
def test_real_machine_types_of_unsized_series_render(tmp_path, machine_type):
    config = base_config(nodePools=[{"name": "cpu", "machineType": machine_type, "maxNodes": 2}])
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


@pytest.mark.parametrize("at", ["pool", "system pool", "declared"])
def test_f1_micro_which_gke_refuses_for_node_pools_is_refused(tmp_path, at):
    config = base_config(nodePools=[{"name": "cpu", "machineType": "n2-standard-8", "maxNodes": 2}])
    path = f"{NS}:nodePools[0].machineType"
    if at == "system pool":
        config[f"{NS}:cluster"]["systemPool"] = {"machineType": "f1-micro"}
        path = f"{NS}:cluster.systemPool.machineType"
    else:
        config[f"{NS}:nodePools"][0]["machineType"] = "f1-micro"
    if at == "declared":  # the override declares types GCE has; GKE refuses this one all the same
        config[f"{NS}:catalogue"] = {"machineTypes": ["f1-micro"]}
    _refused(tmp_path, config, path, "GKE refuses node pools of f1-micro machines")


# -- a network or subnetwork named without a project is one of the cluster's project ---------------

SUBNET_HOST = "projects/acme-host/regions/us-central1/subnetworks/nodes"


@pytest.mark.parametrize(
    "network, subnetwork, hint",
    [
        (None, SUBNET_HOST, "network: projects/acme-host/global/networks/default"),  # the default network is gcp:project's
        ("vpc", SUBNET_HOST, "network: projects/acme-host/global/networks/vpc"),
        ("https://www.googleapis.com/compute/v1/projects/acme-host/global/networks/vpc", "nodes",
         "subnetwork: projects/acme-host/regions/REGION/subnetworks/nodes"),
        ("projects/acme-host/global/networks/vpc", "regions/us-central1/subnetworks/nodes",
         "subnetwork: projects/acme-host/regions/us-central1/subnetworks/nodes"),
    ],
    ids=["default network", "network name", "subnetwork name", "subnetwork partial path"],
)
def test_a_subnetwork_outside_the_networks_implied_project_is_refused(tmp_path, network, subnetwork, hint):
    # GKE: 'Subnetwork "projects/..." is not valid for Network "..."' (terraform-provider-google#7895).
    config = base_config()
    config[f"{NS}:cluster"].update({"subnetwork": subnetwork, **({"network": network} if network else {})})
    _refused(tmp_path, config, f"{NS}:cluster.subnetwork", f"a subnetwork is in its network's project, and a reference without a project names the cluster's; for a Shared VPC name the host project's {hint}")


@pytest.mark.parametrize(
    "network, subnetwork",
    [
        ("projects/acme-host/global/networks/vpc", SUBNET_HOST),  # Shared VPC: both in the host project
        ("vpc", "projects/test-project/regions/us-central1/subnetworks/nodes"),
        ("projects/test-project/global/networks/vpc", "nodes"),
        (None, "regions/us-central1/subnetworks/nodes"),
    ],
    ids=["shared VPC", "network name, subnetwork of gcp:project", "network of gcp:project, subnetwork name", "both implied"],
)
def test_a_subnetwork_of_the_networks_project_renders(tmp_path, network, subnetwork):
    config = base_config()
    config[f"{NS}:cluster"].update({"subnetwork": subnetwork, **({"network": network} if network else {})})
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


@pytest.mark.parametrize("project, refused", [(None, True), ("acme-ml-eu", True), ("acme-host", False)])
def test_a_fleet_workers_implied_project_is_its_own(tmp_path, project, refused):
    from test_dayone_gcprules import fleet_stack, worker

    config = fleet_stack()
    w = worker(config, 1)
    w.pop("project", None)
    if project:
        w["project"] = project
    w["cluster"].update(network="vpc", subnetwork="projects/acme-host/regions/europe-west4/subnetworks/nodes")
    if refused:
        _refused(tmp_path, config, f"{NS}:fleet.workers[1].cluster.subnetwork", "a subnetwork is in its network's project")
    else:
        result = synth_config(tmp_path, config)
        assert result.exit_code == 0, result.error
