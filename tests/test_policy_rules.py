"""The policy pack's rules on crafted properties (each with a compliant and a violating case),
its per-stack enforcement config, and the CrossGuard entry point without an engine."""

from __future__ import annotations

import ast
import copy
import json
import re
import runpy
import subprocess
import sys
from typing import Any

import pytest
from conftest import ROOT

from gke_ai_batch.policy import levels, rules
from gke_ai_batch.policy.rules import UNKNOWN, Resource
from gke_ai_batch.policy.rules.base import CLUSTER, NODE_POOL

SA = "ml-nodes@acme.iam.gserviceaccount.com"
DEFAULT_SA = "123456789-compute@developer.gserviceaccount.com"
DROP = object()


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of base with changes merged in; DROP removes a key."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is DROP:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


SECURE_NODE = {
    "serviceAccount": SA,
    "shieldedInstanceConfig": {"enableSecureBoot": True, "enableIntegrityMonitoring": True},
    "workloadMetadataConfig": {"mode": "GKE_METADATA"},
}
STANDARD = {
    "name": "ml",
    "location": "us-central1",
    "nodeLocations": ["us-central1-b"],
    "releaseChannel": {"channel": "REGULAR"},
    "deletionProtection": True,
    "enableShieldedNodes": True,
    "removeDefaultNodePool": True,
    "initialNodeCount": 1,
    "nodeConfig": {"serviceAccount": SA},
    "workloadIdentityConfig": {"workloadPool": "acme.svc.id.goog"},
    "privateClusterConfig": {"enablePrivateNodes": True},
    "controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"allowExternalTraffic": True}, "ipEndpointsConfig": {"enabled": True}},
    "masterAuthorizedNetworksConfig": {"cidrBlocks": [], "gcpPublicCidrsAccessEnabled": False},
    "datapathProvider": "ADVANCED_DATAPATH",
}
AUTOPILOT = {
    "name": "ml",
    "location": "us-central1",
    "enableAutopilot": True,
    "releaseChannel": {"channel": "RAPID"},
    "workloadIdentityConfig": {"workloadPool": "acme.svc.id.goog"},
    "clusterAutoscaling": {"autoProvisioningDefaults": {"serviceAccount": SA}},
}
CPU_POOL = {
    "name": "system",
    "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 3},
    "initialNodeCount": 1,
    "management": {"autoRepair": True, "autoUpgrade": True},
    "nodeConfig": {"machineType": "e2-standard-4", **SECURE_NODE},
}
TPU_POOL = {  # one v5e 2x4 slice: 2 VMs of 4 chips
    "name": "v5e-0",
    "nodeCount": 2,
    "nodeLocations": ["us-central1-b"],
    "management": {"autoRepair": True, "autoUpgrade": True},
    "placementPolicy": {"type": "COMPACT", "tpuTopology": "2x4"},
    "nodeConfig": {
        "machineType": "ct5lp-hightpu-4t",
        "spot": True,
        "labels": {"gke-ai-batch/capacity": "spot"},
        **SECURE_NODE,
    },
}
FLEX_POOL = {
    "name": "l4-flex",
    "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"},
    "initialNodeCount": 0,
    "management": {"autoRepair": False, "autoUpgrade": True},
    "nodeConfig": {
        "machineType": "g2-standard-8",
        "flexStart": True,
        "guestAccelerators": [{"type": "nvidia-l4", "count": 1}],
        "labels": {"gke-ai-batch/capacity": "flex-start"},
        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
        **SECURE_NODE,
    },
}


def check(name: str, type_: str, props: dict[str, Any], config: dict[str, Any] | None = None) -> list[str]:
    """Messages of one resource rule for one resource (through the registry's type filter)."""
    rule = rules.by_name(name)
    return [m for _, m in rules.run(rule, [Resource("urn:x", type_, "x", props)], config or {})]


def check_stack(name: str, resources: list[Resource], config: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    return list(rules.run(rules.by_name(name), resources, config or {}))


def gcp(type_: str, props: dict[str, Any]) -> Resource:
    return Resource(f"urn:{type_}::{props['name']}", type_, props["name"], props)


def k8s(api: str, kind: str, name: str, namespace: str | None = None, **body: Any) -> Resource:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    meta.update(body.pop("metadata", {}))
    qualified = f"{namespace}/{name}" if namespace else name
    return Resource(
        f"urn:{kind}::{qualified}",
        f"kubernetes:{api}:{kind}",
        qualified,
        {"apiVersion": api, "kind": kind, "metadata": meta, **body},
    )


def flavor(name: str, **labels: str) -> Resource:
    return k8s("kueue.x-k8s.io/v1beta2", "ResourceFlavor", name, spec={"nodeLabels": labels} if labels else {})


def cluster_queue(name: str, *flavors: tuple[str, dict[str, Any]]) -> Resource:
    groups = [
        {
            "coveredResources": list(quotas),
            "flavors": [{"name": f, "resources": [{"name": r, "nominalQuota": q} for r, q in quotas.items()]}],
        }
        for f, quotas in flavors
    ]
    return k8s("kueue.x-k8s.io/v1beta2", "ClusterQueue", name, spec={"resourceGroups": groups})


def local_queue(namespace: str, name: str, cq: str) -> Resource:
    return k8s("kueue.x-k8s.io/v1beta2", "LocalQueue", name, namespace, spec={"clusterQueue": cq})


def priority(name: str, value: int) -> list[Resource]:
    return [
        k8s("scheduling.k8s.io/v1", "PriorityClass", name, value=value),
        k8s("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", name, value=value),
    ]


def job(
    name: str,
    namespace: str = "team",
    labels: dict[str, str] | None = None,
    pod: dict[str, Any] | None = None,
    pod_meta: dict | None = None,
) -> Resource:
    template = {"spec": {"containers": [{"name": "main", "image": "busybox"}], **(pod or {})}}
    if pod_meta:
        template["metadata"] = pod_meta
    return k8s("batch/v1", "Job", name, namespace, metadata={"labels": labels or {}}, spec={"template": template})


def jobset(
    name: str, namespace: str = "team", labels: dict[str, str] | None = None, pod: dict[str, Any] | None = None
) -> Resource:
    pod_spec = {"containers": [{"name": "main", "image": "jax"}], **(pod or {})}
    spec = {
        "replicatedJobs": [{"name": "slice", "replicas": 1, "template": {"spec": {"template": {"spec": pod_spec}}}}]
    }
    return k8s("jobset.x-k8s.io/v1alpha2", "JobSet", name, namespace, metadata={"labels": labels or {}}, spec=spec)


QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}
TPU_SELECTOR = {"nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice"}}
PRIVILEGED = {"containers": [{"name": "tpu", "image": "jax", "securityContext": {"privileged": True}}]}


# -- registry ---------------------------------------------------------------------------------


def test_rule_names_are_unique_kebab_case_with_valid_defaults():
    names = [r.name for r in rules.RULES]
    assert len(names) == len(set(names))
    for rule in rules.RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.name), rule.name
        assert rule.enforcement in ("advisory", "mandatory"), rule.name
        assert rule.description.endswith("."), rule.name
        assert callable(rule.check)
        assert rule.stack != bool(rule.types), f"{rule.name}: a resource rule names its types, a stack rule none"


