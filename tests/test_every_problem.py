"""Every problem at once across both rounds (gke_ai_batch/config/stack.py every_problem): a key
or entry of the wrong shape does not hide what the rules find in the others, and never makes a
rule speak about what it cannot see (docs/synth.md, "Diagnostics")."""

from __future__ import annotations

import copy

import pytest

from gke_ai_batch.config import ConfigError, load, split_namespace
from gke_ai_batch.config.checks import Unknowable, Unknown
from gke_ai_batch.config.pools import NodePoolConfig
from conftest import base_config
from test_fleet_config import FLEET, STACK

NS = "gke-ai-batch"
TPU = {"name": "v6e", "tpu": {"version": "v6e", "topology": "2x2"}}
# Zones outside the cluster's region (us-central1): refused by a cross-key rule.
ABROAD = {"name": "h100", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "maxNodes": 2, "zones": ["europe-west4-a"]}
ABROAD_ZONE = (f"{NS}:nodePools[{{}}].zones[0]", "europe-west4-a is not in the cluster's region us-central1")
QUEUE_AND_TEAM = {
    "clusterQueues": [{"name": "cq"}],
    "teams": [{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
}
JOBSET = {"kind": "jobset", "name": "train", "team": "team-a", "pool": "v6e", "image": "i:1"}


def problems(**keys) -> list[tuple[str, str]]:
    ours, region = split_namespace(base_config(**keys))
    with pytest.raises(ConfigError) as err:
        load(ours, region=region, project="test-project")
    return err.value.problems


def paths(found: list[tuple[str, str]]) -> list[str]:
    return [p for p, _ in found]


@pytest.mark.parametrize("broken", [0, 1])
def test_a_pools_type_error_does_not_hide_anothers_zone(broken):
    pools = [ABROAD, ABROAD]
    pools[broken] = {**TPU, "slices": "2"}
    zone = 1 - broken
    found = problems(nodePools=pools)
    assert found == sorted(
        [(ABROAD_ZONE[0].format(zone), ABROAD_ZONE[1]),
         (f"{NS}:nodePools[{broken}].slices", 'Input should be a valid integer, got \'2\': remove the quotes (write 2, not "2")')],
        key=lambda p: p[0],
    )


def test_a_type_error_a_topology_and_a_zone_are_reported_together():
    """The issue's first case: a type error and a refused TPU topology hid the zone check."""
    found = problems(nodePools=[{**TPU, "tpu": {"version": "v6e", "topology": "3x3"}}, ABROAD], budget="5")
    assert paths(found) == [f"{NS}:nodePools[0].tpu.topology", f"{NS}:nodePools[1].zones[0]", f"{NS}:budget"]
    assert found[1][1] == ABROAD_ZONE[1]


def test_three_typos_are_three_problems():
    """The issue's second case: two keys misspelt and a misspelt reference; the reference's
    rule needs only the valid cluster queues, so it runs."""
    found = problems(
        nodePools=[{**TPU, "machinType": "ct6e-standard-4t"}],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cqq"}],
        priorites=[{"name": "high", "value": 1000}],
    )
    assert paths(found) == [f"{NS}:nodePools[0].machinType", f"{NS}:teams[0].clusterQueue", f"{NS}:priorites"]
    assert found[1][1] == "unknown cluster queue 'cqq'; known: cq"
    assert found[2][1].startswith("unknown key 'priorites' (did you mean 'priorities'?)")


def test_a_reference_to_an_invalid_entry_is_not_called_unknown():
    """The pool the workload and the queue's flavor name is there, only invalid: no "unknown
    node pool", no "unknown flavor" (its derived flavor is unknown, not absent)."""
    found = problems(
        nodePools=[{**TPU, "slices": "2"}],
        clusterQueues=[{"name": "cq", "flavors": ["tpu-v6e-slice-2x2"]}],
        teams=QUEUE_AND_TEAM["teams"],
        workloads=[JOBSET],
    )
    assert paths(found) == [f"{NS}:nodePools[0].slices"]


def test_a_misspelt_key_leaves_the_key_it_meant_unknown():
    # nodePool for nodePools: the workload's pool is not "unknown" (the stack has no nodePools key).
    found = problems(nodePool=[TPU], workloads=[JOBSET], **QUEUE_AND_TEAM)
    assert paths(found) == [f"{NS}:nodePool"]
    # clusters beside cluster: the stack is no fleet, its pools no manager's.
    found = problems(clusters={"name": "x"}, nodePools=[TPU], **QUEUE_AND_TEAM)
    assert paths(found) == [f"{NS}:clusters"]


def test_the_valid_entries_of_a_list_with_an_invalid_one_are_checked():
    """A workload entry's rules run on each valid workload (the workloads check stops at the
    invalid one); a copy of an earlier entry is declared twice, and adds nothing else."""
    ok = {**JOBSET, "priority": "urgent"}
    found = problems(nodePools=[TPU], workloads=[{**JOBSET, "slices": "1"}, ok, ok], **QUEUE_AND_TEAM)
    assert found == [
        (f"{NS}:workloads[0].slices", 'Input should be a valid integer, got \'1\': remove the quotes (write 1, not "1")'),
        (f"{NS}:workloads[1].priority", "unknown priority 'urgent'; known: none"),
        (f"{NS}:workloads[2].name", "workload 'train' is declared twice"),
    ]


def test_an_invalid_cluster_leaves_the_rules_that_need_it_quiet():
    # The pool's zone rule needs the cluster's region; the team's queue rule does not.
    found = problems(
        cluster={"name": "test", "nodeLocations": "us-central1-a"},
        nodePools=[ABROAD],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "nope"}],
    )
    assert paths(found) == [f"{NS}:cluster.nodeLocations", f"{NS}:teams[0].clusterQueue"]


