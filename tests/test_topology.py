"""Topology-aware scheduling (docs/batch-layer.md#topology-aware-scheduling): each rule has a
refusal (exit 2, the stack file's line and key path, the rule in the message) and a near miss
that Kueue takes and synth renders; the rendered Topology and flavor are valid against the
vendored Kueue v0.19.2 schemas; the admission model refuses a pod set that requires a domain
larger than any the flavor's pools make, and the report shows the domains."""

from __future__ import annotations

import copy

import pytest

from conftest import base_config, synth_refused, synth_rendered, synth_stack
from support import manifests as M
from gke_ai_batch.domain import topology
from gke_ai_batch.domain.podtemplates import PodSet
from gke_ai_batch.model import topology as model_topology
from gke_ai_batch.model.objects import Flavor, NodeGroup, World
from gke_ai_batch.model.placement import Placement

NODEPOOL = "cloud.google.com/gke-nodepool"
HOSTNAME = "kubernetes.io/hostname"
SLICES = {"name": "tpu-slices", "levels": [NODEPOOL, HOSTNAME]}


def sample(slices=1, **topology_request) -> dict:
    return {
        "kind": "jobset", "name": "train", "team": "team-a", "pool": "v5e", "slices": slices,
        "image": "busybox:1.36", "command": ["true"],
        "topology": topology_request or {"required": NODEPOOL},
    }


def config(topologies=None, flavor=None, workloads=None) -> dict:
    return base_config(
        nodePools=[{"name": "v5e", "tpu": {"version": "v5e", "topology": "2x4"}, "slices": 3, "zones": ["us-central1-a"]}],
        topologies=copy.deepcopy(topologies if topologies is not None else [SLICES]),
        flavors=[flavor or {"name": "v5e", "pools": ["v5e"], "topologyName": "tpu-slices"}],
        clusterQueues=[{"name": "cq", "flavors": ["v5e"]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}],
        workloads=copy.deepcopy(workloads if workloads is not None else [sample()]),
    )


def manifests(result, kind):
    return [r.inputs for r in result.recording.resources if r.type.startswith("kubernetes:") and r.type.endswith(f":{kind}")]


# -- rendering -----------------------------------------------------------------------------------


def test_the_multislice_stack_renders_a_topology_a_flavor_naming_it_and_a_sample_requiring_a_slice():
    result = synth_stack("tpu-multislice")
    (topo,) = manifests(result, "Topology")
    assert topo["spec"] == {"levels": [{"nodeLabel": NODEPOOL}, {"nodeLabel": HOSTNAME}]}
    (flavor,) = manifests(result, "ResourceFlavor")
    assert flavor["spec"]["topologyName"] == topo["metadata"]["name"]
    for m in (topo, flavor):
        assert M.validate(m) == [], m
    (js,) = [m for m in manifests(result, "JobSet") if m["metadata"]["name"] == "multislice-tas"]
    template = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert template["metadata"]["annotations"][topology.REQUIRED_ANNOTATION] == NODEPOOL
    (verdict,) = [v for v in result.admission.verdicts if v.workload.name == "multislice-tas"]
    assert verdict.admissible, verdict.refusal
    report = result.extra_files["report.md"]
    assert "### Topology" in report
    assert f"| `vlp-24` | `tpu-slices` | `{NODEPOOL}` | 3 | 2 |" in report
    assert f"| — | — | `{HOSTNAME}` | 6 | 1 |" in report
    assert f"- `multislice-tas` (slice, 2 pods): required one `{NODEPOOL}` domain." in report


# -- the Topology CRD's rules -----------------------------------------------------------------------


def test_a_level_listed_twice_is_refused(tmp_path):
    synth_refused(tmp_path, config([{"name": "t", "levels": [NODEPOOL, NODEPOOL]}], workloads=[]),
                  "gke-ai-batch:topologies[0].levels[1]", "levels must be unique")


def test_hostname_not_last_is_refused(tmp_path):
    synth_refused(tmp_path, config([{"name": "t", "levels": [HOSTNAME, NODEPOOL]}], workloads=[]),
                  "gke-ai-batch:topologies[0].levels[0]", "lowest (last) level")


def test_more_levels_than_the_crd_allows_are_refused(tmp_path):
    levels = [f"example.com/level-{i}" for i in range(topology.MAX_LEVELS + 1)]
    synth_refused(tmp_path, config([{"name": "t", "levels": levels}], workloads=[]), "gke-ai-batch:topologies[0].levels", "at most 16")


