"""Run the policy pack's rule functions over what synth recorded, at the enforcement levels of
policy/config/<stack>.json (the pack's defaults where the stack has no file), as
`pulumi preview --policy-pack policy --policy-pack-config policy/config/<stack>.json` would."""

from __future__ import annotations

from typing import Any

from policy import levels, rules
from policy.rules.base import STACK


def evaluate(result) -> list[dict[str, Any]]:
    """[{"policy", "enforcement", "urn", "message"}] for every violation, in a stable order."""
    if result.recording is None:
        return []
    # A program's stack is not one of stacks/: the pack's defaults (its own policy config would
    # be passed to `pulumi preview --policy-pack-config`, which synth does not see).
    config = levels.for_stack(result.stack) if result.program is None else {}
    # As CrossGuard's stack policies see them: each resource with its outputs, which for the
    # recording engine are its inputs, and the root stack with the program's exports
    # (pulumi/pulumi pkg/resource/deploy/step_generator.go, AnalyzeResources).
    resources = [
        rules.Resource(r.urn, r.type, r.name, result.recording.outputs if r.type == STACK else r.inputs,
                       bool(r.options.get("protect")))
        for r in result.recording.resources
    ]
    # A stack rule may blame the stack as a whole (CrossGuard reports it without a URN).
    stack_urn = next((r.urn for r in resources if r.type == STACK), "")
    violations = []
    for rule in rules.RULES:
        level, settings = levels.settings(rule, config)
        if level == "disabled":
            continue
        if level == "remediate":
            level = "mandatory"  # the rules do not remediate; the SDK reports these as mandatory
        for urn, message in rules.run(rule, resources, settings):
            violations.append({"policy": rule.name, "enforcement": level, "urn": urn or stack_urn, "message": message})
    return sorted(violations, key=lambda v: (v["enforcement"] != "mandatory", v["policy"], v["urn"], v["message"]))
