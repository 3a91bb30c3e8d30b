"""GKE and Kueue API rules checked before apply: zones and what they offer, GKE versions, node
limits, names (ASCII only), reserved names and prefixes, Kueue's webhook limits, service account
ids, stacks colliding in one project. Each rule: a refusal (exit 2, the key path, the words a
user reads) and a near miss that passes."""

from __future__ import annotations

import copy
import json
import re

import pytest
from gke_ai_batch.synth import yamlread


from gke_ai_batch import synth
from gke_ai_batch.domain import regions
from gke_ai_batch.domain import versions
from gke_ai_batch.config import ConfigError, load, split_namespace
from gke_ai_batch.plan.cluster import SA_ID_MAX, node_service_account_id
from support.diagnostics import assert_names
from conftest import ROOT, STACKS, synth_config, synth_stack
from test_config_errors import pools, valid

NS = "gke-ai-batch"


def cluster(c):
    return c[f"{NS}:cluster"]


def queues(c):
    return c[f"{NS}:clusterQueues"]


def autopilot(region: str = "us-central1", gpu: str = "nvidia-tesla-t4", **cluster_keys) -> dict:
    """An Autopilot stack with one GPU Job."""
    return {
        "gcp:project": "test-project",
        "gcp:region": region,
        f"{NS}:cluster": {"name": "ap", "mode": "autopilot", **cluster_keys},
        f"{NS}:flavors": [{"name": "default"}],
        f"{NS}:clusterQueues": [{"name": "cq", "flavors": [{"name": "default", "quotas": {"nvidia.com/gpu": 4}}]}],
        f"{NS}:teams": [{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        f"{NS}:workloads": [
            {"kind": "job", "name": "j", "team": "team-a", "gpu": {"type": gpu, "count": 1}, "image": "i:1"}
        ],
    }


def replace(config: dict, new: dict) -> None:
    config.clear()
    config.update(new)


def with_overrides(c, **catalogue):
    c[f"{NS}:catalogue"] = catalogue


def cpu_pools(n: int, max_nodes: int = 1000) -> list[dict]:
    return [{"name": f"cpu{i}", "machineType": "n2-standard-8", "maxNodes": max_nodes} for i in range(n)]


def declared_flavors(c, flavors: list[dict]) -> None:
    """Replace the queue's flavors with declared, pool-less ones (no workloads to place)."""
    c[f"{NS}:flavors"] = [{"name": f["name"]} for f in flavors]
    queues(c)[0]["flavors"] = flavors
    c.pop(f"{NS}:workloads")


# (id, mutate, key path, words) — refused; (id, mutate) — accepted.
REFUSED = [
    # -- regions and zones ------------------------------------------------------------------
    ("zone that does not exist", lambda c: cluster(c).update(nodeLocations=["us-central1-z"]), f"{NS}:cluster.nodeLocations[0]", "'us-central1-z' is not a zone of us-central1; its zones: us-central1-a, us-central1-b, us-central1-c, us-central1-f"),
    ("region that does not exist", lambda c: (cluster(c).update(location="mars-north1", nodeLocations=["mars-north1-a"])), f"{NS}:cluster.location", "'mars-north1' is not a Google Cloud region"),
    ("cluster zone that does not exist", lambda c: (cluster(c).update(location="us-central1-z", nodeLocations=[])), f"{NS}:cluster.location", "'us-central1-z' is not a zone of us-central1"),
    ("pool zone that does not exist", lambda c: pools(c)[1].update(zones=["us-central1-e"]), f"{NS}:nodePools[1].zones[0]", "'us-central1-e' is not a zone of us-central1"),
    ("TPU generation not in the pool's zone", lambda c: pools(c)[0].update(zones=["us-central1-f"]), f"{NS}:nodePools[0].zones[0]", "GKE offers TPU v6e in us-central1 only in us-central1-a, us-central1-b, us-central1-c, not in us-central1-f"),
    ("TPU generation not in the cluster's zone", lambda c: pools(c)[0].update(tpu={"version": "tpu7x", "topology": "2x2x2"}), f"{NS}:nodePools[0].tpu.version", "GKE offers TPU tpu7x in us-central1 only in us-central1-c, us-central1-ai1a, not in us-central1-a"),
    ("GPU type not in one of the pool's zones", lambda c: pools(c)[1].update(zones=["us-central1-a", "us-central1-f"]), f"{NS}:nodePools[1].zones[1]", "GKE offers nvidia-h100-80gb in us-central1 only in us-central1-a, us-central1-b, us-central1-c, not in us-central1-f"),
    ("GPU type not in a cluster node location", lambda c: (cluster(c).update(nodeLocations=["us-central1-a", "us-central1-f"]), pools(c)[0].update(zones=["us-central1-a"])), f"{NS}:nodePools[1].gpu.type", "not in us-central1-f (the pool takes the cluster's nodeLocations); every zone of a GPU pool must offer it"),
    ("GPU type in no zone of a regional cluster", lambda c: (c.update({"gcp:region": "us-east5"}), cluster(c).update(nodeLocations=[]), pools(c)[0].update(zones=["us-east5-b"]), pools(c)[1].update(gpu={"type": "nvidia-l4", "count": 1}, machineType="g2-standard-8")), f"{NS}:nodePools[1].gpu.type", "GKE offers nvidia-l4 in no zone of us-east5 (the cluster names no node locations, so GKE picks the zones; at least one must offer it)"),
    ("Autopilot GPU shape the region lacks", lambda c: replace(c, autopilot(region="us-east5")), f"{NS}:workloads[0].gpu.type", "GKE offers nvidia-tesla-t4 in us-east5 only in no zone, none of them in us-east5"),
    ("Autopilot TPU shape outside the node locations", lambda c: (replace(c, autopilot(nodeLocations=["us-central1-b"])), c[f"{NS}:workloads"][0].pop("gpu"), c[f"{NS}:workloads"][0].update(tpu={"version": "v5e", "topology": "2x2"})), f"{NS}:workloads[0].tpu.version", "GKE offers TPU v5e in us-central1 only in us-central1-a, none of them in the cluster's zones us-central1-b"),
    ("override zone name that is no zone", lambda c: with_overrides(c, zones={"us-central1f": {"tpu": ["v6e"]}}), f'{NS}:catalogue.zones["us-central1f"]', "'us-central1f' is not a zone"),
    ("override of an unknown GPU", lambda c: with_overrides(c, zones={"us-central1-f": {"gpu": ["nvidia-h900"]}}), f'{NS}:catalogue.zones["us-central1-f"].gpu[0]', "unknown GPU type 'nvidia-h900'"),
    # -- versions ---------------------------------------------------------------------------
    ("exact patch version", lambda c: cluster(c).update(minMasterVersion="1.34.0-gke.2201000"), f"{NS}:cluster.minMasterVersion", "'1.34.0-gke.2201000' pins an exact GKE version; GKE retires patch versions within months and then refuses to create a cluster at one. Write the minor alias '1.34'"),
    ("patch without gke suffix", lambda c: cluster(c).update(minMasterVersion="1.35.2"), f"{NS}:cluster.minMasterVersion", "Write the minor alias '1.35'"),
    ("minor that does not exist", lambda c: cluster(c).update(minMasterVersion="1.99"), f"{NS}:cluster.minMasterVersion", "GKE offers no 1.99 (newest minor as of 2026-09: 1.37"),
    ("major that does not exist", lambda c: cluster(c).update(minMasterVersion="2.0"), f"{NS}:cluster.minMasterVersion", "'2.0' is not a GKE minor version"),
    ("fullwidth digits in the version", lambda c: cluster(c).update(minMasterVersion="1.３4"), f"{NS}:cluster.minMasterVersion", "is not a GKE minor version"),
    ("minor below the oldest supported", lambda c: cluster(c).update(minMasterVersion="1.31"), f"{NS}:cluster.minMasterVersion", "the REGULAR channel does not offer 1.31 any more (below its oldest supported minor); it offers 1.34, 1.35, 1.36"),
    ("minor not yet in the channel", lambda c: cluster(c).update(releaseChannel="STABLE", minMasterVersion="1.36"), f"{NS}:cluster.minMasterVersion", "the STABLE channel does not offer 1.36; it offers 1.34, 1.35"),
    ("channel default below a floor", lambda c: (pools(c)[0].update(capacity="flexStart"), with_overrides(c, channels={"REGULAR": {"default": "1.33.0-gke.1000000"}})), f"{NS}:nodePools[0].capacity", "flexStart TPU pools need GKE 1.33.0-gke.1712000 or later; without cluster.minMasterVersion the cluster gets the REGULAR channel's default 1.33.0-gke.1000000"),
    ("alias of the floor's minor without a known patch", lambda c: (pools(c)[0].update(capacity="flexStart"), with_overrides(c, channels={"REGULAR": {"minors": ["1.33"]}}), cluster(c).update(minMasterVersion="1.33")), f"{NS}:nodePools[0].capacity", "cluster.minMasterVersion '1.33' gives the newest 1.33 patch of REGULAR; set minMasterVersion to '1.34'"),
    ("override with a malformed patch", lambda c: with_overrides(c, channels={"RAPID": {"patches": ["1.38.0"]}}), f"{NS}:catalogue.channels.RAPID.patches[0]", "'1.38.0' is not an exact GKE version"),
    # -- node limits ------------------------------------------------------------------------
    ("GPU pool over 1,000 nodes per zone", lambda c: pools(c)[1].update(maxNodes=1001), f"{NS}:nodePools[1].maxNodes", "maxNodes 1001 over 1 zone exceeds GKE's 1000 nodes per node pool per zone (at most 1000 here)"),
    ("cluster over 15,000 nodes", lambda c: pools(c).extend(cpu_pools(15)), f"{NS}:nodePools", "the pools can grow to 15013 nodes (v6e 8, h100 2, cpu0 1000"),
    # -- names: ASCII only ------------------------------------------------------------------
    ("fullwidth digit in a pool name", lambda c: pools(c)[1].update(name="h１00"), f"{NS}:nodePools[1].name", "is not a valid GKE name"),
    ("fullwidth digit in a duration", lambda c: pools(c)[1].update(maxRunDuration="２4h"), f"{NS}:nodePools[1].maxRunDuration", "is not a duration"),
    ("fullwidth digit in a topology", lambda c: pools(c)[0]["tpu"].update(topology="４x4"), f"{NS}:nodePools[0].tpu.topology", "is not a topology"),
    ("fullwidth digit in a chart version", lambda c: c.update({f"{NS}:kueue": {"version": "０.19.2"}}), f"{NS}:kueue.version", "is not a pinned Kueue chart version"),
    ("fullwidth digit in a label value", lambda c: pools(c)[1].update(labels={"team": "a１"}), f'{NS}:nodePools[1].labels.team', "values are at most 63 ASCII letters"),
    ("trailing newline in a quantity", lambda c: queues(c)[0].update(flavors=[{"name": "tpu-v6e-slice-4x4", "quotas": {"memory": "10Gi\n"}}]), f"{NS}:clusterQueues[0].flavors[0].quotas.memory", "not a Kubernetes quantity"),
    ("GCP label key with a capital", lambda c: cluster(c).update(labels={"Env": "prod"}), f"{NS}:cluster.labels.Env", "GCP label key 'Env': 1 to 63 lowercase ASCII letters"),
    ("GCP label value with a dot", lambda c: cluster(c).update(labels={"version": "1.2"}), f"{NS}:cluster.labels.version", "values are at most 63 lowercase ASCII letters, digits, '_' or '-'"),
    ("GCP label key starting with a digit", lambda c: cluster(c).update(labels={"1env": "x"}), f"{NS}:cluster.labels[\"1env\"]", "starting with a lowercase letter"),
    ("65 GCP labels", lambda c: cluster(c).update(labels={f"k{i}": "v" for i in range(65)}), f"{NS}:cluster.labels", "65 labels; a Google Cloud resource takes at most 64"),
    ("taint key that is no qualified name", lambda c: pools(c)[1].update(taints=[{"key": "bad key", "value": "x"}]), f"{NS}:nodePools[1].taints[0].key", "taint key 'bad key' is not a valid qualified name"),
    ("taint value that is no label value", lambda c: pools(c)[1].update(taints=[{"key": "example.com/t", "value": "a/b"}]), f"{NS}:nodePools[1].taints[0].value", "taint value 'a/b' is not valid"),
    ("taint listed twice", lambda c: pools(c)[1].update(taints=[{"key": "example.com/t"}, {"key": "example.com/t", "value": "x"}]), f"{NS}:nodePools[1].taints[1]", "taint example.com/t:NoSchedule is listed twice"),
    ("quota on a resource name Kueue refuses", lambda c: queues(c)[0].update(flavors=[{"name": "tpu-v6e-slice-4x4", "quotas": {"my resource": 1}}]), f'{NS}:clusterQueues[0].flavors[0].quotas["my resource"]', "resource name 'my resource' is not a valid qualified name"),
    ("toleration key Kueue refuses", lambda c: c.update({f"{NS}:flavors": [{"name": "f", "pools": ["v6e", "h100"][:1], "tolerations": [{"key": "a b", "operator": "Exists"}]}]}), f"{NS}:flavors[0].tolerations[0].key", "toleration key 'a b' is not a valid qualified name"),
    ("selector value Kueue refuses", lambda c: queues(c)[0].update(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["a b"]}]}), f"{NS}:clusterQueues[0].namespaceSelector.matchExpressions[0].values[0]", "selector value 'a b' is not valid"),
    # -- reserved names and prefixes ------------------------------------------------------------
    ("system- priority class", lambda c: (c[f"{NS}:priorities"][0].update(name="system-high"), c[f"{NS}:workloads"][0].update(priority="system-high")), f"{NS}:priorities[0].name", "PriorityClass names starting with 'system-' are reserved by Kubernetes"),
    ("kube- namespace", lambda c: (c[f"{NS}:teams"][0].update(namespace="kube-batch"), c[f"{NS}:workloads"][0].update(team="kube-batch")), f"{NS}:teams[0].namespace", "namespaces starting with 'kube-' belong to Kubernetes"),
    ("gke- namespace", lambda c: (c[f"{NS}:teams"][0].update(namespace="gke-managed-x"), c[f"{NS}:workloads"][0].update(team="gke-managed-x")), f"{NS}:teams[0].namespace", "namespaces starting with 'gke-' belong to GKE"),
    ("gmp- namespace", lambda c: (c[f"{NS}:teams"][0].update(namespace="gmp-public"), c[f"{NS}:workloads"][0].update(team="gmp-public")), f"{NS}:teams[0].namespace", "belong to GKE (Managed Service for Prometheus)"),
    ("kube-system on Autopilot", lambda c: (replace(c, autopilot()), c[f"{NS}:teams"][0].update(namespace="kube-system"), c[f"{NS}:workloads"][0].update(team="kube-system")), f"{NS}:teams[0].namespace", "on Autopilot GKE also denies writes in its managed namespaces"),
    ("kubernetes.io node label", lambda c: pools(c)[1].update(labels={"node-role.kubernetes.io/gpu": "true"}), f'{NS}:nodePools[1].labels["node-role.kubernetes.io/gpu"]', "is in the kubernetes.io/ domain"),
    ("k8s.io node label", lambda c: pools(c)[1].update(labels={"k8s.io/team": "a"}), f'{NS}:nodePools[1].labels["k8s.io/team"]', "is in the k8s.io/ domain"),
    ("cloud.google.com node label", lambda c: pools(c)[1].update(labels={"cloud.google.com/gke-spot": "true"}), f'{NS}:nodePools[1].labels["cloud.google.com/gke-spot"]', "is in the cloud.google.com/ domain"),
    ("our own capacity label", lambda c: pools(c)[1].update(labels={"gke-ai-batch/capacity": "spot"}), f'{NS}:nodePools[1].labels["gke-ai-batch/capacity"]', "is in the gke-ai-batch/ domain"),
    ("cloud.google.com taint", lambda c: pools(c)[1].update(taints=[{"key": "cloud.google.com/gke-queued", "value": "true"}]), f"{NS}:nodePools[1].taints[0].key", "taint key 'cloud.google.com/gke-queued' is in the cloud.google.com/ domain"),
    # -- Kueue webhook and CRD limits -------------------------------------------------------------
    ("fair-sharing weight that collapses", lambda c: queues(c)[0].update(fairSharingWeight="1n"), f"{NS}:clusterQueues[0].fairSharingWeight", "fairSharingWeight '1n' is too small"),
    ("flavor selecting on 9 node labels", lambda c: pools(c)[0].update(labels={f"example.com/l{i}": "x" for i in range(6)}), f"{NS}:nodePools[0].labels", "flavor 'tpu-v6e-slice-4x4' would select on 9 node labels"),
    ("flavor with 9 tolerations", lambda c: pools(c)[0].update(taints=[{"key": f"example.com/t{i}"} for i in range(8)]), f"{NS}:nodePools[0].taints", "flavor 'tpu-v6e-slice-4x4' would carry 9 tolerations"),
    ("17 resource groups", lambda c: declared_flavors(c, [{"name": f"f{i}", "quotas": {f"example.com/r{i}": 1}} for i in range(17)]), f"{NS}:clusterQueues[0].flavors", "these flavors make 17 resource groups"),
    ("65 flavors in one resource group", lambda c: declared_flavors(c, [{"name": f"f{i}", "quotas": {"cpu": 1}} for i in range(65)]), f"{NS}:clusterQueues[0].flavors", "a resource group of 65 flavors and 1 resources"),
    ("513 quotas in one resource group", lambda c: declared_flavors(c, [{"name": f"f{i}", "quotas": {f"example.com/r{j}": 1 for j in range(20)}} for i in range(26)]), f"{NS}:clusterQueues[0].flavors", "26 flavors x 20 resources = 520 quotas; Kueue allows at most 512 per group"),
    ("257 flavors in a queue", lambda c: declared_flavors(c, [{"name": f"f{i}", "quotas": {f"example.com/r{i // 60}": 1}} for i in range(257)]), f"{NS}:clusterQueues[0].flavors", "257 flavors and 5 resources across resource groups; Kueue allows at most 256"),
]

