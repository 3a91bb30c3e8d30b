"""The node-pool components from any Pulumi program: TpuSlices, GpuPool and CpuPool on a
ClusterRef (no GkeCluster), their names, inherited options, flavor and checked args."""

from __future__ import annotations

import pytest

from conftest import ROOT
from support.programs import run_program

H100 = {"type": "nvidia-h100-80gb", "count": 8}
REF = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}

PROGRAM = """
import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.components.nodepools import GpuPool, TpuSlices

ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
other = gcp.Provider("other-project", project="acme-ml")
guarded = pulumi.ResourceOptions(protect=True, provider=other)
tpu = TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2, "capacity": "spot"})
tpu2 = TpuSlices("v6e-b", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2}, guarded)
h100 = {"type": "nvidia-h100-80gb", "count": 8}
a = {"zones": ["us-east5-a"]}
gpu = GpuPool("h100", {"cluster": ref, "gpu": h100, "max_nodes": 4, "capacity": "flexStart", **a})
gpu2 = GpuPool("h100-b", {"cluster": ref, "gpu": h100, "max_nodes": 2, **a}, guarded)
pulumi.export("flavor", tpu.flavor["name"])
pulumi.export("labels", tpu.node_labels)
pulumi.export("pools", tpu2.pool_names)
"""




def test_two_of_each_side_by_side_on_a_cluster_ref(tmp_path):
    recording = run_program(tmp_path, PROGRAM)
    components = {r.name: r for r in recording.resources if r.type.startswith("gke-ai-batch:index:")}
    assert sorted(components) == ["h100", "h100-b", "v6e", "v6e-b"]
    pools = {r.name: r for r in recording.resources if r.type == "gcp:container/nodePool:NodePool"}
    # Children are named from the component's name; GKE names from it too (no pool_name given).
    assert sorted(pools) == ["h100", "h100-b", "v6e-0", "v6e-1", "v6e-b-0", "v6e-b-1"]
    assert [pools[n].inputs["name"] for n in sorted(pools)] == sorted(pools)
    assert not any(r.type == "gcp:container/cluster:Cluster" for r in recording.resources)
    for name, pool in pools.items():
        owner = name.rsplit("-", 1)[0] if name.startswith("v6e") else name
        assert pool.parent == components[owner].urn, name
        assert pool.inputs["cluster"] == "ml-shared" and pool.inputs["location"] == "us-east5"
        assert pool.inputs["project"] == "acme-ml"
        assert pool.inputs["nodeLocations"] == (["us-east5-b"] if name.startswith("v6e") else ["us-east5-a"])
        guarded = owner.endswith("-b")
        # protect and the provider come from the component's opts, through Pulumi's inheritance.
        assert pool.options.get("protect", False) is guarded, name
        assert ("other-project" in pool.options.get("provider", "")) is guarded, name
    assert pools["v6e-0"].inputs["nodeConfig"]["spot"] is True
    assert pools["v6e-0"].inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert recording.outputs["flavor"] == "tpu-v6e-slice-4x4-spot"
    assert recording.outputs["labels"]["cloud.google.com/gke-tpu-topology"] == "4x4"
    assert recording.outputs["pools"] == ["v6e-b-0", "v6e-b-1"]


def test_every_bad_arg_is_named_at_its_arg_path():
    from gke_ai_batch.components.nodepools import GpuPool, TpuSlices
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        TpuSlices(
            "v6e",
            {"cluster": REF, "version": "v6e", "topology": "4x5", "capacity": "spot", "reservation": "r", "labels": {"cloud.google.com/x": "y"}},
        )
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("TpuSlices v6e: args.topology: '4x5' is not a v6e topology"), lines
    assert lines[1].startswith('TpuSlices v6e: args.labels["cloud.google.com/x"]: label '), lines
    assert len(lines) == 2, lines

    with pytest.raises(ArgsError) as caught:
        TpuSlices("v6e", {"cluster": REF, "version": "v6e", "topology": "4x4", "capacity": "spot", "reservation": "r", "min_nodes": 1})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("TpuSlices v6e: args.min_nodes: unknown arg; known: auto_repair, auto_upgrade, capacity, "), lines
    assert any(line.startswith("TpuSlices v6e: args.reservation: spot pools cannot consume a reservation") for line in lines), lines
    assert len(lines) == 2, lines

    with pytest.raises(ArgsError) as caught:
        GpuPool("h100", {"cluster": REF, "gpu": H100, "machine_type": "a2-highgpu-8g", "min_nodes": 3, "max_nodes": 2})
    assert str(caught.value).splitlines() == [
        "GpuPool h100: args.min_nodes: minNodes (3) exceeds maxNodes (2)",
        "GpuPool h100: args.machine_type: 'a2-highgpu-8g' does not carry nvidia-h100-80gb; allowed: a3-highgpu-1g, "
        "a3-highgpu-2g, a3-highgpu-4g, a3-highgpu-8g",
    ]
    # The cross-key rules of a stack apply as well: its zones against the cluster's region.
    with pytest.raises(ArgsError) as caught:
        GpuPool("h100", {"cluster": REF, "gpu": H100, "zones": ["us-east5-q", "us-west1-a"], "max_nodes": 2})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("GpuPool h100: args.zones[0]: 'us-east5-q' is not a zone of us-east5"), lines
    assert lines[1] == "GpuPool h100: args.zones[1]: us-west1-a is not in the cluster's region us-east5", lines