def test_near_miss_sixteen_distinct_levels_hostname_last_render(tmp_path):
    # Labels the pool's nodes all carry (Kueue counts only nodes that carry every level): every
    # GKE node's, the TPU slice's, and one of the pool's own.
    carried = sorted(topology.EVERY_NODE_LABELS - {HOSTNAME}) + [
        "cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology", "gke-ai-batch/capacity"]
    levels = [*carried, "example.com/rack", HOSTNAME]
    assert len(levels) == topology.MAX_LEVELS
    c = config([{"name": "tpu-slices", "levels": levels}], workloads=[])
    c["gke-ai-batch:nodePools"][0]["labels"] = {"example.com/rack": "r1"}
    result = synth_rendered(tmp_path, c)
    (topo,) = manifests(result, "Topology")
    assert len(topo["spec"]["levels"]) == 16 and M.validate(topo) == []


def test_a_topology_declared_twice_is_refused(tmp_path):
    synth_refused(tmp_path, config([SLICES, SLICES], workloads=[]), "gke-ai-batch:topologies[1].name", "declared twice")


# -- flavors -------------------------------------------------------------------------------------


def test_a_flavor_naming_an_unknown_topology_is_refused(tmp_path):
    synth_refused(tmp_path, config(flavor={"name": "v5e", "pools": ["v5e"], "topologyName": "racks"}, workloads=[]),
                  "gke-ai-batch:flavors[0].topologyName", "no topology 'racks'")


def test_a_topology_flavor_without_node_labels_is_refused(tmp_path):
    synth_refused(tmp_path, config(flavor={"name": "v5e", "topologyName": "tpu-slices"}, workloads=[]),
                  "gke-ai-batch:flavors[0].topologyName", "needs nodeLabels")


def test_near_miss_a_topology_flavor_with_node_labels_renders(tmp_path):
    flavor = {"name": "v5e", "topologyName": "tpu-slices", "nodeLabels": {"cloud.google.com/gke-tpu-topology": "2x4"}}
    c = config(flavor=flavor, workloads=[])
    c["gke-ai-batch:clusterQueues"] = [{"name": "cq", "flavors": [{"name": "v5e", "quotas": {"google.com/tpu": 24}}]}]
    result = synth_rendered(tmp_path, c)
    (rf,) = manifests(result, "ResourceFlavor")
    assert rf["spec"]["topologyName"] == "tpu-slices" and M.validate(rf) == []


# -- samples -------------------------------------------------------------------------------------


def test_a_level_the_flavors_topology_lacks_is_refused(tmp_path):
    synth_refused(tmp_path, config(workloads=[sample(required=topology.BLOCK_LABEL)]),
                  "gke-ai-batch:workloads[0].topology.required", "only to a flavor whose Topology has that level")


def test_a_topology_request_on_a_flavor_without_topology_is_refused(tmp_path):
    synth_refused(tmp_path, config(flavor={"name": "v5e", "pools": ["v5e"]}),
                  "gke-ai-batch:workloads[0].topology.required", "v5e (no topologyName)")


def test_required_and_preferred_together_are_refused(tmp_path):
    synth_refused(tmp_path, config(workloads=[sample(required=NODEPOOL, preferred=HOSTNAME)]),
                  "gke-ai-batch:workloads[0].topology", "give one of required or preferred")


def _mixed_queue(workload: dict) -> dict:
    c = config(workloads=[workload])
    c["gke-ai-batch:nodePools"].append({"name": "cpu", "machineType": "n2-standard-8", "maxNodes": 2, "zones": ["us-central1-a"]})
    c["gke-ai-batch:flavors"].append({"name": "cpu", "pools": ["cpu"]})
    c["gke-ai-batch:clusterQueues"] = [{"name": "cq", "flavors": [
        "v5e", {"name": "cpu", "quotas": {"cpu": 16, "memory": "64Gi"}}]}]
    return c


def test_a_sample_without_a_request_on_a_mixed_queue_whose_tas_flavor_alone_fits_is_refused(tmp_path):
    plain = {k: v for k, v in sample().items() if k != "topology"}
    synth_refused(tmp_path, _mixed_queue(plain), "gke-ai-batch:workloads[0]", "supports only TopologyAwareScheduling")


def test_near_miss_a_sample_without_a_request_on_a_tas_only_queue_renders(tmp_path):
    plain = {k: v for k, v in sample().items() if k != "topology"}
    result = synth_rendered(tmp_path, config(workloads=[plain]))
    assert result.admission.at_once["train"] is None
    # On the mixed queue, the same sample with a request is admitted.
    mixed = synth_rendered(tmp_path, _mixed_queue(sample()))
    assert mixed.admission.at_once["train"] is None


def test_a_pod_set_larger_than_any_slice_is_refused_by_the_model(tmp_path):
    # Two replicas of a 2-host slice job are 4 pods; one node pool (a slice) holds 2.
    synth_refused(tmp_path, config(workloads=[sample(slices=2)]), "gke-ai-batch:workloads[0]",
                  f"requires one {NODEPOOL} domain for all 4 pods")