def test_each_problem_once_in_the_order_of_the_stack():
    found = problems(
        budget="5",
        nodePools=[ABROAD, {**TPU, "slices": "2"}, {**ABROAD, "name": "h100-b"}],
        topologies=[{"name": "t", "levels": "x"}],
        production="yes",
    )
    assert paths(found) == [
        f"{NS}:production", f"{NS}:nodePools[0].zones[0]", f"{NS}:nodePools[1].slices",
        f"{NS}:nodePools[2].zones[0]", f"{NS}:topologies[0].levels", f"{NS}:budget",
    ]
    assert len(set(found)) == len(found)


def fleet_problems(stack: dict, fleet: dict) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as err:
        load({**stack, "fleet": fleet})
    return err.value.problems


def test_a_fleet_workers_type_error_hides_neither_the_managers_nor_the_other_workers_rules():
    """The fleet is judged worker by worker: the invalid one is unknown, the fleet's own rules
    (the manager's reach) and every other worker's still run."""
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][1]["nodePools"][0]["maxNodes"] = "4"
    stack = {**copy.deepcopy(STACK), "production": True}
    stack["cluster"]["privateNodes"] = False
    found = fleet_problems(stack, fleet)
    assert paths(found) == [
        f"{NS}:cluster.privateNodes", f"{NS}:cluster.privateNodes", f"{NS}:fleet.workers[1].nodePools[0].maxNodes",
        f"{NS}:fleet.workers[0].cluster.privateNodes", f"{NS}:fleet.workers[2].cluster.privateNodes",
    ]
    assert found[1][1].startswith("the manager reaches its workers' authorized networks")
    assert found[4][1].startswith("worker us-east5: a production cluster's nodes have no public IP")


def test_a_fleet_with_an_invalid_worker_is_still_a_fleet():
    """Its queues' flavors are the workers': the manager, which has no pools, is not told it
    offers none of them."""
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][0]["nodePools"][0]["gvnic"] = "yes"
    found = fleet_problems(copy.deepcopy(STACK), fleet)
    assert paths(found) == [f"{NS}:fleet.workers[0].nodePools[0].gvnic"]


def test_a_fleets_rules_run_with_a_shape_error_elsewhere():
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][1]["nodePools"][0]["zones"] = ["us-east4-a"]  # another region's zone
    found = fleet_problems({**copy.deepcopy(STACK), "budget": "5"}, fleet)
    assert found[0] == (
        f"{NS}:fleet.workers[1].nodePools[0].zones[0]",
        "worker europe-west4: us-east4-a is not in the cluster's region europe-west4",
    )
    assert paths(found) == [f"{NS}:fleet.workers[1].nodePools[0].zones[0]", f"{NS}:budget"]