def test_a_slice_needs_one_zone_and_a_cluster_ref():
    from gke_ai_batch.components.nodepools import TpuSlices
    from gke_ai_batch.config.errors import ArgsError

    two_zones = {**REF, "node_locations": ["us-east5-a", "us-east5-b"]}
    with pytest.raises(ArgsError, match=r"TpuSlices t: args\.zones: a TPU slice lives in exactly one zone"):
        TpuSlices("t", {"cluster": two_zones, "version": "v6e", "topology": "2x4"})
    with pytest.raises(ArgsError, match=r"TpuSlices t: args\.cluster\.project: required"):
        TpuSlices("t", {"cluster": {"name": "c", "location": "us-east5"}, "version": "v6e", "topology": "2x4"})


def test_the_clusters_declared_version_is_checked_as_a_stacks():
    from gke_ai_batch.components.nodepools import TpuSlices
    from gke_ai_batch.config.errors import ArgsError

    old = {**REF, "min_master_version": "1.30"}
    with pytest.raises(ArgsError, match=r"TpuSlices i: args\.cluster\.min_master_version: the REGULAR channel does not offer 1\.30"):
        TpuSlices("i", {"cluster": old, "version": "v6e", "topology": "2x4"})


def test_the_stack_program_protects_pools_through_the_components_opts():
    from conftest import synth_stack

    resources = synth_stack("prod").recording.resources
    pools = [r for r in resources if r.type == "gcp:container/nodePool:NodePool" and "gke-ai-batch:index:" in r.urn]
    assert pools and all(r.options.get("protect") for r in pools)
    pool_types = {f"gke-ai-batch:index:{kind}" for kind in ("TpuSlices", "GpuPool", "CpuPool")}
    groups = [r for r in resources if r.type in pool_types]
    assert groups and all(r.options.get("protect") for r in groups)
    assert (ROOT / "stacks" / "urns" / "prod.txt").exists()


@pytest.mark.parametrize(
    "component, args, line",
    [
        # A CpuPool handed a TPU or a GpuPool without its GPU built TPU slices or a plain CPU
        # pool under the wrong type token.
        ("CpuPool", {"machine_type": "n2-standard-8", "max_nodes": 2, "tpu": {"version": "v6e"}}, "CpuPool p: args.tpu: unknown arg"),
        ("GpuPool", {"max_nodes": 2}, "GpuPool p: args.gpu: required"),
        # A camelCase or misspelt ClusterRef key was dropped, and the version check it feeds skipped.
        ("CpuPool", {"machine_type": "n2-standard-8", "max_nodes": 2, "cluster_extra": {"minMasterVersion": "1.30"}},
         "CpuPool p: args.cluster.minMasterVersion: unknown arg (did you mean 'min_master_version'?)"),
        ("GpuPool", {"gpu": {"type": "nvidia-l4", "cnt": 1}, "max_nodes": 2}, "GpuPool p: args.gpu.cnt: unknown arg"),
    ],
    ids=["cpu-with-tpu", "gpu-without-gpu", "camelCase-cluster-key", "misspelt-gpu-key"],
)
def test_an_arg_the_component_does_not_declare_is_refused(component, args, line):
    from gke_ai_batch.components import nodepools
    from gke_ai_batch.config.errors import ArgsError

    args = dict(args)
    cluster = {**REF, **args.pop("cluster_extra", {})}
    with pytest.raises(ArgsError) as caught:
        getattr(nodepools, component)("p", {"cluster": cluster, **args})
    assert any(l.startswith(line) for l in str(caught.value).splitlines()), str(caught.value)


