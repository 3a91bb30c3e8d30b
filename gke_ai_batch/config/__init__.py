"""Typed stack config: pydantic models over the `gke-ai-batch:*` keys of a Pulumi stack.

`load()` validates a whole stack before anything is registered and raises one ConfigError
that lists every problem with its key path: with a key or entry of the wrong shape, also what
every rule that does not need it finds (stack.every_problem)."""

from __future__ import annotations

import json
from typing import Any, Mapping

from gke_ai_batch.domain.findings import Finding

from pydantic import ValidationError

from gke_ai_batch.config.errors import NAMESPACE, ConfigError, at_key, did_you_mean, format_path
from gke_ai_batch.config.gcpnames import PROJECT_ID_RULE, is_project_id
from gke_ai_batch.config.stack import StackConfig, every_problem

__all__ = ["NAMESPACE", "ConfigError", "gcp_project_problem", "StackConfig", "decode", "load", "load_from_pulumi", "format_path", "split_namespace"]


def load(
    values: Mapping[str, Any], *, region: str | None = None, project: str | None = None, source: str | None = None
) -> StackConfig:
    """Validate the `gke-ai-batch:*` values (keys without the namespace). `region` is gcp:region,
    the default for cluster.location; `project` is gcp:project, the default for a fleet
    worker's project (one that names it explicitly is in the manager's project all the same)."""
    data = dict(values)
    cluster = data.get("cluster")
    from_region = isinstance(cluster, dict) and "location" not in cluster and bool(region)
    if from_region:
        data["cluster"] = {**cluster, "location": region}
    fleet = data.get("fleet")
    if project and isinstance(fleet, dict) and isinstance(fleet.get("workers"), list):
        workers = [{k: v for k, v in w.items() if not (k == "project" and v == project)} if isinstance(w, dict) else w
                   for w in fleet["workers"]]
        data["fleet"] = {**fleet, "workers": workers}
    try:
        # The project resolves network references that name none (gke_ai_batch/config/checks/network.py).
        return StackConfig.model_validate(data, context={"project": project})
    except ValidationError as exc:
        # Not only the keys' own errors: the rules that can run on the valid keys and entries.
        location = f"{NAMESPACE}:cluster.location" if from_region else None
        # A location that came from gcp:region is named as the key the user wrote.
        problems = [at_key("gcp:region" if path == location else path, message)
                    for path, message in ((format_path(loc), message) for loc, message in every_problem(exc, data, project))]
        raise ConfigError(problems, source) from None


def split_namespace(config: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """From a flat Pulumi config map ('ns:key' -> value) to our keys and gcp:region.

    Keys of other namespaces belong to providers and are left alone, except a near miss of
    ours: `gke-ai-bach:nodePools` would otherwise mean "no node pools" and delete them all."""
    ours: dict[str, Any] = {}
    region = None
    misses: list[Finding] = []
    for full_key, value in config.items():
        namespace, _, key = full_key.partition(":")
        key = key.removeprefix("config:")  # the legacy 'project:config:key' form
        if namespace == NAMESPACE:
            ours[key] = value
        elif full_key in ("gcp:region", "gcp:config:region"):
            region = value
        elif hint := did_you_mean(namespace, [NAMESPACE], cutoff=0.75):
            misses.append(at_key(full_key, f"unknown namespace {namespace!r}{hint}"))
    if misses:
        raise ConfigError(misses)
    return ours, region


def decode(value: Any) -> Any:
    # The engine hands structured config over as JSON text and scalars as plain text.
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def load_from_pulumi(source: str | None = None, project: str | None = None) -> StackConfig:
    """Read every key of this project's namespace from the running program's config, so that a
    misspelt top-level key is an error rather than a silently empty list.

    The language host hands a program its whole config as JSON in the PULUMI_CONFIG variable;
    pulumi.runtime.get_config_env() is the SDK's public reader of it, and the SDK has no other
    public way to list the keys (pulumi.Config reads one key at a time). synth hands it over the
    same way."""
    import pulumi.runtime

    ours, region = split_namespace(pulumi.runtime.get_config_env())
    return load({k: decode(v) for k, v in ours.items()}, region=decode(region), project=project, source=source)


def gcp_project_problem(value: Any) -> Finding | None:
    """The problem at gcp:project if it is missing or not a project id (gcpnames.PROJECT_ID)."""
    if value in (None, ""):
        return at_key("gcp:project", "required: the Google Cloud project to deploy into")
    if not is_project_id(value):
        return at_key("gcp:project", f"{value!r} is not a Google Cloud project id: {PROJECT_ID_RULE}")
    return None
