"""The rules as CrossGuard policies: each plain rule function wrapped in a
ResourceValidationPolicy or StackValidationPolicy with its default enforcement level and
config schema. Building the list needs no engine; only PolicyPack (in __main__.py) serves it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import proxy as _proxy

from .rules import RULES, UNKNOWN, Resource, Rule, findings

PACK_NAME = "gke-ai-batch"
PACK_ENFORCEMENT = EnforcementLevel.ADVISORY

_UNKNOWNS = frozenset(
    {
        _proxy.UNKNOWN_BOOLEAN_VALUE,
        _proxy.UNKNOWN_NUMBER_VALUE,
        _proxy.UNKNOWN_STRING_VALUE,
        _proxy.UNKNOWN_ARRAY_VALUE,
        _proxy.UNKNOWN_ASSET_VALUE,
        _proxy.UNKNOWN_ARCHIVE_VALUE,
        _proxy.UNKNOWN_OBJECT_VALUE,
    }
)


def plain(value: Any) -> Any:
    """The SDK's property proxies as plain data, each unknown as UNKNOWN (as synth records it)
    and whole numbers as ints. The proxies raise on reading an unknown; rules would rather
    decide for themselves (an unknown node service account is one the stack creates)."""
    if isinstance(value, (_proxy._DictProxy, _proxy._ListProxy)):
        value = value["__target"]  # the proxies' own escape hatch to the wrapped container
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, str) and value in _UNKNOWNS:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _protected(opts: Any) -> bool:
    return bool(getattr(opts, "protect", False))


def _provider(r: Any) -> str:
    # PolicyResource.provider: the provider resource it is applied through (pulumi_policy).
    return str(getattr(getattr(r, "provider", None), "urn", "") or "")


def _parent(r: Any) -> str:
    # PolicyResourceOptions.parent: the parent's URN (pulumi_policy 1.21 policy.py, _get_resource_options).
    return str(getattr(getattr(r, "opts", None), "parent", "") or "")


def _resource_validation(rule: Rule):
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not rule.applies_to(args.resource_type):
            return
        resource = Resource(args.urn, args.resource_type, args.name, plain(args.props), _protected(args.opts))
        for finding in findings(rule, [resource], args.get_config() or {}):
            report_violation(finding.message, None)

    return validate


def _stack_validation(rule: Rule):
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [
            Resource(r.urn, r.resource_type, r.name, plain(r.props), _protected(r.opts), _provider(r), _parent(r),
                     tuple(d.urn for d in (getattr(r, "dependencies", None) or ())))
            for r in args.resources
        ]
        for finding in findings(rule, resources, args.get_config() or {}):
            report_violation(finding.message, finding.urn)

    return validate


def policy(rule: Rule) -> Policy:
    common: dict[str, Any] = {
        "name": rule.name,
        "description": rule.description,
        "enforcement_level": EnforcementLevel(rule.enforcement),
        "config_schema": PolicyConfigSchema(dict(rule.config_schema)) if rule.config_schema else None,
    }
    if rule.stack:
        return StackValidationPolicy(validate=_stack_validation(rule), **common)
    return ResourceValidationPolicy(validate=_resource_validation(rule), **common)


def policies() -> list[Policy]:
    return [policy(rule) for rule in RULES]