def test_whole_numbers_from_the_wire_are_ints(tmp_path):
    """A YAML, TypeScript or Go program's numbers arrive as doubles (google.protobuf.Struct)."""
    recording = run_program(tmp_path, """
        import pulumi
        from gke_ai_batch.components.nodepools import GpuPool, TpuSlices

        ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
        tpu = TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2.0, "capacity": "spot"})
        h100 = {"type": "nvidia-h100-80gb", "count": 8.0}
        gpu = GpuPool("h100", {"cluster": ref, "gpu": h100, "max_nodes": 3.0, "zones": ["us-east5-a"]})
        pulumi.export("pools", tpu.pool_names)
        pulumi.export("gpus", gpu.pool_names)
    """)
    assert recording.outputs["pools"] == ["v6e-0", "v6e-1"]
    assert recording.outputs["gpus"] == ["h100"]


@pytest.mark.parametrize(
    "cluster_extra, line",
    [
        ({"node_locations": "us-east5-b"}, "args.cluster.node_locations: must be a list of zone names, not str"),
        ({"node_locations": None}, "args.cluster.node_locations: must be a list of zone names, not NoneType"),
        ({"catalogue": "abc"}, "args.cluster.catalogue: must be a mapping, not str"),
        ({"name": 7}, "args.cluster.name: must be a string, not int"),
    ],
    ids=["zones-as-a-string", "zones-none", "catalogue-string", "name-int"],
)
def test_a_cluster_ref_value_of_the_wrong_kind_is_an_args_error_not_a_crash(cluster_extra, line):
    from gke_ai_batch.components.nodepools import CpuPool
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        CpuPool("p", {"cluster": {**REF, **cluster_extra}, "machine_type": "n2-standard-8", "max_nodes": 2})
    assert f"CpuPool p: {line}" in str(caught.value).splitlines(), str(caught.value)


def test_an_output_where_a_plain_value_is_needed_says_so(tmp_path):
    recording_error = None
    try:
        run_program(tmp_path, """
            import pulumi
            from gke_ai_batch.components.nodepools import CpuPool

            ref = {"name": "ml-shared", "location": "us-east5", "project": pulumi.Output.from_input("acme-ml"),
                   "node_locations": pulumi.Output.from_input(["us-east5-b"])}
            CpuPool("p", {"cluster": ref, "machine_type": "n2-standard-8", "max_nodes": 2})
        """)
    except Exception as exc:  # the engine reports the program's error
        recording_error = str(exc)
    assert recording_error and "args.cluster.node_locations: must be a plain value known when the component is built" in recording_error
    assert "args.cluster.project" not in recording_error  # project may be an Output


def test_two_components_naming_one_pool_of_one_cluster_fail_the_policy_pack(tmp_path):
    """Each component alone cannot see the other; the pack judges what the program registered."""
    from gke_ai_batch.policy import rules
    from gke_ai_batch.policy.rules import Resource

    recording = run_program(tmp_path, """
        from gke_ai_batch.components.nodepools import TpuSlices

        ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
        other = {**ref, "name": "ml-other"}
        spec = {"version": "v6e", "topology": "4x4", "capacity": "spot", "pool_name": "v6e"}
        TpuSlices("team-a-v6e", {"cluster": ref, **spec})
        TpuSlices("team-b-v6e", {"cluster": ref, **spec})
        TpuSlices("team-c-v6e", {"cluster": other, **spec})  # another cluster: its own names
    """)
    resources = [Resource(r.urn, r.type, r.name, r.inputs) for r in recording.resources]
    found = list(rules.findings(rules.by_name("gke-unique-node-pools"), resources, {}))
    assert [f.urn.rsplit("::", 1)[-1] for f in found if f.urn] == ["team-b-v6e-0"], found
    assert "node pool 'v6e-0' of cluster 'ml-shared' in us-east5 is also" in found[0].message


def test_a_stack_entry_and_a_component_are_judged_by_one_rule_at_their_own_paths():
    """The stack's nodePools check and a pool component run the same per-entry rules on the
    same facts: the same message, at nodePools[0].<key> and at args.<key>."""
    from pydantic import ValidationError

    from gke_ai_batch.components.nodepools import GpuPool
    from gke_ai_batch.config.errors import ArgsError, located_problems
    from gke_ai_batch.config.stack import StackConfig

    entry = {"name": "h100", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "maxNodes": 2,
             "zones": ["us-east5-q", "us-west1-a"], "capacity": "flexStart"}
    cluster = {"name": "ml-shared", "location": "us-east5", "nodeLocations": ["us-east5-b"], "minMasterVersion": "1.34"}
    with pytest.raises(ValidationError) as stack:
        StackConfig.model_validate({"cluster": cluster, "nodePools": [entry]})
    in_stack = {loc: msg for loc, msg in located_problems(stack.value, StackConfig)}
    with pytest.raises(ArgsError) as component:
        GpuPool("h100", {"cluster": {**REF, "min_master_version": "1.34"}, "gpu": H100, "max_nodes": 2,
                         "zones": ["us-east5-q", "us-west1-a"], "capacity": "flexStart"})
    as_args = dict(component.value.problems)
    assert len(in_stack) == len(as_args) == 2, (in_stack, as_args)
    for i in (0, 1):
        assert in_stack[("nodePools", 0, "zones", i)] == as_args[f"args.zones[{i}]"]


