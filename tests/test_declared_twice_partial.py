"""A name declared twice is found on a stack with shape errors too: it needs no other key, so
an invalid cluster, pools or flavors (which stop an entry's other rules) do not hide it."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT
from gke_ai_batch.config import ConfigError, load, split_namespace


def _dev() -> tuple[dict, str | None]:
    return split_namespace(yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"])


@pytest.mark.parametrize("key, broken, what", [
    ("workloads", "cluster", "workload"),
    ("flavors", "nodePools", "flavor"),
    ("clusterQueues", "flavors", "cluster queue"),
])
def test_a_copy_is_declared_twice_past_an_invalid_key_its_other_rules_read(key, broken, what):
    ours, region = _dev()
    ours[key].append(copy.deepcopy(ours[key][0]))
    ours[broken] = 5 if broken != "cluster" else {**ours["cluster"], "releaseChannel": 5}
    with pytest.raises(ConfigError) as refused:
        load(ours, region=region, project="acme-ml-dev")
    twice = [f for f in refused.value.findings if "declared twice" in f.message]
    assert [(f.where, f.message) for f in twice] == [
        (f"gke-ai-batch:{key}[{len(ours[key]) - 1}].name", f"{what} {ours[key][0]['name']!r} is declared twice")
    ]
