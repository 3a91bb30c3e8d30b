"""The stack's cross-key rules are checks registered in gke_ai_batch/config/checks/: each runs
in a known order, says where its rule comes from, is listed in docs/checks.md, and adding one is
one function (docs/checks.md#adding-a-rule)."""

from __future__ import annotations

import pkgutil
import re

import pytest

from gke_ai_batch.config import ConfigError, checks, load, split_namespace
from conftest import ROOT, base_config

ORDER = [
    "cluster.production", "cluster.locations", "cluster.version", "cluster.system_pool", "kueue.kueue_release",
    "prices.prices", "metrics.metrics", "fleet.manager_is_created", "fleet.fleet",
    "fleet.manager_has_no_compute_classes", "pools.pools", "pools.node_limits", "computeclasses.compute_classes",
    "flavors.flavor_references", "flavors.flavor_limits", "queues.fair_sharing", "queues.cluster_queues",
    "teams.teams", "priorities.priorities", "workloads.workloads", "topology.topologies", "network.networks", "checkpoints.checkpoints",
]
# A docstring names its source: a URL, a repository path, upstream docs or a CRD.
SOURCE = re.compile(r"https?://|[\w/.-]+\.(?:py|go|yaml|md)\b|\b(?:GKE|Kueue|Kubernetes)\b[\w. ]{0,12}\bdocs\b|\bCRD\b")


def test_checks_run_in_the_registered_order():
    assert [c.name for c in checks.registry()] == ORDER


def test_every_checks_module_is_ordered_and_registers_a_check():
    found = {m.name for m in pkgutil.iter_modules(checks.__path__)}
    assert found == set(checks.MODULES), "a module of checks not named in MODULES would never run"
    assert {c.name.split(".")[0] for c in checks.registry()} == set(checks.MODULES)


@pytest.mark.parametrize("check", checks.registry(), ids=lambda c: c.name)
def test_every_check_names_its_source(check):
    doc = check.fn.__doc__ or ""
    assert SOURCE.search(doc), f"{check.name}: its docstring names no upstream source or rule home: {doc!r}"


def test_every_check_is_listed_in_the_docs():
    text = (ROOT / "docs" / "checks.md").read_text()
    listed = text[text.index("The checks, in the order they run:"):]
    assert re.findall(r"`([a-z_]+\.[a-z_]+)`", listed) == ORDER


def test_a_check_outside_the_package_is_refused():
    def rule(cfg, ctx):
        return iter(())

    with pytest.raises(ValueError, match="in a module named in MODULES"):
        checks.check("teams")(rule)


def _load(config: dict):
    ours, region = split_namespace(config)
    return load(ours, region=region, project=config["gcp:project"])


def test_one_registered_function_is_a_rule(monkeypatch):
    """A check registered with @check in a module of MODULES runs on every stack, and its
    problem is reported at its key path among the others, in the order of the stack."""
    monkeypatch.setattr(checks, "_registered", list(checks._registered))
    monkeypatch.setattr(checks, "_ordered", [])

    def no_team_b(cfg, ctx):
        """Refuses a namespace named team-b (a rationale, for this test)."""
        for i, team in enumerate(cfg.teams):
            if team.namespace == "team-b":
                yield checks.RuleError(("teams", i, "namespace"), "no team-b here")

    no_team_b.__module__ = "gke_ai_batch.config.checks.teams"
    checks.check("teams", on_manager=False)(no_team_b)
    team = {"localQueue": "lq", "clusterQueue": "cq"}
    config = base_config(
        nodePools=[{"name": "v6e", "tpu": {"version": "v6e", "topology": "2x2"}}],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", **team}, {"namespace": "team-c", **team}],
    )
    _load(config)  # the near miss: accepted
    config["gke-ai-batch:teams"][1]["namespace"] = "team-b"
    config["gke-ai-batch:teams"][0]["clusterQueue"] = "nope"
    with pytest.raises(ConfigError) as refused:
        _load(config)
    assert refused.value.problems == [
        ("gke-ai-batch:teams[0].clusterQueue", "unknown cluster queue 'nope'; known: cq"),
        ("gke-ai-batch:teams[1].namespace", "no team-b here"),
    ]
    names = [c.name for c in checks.registry()]
    assert names.index("teams.no_team_b") == names.index("teams.teams") + 1
