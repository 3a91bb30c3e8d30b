"""One node pool entry on a declared cluster, checked as a stack of its own; one flavor, one
cluster queue or one team namespace, checked by the stack's rules for those keys.

A component used from any Pulumi program (gke_ai_batch/components/) takes its pool and the
facts of its cluster, or its queue and its flavors, as args, not as a stack file. Written as the stack keys they
mirror, they go through StackConfig's own validation: the rules and messages are the stack
file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from gke_ai_batch.config.base import Model, RuleError
from gke_ai_batch.config.batch import ClusterQueueConfig, FlavorConfig, TeamConfig
from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.stack import (
    StackConfig,
    cluster_queue_problems,
    flavor_limit_problems,
    local_queue_problems,
    namespace_settings_problems,
    team_namespace_problems,
)


def pool_on_cluster(
    cluster: Mapping[str, Any], entry: Mapping[str, Any], catalogue: Mapping[str, Any] | None = None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    """The stack {cluster, nodePools: [entry], catalogue} validated, or None and every problem
    as (key path, message); paths are the stack's (("nodePools", 0, "tpu", "topology"))."""
    data: dict[str, Any] = {"cluster": dict(cluster), "nodePools": [dict(entry)]}
    if catalogue:
        data["catalogue"] = dict(catalogue)
    try:
        return StackConfig.model_validate(data), []
    except ValidationError as exc:
        return None, located_problems(exc, StackConfig)


def _validated(model: type[Model], data: Mapping[str, Any]) -> tuple[Any, list[tuple[tuple, str]]]:
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
    flavor, problems = _validated(FlavorConfig, entry)
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
    queue, problems = _validated(ClusterQueueConfig, entry)
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
        team, found = _validated(TeamConfig, entry)
        problems += [(("teams", i, *loc), msg) for loc, msg in found]
        if team is not None:
            teams.append(team)
    if problems:
        return None, problems
    for k, group in enumerate(groups):
        _, found = _validated(TeamConfig, {**entries[0], "group": group})
        problems += [(("groups", k, *loc[1:]), msg) for loc, msg in found if loc[:1] == ("group",)]
    problems += _rules(local_queue_problems(teams))
    for i, team in enumerate(teams):
        problems += _rules(team_namespace_problems(i, team))
    problems += _rules(namespace_settings_problems(teams))
    return (None if problems else teams), problems
