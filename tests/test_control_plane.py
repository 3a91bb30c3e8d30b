"""The control plane is never open to the internet, production reaches it through the DNS
endpoint with private nodes, and the hardening options (Dataplane V2, KMS secrets encryption,
Binary Authorization) become the cluster arguments GKE expects. Config refusals are checked on
the models (fast); what the program registers, on synth's recording."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gke_ai_batch import synth
from gke_ai_batch.components.cluster import kubeconfig
from gke_ai_batch.config import ConfigError, load
from gke_ai_batch.plan.cluster import cluster_spec
from conftest import base_config, synth_config, synth_stack
from gke_ai_batch.policy import rules

NS = "gke-ai-batch"
KEY = "projects/acme-kms/locations/us-central1/keyRings/gke/cryptoKeys/secrets"
STATEFUL = ("gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", "gcp:serviceaccount/account:Account")


def stack(production: bool = False, mode: str = "standard", **cluster: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"cluster": {"name": "c", "mode": mode, "location": "us-central1", **cluster}}
    if production:
        values["production"] = True
    return values


def problems(values: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as exc:
        load(values)
    return exc.value.problems


REFUSED = [
    # (id, stack values, key path, words)
    ("no endpoint at all", stack(controlPlane={"dnsEndpoint": False, "ipEndpoint": "disabled"}), "cluster.controlPlane.ipEndpoint", "nothing could reach the control plane"),
    ("public IP endpoint closed and no DNS endpoint", stack(controlPlane={"dnsEndpoint": False}), "cluster.controlPlane.dnsEndpoint", "no client"),
    ("private endpoint with public nodes", stack(controlPlane={"ipEndpoint": "private"}), "cluster.controlPlane.ipEndpoint", "needs privateNodes true"),
    ("networks for a disabled IP endpoint", stack(controlPlane={"ipEndpoint": "disabled"}, masterAuthorizedNetworks=[{"cidr": "203.0.113.0/24"}]), "cluster.masterAuthorizedNetworks", "would limit nothing"),
    ("the whole internet authorized", stack(masterAuthorizedNetworks=[{"cidr": "10.0.0.0/8"}, {"cidr": "0.0.0.0/0"}]), "cluster.masterAuthorizedNetworks", "would be open to much of the internet"),
    ("the internet in halves", stack(masterAuthorizedNetworks=[{"cidr": "0.0.0.0/1"}, {"cidr": "128.0.0.0/1"}]), "cluster.masterAuthorizedNetworks", "would be open to much of the internet"),
    ("a network listed twice", stack(masterAuthorizedNetworks=[{"cidr": "203.0.113.0/24"}, {"cidr": "203.0.113.0/24"}]), "cluster.masterAuthorizedNetworks[1].cidr", "is listed already (masterAuthorizedNetworks[0])"),
    ("more networks than GKE takes", stack(masterAuthorizedNetworks=[{"cidr": f"203.0.{i}.0/24"} for i in range(51)]), "cluster.masterAuthorizedNetworks", "GKE accepts at most 50 on a cluster with public nodes"),
    ("production without private nodes", stack(production=True), "cluster.privateNodes", "production cluster's nodes"),
    ("production without the DNS endpoint", stack(production=True, privateNodes=True, controlPlane={"dnsEndpoint": False}, masterAuthorizedNetworks=[{"cidr": "10.0.0.0/8"}]), "cluster.controlPlane.dnsEndpoint", "reached through its DNS endpoint"),
    ("KMS key of another region", stack(databaseEncryption={"keyName": KEY.replace("us-central1", "europe-west4")}), "cluster.databaseEncryption.keyName", "GKE needs a key in the cluster's region 'us-central1'"),
    ("global KMS key", stack(databaseEncryption={"keyName": KEY.replace("us-central1", "global")}), "cluster.databaseEncryption.keyName", "in 'global'"),
    ("not a KMS key name", stack(databaseEncryption={"keyName": "projects/acme-kms/keyRings/gke/cryptoKeys/secrets"}), "cluster.databaseEncryption.keyName", "is not a Cloud KMS key name"),
    ("a key version, not a key", stack(databaseEncryption={"keyName": KEY + "/cryptoKeyVersions/1"}), "cluster.databaseEncryption.keyName", "is not a Cloud KMS key name"),
    ("Autopilot without Dataplane V2", stack(mode="autopilot", dataplaneV2=False), "cluster.dataplaneV2", "always run GKE Dataplane V2"),
    ("an unknown IP endpoint mode", stack(controlPlane={"ipEndpoint": "public"}), "cluster.controlPlane.ipEndpoint", ""),
]


@pytest.mark.parametrize("values, path, words", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused(values, path, words):
    found = problems(values)
    assert [p for p in found if p[0] == f"{NS}:{path}" and words in p[1]], found


ACCEPTED = [
    ("defaults: DNS endpoint, public IP endpoint closed", stack()),
    ("DNS endpoint only", stack(controlPlane={"ipEndpoint": "disabled"})),
    ("authorized networks without the DNS endpoint", stack(controlPlane={"dnsEndpoint": False}, masterAuthorizedNetworks=[{"cidr": "203.0.113.0/24"}])),
    ("production: private nodes, private IP endpoint", stack(production=True, privateNodes=True, controlPlane={"ipEndpoint": "private"})),
    ("zonal cluster with a key of its region", {"cluster": {"name": "c", "location": "us-central1-a", "databaseEncryption": {"keyName": KEY}}}),
    ("Autopilot", stack(mode="autopilot")),
]


@pytest.mark.parametrize("values", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_accepted(values):
    load(values)


def args(values: dict[str, Any]) -> dict[str, Any]:
    return cluster_spec(load(values)).cluster_args("acme")


def test_no_accepted_combination_leaves_the_public_ip_endpoint_open():
    """Every access combination the config accepts passes the mandatory policy rule that looks
    at what GKE receives (and the rule itself fires on the provider's open default)."""
    rule = rules.by_name("gke-control-plane-not-public")
    networks = ([], [{"cidr": "203.0.113.0/24"}])
    for private in (False, True):
        for ip in ("disabled", "private", "authorizedNetworks"):
            for dns in (True, False):
                for nets in networks:
                    values = stack(privateNodes=private, controlPlane={"ipEndpoint": ip, "dnsEndpoint": dns}, masterAuthorizedNetworks=nets)
                    try:
                        props = _camel(args(values))
                    except ConfigError:
                        continue
                    assert list(rule.check(rules.CLUSTER, props, {})) == [], values
    assert list(rule.check(rules.CLUSTER, {"name": "c"}, {}))


def _camel(value: Any) -> Any:
    """snake_case plan arguments as the engine receives them."""
    if isinstance(value, dict):
        return {_camel_key(k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w.capitalize() for w in rest)


def test_cluster_arguments():
    a = args(stack(privateNodes=True, controlPlane={"ipEndpoint": "private"}, masterAuthorizedNetworks=[{"cidr": "10.0.0.0/8", "name": "vpn"}], databaseEncryption={"keyName": KEY}, binaryAuthorization=True))
    assert a["control_plane_endpoints_config"] == {"dns_endpoint_config": {"allow_external_traffic": True}, "ip_endpoints_config": {"enabled": True}}
    assert a["private_cluster_config"] == {"enable_private_nodes": True, "enable_private_endpoint": True}
    assert a["master_authorized_networks_config"] == {
        "cidr_blocks": [{"cidr_block": "10.0.0.0/8", "display_name": "vpn"}],
        "gcp_public_cidrs_access_enabled": False,
        "private_endpoint_enforcement_enabled": True,
    }
    assert a["database_encryption"] == {"state": "ENCRYPTED", "key_name": KEY}
    assert a["binary_authorization"] == {"evaluation_mode": "PROJECT_SINGLETON_POLICY_ENFORCE"}
    assert a["datapath_provider"] == "ADVANCED_DATAPATH"
    # DNS only: no IP endpoint, so no authorized networks to configure.
    dns_only = args(stack(controlPlane={"ipEndpoint": "disabled"}, dataplaneV2=False))
    assert dns_only["control_plane_endpoints_config"]["ip_endpoints_config"] == {"enabled": False}
    assert "master_authorized_networks_config" not in dns_only and "datapath_provider" not in dns_only
    # The default closes the public IP endpoint to every outside address.
    assert args(stack())["master_authorized_networks_config"] == {"cidr_blocks": [], "gcp_public_cidrs_access_enabled": False}
    # Autopilot: GKE's Dataplane V2, no datapath_provider of ours.
    assert "datapath_provider" not in args(stack(mode="autopilot"))


def test_the_provider_uses_the_dns_endpoint_without_ca_data(tmp_path):
    assert synth_stack("prod").recording.outputs["apiServer"] == f"https://{synth.MOCK_DNS_ENDPOINT}"
    config = base_config(
        cluster={"name": "test", "nodeLocations": ["us-central1-a"], "controlPlane": {"dnsEndpoint": False}, "masterAuthorizedNetworks": [{"cidr": "203.0.113.0/24"}]}
    )
    assert synth_config(tmp_path, config).recording.outputs["apiServer"] == f"https://{synth.MOCK_ENDPOINT}"
    dns = yaml.safe_load(kubeconfig("c", "gke-x.us-central1.gke.goog", None))["clusters"][0]["cluster"]
    assert dns == {"server": "https://gke-x.us-central1.gke.goog"}  # Google's publicly trusted certificate
    ip = yaml.safe_load(kubeconfig("c", "203.0.113.10", "Q0E="))["clusters"][0]["cluster"]
    assert ip == {"server": "https://203.0.113.10", "certificate-authority-data": "Q0E="}


def test_prod_protects_every_stateful_resource():
    resources = [r for r in synth_stack("prod").recording.resources if r.type in STATEFUL]
    # prod's node service account is the bootstrap's (protected there: tests/test_bootstrap.py).
    assert {r.type for r in resources} == set(STATEFUL) - {"gcp:serviceaccount/account:Account"}
    assert [r.name for r in resources if not r.options.get("protect")] == []


@pytest.mark.parametrize("name", ["dev", "prod", "gpu-dws", "tpu-flex", "tpu-hotswap", "tpu-multislice", "batch-autopilot"])
def test_no_stack_has_an_open_control_plane(name):
    result = synth_stack(name)
    assert not [v for v in result.violations if v["policy"] == "gke-control-plane-not-public"]
    assert result.recording.outputs["apiServer"] == f"https://{synth.MOCK_DNS_ENDPOINT}"
