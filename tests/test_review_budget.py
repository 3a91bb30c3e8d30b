"""The budget has one home, the stack file: the program records gke-ai-batch:budget (and
gke-ai-batch:prices) on the stack's outputs, where the stack-budget policy reads them, in synth
and in the live pack; the policy config holds only the enforcement level."""

from __future__ import annotations

import json

from conftest import base_config, synth_config, synth_stack
from test_synth_policy import crossguard

L4 = [{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}]


def _dir(root, name):
    (root / name).mkdir()
    return root / name


def _budget(violations):
    return [v for v in violations if v["policy"] == "stack-budget"]


def test_the_program_records_the_budget_and_prices_on_the_stacks_outputs(tmp_path):
    from gke_ai_batch import synth
    from gke_ai_batch.domain import pricing

    result = synth_config(tmp_path, base_config(nodePools=L4, budget=100, prices={"nvidia-l4": 0.5}))
    outputs = json.loads(synth.output_files(result)["outputs.json"])
    assert outputs[pricing.BUDGET_OUTPUT] == {"budget": 100, "prices": {"nvidia-l4": 0.5}}
    # No resource is added for it: the URNs are those of the same stack without a budget.
    plain = synth_config(_dir(tmp_path, "plain"), base_config(nodePools=L4))
    assert [r.urn for r in result.recording.resources] == [r.urn for r in plain.recording.resources]
    assert pricing.BUDGET_OUTPUT not in json.loads(synth.output_files(plain)["outputs.json"])


def test_the_live_pack_fires_on_the_recorded_budget_with_no_budget_in_its_config(tmp_path):
    result = synth_config(tmp_path, base_config(nodePools=L4, budget=100))
    (violation,) = _budget(result.violations)
    assert "over the budget of $100.00 (gke-ai-batch:budget" in violation["message"]
    # The CrossGuard analyzer, configured from the policy config (levels only), says the same.
    # (The engine attributes a stack finding without a URN to the root stack.)
    def said(vs):
        return [(v["enforcement"], v["message"]) for v in _budget(vs)]

    assert said(crossguard(result)) == said(result.violations)


def test_a_recorded_price_override_counts_in_the_budget(tmp_path):
    # The L4 machine at a negotiated near-zero rate brings the stack under its budget.
    over = synth_config(tmp_path, base_config(nodePools=L4, budget=500))
    assert _budget(over.violations)
    under = synth_config(_dir(tmp_path, "cheap"), base_config(nodePools=L4, budget=500,
                                                         prices={"g2-standard-8": 0.01, "nvidia-l4": 0.01, "e2-standard-4": 0.01}))
    assert not _budget(under.violations)


def test_the_budget_policy_takes_no_budget_from_its_config():
    from gke_ai_batch.policy import rules

    rule = rules.by_name("stack-budget")
    assert not rule.config_schema
    resources = [rules.Resource(r.urn, r.type, r.name, r.inputs, False) for r in synth_stack("dev").recording.resources]
    assert list(rules.findings(rule, resources, {"budget": 1})) == []