@pytest.mark.parametrize(
    "read",
    [
        lambda u: u.name, lambda u: bool(u), lambda u: len(u), lambda u: list(u), lambda u: u == 1,
        lambda u: hash(u), lambda u: f"{u!r}", lambda u: f"{u}", lambda u: isinstance(u, NodePoolConfig),
        lambda u: NodePoolConfig.model_construct() == u, lambda u: u in [NodePoolConfig.model_construct()],
    ],
)
def test_an_unknown_value_answers_nothing(read):
    """A rule cannot take an invalid value for a valid one, whatever it asks of it."""
    with pytest.raises(Unknowable):
        read(Unknown(("nodePools", 0)))
    assert Unknown(("fleet",)) is not None  # the one answer: a value was given


def test_an_autopilot_clusters_pools_are_refused_once_past_an_invalid_one():
    found = problems(cluster={"name": "test", "mode": "autopilot"}, nodePools=[{**TPU, "slices": "2"}, TPU, {**TPU, "name": "b"}])
    assert paths(found) == [f"{NS}:nodePools[0].slices", f"{NS}:nodePools[0]"]
    assert found[1][1].startswith("Autopilot clusters have no node pools")


FLAVOR_TOPOLOGY = {"topologies": [{"name": "t", "levels": ["kubernetes.io/hostname"]}]}
NINE_LABELS = {f"k{n}": "v" for n in range(9)}
PAST_AN_INVALID_ENTRY = {
    # key: (the stack's other keys, the list (its entry 0 invalid), entry 0 made valid, the paths found)
    "flavors": (
        {"nodePools": [TPU], **QUEUE_AND_TEAM, **FLAVOR_TOPOLOGY},
        [{"name": "bad", "pools": "v6e"}, {"name": "many", "nodeLabels": NINE_LABELS},
         {"name": "tn", "topologyName": "nope", "nodeLabels": {"a": "b"}}, {"name": "cc", "computeClass": "nope"},
         {"name": "many", "nodeLabels": {"a": "b"}}],
        {"name": "bad", "pools": ["v6e"]},
        ["flavors[0].pools", "flavors[1].nodeLabels", "flavors[2].topologyName", "flavors[3].computeClass", "flavors[4].name"],
    ),
    "clusterQueues": (
        {"nodePools": [TPU], "teams": QUEUE_AND_TEAM["teams"]},
        [{"name": "bad", "cohort": 5}, {"name": "cq", "flavors": [{"name": "tpu-v6e-slice-2x2", "quotas": {
            "google.com/tpu": {"nominal": 4, "lendingLimit": 8}}}]}, {"name": "x", "flavors": ["nope"]}, {"name": "x"}],
        {"name": "bad", "cohort": "c"},
        ["clusterQueues[0].cohort", 'clusterQueues[1].flavors[0].quotas["google.com/tpu"]',
         "clusterQueues[2].flavors[0].name", "clusterQueues[3].name"],
    ),
    "teams": (
        {"nodePools": [TPU], "clusterQueues": [{"name": "cq"}]},
        [{"namespace": "a", "localQueue": "lq", "clusterQueue": "cq", "networkPolicy": "yes"},
         {"namespace": "kube-x", "localQueue": "lq", "clusterQueue": "cq"},
         {"namespace": "b", "localQueue": "lq", "clusterQueue": "nope"}, {"namespace": "b", "localQueue": "lq", "clusterQueue": "cq"}],
        {"namespace": "a", "localQueue": "lq", "clusterQueue": "cq", "networkPolicy": True},
        ["teams[0].networkPolicy", "teams[1].namespace", "teams[2].clusterQueue", "teams[3].localQueue"],
    ),
    "topologies": (
        {"nodePools": [TPU], **QUEUE_AND_TEAM},
        [{"name": "u", "levels": "x"}, {"name": "t", "levels": ["kubernetes.io/hostname"]},
         {"name": "t", "levels": ["cloud.google.com/gke-nodepool"]}],
        {"name": "u", "levels": ["kubernetes.io/hostname"]},
        ["topologies[0].levels", "topologies[2].name"],
    ),
    "computeClasses": (
        {"nodePools": [TPU], **QUEUE_AND_TEAM},
        [{"name": "bad", "priorities": "x"}, {"name": "a", "priorities": [{"machineType": "n2-standard-8"}], "autoCreate": False},
         {"name": "a", "priorities": [{"machineType": "n9-standard-8"}]}],
        {"name": "bad", "priorities": [{"machineType": "n2-standard-8"}]},
        ["computeClasses[0].priorities", "computeClasses[1].autoCreate", "computeClasses[2].name",
         "computeClasses[2].priorities[0].machineType"],
    ),
    "priorities": (
        {"nodePools": [TPU], **QUEUE_AND_TEAM},
        [{"name": "mid", "value": "5"}, {"name": "low", "value": 10}, {"name": "high", "value": 5}, {"name": "low", "value": 1}],
        {"name": "mid", "value": 5},
        ["priorities[0].value", "priorities[1].value", "priorities[3].name"],
    ),
    "nodePools": (
        QUEUE_AND_TEAM,
        [{**TPU, "name": "bad", "slices": "2"}, TPU, {**TPU, "tpu": {"version": "v6e", "topology": "2x4"}}],
        {**TPU, "name": "bad", "slices": 2},
        ["nodePools[0].slices", "nodePools[2].name"],
    ),
}