def test_the_issues_advisory_rules_are_advisory_and_the_rest_mandatory():
    advisory = {r.name for r in rules.RULES if r.enforcement == "advisory"}
    # The production-only and opt-in rules are advisory by default; policy/config/prod.json
    # makes them mandatory where they apply.
    assert advisory == {
        "gke-deletion-protection",
        "gke-private-nodes",
        "gke-dns-endpoint",
        "gke-dataplane-v2",
        "gke-secrets-encryption",
        "gke-binary-authorization",
        "gke-protect-stateful",
        "queue-interruptible-only",
        "kueue-quota-within-capacity",
        "namespace-network-policy",
        "stack-budget",
    }


# -- GKE --------------------------------------------------------------------------------------


def test_workload_identity():
    assert check("gke-workload-identity", CLUSTER, STANDARD) == []
    assert check("gke-workload-identity", CLUSTER, merge(AUTOPILOT, {"workloadIdentityConfig": DROP})) == []
    assert (
        "Workload Identity is off"
        in check("gke-workload-identity", CLUSTER, merge(STANDARD, {"workloadIdentityConfig": DROP}))[0]
    )
    assert check("gke-workload-identity", NODE_POOL, CPU_POOL) == []
    bad = merge(CPU_POOL, {"nodeConfig": {"workloadMetadataConfig": {"mode": "GCE_METADATA"}}})
    assert "GCE_METADATA" in check("gke-workload-identity", NODE_POOL, bad)[0]


def test_shielded_nodes():
    assert check("gke-shielded-nodes", CLUSTER, STANDARD) == []
    assert check("gke-shielded-nodes", CLUSTER, AUTOPILOT) == []
    assert check("gke-shielded-nodes", NODE_POOL, CPU_POOL) == []
    assert (
        "enableShieldedNodes is false"
        in check("gke-shielded-nodes", CLUSTER, merge(STANDARD, {"enableShieldedNodes": False}))[0]
    )
    no_boot = merge(CPU_POOL, {"nodeConfig": {"shieldedInstanceConfig": {"enableSecureBoot": False}}})
    assert "enableSecureBoot is false" in check("gke-shielded-nodes", NODE_POOL, no_boot)[0]
    assert (
        "enableSecureBoot is unset"
        in check("gke-shielded-nodes", NODE_POOL, merge(CPU_POOL, {"nodeConfig": {"shieldedInstanceConfig": DROP}}))[0]
    )
    kept_default_pool = merge(STANDARD, {"removeDefaultNodePool": DROP})
    assert "default node pool" in check("gke-shielded-nodes", CLUSTER, kept_default_pool)[0]
    nap = merge(STANDARD, {"clusterAutoscaling": {"enabled": True, "autoProvisioningDefaults": {"serviceAccount": SA}}})
    assert "autoProvisioningDefaults" in check("gke-shielded-nodes", CLUSTER, nap)[0]


def test_node_service_account():
    assert check("gke-node-service-account", CLUSTER, STANDARD) == []
    assert check("gke-node-service-account", CLUSTER, AUTOPILOT) == []
    assert check("gke-node-service-account", NODE_POOL, CPU_POOL) == []
    # Unknown during a first preview: the email of the account the stack is about to create.
    assert (
        check("gke-node-service-account", NODE_POOL, merge(CPU_POOL, {"nodeConfig": {"serviceAccount": UNKNOWN}})) == []
    )
    for account in (DEFAULT_SA, "default", DROP):
        messages = check(
            "gke-node-service-account", NODE_POOL, merge(CPU_POOL, {"nodeConfig": {"serviceAccount": account}})
        )
        assert len(messages) == 1 and "Compute Engine default service account" in messages[0], account
    assert len(check("gke-node-service-account", CLUSTER, merge(STANDARD, {"nodeConfig": DROP}))) == 1
    assert len(check("gke-node-service-account", CLUSTER, merge(AUTOPILOT, {"clusterAutoscaling": DROP}))) == 1
    nap = merge(
        STANDARD, {"clusterAutoscaling": {"enabled": True, "autoProvisioningDefaults": {"serviceAccount": DEFAULT_SA}}}
    )
    assert "autoProvisioningDefaults" in check("gke-node-service-account", CLUSTER, nap)[0]


def test_release_channel():
    assert check("gke-release-channel", CLUSTER, STANDARD) == []
    assert "unset" in check("gke-release-channel", CLUSTER, merge(STANDARD, {"releaseChannel": DROP}))[0]
    assert (
        "UNSPECIFIED"
        in check("gke-release-channel", CLUSTER, merge(STANDARD, {"releaseChannel": {"channel": "UNSPECIFIED"}}))[0]
    )
    assert check("gke-release-channel", NODE_POOL, CPU_POOL) == []  # clusters only


def test_deletion_protection_only_on_production_stacks():
    unprotected = merge(STANDARD, {"deletionProtection": False})
    assert check("gke-deletion-protection", CLUSTER, unprotected) == []
    assert check("gke-deletion-protection", CLUSTER, unprotected, {"production": False}) == []
    assert "production stack" in check("gke-deletion-protection", CLUSTER, unprotected, {"production": True})[0]
    assert check("gke-deletion-protection", CLUSTER, STANDARD, {"production": True}) == []
    # Unset is the provider's default, true.
    assert (
        check("gke-deletion-protection", CLUSTER, merge(STANDARD, {"deletionProtection": DROP}), {"production": True})
        == []
    )


def test_private_nodes():
    assert check("gke-private-nodes", CLUSTER, STANDARD) == []
    assert "public IP" in check("gke-private-nodes", CLUSTER, merge(STANDARD, {"privateClusterConfig": DROP}))[0]
    # Public nodes written down (privateNodes: false) are a decision, not a finding.
    decided = merge(STANDARD, {"privateClusterConfig": {"enablePrivateNodes": False, "enablePrivateEndpoint": DROP}})
    assert check("gke-private-nodes", CLUSTER, decided) == []


def test_control_plane_not_public():
    rule = "gke-control-plane-not-public"
    assert check(rule, CLUSTER, STANDARD) == []
    open_ = merge(STANDARD, {"masterAuthorizedNetworksConfig": DROP})
    assert "open to the internet" in check(rule, CLUSTER, open_)[0]
    assert "open to the internet" in check(rule, CLUSTER, AUTOPILOT)[0]  # the provider's default
    # Closed another way: no IP endpoints, or only the private one.
    assert check(rule, CLUSTER, merge(open_, {"controlPlaneEndpointsConfig": {"ipEndpointsConfig": {"enabled": False}}})) == []
    assert check(rule, CLUSTER, merge(open_, {"privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": True}})) == []
    # The internet, however it is spelt: one block, halves, or IPv6 written another way.
    for blocks in (["0.0.0.0/0"], ["0.0.0.0/1", "128.0.0.0/1"], ["0::/0"], ["8.0.0.0/7"]):
        everyone = merge(STANDARD, {"masterAuthorizedNetworksConfig": {"cidrBlocks": [{"cidrBlock": b} for b in blocks]}})
        assert "open to much of the internet" in check(rule, CLUSTER, everyone)[0], blocks
    corp = merge(STANDARD, {"masterAuthorizedNetworksConfig": {"cidrBlocks": [{"cidrBlock": "10.0.0.0/8"}, {"cidrBlock": "35.235.240.0/20"}]}})
    assert check(rule, CLUSTER, corp) == []
    # A private endpoint with public nodes keeps the public IP endpoint (the provider ignores it).
    assert "open to the internet" in check(rule, CLUSTER, merge(open_, {"privateClusterConfig": {"enablePrivateNodes": False, "enablePrivateEndpoint": True}}))[0]
    gce = merge(STANDARD, {"masterAuthorizedNetworksConfig": {"gcpPublicCidrsAccessEnabled": True}})
    assert "every Compute Engine VM" in check(rule, CLUSTER, gce)[0]
    assert check(rule, CLUSTER, merge(STANDARD, {"masterAuthorizedNetworksConfig": UNKNOWN})) == []


