"""A mapping key that is no string (a Python caller's None or tuple, YAML's `null:` or `5:`) is
a problem named at its path like any other, never a crash: a cluster component's args, and a
stack's string-keyed mappings (labels), whose key errors point at the key itself."""

from __future__ import annotations

import pytest

from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster
from gke_ai_batch.config import ConfigError, load
from gke_ai_batch.config.errors import ArgsError
from conftest import base_config
from gke_ai_batch.config import split_namespace

CLUSTER = {"name": "ml", "location": "us-central1", "project": "acme-ml"}


@pytest.mark.parametrize("key", [None, ("t",), True])
@pytest.mark.parametrize("make", [
    lambda key: GkeCluster("c", {**CLUSTER, key: 1}),
    lambda key: GkeCluster("c", {**CLUSTER, "monitoring": {key: 1}}),
    lambda key: ExistingCluster("c", {**CLUSTER, key: 1}),
], ids=["cluster", "cluster-nested", "existing"])
def test_a_key_that_is_no_string_is_an_unknown_arg_named_as_python_writes_it(make, key):
    with pytest.raises(ArgsError) as refused:
        make(key)
    assert f"[{key!r}]: unknown arg; known: " in str(refused.value), str(refused.value)


def test_a_labels_key_that_is_no_string_is_named_at_the_key_not_at_pydantics_mark():
    ours, region = split_namespace(base_config())
    ours["cluster"] = {**ours["cluster"], "labels": {5: "x"}}
    with pytest.raises(ConfigError) as refused:
        load(ours, region=region)
    assert [f.where for f in refused.value.findings] == ["gke-ai-batch:cluster.labels[5]"]


def test_every_components_odd_key_is_named_as_the_cluster_components_name_it():
    # unknown_keys (every component's) and the cluster's walker place a key by join_path alike.
    from gke_ai_batch.components.topology import Topologies

    with pytest.raises(ArgsError) as refused:
        Topologies("t", {"topologies": [], None: 1})  # type: ignore[dict-item]
    assert "args[None]: unknown arg; known: topologies" in str(refused.value), str(refused.value)
    with pytest.raises(ArgsError) as refused:
        Topologies("t", {"topologies": [], "node-pools": 1})  # type: ignore[typeddict-unknown-key]
    assert 'args["node-pools"]: unknown arg' in str(refused.value), str(refused.value)