ACCEPTED = [
    ("existing zone", lambda c: cluster(c).update(nodeLocations=["us-central1-c"])),
    ("existing region", lambda c: (cluster(c).update(location="europe-west4", nodeLocations=["europe-west4-a"]), pools(c)[1].update(zones=["europe-west4-b", "europe-west4-c"]))),
    ("TPU generation in the pool's zone", lambda c: pools(c)[0].update(zones=["us-central1-c"])),
    ("v5e in the cluster's zone", lambda c: pools(c)[0].update(tpu={"version": "v5e", "topology": "2x4"})),
    ("GPU type in every zone", lambda c: pools(c)[1].update(zones=["us-central1-a", "us-central1-b"])),
    ("GPU type in some zone of a regional cluster", lambda c: (c.update({"gcp:region": "us-east5"}), cluster(c).update(nodeLocations=[]), pools(c)[0].update(zones=["us-east5-b"]))),
    ("AI zone for tpu7x", lambda c: pools(c)[0].update(tpu={"version": "tpu7x", "topology": "2x2x2"}, zones=["us-central1-ai1a"])),
    ("Autopilot GPU shape the region has", lambda c: replace(c, autopilot())),
    ("zone override", lambda c: (pools(c)[0].update(zones=["us-central1-f"]), with_overrides(c, zones={"us-central1-f": {"tpu": ["v6e"]}}))),
    ("region override", lambda c: (cluster(c).update(location="me-central2", nodeLocations=["me-central2-a"]), with_overrides(c, zones={"me-central2-a": {"tpu": ["v6e"], "gpu": ["nvidia-h100-80gb"]}}))),
    ("minor alias", lambda c: cluster(c).update(minMasterVersion="1.34")),
    ("newest minor of the channel", lambda c: cluster(c).update(releaseChannel="RAPID", minMasterVersion="1.37")),
    ("newer minor by override", lambda c: (cluster(c).update(minMasterVersion="1.38"), with_overrides(c, channels={"REGULAR": {"minors": ["1.38"]}}))),
    ("channel default at the floor", lambda c: (pools(c)[0].update(capacity="flexStart"), with_overrides(c, channels={"REGULAR": {"default": "1.33.0-gke.1712000"}}))),
    ("alias of the floor's minor with a known patch", lambda c: (pools(c)[0].update(capacity="flexStart"), with_overrides(c, channels={"REGULAR": {"minors": ["1.33"], "patches": ["1.33.5-gke.1000"]}}), cluster(c).update(minMasterVersion="1.33"))),
    ("tpu7x on the default", lambda c: pools(c)[0].update(tpu={"version": "tpu7x", "topology": "2x2x2"}, zones=["us-central1-c"])),
    ("TPU slice of 768 VMs", lambda c: pools(c)[0].update(tpu={"version": "v5p", "topology": "12x16x16"}, zones=["us-central1-a"])),
    ("GPU pool of 1,000 nodes per zone", lambda c: pools(c)[1].update(maxNodes=1000)),
    ("GPU pool of 2,000 nodes over two zones", lambda c: pools(c)[1].update(maxNodes=2000, zones=["us-central1-a", "us-central1-b"])),
    ("cluster of 14,013 nodes", lambda c: pools(c).extend(cpu_pools(14))),
    ("GCP labels", lambda c: cluster(c).update(labels={"cost-center": "ml_platform-1", "env": ""})),
    ("taint with a qualified key", lambda c: pools(c)[1].update(taints=[{"key": "example.com/dedicated", "value": "ml"}, {"key": "example.com/dedicated", "effect": "NoExecute"}])),
    ("quota on a qualified resource name", lambda c: queues(c)[0].update(flavors=[{"name": "tpu-v6e-slice-4x4", "quotas": {"example.com/licence": 1}}, "nvidia-h100-80gb-queued"])),
    ("priority ending in -system", lambda c: (c[f"{NS}:priorities"][0].update(name="high-system"), c[f"{NS}:workloads"][0].update(priority="high-system"))),
    ("namespace containing kube", lambda c: (c[f"{NS}:teams"][0].update(namespace="team-kube"), c[f"{NS}:workloads"][0].update(team="team-kube"))),
    ("own-domain node label", lambda c: pools(c)[1].update(labels={"example.com/role": "gpu", "team": "a"})),
    ("fair-sharing weight above 1n", lambda c: queues(c)[0].update(fairSharingWeight="2n")),
    ("flavor selecting on 8 node labels", lambda c: pools(c)[0].update(labels={f"example.com/l{i}": "x" for i in range(5)})),
    ("flavor with 8 tolerations", lambda c: pools(c)[0].update(taints=[{"key": f"example.com/t{i}"} for i in range(7)])),
    ("16 resource groups", lambda c: declared_flavors(c, [{"name": f"f{i}", "quotas": {f"example.com/r{i}": 1}} for i in range(16)])),
    ("64 flavors in one resource group", lambda c: declared_flavors(c, [{"name": f"f{i}", "quotas": {"cpu": 1}} for i in range(64)])),
]


