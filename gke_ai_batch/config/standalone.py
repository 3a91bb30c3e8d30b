"""A component's args, checked as the stack keys they mirror: a cluster as a stack of its own;
an install's key by the stack's rules for it. (A node pool, a flavor, a cluster queue and a team
are not among them: each component validates its args as the stack entry they are, by field name,
and runs the stack's per-entry rules on them: gke_ai_batch/components/nodepools.py, queues.py.)

A component used from any Pulumi program (gke_ai_batch/components/) takes its pool, cluster,
queue or team and the facts it stands on as args, not as a stack file. Written as the stack keys
they mirror, they go through StackConfig's own validation: the rules and messages are the stack
file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import Field, ValidationError, model_validator

from gke_ai_batch.config.base import Model, RuleError, raise_all
from gke_ai_batch.config.batch import JobSetConfig, KueueConfig, PriorityConfig
from gke_ai_batch.config.computeclasses import MAX_CLASSES, ComputeClassConfig
from gke_ai_batch.config.topology import TopologyConfig, duplicate_names
from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.fleet import MultiKueueSettings
from gke_ai_batch.config.checks.kueue import kueue_release_problems
from gke_ai_batch.config.checks.priorities import priority_problems
from gke_ai_batch.config.stack import MAX_ENTRIES, StackConfig



def cluster_alone(
    cluster: Mapping[str, Any], catalogue: Mapping[str, Any] | None = None, project: str | None = None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    """The stack {cluster, catalogue} validated as gcp:project `project` would have it (a network
    named without its project is the cluster's project's), or None and every problem."""
    return _validated({"cluster": dict(cluster)}, catalogue, project)


def _validated(
    data: dict[str, Any], catalogue: Mapping[str, Any] | None, project: str | None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    if catalogue:
        data["catalogue"] = dict(catalogue)
    try:
        return StackConfig.model_validate(data, context={"project": project} if project else None), []
    except ValidationError as exc:
        return None, located_problems(exc, StackConfig)


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
