"""Advisories ask one decision, once. gke-private-nodes: a stack that leaves
cluster.privateNodes unset hears it, naming the key and both answers; a stack that writes
`privateNodes: false` has decided and hears nothing. No shipped stack prints it."""

from __future__ import annotations

import pytest
from conftest import STACKS, base_config, synth_config, synth_stack

from gke_ai_batch.config import load
from gke_ai_batch.plan.cluster import control_plane_args

RULE = "gke-private-nodes"


def advice(result) -> list[str]:
    return [v["message"] for v in result.violations if v["policy"] == RULE]


def test_unset_private_nodes_asks_for_the_decision(tmp_path):
    [message] = advice(synth_config(tmp_path, base_config()))
    assert "decide" in message and "cluster.privateNodes is unset" in message
    assert "privateNodes true" in message and "privateNodes false" in message
    assert "Cloud NAT" in message


@pytest.mark.parametrize("private", [False, True])
def test_a_written_choice_settles_it(tmp_path, private):
    cluster = {"name": "test", "nodeLocations": ["us-central1-a"], "privateNodes": private}
    assert advice(synth_config(tmp_path, base_config(cluster=cluster))) == []


def test_only_a_written_false_reaches_the_cluster():
    # Unset leaves the provider's block out, as before; written false says so to GKE (which
    # reports a public cluster's enablePrivateNodes as false: no diff on an existing cluster).
    cluster = {"name": "t", "location": "us-central1"}
    unset = load({"cluster": cluster}).cluster
    public = load({"cluster": {**cluster, "privateNodes": False}}).cluster
    assert "private_cluster_config" not in control_plane_args(unset)
    assert control_plane_args(public)["private_cluster_config"] == {"enable_private_nodes": False}


@pytest.mark.parametrize("stack", STACKS)
def test_no_shipped_stack_prints_it(stack):
    assert advice(synth_stack(stack)) == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_advisory_a_shipped_stack_prints_names_its_decision(stack):
    # An advisory printed on every run with nothing to decide teaches people to skip them all.
    for v in synth_stack(stack).violations:
        assert v["enforcement"] == "advisory" and "decide" in v["message"], v


def test_interruptible_only_names_both_answers():
    [v] = [v for v in synth_stack("fleet-dws").violations if v["policy"] == "queue-interruptible-only"]
    assert "add an on-demand or reservation flavor" in v["message"]
    assert '"queue-interruptible-only": "disabled" in policy/config/<stack>.json' in v["message"]
