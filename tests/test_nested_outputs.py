"""An Output where a component needs a plain value is said in the same words wherever it sits
(at the top of the args or nested in a label or a topology level), never with the Output's repr,
whose address changes from run to run; a pool's cluster given as an Output is named as that,
not as missing."""

from __future__ import annotations

import pulumi
import pytest

from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.topology import Topologies
from gke_ai_batch.config.errors import NOT_AN_OUTPUT, ArgsError

REF = {"name": "ml", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}


def _refusal(make) -> str:
    with pytest.raises(ArgsError) as refused:
        make()
    return str(refused.value)


def test_an_output_nested_in_a_label_is_named_as_an_output():
    text = _refusal(lambda: TpuSlices("v6e", {
        "cluster": REF, "version": "v6e", "topology": "4x4", "labels": {"team": pulumi.Output.from_input("a")},
    }))
    assert f"args.labels.team: {NOT_AN_OUTPUT}" in text, text
    assert " at 0x" not in text


def test_an_output_as_a_topology_level_is_named_as_an_output():
    text = _refusal(lambda: Topologies("t", {
        "topologies": [{"name": "gke", "levels": ["cloud.google.com/gce-topology-block", pulumi.Output.from_input("x")]}],
    }))
    assert NOT_AN_OUTPUT in text and " at 0x" not in text, text


def test_a_pools_cluster_given_as_an_output_is_not_called_missing():
    text = _refusal(lambda: TpuSlices("v6e", {"cluster": pulumi.Output.from_input(REF), "version": "v6e", "topology": "4x4"}))
    assert f"args.cluster: {NOT_AN_OUTPUT}" in text and "required" not in text, text