PROD = {"production": True}


def test_dns_endpoint_in_production():
    no_dns = merge(STANDARD, {"controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"allowExternalTraffic": False}}})
    assert check("gke-dns-endpoint", CLUSTER, no_dns) == []  # not production
    assert "DNS endpoint" in check("gke-dns-endpoint", CLUSTER, no_dns, PROD)[0]
    assert "DNS endpoint" in check("gke-dns-endpoint", CLUSTER, merge(STANDARD, {"controlPlaneEndpointsConfig": DROP}), PROD)[0]
    assert check("gke-dns-endpoint", CLUSTER, STANDARD, PROD) == []


def test_dataplane_v2_in_production_standard_clusters():
    legacy = merge(STANDARD, {"datapathProvider": "LEGACY_DATAPATH"})
    assert "replaces it" in check("gke-dataplane-v2", CLUSTER, legacy, PROD)[0]
    assert "unset" in check("gke-dataplane-v2", CLUSTER, merge(STANDARD, {"datapathProvider": DROP}), PROD)[0]
    assert check("gke-dataplane-v2", CLUSTER, legacy) == []
    assert check("gke-dataplane-v2", CLUSTER, STANDARD, PROD) == []
    assert check("gke-dataplane-v2", CLUSTER, AUTOPILOT, PROD) == []  # Autopilot always has it


def test_secrets_encryption_where_required():
    key = "projects/k/locations/us-central1/keyRings/r/cryptoKeys/c"
    required = {"required": True}
    assert check("gke-secrets-encryption", CLUSTER, STANDARD) == []  # not required
    assert "requires application-layer secrets encryption" in check("gke-secrets-encryption", CLUSTER, STANDARD, required)[0]
    decrypted = merge(STANDARD, {"databaseEncryption": {"state": "DECRYPTED", "keyName": key}})
    assert "'DECRYPTED'" in check("gke-secrets-encryption", CLUSTER, decrypted, required)[0]
    encrypted = merge(STANDARD, {"databaseEncryption": {"state": "ENCRYPTED", "keyName": key}})
    assert check("gke-secrets-encryption", CLUSTER, encrypted, required) == []


def test_binary_authorization_where_required():
    required = {"required": True}
    assert check("gke-binary-authorization", CLUSTER, STANDARD) == []
    assert "unset" in check("gke-binary-authorization", CLUSTER, STANDARD, required)[0]
    disabled = merge(STANDARD, {"binaryAuthorization": {"evaluationMode": "DISABLED"}})
    assert "'DISABLED'" in check("gke-binary-authorization", CLUSTER, disabled, required)[0]
    legacy = merge(STANDARD, {"binaryAuthorization": {"enabled": True}})  # deprecated, not the singleton policy
    assert check("gke-binary-authorization", CLUSTER, legacy, required)
    enforced = merge(STANDARD, {"binaryAuthorization": {"evaluationMode": "PROJECT_SINGLETON_POLICY_ENFORCE"}})
    assert check("gke-binary-authorization", CLUSTER, enforced, required) == []


def test_protect_stateful_in_production():
    def res(type_: str, name: str, protect: bool) -> Resource:
        return Resource(f"urn:{type_}::{name}", type_, name, {"name": name}, protect)

    stack = [
        res(CLUSTER, "cluster", True),
        res(NODE_POOL, "system", False),
        res("gcp:serviceaccount/account:Account", "nodes", False),
        res("gcp:projects/iAMMember:IAMMember", "nodes-role", False),  # a grant: recreated as it was
    ]
    assert check_stack("gke-protect-stateful", stack) == []  # not production
    found = check_stack("gke-protect-stateful", stack, PROD)
    assert [urn for urn, _ in found] == [f"urn:{NODE_POOL}::system", "urn:gcp:serviceaccount/account:Account::nodes"]
    assert "NodePool system is not protected" in found[0][1]
    assert check_stack("gke-protect-stateful", [res(CLUSTER, "cluster", True)], PROD) == []


# -- pools ------------------------------------------------------------------------------------


def test_flex_and_queued_pools_scale_from_zero():
    assert check("pool-flex-queued-from-zero", NODE_POOL, FLEX_POOL) == []
    queued = merge(FLEX_POOL, {"nodeConfig": {"flexStart": DROP}, "queuedProvisioning": {"enabled": True}})
    assert check("pool-flex-queued-from-zero", NODE_POOL, queued) == []
    broken = merge(
        FLEX_POOL,
        {
            "autoscaling": {"totalMinNodeCount": 1},
            "initialNodeCount": 1,
            "nodeCount": 2,
            "management": {"autoRepair": True},
            "nodeConfig": {"reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"}},
        },
    )
    messages = check("pool-flex-queued-from-zero", NODE_POOL, broken)
    for fragment in (
        "totalMinNodeCount 1",
        "initialNodeCount 1",
        "fixed nodeCount 2",
        "auto-repair on",
        "ANY_RESERVATION",
    ):
        assert any(fragment in m for m in messages), fragment
    assert len(messages) == 5
    assert (
        "without autoscaling" in check("pool-flex-queued-from-zero", NODE_POOL, merge(queued, {"autoscaling": DROP}))[0]
    )
    # Unset auto-repair is GKE's default, on.
    assert "auto-repair on" in check("pool-flex-queued-from-zero", NODE_POOL, merge(FLEX_POOL, {"management": DROP}))[0]
    # Other pools may keep nodes.
    assert check("pool-flex-queued-from-zero", NODE_POOL, CPU_POOL) == []


def test_multihost_tpu_pool_is_one_compact_slice():
    rule = "pool-tpu-multihost-slice"
    assert check(rule, NODE_POOL, TPU_POOL) == []
    assert "COMPACT" in check(rule, NODE_POOL, merge(TPU_POOL, {"placementPolicy": {"type": DROP}}))[0]
    assert (
        "nodeCount is 3; a v5e 2x4 slice on ct5lp-hightpu-4t is 2 VMs"
        in check(rule, NODE_POOL, merge(TPU_POOL, {"nodeCount": 3}))[0]
    )
    assert "one" in check(rule, NODE_POOL, merge(TPU_POOL, {"nodeLocations": ["us-central1-a", "us-central1-b"]}))[0]
    flex = merge(TPU_POOL, {"nodeCount": DROP, "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2}})
    assert check(rule, NODE_POOL, flex) == []
    assert "maximum is 4" in check(rule, NODE_POOL, merge(flex, {"autoscaling": {"maxNodeCount": 4}}))[0]
    assert "partial slice" in check(rule, NODE_POOL, merge(flex, {"autoscaling": {"minNodeCount": 1}}))[0]
    # Total limits: the provider sends maxNodeCount 0 beside them, which GKE refuses for a slice.
    totals = merge(TPU_POOL, {"nodeCount": DROP, "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2}})
    assert check(rule, NODE_POOL, totals) == [
        "autoscaling.totalMaxNodeCount 2 without maxNodeCount: the provider sends maxNodeCount 0, and GKE "
        'rejects it ("Maximum node count 0 is not a valid size of TPU pod slice"); give per-zone limits '
        "(minNodeCount, maxNodeCount 2) instead"
    ]
    assert (
        "not a v5e topology" in check(rule, NODE_POOL, merge(TPU_POOL, {"placementPolicy": {"tpuTopology": "3x3"}}))[0]
    )


def test_single_host_and_non_tpu_pools_are_not_slices():
    rule = "pool-tpu-multihost-slice"
    # No topology: GKE derives the single-host shape from the machine type; any count of them.
    assert check(rule, NODE_POOL, merge(TPU_POOL, {"placementPolicy": DROP, "nodeCount": 5})) == []
    # 2x4 on the 8-chip machine type is one VM.
    assert (
        check(
            rule,
            NODE_POOL,
            merge(
                TPU_POOL,
                {"nodeConfig": {"machineType": "ct5lp-hightpu-8t"}, "placementPolicy": {"type": DROP}, "nodeCount": 1},
            ),
        )
        == []
    )
    assert check(rule, NODE_POOL, FLEX_POOL) == []


def test_tpu7x_slices_use_a_workload_policy_not_compact():
    rule = "pool-tpu-multihost-slice"
    ironwood = merge(
        TPU_POOL,
        {
            "nodeCount": 2,
            "nodeConfig": {"machineType": "tpu7x-standard-4t"},
            "placementPolicy": {"type": "", "tpuTopology": "2x2x2", "policyName": "ml-tpu7x"},
        },
    )
    assert check(rule, NODE_POOL, ironwood) == []
    assert check(rule, NODE_POOL, merge(ironwood, {"placementPolicy": {"policyName": UNKNOWN}})) == []
    compact = check(rule, NODE_POOL, merge(ironwood, {"placementPolicy": {"type": "COMPACT"}}))
    assert len(compact) == 1 and "leave type empty" in compact[0]
    assert "policyName" in check(rule, NODE_POOL, merge(ironwood, {"placementPolicy": {"policyName": DROP}}))[0]


# -- Kueue ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.19.2", "0.12.0", "1.0.0-rc.1", "1.2.3+build.5"])
def test_pinned_chart_versions_pass(version):
    release = {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": version}
    assert check("helm-chart-pinned", "kubernetes:helm.sh/v3:Release", release) == []


@pytest.mark.parametrize("version", [DROP, "", "^0.19", "~0.19.2", "0.19.x", "v0.19.2", ">=0.19.0", "0.19"])
def test_unpinned_chart_versions_fail(version):
    release = merge({"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.19.2"}, {"version": version})
    assert len(check("helm-chart-pinned", "kubernetes:helm.sh/v3:Release", release)) == 1


def test_a_chart_from_the_repository_needs_no_version():
    assert check("helm-chart-pinned", "kubernetes:helm.sh/v3:Release", {"chart": "./charts/probe"}) == []


def test_cluster_queue_flavors_exist():
    queue = cluster_queue("cq", ("a", {"cpu": 1}), ("b", {"cpu": 1}))
    assert check_stack("kueue-flavors-exist", [flavor("a"), flavor("b"), queue]) == []
    [(urn, message)] = check_stack("kueue-flavors-exist", [flavor("a"), queue])
    assert urn == queue.urn and "'b'" in message and "known: a" in message


TPU_FLAVOR = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "2x4",
    "gke-ai-batch/capacity": "spot",
}


def _capacity_stack(tpu_quota: Any, gpu_quota: Any = 4, cluster: dict = STANDARD) -> list[Resource]:
    return [
        gcp(CLUSTER, cluster),
        gcp(NODE_POOL, TPU_POOL),
        gcp(NODE_POOL, merge(TPU_POOL, {"name": "v5e-1"})),
        gcp(NODE_POOL, FLEX_POOL),
        flavor("tpu", **TPU_FLAVOR),
        flavor("l4", **{"cloud.google.com/gke-accelerator": "nvidia-l4"}),
        cluster_queue("cq", ("tpu", {"google.com/tpu": tpu_quota, "cpu": 1000}), ("l4", {"nvidia.com/gpu": gpu_quota})),
    ]


def test_quota_within_what_the_pools_provide():
    assert check_stack("kueue-quota-within-capacity", _capacity_stack(16)) == []
    assert check_stack("kueue-quota-within-capacity", _capacity_stack("16")) == []
    [(_, tpu)] = check_stack("kueue-quota-within-capacity", _capacity_stack(24))
    assert "nominal quota 24 google.com/tpu on flavor tpu exceeds the 16" in tpu and "v5e-0 8, v5e-1 8" in tpu
    [(_, gpu)] = check_stack("kueue-quota-within-capacity", _capacity_stack(16, gpu_quota=5))
    assert "5 nvidia.com/gpu" in gpu and "exceeds the 4" in gpu


def test_quota_on_a_flavor_no_pool_carries():
    resources = _capacity_stack(16) + [
        flavor("h100", **{"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}),
        cluster_queue("h", ("h100", {"nvidia.com/gpu": 8})),
    ]
    [(_, message)] = check_stack("kueue-quota-within-capacity", resources)
    assert "no node pool carries" in message


def test_quota_is_not_judged_where_gke_makes_the_nodes():
    nap = merge(STANDARD, {"clusterAutoscaling": {"enabled": True}})
    assert check_stack("kueue-quota-within-capacity", _capacity_stack(1000, cluster=nap)) == []
    autopilot = [gcp(CLUSTER, AUTOPILOT), flavor("default"), cluster_queue("cq", ("default", {"nvidia.com/gpu": 10}))]
    assert check_stack("kueue-quota-within-capacity", autopilot) == []


def _priority_stack(workload_priority: str, *flavors: Resource) -> list[Resource]:
    return [
        gcp(CLUSTER, STANDARD),
        gcp(NODE_POOL, TPU_POOL),
        gcp(NODE_POOL, merge(CPU_POOL, {"name": "cpu-on-demand", "nodeConfig": {"labels": {"tier": "cpu"}}})),
        *priority("high", 1000),
        *priority("low", 100),
        *flavors,
        cluster_queue("cq", *[(f.props["metadata"]["name"], {"cpu": 1}) for f in flavors]),
        local_queue("team", "lq", "cq"),
        jobset("train", labels={**QUEUED, "kueue.x-k8s.io/priority-class": workload_priority}),
    ]


def test_top_priority_work_needs_a_home_off_interruptible_capacity():
    rule = "queue-interruptible-only"
    spot = flavor("tpu-spot", **TPU_FLAVOR)
    [(urn, message)] = check_stack(rule, _priority_stack("high", spot))
    assert urn == "urn:ClusterQueue::cq"
    assert "JobSet team/train (high)" in message and "tpu-spot (spot)" in message
    # Lower priorities may live on spot alone.
    assert check_stack(rule, _priority_stack("low", spot)) == []
    # An on-demand flavor (selected by the pool it matches) is a home.
    assert check_stack(rule, _priority_stack("high", spot, flavor("cpu", tier="cpu"))) == []


def test_interruptible_capacity_from_labels_alone():
    rule = "queue-interruptible-only"
    autopilot_spot = flavor("spot", **{"cloud.google.com/gke-spot": "true"})
    assert len(check_stack(rule, _priority_stack("high", autopilot_spot))) == 1
    # A flavor the stack cannot place (no labels, no pools) gets the benefit of the doubt.
    assert check_stack(rule, _priority_stack("high", flavor("anything-goes", zone="x"))) == []


# -- workloads --------------------------------------------------------------------------------


def test_workloads_carry_a_queue_label():
    for wl in (job("a", labels=QUEUED), jobset("b", labels=QUEUED)):
        assert check("workload-queue-label", wl.type, wl.props) == []
    for wl in (job("a"), jobset("b")):
        assert "kueue.x-k8s.io/queue-name" in check("workload-queue-label", wl.type, wl.props)[0]


def test_provisioning_request_jobs_and_pods_are_not_queue_managed():
    direct = job(
        "dws", pod_meta={"annotations": {"cluster-autoscaler.kubernetes.io/consume-provisioning-request": "dws"}}
    )
    assert check("workload-queue-label", direct.type, direct.props) == []
    probe = k8s("v1", "Pod", "webhook-probe", "kueue-system", spec={"containers": []})
    assert check("workload-queue-label", probe.type, probe.props) == []
    assert check_stack("workload-known-queue", [direct, probe]) == []


def test_workloads_name_a_local_queue_of_their_namespace():
    queues = [local_queue("team", "lq", "cq")]
    assert check_stack("workload-known-queue", [*queues, job("a", labels=QUEUED)]) == []
    [(_, message)] = check_stack("workload-known-queue", [*queues, job("a", namespace="other", labels=QUEUED)])
    assert "namespace other" in message


def test_workloads_name_known_priorities():
    rule = "workload-known-priority"
    classes = priority("high", 1000)
    ok = jobset("a", labels={**QUEUED, "kueue.x-k8s.io/priority-class": "high"}, pod={"priorityClassName": "high"})
    assert check_stack(rule, [*classes, ok, job("no-priority", labels=QUEUED)]) == []
    bad_label = job("b", labels={**QUEUED, "kueue.x-k8s.io/priority-class": "urgent"})
    bad_pod = job("c", labels=QUEUED, pod={"priorityClassName": "urgent"})
    messages = [m for _, m in check_stack(rule, [*classes, bad_label, bad_pod])]
    assert len(messages) == 2
    assert "no WorkloadPriorityClass" in messages[0] and "no PriorityClass" in messages[1]


def test_privileged_only_for_tpu_pods_on_standard():
    rule = "workload-privileged-tpu-only"
    tpu = jobset("tpu", labels=QUEUED, pod={**PRIVILEGED, **TPU_SELECTOR})
    affinity = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "cloud.google.com/gke-tpu-accelerator", "operator": "Exists"}]}
                    ]
                }
            }
        }
    }
    by_affinity = job("aff", labels=QUEUED, pod={**PRIVILEGED, **affinity})
    plain_gpu = job("gpu", labels=QUEUED, pod={"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}})
    assert check_stack(rule, [gcp(CLUSTER, STANDARD), tpu, by_affinity, plain_gpu]) == []
    gpu = job(
        "gpu", labels=QUEUED, pod={**PRIVILEGED, "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}}
    )
    [(urn, message)] = check_stack(rule, [gcp(CLUSTER, STANDARD), gpu])
    assert urn == gpu.urn and "without selecting TPU nodes" in message
    [(_, message)] = check_stack(rule, [gcp(CLUSTER, AUTOPILOT), tpu])
    assert "Autopilot" in message


def pod_kinds(pod: dict[str, Any]) -> list[Resource]:
    """One of every kind that carries a pod template, each with this pod spec."""
    template = {"spec": pod}
    return [
        job("j", pod=pod),
        jobset("js", pod=pod),
        k8s("core/v1", "Pod", "p", "team", spec=pod),
        k8s("core/v1", "PodTemplate", "t", "team", template=template),
        k8s("apps/v1", "Deployment", "d", "team", spec={"template": template}),
        k8s("apps/v1", "StatefulSet", "s", "team", spec={"template": template}),
        k8s("apps/v1", "DaemonSet", "ds", "team", spec={"template": template}),
        k8s("apps/v1", "ReplicaSet", "rs", "team", spec={"template": template}),
        k8s("core/v1", "ReplicationController", "rc", "team", spec={"template": template}),
        k8s("batch/v1", "CronJob", "cj", "team", spec={"schedule": "@hourly", "jobTemplate": {"spec": {"template": template}}}),
    ]


NODE_ACCESS = {
    "privileged": {"containers": [{"name": "main", "image": "jax:1", "securityContext": {"privileged": True}}]},
    "privileged init": {"containers": [{"name": "main", "image": "jax:1"}],
                        "initContainers": [{"name": "init", "image": "jax:1", "securityContext": {"privileged": True}}]},
    "privileged ephemeral": {"containers": [{"name": "main", "image": "jax:1"}],
                             "ephemeralContainers": [{"name": "dbg", "image": "jax:1", "securityContext": {"privileged": True}}]},
    "hostPID": {"hostPID": True, "containers": [{"name": "main", "image": "jax:1"}]},
    "hostIPC": {"hostIPC": True, "containers": [{"name": "main", "image": "jax:1"}]},
    "hostPath": {"containers": [{"name": "main", "image": "jax:1"}], "volumes": [{"name": "root", "hostPath": {"path": "/"}}]},
    "SYS_ADMIN": {"containers": [{"name": "main", "image": "jax:1", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]},
}


@pytest.mark.parametrize("access", NODE_ACCESS)
def test_node_access_only_for_tpu_pods_in_every_pod_kind(access):
    rule = "workload-privileged-tpu-only"
    spec = NODE_ACCESS[access]
    for wl in pod_kinds(spec):
        [(urn, message)] = check_stack(rule, [gcp(CLUSTER, STANDARD), wl])
        assert urn == wl.urn and "without selecting TPU nodes" in message, wl.type
    # The same pod on TPU nodes of a Standard cluster is TPU device access.
    assert check_stack(rule, [gcp(CLUSTER, STANDARD), *pod_kinds({**spec, **TPU_SELECTOR})]) == []


def test_baseline_capabilities_and_host_network_are_not_node_access():
    rule = "workload-privileged-tpu-only"
    spec = {"hostNetwork": True, "containers": [
        {"name": "main", "image": "jax:1", "ports": [{"containerPort": 8080}],
         "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN"]}}}]}
    assert check_stack(rule, [gcp(CLUSTER, STANDARD), *pod_kinds(spec)]) == []


# -- images and RBAC --------------------------------------------------------------------------

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize("image", ["perl:5.40", "python:3.8", f"kubectl@{DIGEST}", f"kubectl:v1.36.2@{DIGEST}",
                                   "localhost:5000/team/img:2", UNKNOWN])
def test_pinned_images_pass(image):
    pod = {"containers": [{"name": "main", "image": image}]}
    for wl in (job("a", pod=pod), jobset("b", pod=pod), k8s("core/v1", "Pod", "p", "team", spec=pod)):
        assert check("image-pinned", wl.type, wl.props) == []


@pytest.mark.parametrize(
    "image, words",
    [("perl", "has no tag, which means :latest"), ("perl:latest", "uses :latest"),
     ("us-docker.pkg.dev/p/r/img:latest", "uses :latest"), ("Perl:5", "not a container image reference"),
     ("img@sha256:abc", "not a container image reference"), (f"img@{DIGEST.upper()}", "64 lowercase hex")],
)
def test_unpinned_images_fail(image, words):
    pod = {"initContainers": [{"name": "init", "image": "busybox:1.36"}], "containers": [{"name": "main", "image": image}]}
    for wl in (job("a", pod=pod), jobset("b", pod=pod), k8s("core/v1", "PodTemplate", "t", "team", template={"spec": pod})):
        [message] = check("image-pinned", wl.type, wl.props)
        assert "container main" in message and words in message


def test_production_images_need_a_digest():
    tagged = k8s("core/v1", "Pod", "webhook-probe", "kueue-system", spec={"containers": [{"name": "c", "image": "k:v1"}]})
    assert check("image-pinned", tagged.type, tagged.props) == []
    [message] = check("image-pinned", tagged.type, tagged.props, {"requireDigest": True})
    assert "pinned by tag only" in message
    pinned = k8s("core/v1", "Pod", "p", "kueue-system", spec={"containers": [{"name": "c", "image": f"k:v1@{DIGEST}"}]})
    assert check("image-pinned", pinned.type, pinned.props, {"requireDigest": True}) == []
    level, values = levels.settings(rules.by_name("image-pinned"), levels.for_stack("prod"))
    assert (level, values["requireDigest"]) == ("mandatory", True)


@pytest.mark.parametrize("where", ["containers", "initContainers", "ephemeralContainers"])
def test_every_pod_kind_and_container_list_is_pinned(where):
    pod = {"containers": [{"name": "ok", "image": "jax:1"}]}
    pod[where] = [*pod.get(where, []), {"name": "bad", "image": "jax"}]
    kinds = pod_kinds(pod)
    for wl in kinds:
        [message] = check("image-pinned", wl.type, wl.props)
        assert "container bad" in message and "has no tag" in message, wl.type
    assert all(check("image-pinned", wl.type, wl.props) == [] for wl in pod_kinds({"containers": [{"name": "ok", "image": "jax:1"}]}))


def rbac(kind: str, name: str, namespace: str | None = None, **body: Any) -> Resource:
    return k8s("rbac.authorization.k8s.io/v1", kind, name, namespace, **body)


def binding(name: str, namespace: str | None, role_kind: str, role: str, *subjects: dict[str, str]) -> Resource:
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    return rbac(kind, name, namespace, roleRef=ref, subjects=list(subjects))


GROUP = {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "ml@acme.com"}


def team_role(*extra: dict[str, Any]) -> Resource:
    from gke_ai_batch.plan.rbac import TEAM_RULES

    return rbac("Role", "team", "ml", rules=[*TEAM_RULES, *extra])


def test_the_team_role_passes_and_every_forbidden_grant_fails():
    rule = "rbac-no-queue-bypass"
    bound = binding("team", "ml", "Role", "team", GROUP)
    assert check_stack(rule, [team_role(), bound]) == []
    admins = binding("admins", None, "ClusterRole", "cluster-admin", GROUP)
    assert check_stack(rule, [admins]) == []  # the administrators' own role
    for extra, words in (
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}, "create pods"),
        ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, "create pods"),
        ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["patch"]}, "patch kueue.x-k8s.io clusterqueues"),
        ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues"], "verbs": ["create", "delete"]}, "create/delete"),
        ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["resourceflavors/status"], "verbs": ["update"]}, "resourceflavors"),
        ({"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"], "verbs": ["create"]}, "rolebindings"),
    ):
        [(urn, message)] = check_stack(rule, [team_role(extra), bound])
        assert urn == bound.urn and words in message and "Group ml@acme.com" in message
    # Reading quota objects is fine; so is an unbound role.
    reader = {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["get", "list"]}
    assert check_stack(rule, [team_role(reader), bound]) == []
    assert check_stack(rule, [team_role({"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]})]) == []


def test_builtin_edit_and_cluster_roles_of_the_stack_count():
    rule = "rbac-no-queue-bypass"
    [(_, message)] = check_stack(rule, [binding("team", "ml", "ClusterRole", "edit", GROUP)])
    assert "create pods" in message
    assert check_stack(rule, [binding("team", "ml", "ClusterRole", "view", GROUP)]) == []
    writer = rbac("ClusterRole", "quota-writer", rules=[
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloadpriorityclasses", "cohorts"], "verbs": ["create"]}])
    [(_, message)] = check_stack(rule, [writer, binding("w", None, "ClusterRole", "quota-writer", GROUP)])
    assert "workloadpriorityclasses" in message and "cohorts" in message and "cluster-wide" in message


TEAM_QUEUE = local_queue("ml", "lq", "cq")
BYPASSES = [
    ({"apiGroups": [""], "resources": ["replicationcontrollers"], "verbs": ["create"]}, "create replicationcontrollers"),
    ({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}, "create apps deployments"),
    ({"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": ["create"]}, "create apps replicasets"),
    ({"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["create"]}, "create apps statefulsets"),
    ({"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["create"]}, "create apps daemonsets"),
    ({"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["patch"]}, "patch apps deployments"),
    ({"apiGroups": ["batch"], "resources": ["cronjobs"], "verbs": ["create"]}, "create batch cronjobs"),
    ({"apiGroups": ["autoscaling.x-k8s.io"], "resources": ["provisioningrequests"], "verbs": ["create"]}, "provisioningrequests"),
    ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create"]}, "create kueue.x-k8s.io workloads"),
    ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["patch"]}, "workloads/status"),
    ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["topologies"], "verbs": ["create"]}, "topologies"),
    ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["multikueueclusters"], "verbs": ["update"]}, "multikueueclusters"),
    ({"apiGroups": ["kueue.x-k8s.io"], "resources": ["multikueueconfigs"], "verbs": ["delete"]}, "multikueueconfigs"),
    ({"apiGroups": ["*"], "resources": ["workloads"], "verbs": ["patch"]}, "patch kueue.x-k8s.io workloads"),
    ({"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"]}, "impersonate users"),
    ({"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"]}, "impersonate groups"),
    ({"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}, "impersonate serviceaccounts"),
    ({"apiGroups": ["authentication.k8s.io"], "resources": ["userextras/scopes"], "verbs": ["impersonate"]}, "userextras"),
    ({"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}, "serviceaccounts/token"),
    ({"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}, "escalate"),
    ({"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"]}, "bind"),
    ({"apiGroups": ["apps"], "resources": ["*"], "verbs": ["*"]}, "apps statefulsets"),
    ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["impersonate"]}, "impersonate users"),
]


@pytest.mark.parametrize("extra, words", BYPASSES, ids=[w for _, w in BYPASSES])
def test_every_way_around_the_queue_fails(extra, words):
    rule = "rbac-no-queue-bypass"
    bound = binding("team", "ml", "Role", "team", GROUP)
    assert check_stack(rule, [TEAM_QUEUE, team_role(), bound]) == []
    [(urn, message)] = check_stack(rule, [TEAM_QUEUE, team_role(extra), bound])
    assert urn == bound.urn and words in message


def test_workload_create_passes_only_where_the_stack_has_no_local_queue():
    rule = "rbac-no-queue-bypass"
    create = {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create"]}
    probe = [rbac("Role", "probe", "kueue-system", rules=[create]), binding("probe", "kueue-system", "Role", "probe", GROUP)]
    assert check_stack(rule, [TEAM_QUEUE, *probe]) == []
    assert len(check_stack(rule, [local_queue("kueue-system", "lq", "cq"), *probe])) == 1
    # Cluster-wide, it reaches every team namespace.
    writer = rbac("ClusterRole", "workload-writer", rules=[create])
    assert len(check_stack(rule, [writer, binding("w", None, "ClusterRole", "workload-writer", GROUP)])) == 1
    # A status write is admission itself, wherever it is bound.
    status = {**create, "resources": ["workloads/status"], "verbs": ["update"]}
    assert len(check_stack(rule, [rbac("Role", "probe", "kueue-system", rules=[status]), probe[1]])) == 1


SYSTEM_AUTHENTICATED = {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"}


@pytest.mark.parametrize("role_kind, role, subject, words", [
    ("Role", "not-created", GROUP, "cannot be verified"),
    ("ClusterRole", "made-up", GROUP, "cannot be verified"),
    ("ClusterRole", "system:aggregate-to-edit", GROUP, "cannot be verified"),
    ("ClusterRole", "system:controller:job-controller", GROUP, "Kubernetes controller"),
    ("ClusterRole", "system:controller:replicaset-controller", SYSTEM_AUTHENTICATED, "Kubernetes controller"),
    ("ClusterRole", "admin", GROUP, "create rbac.authorization.k8s.io rolebindings"),
    ("ClusterRole", "edit", GROUP, "impersonate serviceaccounts"),
    ("ClusterRole", UNKNOWN, GROUP, "cannot be verified"),
])
def test_roles_that_cannot_be_resolved_or_are_builtin_grantors_fail(role_kind, role, subject, words):
    rule = "rbac-no-queue-bypass"
    for namespace in ("ml", None):
        if role_kind == "Role" and namespace is None:
            continue
        [(_, message)] = check_stack(rule, [binding("b", namespace, role_kind, role, subject)])
        assert words in message


@pytest.mark.parametrize("role", ["view", "system:basic-user", "system:auth-delegator", "system:discovery",
                                  "system:public-info-viewer", "system:monitoring"])
def test_builtin_roles_that_grant_no_bypass_pass(role):
    assert check_stack("rbac-no-queue-bypass", [binding("b", None, "ClusterRole", role, GROUP)]) == []


def test_aggregated_and_unknown_stack_roles_fail():
    rule = "rbac-no-queue-bypass"
    aggregated = rbac("ClusterRole", "agg", aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}, rules=[])
    [(_, message)] = check_stack(rule, [aggregated, binding("b", None, "ClusterRole", "agg", GROUP)])
    assert "aggregated ClusterRole" in message
    unknown = rbac("Role", "later", "ml", rules=UNKNOWN)
    [(_, message)] = check_stack(rule, [unknown, binding("b", "ml", "Role", "later", GROUP)])
    assert "unknown before deploy" in message
    partly = rbac("Role", "later", "ml", rules=[{"apiGroups": [""], "resources": UNKNOWN, "verbs": ["get"]}])
    assert len(check_stack(rule, [partly, binding("b", "ml", "Role", "later", GROUP)])) == 1


def test_the_probes_service_account_has_namespaced_rights_only():
    rule = "probe-namespaced-rbac"
    sa = k8s("core/v1", "ServiceAccount", "webhook-probe", "kueue-system")
    subject = {"kind": "ServiceAccount", "name": "webhook-probe", "namespace": "kueue-system"}
    namespaced = binding("probe", "kueue-system", "Role", "probe", subject)
    assert check_stack(rule, [sa, namespaced]) == []
    cluster_wide = binding("probe", None, "ClusterRole", "probe", subject)
    [(urn, message)] = check_stack(rule, [sa, cluster_wide])
    assert urn == cluster_wide.urn and "kueue-system/webhook-probe" in message
    # Someone else's service account is not this rule's business.
    assert check_stack(rule, [cluster_wide]) == []
# -- team namespaces --------------------------------------------------------------------------

PSA = "pod-security.kubernetes.io/"


def namespace(name: str, patch: bool = False, **labels: str) -> Resource:
    ns = k8s("v1", "Namespace", name, metadata={"labels": {PSA + k.replace("_", "-"): v for k, v in labels.items()}})
    return ns._replace(type="kubernetes:core/v1:NamespacePatch" if patch else "kubernetes:core/v1:Namespace")


def network_policy(ns: str, selector: dict | None = None, types: list[str] | None = None) -> Resource:
    spec: dict[str, Any] = {"podSelector": selector or {}, "ingress": [{"from": [{"podSelector": {}}]}]}
    if types is not None:
        spec["policyTypes"] = types
    return k8s("networking.k8s.io/v1", "NetworkPolicy", "same-namespace-only", ns, spec=spec)


def test_team_namespaces_carry_a_pod_security_level():
    rule = "namespace-pod-security"
    queues = [local_queue("team", "lq", "cq"), local_queue("default", "lq", "cq")]
    ok = [namespace("team", enforce="baseline"), namespace("default", patch=True, enforce="restricted")]
    # A namespace without a LocalQueue is no team's: not judged.
    assert check_stack(rule, [*queues, *ok, namespace("other")]) == []
    [(urn, message)] = check_stack(rule, [*queues, namespace("team"), ok[1]])
    assert urn == "urn:Namespace::team" and "enforce is unset" in message
    [(_, message)] = check_stack(rule, [*queues, namespace("team", enforce="strict"), ok[1]])
    assert "'strict'" in message
    [(urn, message)] = check_stack(rule, [*queues, ok[0]])
    assert urn is None and "team namespace default" in message


def test_production_privileged_namespaces_warn_and_audit_at_baseline():
    rule = "namespace-pod-security"
    queues = [local_queue("team", "lq", "cq")]
    bare = namespace("team", enforce="privileged")
    watched = namespace("team", enforce="privileged", warn="baseline", audit="restricted")
    assert check_stack(rule, [*queues, bare]) == []  # not production
    assert check_stack(rule, [*queues, watched], {"production": True}) == []
    messages = [m for _, m in check_stack(rule, [*queues, bare], {"production": True})]
    assert len(messages) == 2 and "warn is unset" in messages[0] and "audit is unset" in messages[1]
    lax = namespace("team", enforce="privileged", warn="privileged", audit="baseline")
    [(_, message)] = check_stack(rule, [*queues, lax], {"production": True})
    assert "warn is privileged" in message


def test_production_team_namespaces_isolate_ingress():
    rule = "namespace-network-policy"
    queues = [local_queue("team", "lq", "cq")]
    prod = {"production": True}
    assert check_stack(rule, queues) == []  # not production
    assert check_stack(rule, [*queues, network_policy("team")], prod) == []
    assert check_stack(rule, [*queues, network_policy("team", types=["Ingress", "Egress"])], prod) == []
    for broken in (
        network_policy("other"),
        network_policy("team", selector={"matchLabels": {"app": "web"}}),
        network_policy("team", types=["Egress"]),
    ):
        [(urn, message)] = check_stack(rule, [*queues, broken], prod)
        assert urn is None and "namespace team has no NetworkPolicy" in message
    # Policies add up: a second one that lets in other namespaces or addresses undoes isolation.
    for ingress, words in (
        ([{}], "ingress[0] has no `from`: it admits every source"),
        ([{"from": []}], "ingress[0] has no `from`"),
        ([{"from": [{"namespaceSelector": {}}]}], "ingress[0].from[0] admits sources outside the namespace"),
        ([{"from": [{"podSelector": {}, "namespaceSelector": {}}]}], "ingress[0].from[0] admits sources outside"),
        ([{"from": [{"podSelector": {}}]}, {"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}], "ingress[1].from[0] admits sources outside"),
    ):
        opener = k8s("networking.k8s.io/v1", "NetworkPolicy", "open", "team", spec={"podSelector": {}, "ingress": ingress})
        [(urn, message)] = check_stack(rule, [*queues, network_policy("team"), opener], prod)
        assert urn == "urn:NetworkPolicy::team/open" and words in message, message


# -- enforcement config -----------------------------------------------------------------------


def test_enforcement_precedence():
    rule = rules.by_name("gke-deletion-protection")
    assert levels.settings(rule, {}) == ("advisory", {"production": False})
    assert levels.settings(rule, {"all": "mandatory"}) == ("mandatory", {"production": False})
    assert levels.settings(rule, {"all": {"enforcementLevel": "disabled"}, rule.name: "advisory"}) == (
        "advisory",
        {"production": False},
    )
    own = {"all": "disabled", rule.name: {"enforcementLevel": "mandatory", "production": True}}
    assert levels.settings(rule, own) == ("mandatory", {"production": True})
    assert levels.settings(rule, {rule.name: {"production": True}}) == ("advisory", {"production": True})


def test_config_problems_are_reported():
    assert levels.problems_in({"all": "advisory", "gke-private-nodes": {"enforcementLevel": "mandatory"}}) == []
    problems = levels.problems_in(
        {"gke-privat-nodes": "mandatory", "gke-release-channel": "strict", "gke-deletion-protection": {"prod": True}}
    )
    assert len(problems) == 3
    assert "no policy" in problems[0] and "'strict'" in problems[1] and "'prod'" in problems[2]
    assert levels.problems_in([]) != []


@pytest.mark.parametrize("path", sorted((ROOT / "policy" / "config").glob("*.json")), ids=lambda p: p.name)
def test_committed_policy_configs_are_valid(path):
    assert levels.problems_in(json.loads(path.read_text())) == []


def test_prod_makes_deletion_protection_mandatory():
    level, values = levels.settings(rules.by_name("gke-deletion-protection"), levels.for_stack("prod"))
    assert (level, values["production"]) == ("mandatory", True)
    assert levels.for_stack("no-such-stack") == {}


# -- the CrossGuard pack ----------------------------------------------------------------------


def test_pack_entry_point_wraps_every_rule(monkeypatch):
    """Run policy/ the way the CLI's Python analyzer does (runpy on the folder, as __main__),
    with PolicyPack (which would serve gRPC until killed) replaced by a recorder."""
    import pulumi_policy

    built: dict[str, Any] = {}
    monkeypatch.setattr(pulumi_policy, "PolicyPack", lambda **kwargs: built.update(kwargs))
    runpy.run_path(str(ROOT / "policy"), run_name="__main__")
    assert built["name"] == "gke-ai-batch"
    assert built["enforcement_level"] == pulumi_policy.EnforcementLevel.ADVISORY
    policies = built["policies"]
    assert [p.name for p in policies] == [r.name for r in rules.RULES]
    for p, rule in zip(policies, rules.RULES):
        expected = pulumi_policy.StackValidationPolicy if rule.stack else pulumi_policy.ResourceValidationPolicy
        assert type(p) is expected, p.name
        assert p.enforcement_level.value == rule.enforcement
        assert p.description == rule.description
        assert (p.config_schema.properties if p.config_schema else {}) == rule.config_schema


def test_pack_entry_point_does_not_serve_on_import():
    import policy.__main__ as entry

    assert [p.name for p in entry.POLICIES] == [r.name for r in rules.RULES]


def test_pack_reads_properties_through_the_sdks_unknown_proxies():
    from pulumi_policy import ResourceValidationArgs
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

    from gke_ai_batch.policy.crossguard import plain, policy

    props = merge(
        CPU_POOL,
        {
            "nodeConfig": {"serviceAccount": UNKNOWN_STRING_VALUE, "shieldedInstanceConfig": DROP},
            "initialNodeCount": 1.0,
        },
    )
    proxied = unknown_checking_proxy(props)
    assert plain(proxied)["nodeConfig"]["serviceAccount"] == UNKNOWN
    assert plain(proxied)["initialNodeCount"] == 1 and isinstance(plain(proxied)["initialNodeCount"], int)
    reported: list[tuple[str, str | None]] = []
    for name in ("gke-node-service-account", "gke-shielded-nodes"):
        args = ResourceValidationArgs(NODE_POOL, proxied, "urn:pool", "pool", None, None, {})
        policy(rules.by_name(name)).validate(args, lambda message, urn=None: reported.append((message, urn)))
    secure_boot = "nodeConfig.shieldedInstanceConfig.enableSecureBoot is unset: nodes must boot only signed, verified"
    assert reported == [(secure_boot + " components", None)]


def test_pack_needs_only_its_own_requirements():
    """policy/requirements.txt installs pulumi-policy and pulumi; the pack must not reach for
    the program's dependencies (pydantic, the providers) through what it imports."""
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import gke_ai_batch.policy.rules, gke_ai_batch.policy.levels; "
        "print(sorted(m.partition('.')[0] for m in sys.modules)); import gke_ai_batch.policy.crossguard; "
        "print(sorted(m for m in sys.modules if '.' not in m or m.startswith('gke_ai_batch.')))"
    )
    proc = subprocess.run([sys.executable, "-c", probe, str(ROOT)], capture_output=True, text=True, check=True)
    rules_alone, loaded = (set(ast.literal_eval(line)) for line in proc.stdout.splitlines())
    # The rules themselves need neither pydantic nor any Pulumi SDK; the pack's wrapping needs pulumi-policy.
    assert rules_alone.isdisjoint({"pydantic", "pulumi", "pulumi_policy", "pulumi_gcp", "pulumi_kubernetes"}), rules_alone
    assert loaded.isdisjoint({"pydantic", "pulumi_gcp", "pulumi_kubernetes", "synth", "gke_ai_batch.synth"})
    pure = {"gke_ai_batch.domain.catalogue", "gke_ai_batch.domain.images", "gke_ai_batch.domain.naming", "gke_ai_batch.domain.netblocks", "gke_ai_batch.domain.quantity",
            "gke_ai_batch.domain.regions",  # region_of: fleet-worker-regions
            "gke_ai_batch.domain.pricing", "gke_ai_batch.domain.price_table",  # stack-budget
            "gke_ai_batch.domain.autopilot_prices",  # stack-budget: Autopilot quotas
            "gke_ai_batch.domain.versions",  # the chart-version pin: helm-chart-pinned
            "gke_ai_batch.domain.podtemplates",  # where a resource's pods are
            "gke_ai_batch.domain.gcsfuse",  # the FUSE sidecar's requests: kueue-admissible
            "gke_ai_batch.domain.registered",  # type tokens and readers of registered resources
            "gke_ai_batch.domain.machines",  # node allocatable: the admission model's node groups
            "gke_ai_batch.domain.kueue_releases",  # waitForPodsReady by Kueue release: kueue-admissible
            "gke_ai_batch.domain.findings",  # the one Finding type the pack reports
            "gke_ai_batch.domain.topology",  # TAS annotations and levels: kueue-admissible
            # A fleet's names and Kueue's MultiKueue queue rules (rbac, fleet-multikueue-only).
            "gke_ai_batch.model.multikueue", "gke_ai_batch.domain.multikueue_worker"}
    model = {m for m in loaded if m == "gke_ai_batch.model" or m.startswith("gke_ai_batch.model.")}
    assert model, "the pack judges capacity with the admission model (gke_ai_batch.model)"
    # The layer packages' own __init__ modules hold docstrings only.
    layers = {"gke_ai_batch.domain", "gke_ai_batch.components"}
    pack = {m for m in loaded if m.startswith("gke_ai_batch.policy")}
    assert {m for m in loaded if m.startswith("gke_ai_batch.") and m not in layers | pack} == pure | model
    requirements = (ROOT / "policy" / "requirements.txt").read_text().split()
    assert {"pulumi-policy==1.21.0", "pulumi==3.272.0"} <= set(requirements)