def test_near_miss_a_pod_set_that_fills_one_slice_is_admitted(tmp_path):
    result = synth_rendered(tmp_path, config())
    assert result.admission.at_once["train"] is None


def test_preferred_larger_than_a_domain_waits_instead_of_refusing(tmp_path):
    result = synth_rendered(tmp_path, config(workloads=[sample(slices=2, preferred=NODEPOOL)]))
    (verdict,) = result.admission.verdicts
    assert verdict.admissible
    assert any(f"prefers one {NODEPOOL} domain for its 4 pods" in w.message for w in verdict.waits), verdict.waits


# -- the model on objects as registered -------------------------------------------------------------


def _world(topologies) -> World:
    group = NodeGroup("pool-0", {"pool": "a"}, (), {"google.com/tpu": 4}, 2, "ct5lp-hightpu-4t", "onDemand", slice_hosts=2)
    flavor = Flavor("f", {"pool": "a"}, topology_name="t")
    return World({"f": flavor}, {}, {}, {}, (group,), topologies=topologies)


def _pod_set(count: int) -> PodSet:
    return PodSet("main", {}, 1, count, {topology.REQUIRED_ANNOTATION: NODEPOOL})


@pytest.mark.parametrize("topologies, words", [
    ({}, "names Topology t, which does not exist"),
    ({"t": (HOSTNAME,)}, "has no such level"),
])
def test_the_model_refuses_what_a_program_registers_without_the_topology_or_level(topologies, words):
    [found] = model_topology.judge(_world(topologies), _pod_set(2), ["f"], Placement("main", ["pool-0"], {"pool-0": 1}))
    never = found.message if found.severity == "error" else None
    assert never is not None and words in never


def test_near_miss_the_model_admits_a_registered_topology_with_the_level():
    world = _world({"t": (NODEPOOL, HOSTNAME)})
    assert model_topology.judge(world, _pod_set(2), ["f"], Placement("main", ["pool-0"], {"pool-0": 1})) == ()
    [found] = model_topology.judge(world, _pod_set(3), ["f"], Placement("main", ["pool-0"], {"pool-0": 1}))
    never = found.message if found.severity == "error" else None
    assert never is not None and "holds 2" in never


# -- the component ---------------------------------------------------------------------------------


def test_the_component_refuses_bad_args_at_their_paths():
    from gke_ai_batch.components.topology import Topologies
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        Topologies("tas", {"topologies": [{"name": "t", "levels": [HOSTNAME, NODEPOOL]}, {"name": "u", "levels": []}]})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("Topologies tas: args.topologies[0].levels[0]: kubernetes.io/hostname can only be the lowest (last) level"), lines
    assert lines[1].startswith("Topologies tas: args.topologies[1].levels: "), lines
    once = {"name": "t", "levels": [NODEPOOL]}
    with pytest.raises(ArgsError, match=r"Topologies tas: args.topologies\[1\].name: topology 't' is declared twice"):
        Topologies("tas", {"topologies": [once, once]})
    with pytest.raises(ArgsError, match=r"Topologies tas: args.topologies: required"):
        Topologies("tas", {})


