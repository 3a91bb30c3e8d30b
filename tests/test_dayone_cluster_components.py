"""GkeCluster and ExistingCluster as X(name, args, opts) components: two of each side by side,
args checked by the stack's rules at their arg paths, protect and retain_on_delete from opts,
a ref() the pool components take, and the stack program's cluster unchanged."""

from __future__ import annotations

import pytest

from support.programs import run_program as _run

from conftest import synth_stack

SA = "ml-nodes@acme-ml.iam.gserviceaccount.com"
CREATE = {"name": "ml-a", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
EXISTING = {
    "name": "ml-shared",
    "location": "us-east5",
    "project": "acme-ml",
    "version": "1.35.7-gke.1222000",
    "endpoint": "gke-0123abcd.us-east5.gke.goog",
    "node_service_account": SA,
    "node_locations": ["us-east5-b"],
}

PROGRAM = """
import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster
from gke_ai_batch.components.nodepools import TpuSlices

create = {"name": "ml-a", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
existing = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "version": "1.35.7-gke.1222000",
            "endpoint": "gke-0123abcd.us-east5.gke.goog", "node_locations": ["us-east5-b"]}
image = ["us-east5-docker.pkg.dev/acme-ml/train/jax:1"]
guarded = pulumi.ResourceOptions(protect=True, retain_on_delete=True)
a = GkeCluster("a", {**create, "registry_images": image})
# A node account this program creates: an Output where the cluster only passes it on.
account = gcp.serviceaccount.Account("b-account", account_id="ml-b-nodes", project="acme-ml")
b = GkeCluster("b", {**create, "name": "ml-b", "node_service_account": account.email, "registry_images": image}, guarded)
c = ExistingCluster("c", {**existing, "node_service_account": account.email, "registry_images": image})
d = ExistingCluster("d", {**existing, "name": "ml-other", "node_service_account": "x-nodes@acme-ml.iam.gserviceaccount.com"},
                    guarded)
# Pools on each cluster's ref(): an existing cluster's Output account is one that is given.
for cluster in (a, b, c, d):
    TpuSlices(f"{cluster._name}-v6e", {"cluster": cluster.ref(), "version": "v6e", "topology": "2x4"},
              pulumi.ResourceOptions(provider=None))
pulumi.export("kubeconfig", b.kubeconfig)
pulumi.export("api", c.api_server)
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("clusters"), PROGRAM)


def _children(recording, owner: str) -> dict[str, object]:
    parent = next(r.urn for r in recording.resources if r.type.startswith("gke-ai-batch:index:") and r.name == owner)
    return {r.name: r for r in recording.resources if r.parent == parent}


def test_two_of_each_side_by_side_name_their_children_from_their_names(recording):
    assert set(_children(recording, "a")) == {"a-cluster", "a-k8s", "a-nodes", "a-nodes-role", "a-system",
                                              "a-nodes-reader/us-east5/acme-ml/train"}
    # b is given its account: it creates none and grants it no role (it has its role already).
    assert set(_children(recording, "b")) == {"b-cluster", "b-k8s", "b-nodes-reader/us-east5/acme-ml/train",
                                              "b-system"}
    assert set(_children(recording, "c")) == {"c-k8s", "c-nodes-reader/us-east5/acme-ml/train"}
    assert set(_children(recording, "d")) == {"d-k8s"}
    tokens = sorted({r.type for r in recording.resources if r.type.startswith("gke-ai-batch:index:")})
    assert tokens == ["gke-ai-batch:index:ExistingCluster", "gke-ai-batch:index:GkeCluster", "gke-ai-batch:index:TpuSlices"]
    clusters = {r.name: r.inputs for r in recording.resources if r.type == "gcp:container/cluster:Cluster"}
    assert sorted(clusters) == ["a-cluster", "b-cluster"]
    assert clusters["a-cluster"]["name"] == "ml-a" and clusters["a-cluster"]["nodeLocations"] == ["us-east5-b"]
    assert clusters["b-cluster"]["workloadIdentityConfig"] == {"workloadPool": "acme-ml.svc.id.goog"}


def test_the_pools_of_each_ref_go_onto_that_cluster_as_its_nodes_account(recording):
    pools = {r.name: r.inputs for r in recording.resources if r.type == "gcp:container/nodePool:NodePool" and "v6e" in r.name}
    assert {n: (p["cluster"], p["location"]) for n, p in pools.items()} == {
        "a-v6e-0": ("ml-a", "us-east5"), "b-v6e-0": ("ml-b", "us-east5"),
        "c-v6e-0": ("ml-shared", "us-east5"), "d-v6e-0": ("ml-other", "us-east5"),
    }
    assert pools["d-v6e-0"]["nodeConfig"]["serviceAccount"] == "x-nodes@acme-ml.iam.gserviceaccount.com"
    assert recording.outputs["api"] == "https://gke-0123abcd.us-east5.gke.goog"


def test_protect_and_retain_on_delete_reach_the_children_from_opts(recording):
    for owner, guarded in (("a", False), ("b", True), ("c", False), ("d", True)):
        for name, child in _children(recording, owner).items():
            assert child.options.get("protect", False) is guarded, name
            gcp_child = child.type.startswith("gcp:")
            assert child.options.get("retainOnDelete", False) is (guarded and gcp_child), name


def test_the_google_cloud_children_wait_for_the_components_depends_on(tmp_path):
    recording = _run(tmp_path, """
        import pulumi
        import pulumi_gcp as gcp
        from gke_ai_batch.components.cluster import GkeCluster

        api = gcp.projects.Service("api-container", service="container.googleapis.com", project="acme-ml")
        GkeCluster("a", {"name": "ml-a", "location": "us-east5", "project": "acme-ml"},
                   pulumi.ResourceOptions(depends_on=[api]))
    """)
    api = next(r.urn for r in recording.resources if r.name == "api-container")
    waits = {r.name for r in recording.resources if api in r.dependencies}
    assert waits == {"a", "a-nodes", "a-nodes-role", "a-cluster"}  # the system pool waits for the cluster


def _refused(component, args, opts=None) -> list[str]:
    from gke_ai_batch.components import cluster
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        getattr(cluster, component)("c", args, opts)
    return str(caught.value).splitlines()


def test_every_bad_arg_is_named_at_its_arg_path_at_once():
    lines = _refused("GkeCluster", {
        **CREATE,
        "mode": "autopilot",
        "location": "us-east5-b",
        "node_locations": ["us-east5-b"],
        "system_pool": {"machine_type": "e2-standard-4"},
        "control_plane": {"ip_endpoint": "private"},
        "auto_provisioning": {"cpu": {"max": 8}, "memory_gb": {"max": 32}},
    })
    assert lines == [
        "GkeCluster c: args.system_pool: Autopilot clusters have no system pool; GKE manages nodes",
        "GkeCluster c: args.auto_provisioning: Autopilot provisions nodes itself; autoProvisioning is Standard only",
        "GkeCluster c: args.control_plane.ip_endpoint: ipEndpoint private needs privateNodes true (GKE keeps the public "
        "IP endpoint of a cluster with public nodes); use disabled or authorizedNetworks",
        "GkeCluster c: args.location: 'us-east5-b' is a zone, and GKE creates Autopilot clusters only in a region: set "
        "location to 'us-east5' (Autopilot spreads the nodes over its zones)",
    ]


def test_a_label_key_and_an_accelerator_type_keep_their_spelling_in_the_arg_path():
    lines = _refused("GkeCluster", {
        **CREATE,
        "labels": {"Team": "ml"},
        "auto_provisioning": {"cpu": {"max": 8}, "memory_gb": {"max": 32}, "accelerators": {"nvidia_x": {"max": 1}}},
    })
    assert [l.split(": ")[1] for l in lines] == ["args.labels.Team", "args.auto_provisioning.accelerators.nvidia_x"], lines


@pytest.mark.parametrize(
    "component, change, line",
    [
        ("GkeCluster", {"control_plane": {"dnsEndpoint": False}},
         "GkeCluster c: args.control_plane.dnsEndpoint: unknown arg (did you mean 'dns_endpoint'?)"),
        ("GkeCluster", {"master_authorized_networks": [{"cidr": "10.0.0.0/8", "label": "x"}]},
         "GkeCluster c: args.master_authorized_networks[0].label: unknown arg"),
        ("GkeCluster", {"project": "Acme ML"}, "GkeCluster c: args.project: 'Acme ML' is not a Google Cloud project id"),
        ("GkeCluster", {"min_master_version": "1.30"}, "GkeCluster c: args.min_master_version: the REGULAR channel does not offer 1.30"),
        ("GkeCluster", {"version": "1.35.7-gke.1222000"}, "GkeCluster c: args.version: unknown arg"),
        ("ExistingCluster", {"release_channel": "STABLE"}, "ExistingCluster c: args.release_channel: unknown arg"),
        ("ExistingCluster", {"endpoint": "gke-0123abcd.us-west1.gke.goog"},
         "ExistingCluster c: args.endpoint: 'gke-0123abcd.us-west1.gke.goog' is not a DNS endpoint of a cluster in us-east5"),
        ("GkeCluster", {"registry_images": "us-east5-docker.pkg.dev/acme-ml/train/jax:1"},
         "GkeCluster c: args.registry_images: must be a list of image names"),
        ("ExistingCluster", {"catalogue": "zones"}, "ExistingCluster c: args.catalogue: must be a mapping, not str"),
        ("ExistingCluster", {"node_locations": ["us-east5-q"]}, "ExistingCluster c: args.node_locations[0]: 'us-east5-q' is not a zone of us-east5"),
    ],
    ids=["camelCase-nested", "misspelt-in-list", "project-id", "channel-minor", "existing-only",
         "creation-only", "endpoint-region", "images-as-a-string", "catalogue-string", "unknown-zone"],
)
def test_one_bad_arg(component, change, line):
    base = CREATE if component == "GkeCluster" else EXISTING
    lines = _refused(component, {**base, **change})
    assert any(l.startswith(line) for l in lines), lines


def test_a_missing_fact_is_said_once_at_its_arg_path():
    args = {k: v for k, v in EXISTING.items() if k not in ("version", "endpoint")}
    assert _refused("ExistingCluster", args) == ["ExistingCluster c: args.endpoint: required", "ExistingCluster c: args.version: required"]
    assert _refused("GkeCluster", {"name": "ml"}) == ["GkeCluster c: args.location: required", "GkeCluster c: args.project: required"]


def test_an_output_where_a_plain_value_is_needed_and_ignore_changes_are_refused():
    import pulumi

    lines = _refused(
        "GkeCluster", {**CREATE, "network": pulumi.Output.from_input("vpc")}, pulumi.ResourceOptions(ignore_changes=["nodeCount"])
    )
    assert lines[0].startswith("GkeCluster c: opts.ignore_changes: a component's children do not inherit it"), lines
    assert lines[1] == "GkeCluster c: args.network: must be a plain value known when the component is built, not an Output"
    assert len(lines) == 2, lines


def test_a_pool_component_passes_retain_on_delete_on_and_refuses_ignore_changes(tmp_path):
    from gke_ai_batch.components.nodepools import TpuSlices
    from gke_ai_batch.config.errors import ArgsError
    import pulumi

    ref = {k: v for k, v in CREATE.items()}
    with pytest.raises(ArgsError, match=r"TpuSlices t: opts\.ignore_changes: a component's children do not inherit it"):
        TpuSlices("t", {"cluster": ref, "version": "v6e", "topology": "2x4"}, pulumi.ResourceOptions(ignore_changes=["x"]))
    recording = _run(tmp_path, """
        import pulumi
        from gke_ai_batch.components.nodepools import TpuSlices

        ref = {"name": "ml-a", "location": "us-central1", "project": "acme-ml"}
        TpuSlices("t", {"cluster": ref, "version": "tpu7x", "topology": "2x2x2", "zones": ["us-central1-c"]},
                  pulumi.ResourceOptions(retain_on_delete=True))
    """)
    children = [r for r in recording.resources if r.type.startswith("gcp:")]
    assert {r.type for r in children} == {"gcp:container/nodePool:NodePool", "gcp:compute/resourcePolicy:ResourcePolicy"}
    assert all(r.options.get("retainOnDelete") for r in children)


def test_a_pool_on_an_existing_cluster_whose_account_is_an_output_is_accepted(tmp_path):
    """The account only passes through to the node pools: an Output is as good as a string."""
    recording = _run(tmp_path, """
        import pulumi
        from gke_ai_batch.components.nodepools import TpuSlices

        ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "version": "1.35.7-gke.1222000",
               "endpoint": "gke-0123abcd.us-east5.gke.goog", "node_locations": ["us-east5-b"],
               "node_service_account": pulumi.Output.from_input("ml-nodes@acme-ml.iam.gserviceaccount.com")}
        TpuSlices("t", {"cluster": ref, "version": "v6e", "topology": "2x4"})
    """)
    pool = next(r for r in recording.resources if r.type == "gcp:container/nodePool:NodePool")
    assert pool.inputs["nodeConfig"]["serviceAccount"] == SA


def test_the_stack_program_protects_every_child_of_a_production_cluster():
    resources = synth_stack("prod").recording.resources
    cluster = next(r for r in resources if r.type == "gke-ai-batch:index:GkeCluster")
    children = [r for r in resources if r.parent == cluster.urn]
    assert {r.name for r in children} >= {"cluster", "system", "k8s"}
    assert cluster.options.get("protect") and all(r.options.get("protect") for r in children)
    dev = synth_stack("dev").recording.resources
    assert not any(r.options.get("protect") for r in dev)


def test_every_cluster_key_of_a_stack_is_an_arg():
    """The stack program hands its cluster key to GkeCluster as args: a key the args lack would
    be refused as unknown there."""
    from gke_ai_batch.components.cluster import ExistingClusterArgs, GkeClusterArgs
    from gke_ai_batch.config.cluster import CREATION_ONLY, EXISTING_ONLY, ClusterConfig

    extra = {"project", "registry_images", "catalogue", "addons", "monitoring"}
    create = set(GkeClusterArgs.__annotations__) - extra
    assert create == set(ClusterConfig.model_fields) - {"existing", *EXISTING_ONLY}
    exists = set(ExistingClusterArgs.__annotations__) - extra
    # maintenance is an argument of the Cluster resource, which an existing cluster has none of
    # (config/cluster.py refuses it there).
    assert exists == set(ClusterConfig.model_fields) - {"existing", "maintenance", *CREATION_ONLY}


def test_the_library_pages_cluster_example_runs(tmp_path):
    from conftest import ROOT

    page = (ROOT / "docs" / "library.md").read_text()
    example = page.split("## The cluster", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    recording = _run(tmp_path, example)
    pools = [r for r in recording.resources if r.type == "gcp:container/nodePool:NodePool"]
    assert sorted(p.name for p in pools) == ["ml-system", "v6e-0", "v6e-1"]
    assert all(r.options.get("protect") for r in recording.resources if r.name.startswith("ml-"))


def test_two_clusters_each_named_as_its_gke_cluster_do_not_clash(tmp_path):
    """A child's URN holds its parent's type, not its name: children named "cluster" or "nodes"
    alone would be one URN for both."""
    recording = _run(tmp_path, """
        from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster

        for name, location in (("w1", "us-east5"), ("w2", "us-west1")):
            GkeCluster(name, {"name": name, "location": location, "project": "acme-ml"})
        for name in ("e1", "e2"):
            ExistingCluster(name, {"name": name, "location": "us-east5", "project": "acme-ml", "version": "1.35.7-gke.1222000",
                                   "endpoint": "gke-0123abcd.us-east5.gke.goog",
                                   "node_service_account": "x-nodes@acme-ml.iam.gserviceaccount.com"})
    """)
    clusters = sorted(r.name for r in recording.resources if r.type == "gcp:container/cluster:Cluster")
    assert clusters == ["w1-cluster", "w2-cluster"]
    providers = sorted(r.name for r in recording.resources if r.type == "pulumi:providers:kubernetes")
    assert providers == ["e1-k8s", "e2-k8s", "w1-k8s", "w2-k8s"]


def test_a_fleet_whose_sample_pulls_from_artifact_registry_renders(tmp_path):
    """The manager's samples run on the workers (MultiKueue): their nodes get the grant, and the
    manager's sample waits for none (it crashed with a KeyError looking for the manager's)."""
    import yaml

    from conftest import ROOT, synth_config

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text())["config"]
    private = "us-central1-docker.pkg.dev/acme-ml/train/sleep:v1"
    for wl in config["gke-ai-batch:workloads"]:
        wl["image"] = private
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    readers = [r.name for r in result.recording.resources if r.type.endswith("RepositoryIamMember")]
    assert readers and all(n.endswith("/nodes-reader/us-central1/acme-ml/train") for n in readers)
    assert not [n for n in readers if n.startswith("manager/")]


def test_an_image_missing_from_registry_images_is_named_when_a_pod_would_wait_for_its_grant():
    from gke_ai_batch.components.cluster import GkeCluster

    cluster = GkeCluster.__new__(GkeCluster)
    cluster.registry_readers = {}
    assert cluster.readers_for("gcr.io/k8s-staging-perf-tests/sleep:v0.0.3") == []
    with pytest.raises(ValueError, match=r"us-east5-docker\.pkg\.dev/acme-ml/train/jax:1: its nodes may not pull it .* registry_images"):
        cluster.readers_for("us-east5-docker.pkg.dev/acme-ml/train/jax:1")


def test_a_cluster_from_another_language_through_the_packages_input_mapping(tmp_path):
    """What the package's construct hands GkeCluster for a YAML or TypeScript program's camelCase
    inputs (numbers as doubles, label keys as written)."""
    recording = _run(tmp_path, """
        from pulumi.provider.experimental.component import ComponentProvider
        from gke_ai_batch.components.package import COMPONENTS, NAME

        provider = ComponentProvider(COMPONENTS, NAME)
        wire = {"name": "ml-yaml", "location": "us-east5", "project": "acme-ml", "controlPlane": {"ipEndpoint": "disabled"},
                "systemPool": {"maxNodes": 5.0}, "labels": {"cost_center": "ml"}, "registryImages": []}
        args = provider.map_inputs(wire, provider._component_defs["GkeCluster"])
        provider._components["GkeCluster"]("yaml", args)
    """)
    (cluster,) = [r.inputs for r in recording.resources if r.type == "gcp:container/cluster:Cluster"]
    assert cluster["controlPlaneEndpointsConfig"]["ipEndpointsConfig"] == {"enabled": False}
    assert cluster["resourceLabels"] == {"cost_center": "ml"}
    (system,) = [r.inputs for r in recording.resources if r.name == "yaml-system"]
    assert system["autoscaling"]["totalMaxNodeCount"] == 5


@pytest.mark.parametrize("component, key", [("GkeCluster", "project"), ("ExistingCluster", "location")])
def test_a_fact_given_as_none_is_refused_not_a_crash(component, key):
    base = CREATE if component == "GkeCluster" else EXISTING
    lines = _refused(component, {**base, key: None})
    assert any(l.startswith(f"{component} c: args.{key}: ") for l in lines), lines


def test_an_existing_cluster_without_a_location_is_refused_not_a_crash(tmp_path):
    """Its endpoint's region was compared with no location at all (a TypeError, exit 70)."""
    import yaml

    from conftest import ROOT, synth_config
    from support.diagnostics import assert_names

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.existing-cluster.yaml").read_text())["config"]
    config.pop("gcp:region", None)
    config["gke-ai-batch:cluster"].pop("location", None)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", "gke-ai-batch:cluster.location", "required")


