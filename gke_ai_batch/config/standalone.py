"""One node pool entry on a declared cluster, checked as a stack of its own.

A component used from any Pulumi program (gke_ai_batch/components/nodepools.py) takes its
pool and the facts of its cluster as args, not as a stack file. Written as the stack keys they
mirror, they go through StackConfig's own validation: the rules and messages are the stack
file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import Field, ValidationError, model_validator

from gke_ai_batch.config.base import Model, RuleError, raise_all
from gke_ai_batch.config.batch import JobSetConfig, KueueConfig, PriorityConfig
from gke_ai_batch.config.computeclasses import MAX_CLASSES, ComputeClassConfig
from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.fleet import MultiKueueSettings
from gke_ai_batch.config.stack import MAX_ENTRIES, StackConfig, kueue_release_problems, priority_problems


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


def batch_key(key: str, data: Mapping[str, Any]) -> tuple[Any, list[tuple[tuple, str]]]:
    """`data` ({kueue, multiKueue}, {jobset}, {priorities} or {classes}, camelCase as a stack file spells
    them) validated: the model, or None and every problem as (stack key path, message)."""
    model = {"kueue": _KueueInstall, "jobset": _JobSetInstall, "priorities": _Priorities, "classes": _ComputeClasses}[key]
    try:
        return model.model_validate(dict(data)), []
    except ValidationError as exc:
        return None, located_problems(exc, model)
