"""Run the policy pack's rule functions over what synth recorded, at the enforcement levels of
policy/config/<stack>.json (the pack's defaults where the stack has no file), as
`pulumi preview --policy-pack policy --policy-pack-config policy/config/<stack>.json` would."""

from __future__ import annotations

from typing import Any

from policy import levels, rules

STACK_TYPE = "pulumi:pulumi:Stack"


def evaluate(result) -> list[dict[str, Any]]:
    """[{"policy", "enforcement", "urn", "message"}] for every violation, in a stable order."""
    if result.recording is None:
        return []
    # A program's stack is not one of stacks/: the pack's defaults (its own policy config would
    # be passed to `pulumi preview --policy-pack-config`, which synth does not see).
    config = levels.for_stack(result.stack) if result.program is None else {}
    resources = [
        rules.Resource(r.urn, r.type, r.name, r.inputs, bool(r.options.get("protect"))) for r in result.recording.resources
    ]
    # A stack rule may blame the stack as a whole (CrossGuard reports it without a URN).
    stack_urn = next((r.urn for r in resources if r.type == STACK_TYPE), "")
    stack_settings = _stack_settings(result)
    violations = []
    for rule in rules.RULES:
        level, settings = levels.settings(rule, config)
        # The stack file is the budget's one home; a policy config that sets it wins, as the
        # live pack (which cannot read the stack file) takes it from there.
        settings = {**stack_settings.get(rule.name, {}), **settings}
        if level == "disabled":
            continue
        if level == "remediate":
            level = "mandatory"  # the rules do not remediate; the SDK reports these as mandatory
        for urn, message in rules.run(rule, resources, settings):
            violations.append({"policy": rule.name, "enforcement": level, "urn": urn or stack_urn, "message": message})
    return sorted(violations, key=lambda v: (v["enforcement"] != "mandatory", v["policy"], v["urn"], v["message"]))


def _stack_settings(result) -> dict[str, dict[str, Any]]:
    """Rule settings the stack file holds: gke-ai-batch:budget and gke-ai-batch:prices."""
    config = result.config
    if config is None or getattr(config, "budget", None) is None:
        return {}
    return {"stack-budget": {"budget": config.budget, "prices": dict(config.prices)}}
