"""A component's args, checked as the stack keys they mirror: a flavor, a cluster queue or a
team namespace by the stack's rules for those keys. (A node pool, a cluster and the installs are
not among them: their components validate their args as the entry or key they are, by field
name, gke_ai_batch/components/.)

A component used from any Pulumi program (gke_ai_batch/components/) takes its pool, cluster,
queue or team and the facts it stands on as args, not as a stack file. Written as the stack keys
they mirror, they go through StackConfig's own validation: the rules and messages are the stack
file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from gke_ai_batch.config.base import Model, RuleError
from gke_ai_batch.config.batch import ClusterQueueConfig, FlavorConfig, TeamConfig
from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.checks.flavors import flavor_limit_problems
from gke_ai_batch.config.checks.queues import cluster_queue_problems
from gke_ai_batch.config.checks.teams import local_queue_problems, namespace_settings_problems, team_namespace_problems

def _as_model(model: type[Model], data: Mapping[str, Any]) -> tuple[Any, list[tuple[tuple, str]]]:
    try:
        return model.model_validate(dict(data)), []
    except ValidationError as exc:
        return None, located_problems(exc, model)


def _rules(found: Iterable[RuleError]) -> list[tuple[tuple, str]]:
    return [(e.path, e.message) for e in found]


def flavor_entry_problems(entry: Mapping[str, Any], tolerations: int) -> list[tuple[tuple, str]]:
    """A flavor given as data ({name, nodeLabels, tolerations}, as a stack's flavors entry
    spells them), checked by the stack's flavor rules and Kueue's ResourceFlavor limits;
    paths are the entry's (("nodeLabels", "x"))."""
    flavor, problems = _as_model(FlavorConfig, entry)
    if flavor is not None:
        problems += _rules(
            flavor_limit_problems((), "nodeLabels", "tolerations", flavor.name, dict(flavor.node_labels or {}), tolerations)
        )
    return problems


def queue_entry_problems(
    entry: Mapping[str, Any], with_capacity: Mapping[str, bool]
) -> tuple[ClusterQueueConfig | None, list[tuple[tuple, str]]]:
    """A clusterQueues entry whose flavors are given as data: `with_capacity` maps each flavor's
    name to whether it holds TPUs or GPUs to derive a quota from. The entry is checked by the
    stack's own rules (ClusterQueueConfig and cluster_queue_problems); no flavors at all is a
    queue that admits nothing, not "every flavor of the stack". Paths are the entry's."""
    queue, problems = _as_model(ClusterQueueConfig, entry)
    if queue is not None:
        known = list(with_capacity)
        derived = {name for name, has in with_capacity.items() if has}
        problems += _rules(cluster_queue_problems((), queue, known, derived, flavors_known=bool(known)))
    return queue, problems


def team_entries_problems(
    entries: list[Mapping[str, Any]], groups: list[Any] = ()
) -> tuple[list[TeamConfig] | None, list[tuple[tuple, str]]]:
    """teams entries (one per LocalQueue, sharing a namespace), checked by the stack's team
    rules that need no cluster: names, Pod Security, reserved namespaces, labels, one value per
    namespace label; and `groups`, each as the first entry's group. Paths are the stack's
    (("teams", 0, "namespace")), a group's ("groups", k)."""
    teams: list[TeamConfig] = []
    problems: list[tuple[tuple, str]] = []
    for i, entry in enumerate(entries):
        team, found = _as_model(TeamConfig, entry)
        problems += [(("teams", i, *loc), msg) for loc, msg in found]
        if team is not None:
            teams.append(team)
    if problems:
        return None, problems
    for k, group in enumerate(groups):
        _, found = _as_model(TeamConfig, {**entries[0], "group": group})
        problems += [(("groups", k, *loc[1:]), msg) for loc, msg in found if loc[:1] == ("group",)]
    problems += _rules(local_queue_problems(teams))
    for i, team in enumerate(teams):
        problems += _rules(team_namespace_problems(i, team))
    problems += _rules(namespace_settings_problems(teams))
    return (None if problems else teams), problems
