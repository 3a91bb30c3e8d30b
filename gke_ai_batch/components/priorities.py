"""Priorities as a component any Pulumi program can use: Priorities(name, args, opts) registers
each priority twice, same name and value: a PriorityClass for kube-scheduler and a
WorkloadPriorityClass for Kueue.

Args mirror the stack's gke-ai-batch:priorities key in snake_case and are checked on
construction as the stack's entries are: each by its config model (by field name), the list by
the stack's rule (config/checks/priorities.py), every problem at once, at its arg path. The
Kubernetes provider comes from `opts`, inherited by the children.

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations
as objects."""

from typing import NotRequired, TypedDict

import pulumi

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import accepted, aliased, declared_args, depends_on_of, entries, rule_problems, type_token
from gke_ai_batch.config.batch import PriorityConfig
from gke_ai_batch.config.checks.priorities import priority_problems
from gke_ai_batch.config.stack import MAX_ENTRIES
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.kueue import priority_manifests

OLD_TYPE = "gke-ai-batch:priorities:Priorities"


class PriorityArgs(TypedDict):
    name: str
    """The PriorityClass and WorkloadPriorityClass name; not starting with system-."""
    value: int
    """At most 1,000,000,000 (higher is reserved for system classes)."""
    description: NotRequired[str]
    """What the priority is for, on the PriorityClass and WorkloadPriorityClass."""


class PrioritiesArgs(TypedDict):
    priorities: list[PriorityArgs]
    """Each priority once; one named low must rank below one named high."""


class Priorities(Component):
    """A PriorityClass and a WorkloadPriorityClass per priority. Only the WorkloadPriorityClasses
    wait for what the component depends on (Kueue's install: its CRD and webhooks): a
    PriorityClass is core Kubernetes, and Pulumi's children do not wait for their parent's
    dependencies."""

    priorities: pulumi.Output[dict[str, int]]
    """Each priority's value, by name."""

    def __init__(self, name: str, args: PrioritiesArgs, opts: pulumi.ResourceOptions | None = None):
        component = type(self).__name__
        kept, problems = declared_args(component, name, args, PrioritiesArgs)
        config, found = entries(PriorityConfig, kept["priorities"], MAX_ENTRIES["priorities"], "priorities")
        if config is not None:
            # The workloads that name no priority are other components': none is known here.
            found += rule_problems(priority_problems(config, []), {"priorities": (("priorities",), PriorityConfig)})
        config = accepted(component, name, config, problems + found)
        super().__init__(type_token(type(self)), name, None, aliased(opts, OLD_TYPE))
        self.config: list[PriorityConfig] = config
        waits = depends_on_of(opts)
        self.classes: dict[str, list[pulumi.Resource]] = {}
        for p in self.config:
            pc, wpc = priority_manifests(p.name, p.value, p.description)
            self.classes[p.name] = [
                k8s_objects.apply(
                    manifest,
                    pulumi.ResourceOptions(parent=self, depends_on=needs),
                    name=child_name(name, "priorities", k8s_objects.resource_name(manifest)),
                )
                for manifest, needs in ((pc, []), (wpc, waits))
            ]
        self.priorities = pulumi.Output.from_input({p.name: p.value for p in self.config})
        self.register_outputs({"priorities": self.priorities})


def stack_priorities_args(priorities: list[PriorityConfig]) -> dict:
    """Priorities' args for a stack's priorities key, as set in the stack file."""
    return {"priorities": [p.model_dump(exclude_unset=True) for p in priorities]}
