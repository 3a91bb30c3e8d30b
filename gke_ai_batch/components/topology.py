"""Kueue Topologies as a component any Pulumi program can use: Topologies(name, args, opts)
registers one kueue.x-k8s.io/v1beta2 Topology per entry, for ResourceFlavors to name with their
topology_name (Topology-Aware Scheduling; docs/batch-layer.md, "Topology-aware scheduling").

Args mirror the stack's gke-ai-batch:topologies key in snake_case and are checked on
construction as the stack's entries are: each by its config model (by field name), the list by
the stack's rule that reads only it (config/topology.py, duplicate_names). Kueue must be
installed first: pass its readiness in `opts.depends_on`; the Kubernetes provider comes from
`opts`, inherited by the children.

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations
as objects."""

from typing import TypedDict

import pulumi

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import accepted, declared_args, depends_on_of, entries, rule_problems, type_token
from gke_ai_batch.config.stack import MAX_ENTRIES
from gke_ai_batch.config.topology import TopologyConfig, duplicate_names
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.topology import topology_manifest


class TopologyArgs(TypedDict):
    name: str
    """The Topology's name, which a flavor's topology_name refers to."""
    levels: list[str]
    """Node labels, the widest domain first; kubernetes.io/hostname only last."""


class TopologiesArgs(TypedDict):
    topologies: list[TopologyArgs]
    """The Kueue Topologies, as the stack key gke-ai-batch:topologies in snake_case."""


class Topologies(Component):
    """One Kueue Topology per entry."""

    topologies: pulumi.Output[list[str]]
    """The topologies' names, in order."""

    def __init__(self, name: str, args: TopologiesArgs, opts: pulumi.ResourceOptions | None = None):
        component = type(self).__name__
        kept, problems = declared_args(component, name, args, TopologiesArgs)
        config, found = entries(TopologyConfig, kept["topologies"], MAX_ENTRIES["flavors"], "topologies")
        if config is not None:
            found += rule_problems(duplicate_names(config), {"topologies": (("topologies",), TopologyConfig)})
        config = accepted(component, name, config, problems + found)
        super().__init__(type_token(type(self)), name, None, opts)
        self.config: list[TopologyConfig] = config
        waits = depends_on_of(opts)  # Pulumi's children do not wait for what the component depends on
        for t in self.config:
            manifest = topology_manifest(t.name, t.levels)
            k8s_objects.apply(
                manifest,
                pulumi.ResourceOptions(parent=self, depends_on=waits),
                name=child_name(name, "topologies", k8s_objects.resource_name(manifest)),
            )
        self.topologies = pulumi.Output.from_input([t.name for t in self.config])
        self.register_outputs({"topologies": self.topologies})


def stack_topologies_args(topologies: list[TopologyConfig]) -> dict:
    """Topologies' args for a stack's topologies key, as set in the stack file."""
    return {"topologies": [t.model_dump(exclude_unset=True) for t in topologies]}
