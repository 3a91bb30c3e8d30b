"""A component's args, checked as the stack keys they mirror: an install's key, a flavor, a
cluster queue or a team namespace by the stack's rules for those keys. (A node pool and a
cluster are not among them: their components validate their args as the entry or key they are,
by field name, and run the stack's rules about it on the cluster's facts,
gke_ai_batch/components/nodepools.py and cluster.py.)

A component used from any Pulumi program (gke_ai_batch/components/) takes its pool, cluster,
queue or team and the facts it stands on as args, not as a stack file. Written as the stack keys
they mirror, they go through StackConfig's own validation: the rules and messages are the stack
file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pydantic import Field, ValidationError, model_validator

from gke_ai_batch.config.base import Model, RuleError, raise_all
from gke_ai_batch.config.batch import ClusterQueueConfig, FlavorConfig, JobSetConfig, KueueConfig, PriorityConfig, TeamConfig
from gke_ai_batch.config.computeclasses import MAX_CLASSES, ComputeClassConfig
from gke_ai_batch.config.topology import TopologyConfig, duplicate_names
from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.fleet import MultiKueueSettings
from gke_ai_batch.config.checks.flavors import flavor_limit_problems
from gke_ai_batch.config.checks.kueue import kueue_release_problems
from gke_ai_batch.config.checks.priorities import priority_problems
from gke_ai_batch.config.checks.queues import cluster_queue_problems
from gke_ai_batch.config.checks.teams import local_queue_problems, namespace_settings_problems, team_namespace_problems
from gke_ai_batch.config.stack import MAX_ENTRIES



# The batch layer's install components (gke_ai_batch/components/batch.py, priorities.py) take
# what one stack key holds: each is validated as that key, by its own model and the stack's rules
# that read only it, under the key's stack name, so paths and messages are the stack file's. The
# stack's rules that relate it to other keys (fair sharing against the cohorts, a priority
# named low against the workloads that name none) are left out: those keys are other components'.


class _KueueInstall(Model):
    kueue: KueueConfig = KueueConfig()
    multi_kueue: MultiKueueSettings | None = None

    @model_validator(mode="after")
    def _release(self):
        raise_all(kueue_release_problems(self.kueue, self.multi_kueue, ("multiKueue",)))
        return self


class _JobSetInstall(Model):
    jobset: JobSetConfig = JobSetConfig()


class _Priorities(Model):
    priorities: list[PriorityConfig] = Field([], max_length=MAX_ENTRIES["priorities"])

    @model_validator(mode="after")
    def _rules(self):
        raise_all(priority_problems(self.priorities, []))
        return self


class _ComputeClasses(Model):
    classes: list[ComputeClassConfig] = Field([], max_length=MAX_CLASSES)

    @model_validator(mode="after")
    def _unique(self):
        names = [c.name for c in self.classes]
        raise_all(
            RuleError(("classes", i, "name"), f"compute class {n!r} is declared twice")
            for i, n in enumerate(names)
            if n in names[:i]
        )
        return self


class _Topologies(Model):
    topologies: list[TopologyConfig] = Field([], max_length=MAX_ENTRIES["flavors"])

    @model_validator(mode="after")
    def _unique(self):
        raise_all(duplicate_names(self.topologies))
        return self


def batch_key(key: str, data: Mapping[str, Any]) -> tuple[Any, list[tuple[tuple, str]]]:
    """`data` ({kueue, multiKueue}, {jobset}, {priorities}, {classes} or {topologies}, camelCase as a stack file
    spells them) validated: the model, or None and every problem as (stack key path, message)."""
    model = {
        "kueue": _KueueInstall, "jobset": _JobSetInstall, "priorities": _Priorities, "classes": _ComputeClasses,
        "topologies": _Topologies,
    }[key]
    return _as_model(model, data)


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
