"""Stacks of one repository that would collide in GCP: two stack files deploying to the same
gcp:project must not derive the same node service account id (IAM ids are unique per project:
the second `pulumi up` fails, or worse, adopts nothing and fights over one account), nor the
same cluster name in the same location (GKE cluster names are unique per project and location).

Each stack is valid on its own, so the config models cannot see this; synth checks it when it
renders a stack from the stacks folder. Only the few keys needed are read from the other
files, without validating them (their own synth does)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import yamlread


@dataclass(frozen=True)
class Identity:
    path: Path
    project: str
    cluster: str
    location: str

    @property
    def service_account_id(self) -> str:
        from gke_ai_batch.plan.cluster import node_service_account_id

        return node_service_account_id(self.cluster, self.location)


def identity(path: Path) -> Identity | None:
    """project, cluster name and location of a stack file; None if it does not say them."""
    try:
        doc = yamlread.load(yamlread.decode(yamlread.read_bytes(path)))
    except yamlread.YamlError:
        return None
    if doc.problems:
        return None
    data = doc.data or {}
    config = data.get("config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        return None
    cluster = config.get("gke-ai-batch:cluster")
    project = config.get("gcp:project")
    if not isinstance(cluster, dict) or not isinstance(project, str):
        return None
    name, location = cluster.get("name"), cluster.get("location") or config.get("gcp:region")
    if not isinstance(name, str) or not isinstance(location, str):
        return None
    return Identity(path, project, name, location)


def collisions(stack: Path, stacks_dir: Path, display=str) -> list[tuple[str, str]]:
    """(key path, message) for each other stack file of `stacks_dir` that collides with `stack`."""
    mine = identity(stack)
    if mine is None:
        return []
    problems: list[tuple[str, str]] = []
    for other_path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        # realpath, not Path.resolve: another file may be a symbolic link loop (identity() skips it).
        if os.path.realpath(other_path) == os.path.realpath(stack):
            continue
        other = identity(other_path)
        if other is None or other.project != mine.project:
            continue
        both = f"{display(stack)} and {display(other_path)} both deploy to project {mine.project!r}"
        if (other.cluster, other.location) == (mine.cluster, mine.location):
            problems.append(
                (
                    "gke-ai-batch:cluster.name",
                    f"{both} with cluster {mine.cluster!r} in {mine.location}; GKE cluster names are "
                    "unique per project and location: rename one cluster",
                )
            )
        elif other.service_account_id == mine.service_account_id:
            problems.append(
                (
                    "gke-ai-batch:cluster.name",
                    f"{both} and derive the same node service account id {mine.service_account_id!r} "
                    "(service account ids are unique per project): rename one cluster",
                )
            )
    return problems