def test_the_component_from_any_program(tmp_path):
    from support.programs import run_program

    recording = run_program(tmp_path, """
        import pulumi
        import pulumi_kubernetes as k8s
        from gke_ai_batch.components.topology import Topologies

        p = k8s.Provider("ml-shared", kubeconfig="{}")
        Topologies("tas", {"topologies": [{"name": "a4-blocks", "levels": [
            "cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock", "kubernetes.io/hostname"]}]},
            pulumi.ResourceOptions(provider=p))
        """)
    (made,) = [r for r in recording.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:Topology"]
    assert made.name == "tas-a4-blocks"
    assert M.validate(made.inputs) == []
    assert [level["nodeLabel"] for level in made.inputs["spec"]["levels"]][-1] == HOSTNAME


# -- capacity that exists only once a pod asks for it ------------------------------------------------

L4 = {"cloud.google.com/gke-accelerator": "nvidia-l4"}


def autopilot_tas(**flavor) -> dict:
    c = base_config(
        topologies=[{"name": "hosts", "levels": [HOSTNAME]}],
        flavors=[{"name": "l4", "nodeLabels": L4, "topologyName": "hosts", **flavor}],
        clusterQueues=[{"name": "cq", "flavors": [{"name": "l4", "quotas": {"cpu": 16, "memory": "64Gi", "nvidia.com/gpu": 2}}]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        workloads=[{"kind": "job", "name": "train", "team": "team-a", "gpu": {"type": "nvidia-l4", "count": 1},
                    "image": "busybox:1.36", "command": ["true"], "resources": {"cpu": "2", "memory": "8Gi"},
                    "topology": {"required": HOSTNAME}}],
    )
    c["gke-ai-batch:cluster"] = {"name": "test", "mode": "autopilot"}
    return c


def test_a_topology_flavor_on_autopilot_without_a_provisioning_check_is_refused(tmp_path):
    # Kueue's TAS counts the nodes that exist; Autopilot creates one only for a pending pod, and
    # Kueue creates no pod before it admits the workload.
    synth_refused(tmp_path, autopilot_tas(), "gke-ai-batch:workloads[0]",
                  "ResourceFlavor l4's nodes are Autopilot's, which GKE creates only once a pending pod asks for them")


def test_near_miss_a_topology_flavor_on_autopilot_behind_a_provisioning_check_renders(tmp_path):
    result = synth_rendered(tmp_path, autopilot_tas(queuedProvisioning=True))
    (verdict,) = result.admission.verdicts
    assert verdict.admissible, verdict.refusal


# -- levels the flavor's nodes carry ---------------------------------------------------------------
# Kueue's TAS keeps a node for a flavor only if it carries every level of the Topology (kueue
# v0.19.2 pkg/util/tas/node.go NodeMatchesFlavor): a level no node of the flavor carries leaves
# the flavor no node, and nothing under it is ever admitted.

BLOCKS = {"name": "blocks", "levels": ["cloud.google.com/gce-topology-block", HOSTNAME]}


def gpu_tas(pool: dict, topology_: dict) -> dict:
    return base_config(
        nodePools=[pool],
        topologies=[topology_],
        flavors=[{"name": "gpu", "pools": [pool["name"]], "topologyName": topology_["name"]}],
        clusterQueues=[{"name": "cq", "flavors": ["gpu"]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
    )


L4_POOL = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "minNodes": 1, "maxNodes": 2}
H100_POOL = {"name": "h100", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "machineType": "a3-highgpu-8g",
             "minNodes": 1, "maxNodes": 2}


def test_a_physical_topology_level_on_machines_gce_reports_no_topology_for_is_refused(tmp_path):
    # Compute Engine reports a VM's physical topology (which GKE's gce-topology labels come from)
    # for A4X, A4, A3 Ultra/Mega/High-8g and H4D, or under compact placement: not for G2.
    synth_refused(tmp_path, gpu_tas(L4_POOL, BLOCKS), "gke-ai-batch:flavors[0].topologyName",
                  "level cloud.google.com/gce-topology-block is on no node of flavor gpu (l4 lacks "
                  "cloud.google.com/gce-topology-block)")


def test_near_miss_a_physical_topology_level_on_a3_high_8g_renders(tmp_path):
    synth_rendered(tmp_path, gpu_tas(H100_POOL, BLOCKS))


def test_a_level_of_the_users_domain_no_pool_sets_is_refused(tmp_path):
    racks = {"name": "racks", "levels": ["example.com/rack", HOSTNAME]}
    synth_refused(tmp_path, gpu_tas(L4_POOL, racks), "gke-ai-batch:flavors[0].topologyName",
                  "level example.com/rack is on no node of flavor gpu")


def test_near_miss_a_level_the_pool_labels_its_nodes_with_renders(tmp_path):
    racks = {"name": "racks", "levels": ["example.com/rack", HOSTNAME]}
    synth_rendered(tmp_path, gpu_tas({**L4_POOL, "labels": {"example.com/rack": "r1"}}, racks))


def test_a_capacity_label_the_pools_nodes_lack_is_refused(tmp_path):
    # GKE labels Spot nodes cloud.google.com/gke-spot=true, and only those.
    spot = {"name": "spot", "levels": ["cloud.google.com/gke-spot", HOSTNAME]}
    synth_refused(tmp_path, gpu_tas(L4_POOL, spot), "gke-ai-batch:flavors[0].topologyName",
                  "level cloud.google.com/gke-spot is on no node of flavor gpu")
    synth_rendered(tmp_path, gpu_tas({**L4_POOL, "capacity": "spot"}, spot))


def test_the_model_refuses_a_registered_topology_whose_level_no_node_carries():
    # As the policy pack and --program judge it: the same rule on objects as registered.
    world = _world({"t": ("example.com/rack", NODEPOOL, HOSTNAME)})
    [found] = model_topology.judge(world, _pod_set(2), ["f"], Placement("main", ["pool-0"], {"pool-0": 1}))
    never = found.message if found.severity == "error" else None
    assert never is not None and "pool-0 lacks example.com/rack" in never and "NodeMatchesFlavor" in never
    labelled = World(world.flavors, {}, {}, {}, (NodeGroup("pool-0", {"pool": "a", "example.com/rack": "r"}, (),
                     {"google.com/tpu": 4}, 2, "ct5lp-hightpu-4t", "onDemand", slice_hosts=2),),
                     topologies={"t": ("example.com/rack", NODEPOOL, HOSTNAME)})
    assert model_topology.judge(labelled, _pod_set(2), ["f"], Placement("main", ["pool-0"], {"pool-0": 1})) == ()