def test_a_library_cluster_takes_the_checkpoint_drivers_as_addons(tmp_path):
    """The drivers a stack's checkpoints key turns on are the cluster's args (addons) for any
    program; on Autopilot the FUSE driver is GKE's already and is not set."""
    from gke_ai_batch.components.cluster import GkeCluster
    from gke_ai_batch.config.errors import ArgsError

    recording = _run(tmp_path, """
        from gke_ai_batch.components.cluster import GkeCluster
        GkeCluster("a", {"name": "a", "location": "us-central1", "project": "acme-ml",
                         "addons": {"gcs_fuse_csi_driver": True, "lustre_csi_driver": True},
                         "monitoring": {"managed_prometheus": True, "dcgm": True}})
        GkeCluster("b", {"name": "b", "location": "us-central1", "project": "acme-ml", "mode": "autopilot",
                         "addons": {"gcs_fuse_csi_driver": True}})
    """)
    clusters = {r.name: r.inputs for r in recording.resources if r.type == "gcp:container/cluster:Cluster"}
    assert clusters["a-cluster"]["addonsConfig"] == {"gcsFuseCsiDriverConfig": {"enabled": True}, "lustreCsiDriverConfig": {"enabled": True}}
    assert "addonsConfig" not in clusters["b-cluster"]
    # The monitoring arg as a stack's metrics key renders it; unset, GKE's defaults stand.
    assert clusters["a-cluster"]["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert "DCGM" in clusters["a-cluster"]["monitoringConfig"]["enableComponents"]
    assert "monitoringConfig" not in clusters["b-cluster"]
    with pytest.raises(ArgsError) as refused:
        GkeCluster("c", {"name": "c", "location": "us-central1", "project": "acme-ml", "addons": {"gcs_fuse_csi_driver": "yes"}})
    assert "args.addons.gcs_fuse_csi_driver: must be true or false" in str(refused.value)


def test_a_camelcase_arg_is_refused_as_unknown_at_its_arg_path_and_judged_no_further():
    """Args are validated by the cluster key's field names: the stack file's camelCase spelling
    is no arg, at the top or inside one, and its value is not judged as if it were."""
    lines = _refused("GkeCluster", {**CREATE, "nodeLocations": ["us-east5-q"], "system_pool": {"machineType": "e2-nope-4"}})
    assert [l.split(": ")[1] for l in lines] == ["args.nodeLocations", "args.system_pool.machineType"], lines
    assert all(": unknown arg (did you mean '" in l for l in lines), lines


# A stack whose cluster is CREATE's, and the component args of the same cluster.
STACK_CLUSTER = {"name": "ml-a", "location": "us-east5", "nodeLocations": ["us-east5-b"]}


@pytest.mark.parametrize(
    "stack_keys, arg_keys, stack_path, arg_path",
    [
        ({"nodeLocations": ["us-east5-q"]}, {"node_locations": ["us-east5-q"]}, "cluster.nodeLocations[0]", "args.node_locations[0]"),
        ({"minMasterVersion": "1.30"}, {"min_master_version": "1.30"}, "cluster.minMasterVersion", "args.min_master_version"),
        ({"systemPool": {"machineType": "e2-nope-4"}}, {"system_pool": {"machine_type": "e2-nope-4"}},
         "cluster.systemPool.machineType", "args.system_pool.machine_type"),
        ({"network": "vpc", "subnetwork": "projects/other-proj/regions/us-east5/subnetworks/s"},
         {"network": "vpc", "subnetwork": "projects/other-proj/regions/us-east5/subnetworks/s"}, "cluster.subnetwork", "args.subnetwork"),
        ({"autoProvisioning": {"cpu": {"max": 8}, "memoryGb": {"max": 32}, "locations": ["us-east5-q"]}},
         {"auto_provisioning": {"cpu": {"max": 8}, "memory_gb": {"max": 32}, "locations": ["us-east5-q"]}},
         "cluster.autoProvisioning.locations[0]", "args.auto_provisioning.locations[0]"),
    ],
    ids=["zone", "channel-minor", "system-machine-type", "network-project", "auto-provisioning-zone"],
)
def test_a_cluster_rule_refuses_the_stack_file_and_the_component_with_one_message(stack_keys, arg_keys, stack_path, arg_path):
    from gke_ai_batch.config import ConfigError, load

    with pytest.raises(ConfigError) as stack:
        load({"cluster": {**STACK_CLUSTER, **stack_keys}}, project="acme-ml")
    (found,) = stack.value.problems
    assert found[0] == f"gke-ai-batch:{stack_path}"
    assert _refused("GkeCluster", {**CREATE, **arg_keys}) == [f"GkeCluster c: {arg_path}: {found[1]}"]


@pytest.mark.parametrize("rule", ["location_problems", "version_problems", "system_pool_problems", "network_problems"])
def test_the_stack_and_the_component_run_one_function_per_cluster_rule(monkeypatch, rule):
    """Each rule is one function of the cluster key and its facts: replaced, both the stack's
    check and the component say what the replacement says."""
    from gke_ai_batch.config import ConfigError, load
    from gke_ai_batch.config.base import RuleError
    from gke_ai_batch.config.checks import cluster as rules, network

    def replaced(*_args):
        yield RuleError(("controlPlane", "ipEndpoint"), f"said by {rule}")

    monkeypatch.setattr(network if rule == "network_problems" else rules, rule, replaced)
    with pytest.raises(ConfigError) as stack:
        load({"cluster": STACK_CLUSTER}, project="acme-ml")
    assert stack.value.problems == [("gke-ai-batch:cluster.controlPlane.ipEndpoint", f"said by {rule}")]
    assert _refused("GkeCluster", CREATE) == [f"GkeCluster c: args.control_plane.ip_endpoint: said by {rule}"]


def test_the_stack_program_registers_its_plans_cluster_spec_without_checking_it_again(monkeypatch, tmp_path):
    """The stack validated its cluster; the stack program hands the plan's spec, and the
    component's own check of args never runs for it."""
    from gke_ai_batch.components import cluster

    from conftest import base_config, synth_rendered

    def unchecked(*_args):
        raise AssertionError("the stack's cluster was checked again as args")

    monkeypatch.setattr(cluster, "_checked_cluster", unchecked)
    resources = synth_rendered(tmp_path, base_config()).recording.resources
    (made,) = [r for r in resources if r.type == "gcp:container/cluster:Cluster"]
    assert made.inputs["name"] == "test"