@pytest.mark.parametrize("mutate, path, words", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused(tmp_path, mutate, path, words):
    config = valid()
    mutate(config)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, "accepted"
    assert result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


@pytest.mark.parametrize("mutate", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_near_miss_accepted(mutate):
    config = valid()
    mutate(config)
    ours, region = split_namespace(config)
    try:
        load(ours, region=region)
    except ConfigError as exc:
        pytest.fail(str(exc))


def test_valid_base_is_in_catalogue():
    """The base the cases mutate is valid, so each refusal is the mutation's doing."""
    ours, region = split_namespace(valid())
    load(ours, region=region)


# -- catalogues ---------------------------------------------------------------------------


def test_catalogue_covers_the_common_regions():
    for region in ("us-central1", "us-east1", "us-east4", "us-east5", "us-west1", "us-west4", "us-south1",
                   "europe-west4", "asia-northeast1", "asia-southeast1"):
        assert regions.DEFAULT.has_region(region), region
        assert regions.DEFAULT.zones_of(region), region


def test_every_zone_is_named_like_a_zone_of_its_region():
    for region, zones in regions.REGIONS.items():
        assert regions.REGION_RX.fullmatch(region)
        for name in zones:
            assert regions.DEFAULT.region_of(name) == region


def test_versions_catalogue_resolution():
    v = versions.DEFAULT
    assert v.minors("STABLE") == ["1.34", "1.35"]
    # Stable's 1.34.9 patch is known in the faster channels too (Rapid -> Regular -> Stable).
    assert v.newest_known_patch("RAPID", "1.34") == "1.34.9-gke.1655001"
    assert v.resolves_at_least("STABLE", "1.34", "1.34.0-gke.2201000")
    assert v.resolves_at_least("REGULAR", None, "1.34.0-gke.2201000")
    assert not v.resolves_at_least("REGULAR", "1.34", "1.34.10-gke.1")


def test_report_lists_the_overrides(tmp_path):
    config = valid()
    pools(config)[0]["zones"] = ["us-central1-f"]
    with_overrides(config, zones={"us-central1-f": {"tpu": ["v6e"]}}, channels={"RAPID": {"minors": ["1.38"]}})
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    report = result.extra_files["report.md"]
    section = report.split("### Catalogue overrides", 1)[1].split("###", 1)[0]
    assert "- extends zone us-central1-f: v6e" in section
    assert "- channel RAPID: minors 1.38" in section


def test_report_has_no_override_section_without_overrides():
    for stack in STACKS:
        assert "Catalogue overrides" not in synth_stack(stack).extra_files["report.md"], stack


# -- no exact patch versions --------------------------------------------------------------

PATCH = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+-gke\.[0-9]+")


@pytest.mark.parametrize("stack", STACKS)
def test_no_rendered_resource_pins_a_patch_version(stack):
    result = synth_stack(stack)
    # JSON, as resources.json has it: no line folding that could split a version apart.
    text = json.dumps([r.to_json() for r in result.recording.resources])
    assert "-gke." not in text, PATCH.findall(text)


# -- service account ids --------------------------------------------------------------------

SA_ID = re.compile(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", re.ASCII)


def test_service_account_id_unchanged_when_the_name_fits():
    assert node_service_account_id("ml-prod", "us-central1") == "ml-prod-nodes"
    assert node_service_account_id("a" * 24, "us-central1") == "a" * 24 + "-nodes"


@pytest.mark.parametrize(
    "a, b",
    [
        (("ml-platform-production-us-central1", "us-central1"), ("ml-platform-production-us-east1", "us-east1")),
        (("ml-platform-production-training", "us-central1"), ("ml-platform-production-training", "us-east1")),
        (("a" * 25, "us-central1"), ("a" * 26, "us-central1")),
    ],
)
def test_long_cluster_names_get_distinct_service_account_ids(a, b):
    ida, idb = node_service_account_id(*a), node_service_account_id(*b)
    assert ida != idb
    for sa in (ida, idb):
        assert len(sa) <= SA_ID_MAX and SA_ID.fullmatch(sa), sa
        assert sa.startswith(a[0][:10]) or sa.startswith(b[0][:10])
    assert node_service_account_id(*a) == ida  # stable


def _stack(directory, name: str, project: str, cluster: str, region: str = "us-central1") -> synth.StackFile:
    path = directory / f"Pulumi.{name}.yaml"
    config = valid()
    config["gcp:project"] = project
    config["gcp:region"] = region
    config[f"{NS}:cluster"]["name"] = cluster
    path.write_text(yamlread.dump({"config": config}))
    return synth.StackFile.locate(ROOT, None, path)


def test_two_stacks_of_one_project_with_one_cluster(tmp_path):
    a = _stack(tmp_path, "a", "acme-ml", "ml-platform-production-training-1")
    _stack(tmp_path, "b", "acme-ml", "ml-platform-production-training-1", region="us-east5")
    # Same long name in another location: the hash differs, nothing collides.
    assert synth.synthesize(ROOT, a, stacks_dir=tmp_path).exit_code == 0
    c = _stack(tmp_path, "c", "acme-ml", "ml-dev")
    _stack(tmp_path, "d", "acme-ml", "ml-dev")
    result = synth.synthesize(ROOT, c, stacks_dir=tmp_path)
    assert result.exit_code == 2
    assert result.recording is None
    assert "Pulumi.c.yaml and " in result.error and "Pulumi.d.yaml both deploy to project 'acme-ml'" in result.error
    assert "gke-ai-batch:cluster.name: " in result.error
    assert "GKE cluster names are unique per project and location" in result.error


def test_same_service_account_id_in_one_project_is_refused(tmp_path, monkeypatch):
    import gke_ai_batch.plan.cluster as plan_cluster

    # Force a hash collision: two different long names, one id.
    monkeypatch.setattr(plan_cluster.hashlib, "sha256", lambda b: type("H", (), {"hexdigest": lambda self: "abcdef" * 10})())
    a = _stack(tmp_path, "a", "acme-ml", "ml-platform-production-training-1")
    _stack(tmp_path, "b", "acme-ml", "ml-platform-production-training-2")
    result = synth.synthesize(ROOT, a, stacks_dir=tmp_path)
    assert result.exit_code == 2
    assert "derive the same node service account id 'ml-platform-produ-abcdef-nodes'" in result.error
    assert "Pulumi.b.yaml" in result.error


def test_stacks_of_other_projects_do_not_collide(tmp_path):
    a = _stack(tmp_path, "a", "acme-dev", "ml-dev")
    _stack(tmp_path, "b", "acme-prod", "ml-dev")
    assert synth.synthesize(ROOT, a, stacks_dir=tmp_path).exit_code == 0


def test_committed_stacks_do_not_collide():
    for stack in STACKS:
        assert synth_stack(stack).exit_code in (0, 3), stack
