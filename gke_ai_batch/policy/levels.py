"""Per-stack enforcement: policy/config/<stack>.json, in the format the Pulumi CLI takes with
`--policy-pack-config`, read here the way the CLI applies it so that synth agrees with the pack.

    {"all": "advisory",                                   # every policy (optional)
     "gke-private-nodes": "mandatory",                    # one policy's level
     "gke-deletion-protection": {"enforcementLevel": "mandatory", "production": true}}

A policy's own entry beats "all", which beats the pack's default."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .rules import RULES, Rule

# The pack's per-stack levels, in the repository's pack folder: synth reads them for a stack of
# a checkout (a program render runs at the pack's defaults), the pack is handed one by the CLI.
CONFIG_FOLDER = Path("policy", "config")
CONFIG_DIR = Path(__file__).resolve().parents[2] / CONFIG_FOLDER
LEVELS = ("advisory", "mandatory", "remediate", "disabled")
ALL = "all"


def config_path(stack: str) -> Path:
    return CONFIG_DIR / f"{stack}.json"


def for_stack(stack: str) -> dict[str, Any]:
    """The stack's policy config, or {} (the pack's defaults) when it has no file."""
    path = config_path(stack)
    return load(path) if path.is_file() else {}


def load(path: Path) -> dict[str, Any]:
    config = json.loads(path.read_text())
    problems = problems_in(config)
    if problems:
        raise ValueError(f"{path}: " + "; ".join(problems))
    return config


def problems_in(config: Any) -> list[str]:
    """What the CLI would reject, plus names of policies the pack does not have (typos)."""
    if not isinstance(config, Mapping):
        return ["a policy config is a JSON object of policy names"]
    known = {r.name: r for r in RULES}
    problems = []
    for name, entry in config.items():
        if name != ALL and name not in known:
            problems.append(f"{name!r} is no policy of this pack")
            continue
        level = entry.get("enforcementLevel") if isinstance(entry, Mapping) else entry
        if not isinstance(entry, (str, Mapping)):
            problems.append(f"{name}: expected an enforcement level or an object")
        elif level is not None and level not in LEVELS:
            problems.append(f"{name}: enforcement level {level!r} is not one of {', '.join(LEVELS)}")
        elif isinstance(entry, Mapping) and name != ALL:
            schema = known[name].config_schema
            for key in entry:
                if key != "enforcementLevel" and key not in schema:
                    problems.append(f"{name}: unknown setting {key!r} (it takes: {', '.join(schema) or 'none'})")
    return problems


def settings(rule: Rule, config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(enforcement level, settings) of one rule under a stack's config; settings fall back to
    the defaults of the rule's config schema."""
    level = rule.enforcement
    values = {key: spec["default"] for key, spec in rule.config_schema.items() if "default" in spec}
    everyone, own = config.get(ALL), config.get(rule.name)
    if isinstance(everyone, str):
        level = everyone
    elif isinstance(everyone, Mapping):
        level = everyone.get("enforcementLevel", level)
    if isinstance(own, str):
        level = own
    elif isinstance(own, Mapping):
        level = own.get("enforcementLevel", level)
        values.update({k: v for k, v in own.items() if k != "enforcementLevel"})
    return level, values