@pytest.mark.parametrize("key", list(PAST_AN_INVALID_ENTRY))
def test_every_entry_is_judged_past_an_invalid_one(key):
    """Each list's entries after an invalid one get their own rules and the duplicate-name
    rule; each finding is one the stack with that entry fixed has too (none is made up)."""
    others, entries, fixed, expected = PAST_AN_INVALID_ENTRY[key]
    found = problems(**others, **{key: entries})
    assert paths(found) == [f"{NS}:{path}" for path in expected]
    valid = problems(**others, **{key: [fixed, *entries[1:]]})
    for path, message in found[1:]:
        assert any(path == p and message in m for p, m in valid), (path, message)


def test_a_workers_invalid_shape_leaves_the_fleets_reach_unknown_not_refused():
    """A sample whose pool only the invalid worker has is not "dispatched nowhere"."""
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][2]["nodePools"][0]["gvnic"] = "yes"
    del fleet["workers"][1]["cluster"]["masterAuthorizedNetworks"]
    sample = {"kind": "jobset", "name": "t", "team": "research", "pool": "v6e-flex", "image": "i:1", "priority": "high"}
    found = fleet_problems({**copy.deepcopy(STACK), "workloads": [sample]}, fleet)
    assert paths(found) == [f"{NS}:fleet.workers[2].nodePools[0].gvnic", f"{NS}:fleet.workers[1].cluster.masterAuthorizedNetworks"]
    assert found[1][1].startswith("worker europe-west4: no authorized network lets the manager in")


def test_a_samples_topology_is_judged_past_an_invalid_sample():
    from gke_ai_batch.domain import topology
    from test_topology import config, sample

    stack = config(workloads=[{**sample(), "slices": "1"}, {**sample(required=topology.BLOCK_LABEL), "name": "train-b"}])
    ours, region = split_namespace(stack)
    with pytest.raises(ConfigError) as err:
        load(ours, region=region, project="test-project")
    assert paths(err.value.problems) == [f"{NS}:workloads[0].slices", f"{NS}:workloads[1].topology.required"]
    assert "only to a flavor whose Topology has that level" in err.value.problems[1][1]


def test_a_team_is_not_told_its_queue_is_unknown_when_a_queue_entry_is_invalid():
    """The invalid queue may be the one it names; its other rules still run."""
    found = problems(
        nodePools=[TPU],
        clusterQueues=[{"name": "cq", "cohort": 5}],
        teams=[{"namespace": "kube-x", "localQueue": "lq", "clusterQueue": "cq"}],
    )
    assert paths(found) == [f"{NS}:clusterQueues[0].cohort", f"{NS}:teams[0].namespace"]