def test_a_cluster_refs_problem_and_an_args_problem_are_said_at_once():
    from gke_ai_batch.components.nodepools import TpuSlices
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        TpuSlices("t", {"cluster": {**REF, "min_master_version": "1.30"}, "version": "v6e", "topology": "4x5"})
    paths = [path for path, _ in caught.value.problems]
    assert paths == ["args.cluster.min_master_version", "args.topology"], caught.value.problems


def test_a_pool_component_never_builds_a_stack(monkeypatch):
    """The args are validated as a pool entry on their cluster's facts, not as a one-pool stack."""
    from gke_ai_batch.components.nodepools import CpuPool
    from gke_ai_batch.config.errors import ArgsError
    from gke_ai_batch.config.stack import StackConfig

    def refuse(*args, **kwargs):
        raise AssertionError("a pool component built a StackConfig")

    monkeypatch.setattr(StackConfig, "model_validate", refuse)
    with pytest.raises(ArgsError, match=r"args\.max_nodes: maxNodes 5000 over 1 zone exceeds"):
        CpuPool("p", {"cluster": REF, "machine_type": "n2-standard-8", "max_nodes": 5000})


def test_a_cpu_pools_flavor_is_one_selecting_that_pool(tmp_path):
    recording = run_program(tmp_path, """
        import pulumi
        from gke_ai_batch.components.nodepools import CpuPool
        from gke_ai_batch.components.queues import ResourceFlavor

        ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
        cpu = CpuPool("cpu", {"cluster": ref, "machine_type": "n2-standard-8", "max_nodes": 2, "capacity": "spot",
                              "labels": {"example.com/team": "ml"}})
        ResourceFlavor("cpu-spot", {**cpu.flavor, "name": "cpu-spot"})
        pulumi.export("flavor", cpu.flavor)
    """)
    flavor = recording.outputs["flavor"]
    assert flavor["name"] == "cpu"
    assert flavor["node_labels"] == {
        "cloud.google.com/gke-nodepool": "cpu", "cloud.google.com/gke-spot": "true", "example.com/team": "ml",
    }
    assert set(flavor["capacity"]) == {"cpu", "memory"} and flavor["capacity"]["cpu"] > 0
    flavors = [r for r in recording.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"]
    assert [f.inputs["spec"]["nodeLabels"] for f in flavors] == [flavor["node_labels"]]


def test_a_stack_pool_is_registered_as_the_stack_planned_it(tmp_path):
    """Eight labels of its own and a declared flavor selecting one of them: the flavor the pool
    would have alone (eleven labels) is no flavor of the stack, and nothing checks it again
    (it was exit 70: the component re-checked the pool as a one-pool stack)."""
    import copy

    from conftest import synth_rendered
    from gke_ai_batch.synth import yamlread

    config = copy.deepcopy(yamlread.load((ROOT / "stacks" / "Pulumi.tpu-multislice.yaml").read_text()).data["config"])
    labels = {f"example.com/l{i}": "a" for i in range(8)}
    config["gke-ai-batch:nodePools"][0]["labels"] = labels
    config["gke-ai-batch:flavors"][0]["nodeLabels"] = {"example.com/l0": "a"}
    result = synth_rendered(tmp_path, config)
    pools = [r for r in result.recording.resources if r.type == "gcp:container/nodePool:NodePool" and r.name != "system"]
    assert len(pools) == 3 and all(labels.items() <= p.inputs["nodeConfig"]["labels"].items() for p in pools)


def test_a_camelcase_key_nested_in_a_pools_args_is_named_as_written_and_offered_its_field_name():
    from gke_ai_batch.components.nodepools import GpuPool
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        GpuPool("h100", {"cluster": REF, "gpu": H100, "max_nodes": 2, "upgrade": {"maxSurge": 1}})
    assert str(caught.value) == (
        "GpuPool h100: args.upgrade.maxSurge: unknown key 'maxSurge' (did you mean 'max_surge'?); "
        "allowed: strategy, max_surge, max_unavailable, soak"
    )
