"""Stacks of one repository that would collide in GCP: two stack files deploying to the same
gcp:project must not derive the same node service account id (IAM ids are unique per project:
the second `pulumi up` fails, or worse, adopts nothing and fights over one account), nor the
same cluster name in the same location (GKE cluster names are unique per project and location).
A fleet's worker clusters count like any other: a copy of a fleet stack deploys the same
workers into the same projects unless they are renamed.

Each stack is valid on its own, so the config models cannot see this; synth checks it when it
renders a stack from the stacks folder. Only the few keys needed are read from the other
files, without validating them (their own synth does)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gke_ai_batch.config.errors import join_path
from gke_ai_batch.domain.findings import Finding

from . import yamlread


@dataclass(frozen=True)
class Identity:
    """One cluster a stack file deploys: its own, or one of its fleet's workers."""

    path: Path
    at: tuple  # the cluster's `name` under `config:`, as Document.positions keys it
    scope: str  # "" for the stack's own cluster, else the fleet worker's name
    project: str
    cluster: str
    location: str

    @property
    def key(self) -> str:
        """The key path of the cluster's name, where a clash is reported."""
        return join_path(self.at[0], self.at[1:])

    @property
    def service_account_id(self) -> str:
        from gke_ai_batch.plan.cluster import node_service_account_id

        return node_service_account_id(self.cluster, self.location)


def identities(path: Path) -> list[Identity]:
    """Every cluster a stack file deploys, with its project and location: the stack's own, and
    each fleet worker's (in the worker's `project`, else gcp:project; gke_ai_batch/config/fleet.py).
    Whatever the file does not say is left out (its own synth names the problem)."""
    try:
        doc = yamlread.load(yamlread.decode(yamlread.read_bytes(path)))
    except yamlread.YamlError:
        return []
    if doc.problems:
        return []
    data = doc.data or {}
    config = data.get("config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        return []
    project = config.get("gcp:project")
    if not isinstance(project, str):
        return []
    found = []
    mine = _identity(path, ("gke-ai-batch:cluster", "name"), "", project, config.get("gke-ai-batch:cluster"), config.get("gcp:region"))
    if mine is not None:
        found.append(mine)
    fleet = config.get("gke-ai-batch:fleet")
    workers = fleet.get("workers") if isinstance(fleet, dict) else None
    for i, worker in enumerate(workers if isinstance(workers, list) else []):
        if not isinstance(worker, dict):
            continue
        where, scope = worker.get("project") or project, worker.get("name")
        if isinstance(where, str) and isinstance(scope, str):
            at = _identity(path, ("gke-ai-batch:fleet", "workers", i, "cluster", "name"), scope, where, worker.get("cluster"), None)
            if at is not None:
                found.append(at)
    return found


def _identity(path: Path, at: tuple, scope: str, project: str, cluster, region) -> Identity | None:
    if not isinstance(cluster, dict):
        return None
    name, location = cluster.get("name"), cluster.get("location") or region
    if not isinstance(name, str) or not isinstance(location, str):
        return None
    return Identity(path, at, scope, project, name, location)


RULE = "cross-stack"
"""The rule id of a collision with another stack file (synth places it in the stack file)."""


def collisions(stack: Path, stacks_dir: Path, display=str) -> list[Finding]:
    """The finding at its key path for each cluster of `stack` that collides with one of another stack
    file of `stacks_dir` (a fleet's workers too: they are clusters in GCP like any other)."""
    mine = identities(stack)
    if not mine:
        return []
    problems: list[Finding] = []
    for other_path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        # realpath, not Path.resolve: another file may be a symbolic link loop (identities() skips it).
        if os.path.realpath(other_path) == os.path.realpath(stack):
            continue
        theirs = identities(other_path)
        for ours in mine:
            for other in theirs:
                if other.project != ours.project:
                    continue
                both = f"{display(stack)} and {display(other_path)} both deploy to project {ours.project!r}"
                if (other.cluster, other.location) == (ours.cluster, ours.location):
                    problems.append(Finding.at(
                        ours.key,
                        f"{both} with cluster {ours.cluster!r} in {ours.location}; GKE cluster names are "
                        "unique per project and location: rename one cluster",
                        RULE,
                    ))
                    break
                if other.service_account_id == ours.service_account_id:
                    problems.append(Finding.at(
                        ours.key,
                        f"{both} and derive the same node service account id {ours.service_account_id!r} "
                        "(service account ids are unique per project): rename one cluster",
                        RULE,
                    ))
                    break
    return problems
