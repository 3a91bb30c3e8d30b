"""Run the policy pack's rule functions over what synth recorded, at the enforcement levels of
policy/config/<stack>.json (the pack's defaults where the stack has no file), as
`pulumi preview --policy-pack policy --policy-pack-config policy/config/<stack>.json` would."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gke_ai_batch.domain.findings import MANDATORY, Finding

from gke_ai_batch.policy import levels, rules
from gke_ai_batch.policy.rules.base import STACK


def evaluate(result) -> list[dict[str, Any]]:
    """[{"policy", "enforcement", "urn", "message"}] for every violation, in a stable order: policy.json."""
    return [violation(f) for f in findings(result)]


def findings(result) -> list[Finding]:
    """A Finding for every violation (rule = the policy, severity = its level for this stack,
    urn = the resource, or the stack for a stack-wide one), mandatory first, in a stable order."""
    if result.recording is None:
        return []
    # A program's stack is not one of stacks/: the pack's defaults (its own policy config would
    # be passed to `pulumi preview --policy-pack-config`, which synth does not see).
    config = levels.for_stack(result.stack) if result.program is None else {}
    # As CrossGuard's stack policies see them: each resource with its outputs, which for the
    # recording engine are its inputs, and the root stack with the program's exports
    # (pulumi/pulumi pkg/resource/deploy/step_generator.go, AnalyzeResources).
    resources = resources_of(result.recording)
    # A stack rule may blame the stack as a whole (CrossGuard reports it without a URN).
    stack_urn = next((r.urn for r in resources if r.type == STACK), "")
    found = []
    for rule in rules.RULES:
        level, settings = levels.settings(rule, config)
        if level == "disabled":
            continue
        if level == "remediate":
            level = MANDATORY  # the rules do not remediate; the SDK reports these as mandatory
        found += [f if f.urn else replace(f, urn=stack_urn) for f in rules.findings(rule, resources, settings, level)]
    return sorted(found, key=lambda f: (f.severity != MANDATORY, f.rule, f.urn, f.message))


def resources_of(recording) -> list:
    """The recording as CrossGuard's stack policies see it (pulumi/pulumi
    pkg/resource/deploy/step_generator.go, AnalyzeResources): each resource with its outputs,
    which for the recording engine are a custom resource's inputs and a component's registered
    outputs, the root stack with the program's exports; its protect option, provider, parent and
    dependencies."""
    return [
        rules.Resource(
            r.urn, r.type, r.name,
            recording.outputs if r.type == STACK else r.outputs if r.outputs is not None else r.inputs,
            bool(r.options.get("protect")), str(r.options.get("provider") or ""), r.parent or "", tuple(r.dependencies),
        )
        for r in recording.resources
    ]


def violation(finding: Finding) -> dict[str, Any]:
    """A policy Finding as policy.json, `--json` and the PR diff have it."""
    return {"policy": finding.rule, "enforcement": finding.severity, "urn": finding.urn, "message": finding.message}


def finding(violation: Mapping[str, Any]) -> Finding:
    """A policy.json entry as a Finding (a render read back, as the report's callers may pass)."""
    return Finding(violation.get("policy", ""), violation.get("message", ""), violation.get("enforcement", ""),
                   urn=violation.get("urn") or None)
