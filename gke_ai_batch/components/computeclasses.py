"""GKE custom ComputeClasses as a component any Pulumi program can use:
ComputeClasses(name, args, opts) registers one cloud.google.com/v1 ComputeClass per class, its
priorities in order (a reservation, then flex-start, then spot, then on-demand, say), for a
Kueue ResourceFlavor to select by the node label cloud.google.com/compute-class
(docs/capacity-fallback.md).

Args mirror the stack's gke-ai-batch:computeClasses key in snake_case and are checked on
construction as the stack's entries are: each by its config model (by field name), the list by
the stack's rule that reads only it (config/computeclasses.py, duplicate_class_names), every
problem at once, at its arg path. The rules that need the cluster (its mode, version and
auto-provisioning) are the stack's: this component does not know the cluster. The Kubernetes
provider comes from `opts`, inherited by the children.

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations
as objects."""

from typing import NotRequired, TypedDict

import pulumi

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import accepted, declared_args, entries, rule_problems, type_token
from gke_ai_batch.config.computeclasses import MAX_CLASSES, ComputeClassConfig, duplicate_class_names
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.computeclasses import compute_class_manifest


class ClassTpuArgs(TypedDict):
    version: str
    """A TPU generation of the catalogue (v5e, v6e, v5p, ...)."""
    topology: str
    """AxB or AxBxC, a topology the generation offers."""
    machine_type: NotRequired[str]
    """Overrides the default: the 4-chip type, or the 1-chip type for 1x1."""


class ClassGpuArgs(TypedDict):
    type: str
    """GKE accelerator type, e.g. nvidia-h100-80gb."""
    count: NotRequired[int]
    """GPUs per VM (default 1)."""
    driver_version: NotRequired[str]
    """default or latest: the NVIDIA driver GKE installs."""


class ClassPriorityArgs(TypedDict):
    tpu: NotRequired[ClassTpuArgs]
    """A TPU slice shape (instead of gpu or machine_type alone)."""
    gpu: NotRequired[ClassGpuArgs]
    """GPUs per node, with machine_type unless the type and count fit one machine type."""
    machine_type: NotRequired[str]
    """The node's machine type (CPU and GPU priorities)."""
    capacity: NotRequired[str]
    """onDemand (default), spot, flexStart or reservation."""
    reservation: NotRequired[str]
    """With capacity reservation: NAME, or projects/P/reservations/R, optionally /reservationBlocks/B[/reservationSubBlocks/S]."""
    local_ssd_count: NotRequired[int]
    """storage.localSSDCount; required with a reservation on a machine type with Local SSDs attached (A4, A3, A2 Ultra)."""


class ComputeClassArgs(TypedDict):
    name: str
    """The ComputeClass name, which flavors select with compute_class."""
    priorities: list[ClassPriorityArgs]
    """Most wanted first."""
    when_unsatisfiable: NotRequired[str]
    """DoNotScaleUp (default) or ScaleUpAnyway."""
    auto_create: NotRequired[bool]
    """spec.nodePoolAutoCreation.enabled (default true)."""


class ComputeClassesArgs(TypedDict):
    classes: list[ComputeClassArgs]
    """The ComputeClasses, as the stack key gke-ai-batch:computeClasses in snake_case."""


class ComputeClasses(Component):
    """One ComputeClass per class. GKE serves the CRD on every cluster from 1.30.3-gke.1451000
    on, so nothing else needs to exist first."""

    classes: pulumi.Output[list[str]]
    """The classes' names, in order."""

    def __init__(self, name: str, args: ComputeClassesArgs, opts: pulumi.ResourceOptions | None = None):
        component = type(self).__name__
        kept, problems = declared_args(component, name, args, ComputeClassesArgs)
        config, found = entries(ComputeClassConfig, kept["classes"], MAX_CLASSES, "classes")
        if config is not None:
            found += rule_problems(duplicate_class_names(config), {"computeClasses": (("classes",), ComputeClassConfig)})
        config = accepted(component, name, config, problems + found)
        super().__init__(type_token(type(self)), name, None, opts)
        self.config: list[ComputeClassConfig] = config
        for cc in self.config:
            manifest = compute_class_manifest(cc)
            k8s_objects.apply(
                manifest,
                pulumi.ResourceOptions(parent=self),
                name=child_name(name, "compute-classes", k8s_objects.resource_name(manifest)),
            )
        self.classes = pulumi.Output.from_input([cc.name for cc in self.config])
        self.register_outputs({"classes": self.classes})


def stack_compute_classes_args(classes: list[ComputeClassConfig]) -> dict:
    """ComputeClasses' args for a stack's computeClasses key, as set in the stack file."""
    return {"classes": [c.model_dump(exclude_unset=True) for c in classes]}
