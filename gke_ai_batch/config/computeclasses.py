"""`gke-ai-batch:computeClasses`: GKE custom ComputeClasses, capacity tried in priority order.

A class lists the node shapes and capacity types GKE may create nodes of, most wanted first (a
reservation, then flex-start, then spot, then on-demand): when one cannot be had, GKE tries the
next (GKE docs concepts/about-custom-compute-classes, "Fallback compute priorities"). A declared
flavor selects a class with `computeClass` (gke_ai_batch/plan/flavors.py); docs/capacity-fallback.md.

The object's fields are GKE's ComputeClass CRD (cloud.google.com/v1,
https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass; Google's Go types and
CRD: GoogleCloudPlatform/compute-class-api api/cloud.google.com/v1/types.go), vendored as
schema/upstream-extra/cloud.google.com/v1/ComputeClass.json."""

from __future__ import annotations

from typing import Annotated, Iterator, Literal

from pydantic import AfterValidator, AliasChoices, Field, field_validator, model_validator

from gke_ai_batch.domain import catalogue, machines, naming, versions
from gke_ai_batch.config.base import K8sName, Model, RuleError, raise_all
from gke_ai_batch.config.checks import valid
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.config.gcpnames import check_reservation
from gke_ai_batch.config.lookups import cluster_zones, version_floor, zones_known
from gke_ai_batch.config.pools import GpuSpec, TpuSpec
from gke_ai_batch.config.reservations import reservation_problems

# The capacity types a priority can ask for: GKE's provisioning models (naming.CAPACITY_VALUES)
# as the CRD spells them (spot: true; flexStart.enabled: true; reservations.affinity: Specific;
# otherwise on-demand). Queued provisioning is a ProvisioningRequest, not a ComputeClass priority.
PriorityCapacity = Literal[tuple(c for c in naming.CAPACITY_VALUES if c != "queued")]  # type: ignore[valid-type]
# spec.priorities maxItems in GKE's ComputeClass CRD (GoogleCloudPlatform/compute-class-api
# api/cloud.google.com/v1/types.go:110, ComputeClassSpec.Priorities, at 8067eaeb).
MAX_PRIORITIES = 1000
MAX_CLASSES = 100


class ClassPriority(Model):
    tpu: TpuSpec | None = None
    """A TPU slice shape: tpu.type (the generation), tpu.topology and the chips per VM."""
    gpu: GpuSpec | None = None
    """GPUs per node (with machineType unless the GPU type and count leave one choice)."""
    machine_type: str | None = None
    """The node's machine type (CPU and GPU priorities; TPU priorities take tpu.machineType)."""
    capacity: PriorityCapacity = "onDemand"
    """onDemand, spot, flexStart, or reservation (with reservation)."""
    reservation: Annotated[str, AfterValidator(check_reservation)] | None = None
    """Reservation name (or projects/P/reservations/R for a shared one, either optionally followed
    by /reservationBlocks/B and /reservationSubBlocks/S); capacity reservation only."""
    # The CRD's spelling; a component's local_ssd_count arrives as localSsdCount (to_camel).
    local_ssd_count: int | None = Field(
        None, ge=1, alias="localSSDCount", validation_alias=AliasChoices("localSSDCount", "localSsdCount")
    )
    """storage.localSSDCount: the Local SSDs on each node. Required with a reservation on a machine
    type that comes with Local SSDs attached (A4, A3, A2 Ultra: the attached count)."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        if self.tpu is not None and self.gpu is not None:
            yield RuleError((), "a priority is either tpu or gpu (or a plain machineType for CPU), not both")
            return
        if self.tpu is not None and self.machine_type is not None:
            yield RuleError("machineType", "TPU priorities take their machine type from tpu.machineType")
        if self.gpu is not None:
            yield from self._gpu_rules()
        elif self.tpu is None and self.machine_type is None:
            # GKE would take a machineFamily or nothing at all; this program models what a
            # priority's node holds, so it needs the machine.
            yield RuleError((), "say what the priority's nodes are: tpu, gpu (with machineType) or a machineType")
        # The CRD's reservations rule: "At least 1 specific reservation required for specific
        # affinity", and none for another affinity ("Unable to set specific reservations for
        # non specific affinity").
        if self.capacity == "reservation" and self.reservation is None:
            yield RuleError("reservation", "capacity reservation names the reservation its nodes consume")
        elif self.capacity == "reservation" and (self.tpu is not None or self.node_machine_type is not None):
            # GKE creates the priority's nodes as it would a pool's: a block or sub-block the
            # pool could not consume, the priority cannot either (the same rules, one home).
            yield from reservation_problems(self)
        elif self.capacity != "reservation" and self.reservation is not None:
            yield RuleError("reservation", f"only with capacity reservation (this priority is {self.capacity})")
        yield from self._local_ssd_rules()

    def _local_ssd_rules(self) -> Iterator[RuleError]:
        """A machine type with Local SSDs attached has exactly that many (machines.ATTACHED_LOCAL_SSDS),
        and a VM consumes a reservation only with the reservation's properties, its Local SSDs
        included: a priority that consumes one on such a machine says how many
        (storage.localSSDCount; GKE docs concepts/about-custom-compute-classes, reservations)."""
        machine = self.node_machine_type
        attached = machines.ATTACHED_LOCAL_SSDS.get(machine or "")
        if attached is None:
            return
        if self.local_ssd_count is not None and self.local_ssd_count != attached:
            yield RuleError(
                "localSSDCount",
                f"a {machine} node comes with {attached} Local SSDs attached, no more and no fewer: write {attached}",
            )
        elif self.local_ssd_count is None and self.capacity == "reservation":
            yield RuleError(
                "localSSDCount",
                f"a {machine} node comes with {attached} Local SSDs attached, and a VM consumes a reservation only with "
                f"the reservation's properties, Local SSDs included: state localSSDCount: {attached}",
            )

    def _gpu_rules(self) -> Iterator[RuleError]:
        gpu = self.gpu
        if self.machine_type is None and self.node_machine_type is None:
            options = [m for m, n in catalogue.GPU_TYPES[gpu.type].machine_types.items() if n == gpu.count]
            yield RuleError(
                "machineType",
                f"required for {gpu.count} x {gpu.type}; choose one of: {', '.join(options or ['an n1-* machine type'])}",
            )
            return
        try:
            machines.check_gpu(gpu.type, gpu.count, self.node_machine_type)
        except catalogue.CatalogueError as e:
            yield RuleError("machineType", str(e))

    @property
    def kind(self) -> str:
        return "tpu" if self.tpu is not None else "gpu" if self.gpu is not None else "cpu"

    @property
    def node_machine_type(self) -> str | None:
        """The machine type of the priority's nodes: stated, the TPU slice's, or the one machine
        type that carries the GPU type and count."""
        if self.tpu is not None:
            return self.tpu.slice.machine_type
        if self.machine_type is not None:
            return self.machine_type
        if self.gpu is not None:
            options = [m for m, n in catalogue.GPU_TYPES[self.gpu.type].machine_types.items() if n == self.gpu.count]
            return options[0] if len(options) == 1 else None
        return None


class ComputeClassConfig(Model):
    name: K8sName
    """The ComputeClass name; flavors select it with computeClass (not starting with gke or autopilot)."""
    priorities: list[ClassPriority] = Field(min_length=1, max_length=MAX_PRIORITIES)
    """Most wanted first: GKE tries each in turn when it cannot create the one before."""
    when_unsatisfiable: Literal["DoNotScaleUp", "ScaleUpAnyway"] = "DoNotScaleUp"
    """When no priority can be had: DoNotScaleUp leaves the pods pending; ScaleUpAnyway lets GKE
    create nodes outside the priorities."""
    auto_create: bool = True
    """spec.nodePoolAutoCreation.enabled: GKE creates node pools for the class. On Standard, without
    it (or cluster.autoProvisioning) no node pool serves the class."""

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, v: str) -> str:
        reserved = next((p for p in naming.COMPUTE_CLASS_RESERVED_PREFIXES if v.startswith(p)), None)
        if reserved is not None:
            raise ValueError(
                f"{v!r}: GKE refuses ComputeClass names starting with {reserved!r} (its own classes' names)"
            )
        return v


def duplicate_class_names(classes: list[ComputeClassConfig]) -> Iterator[RuleError]:
    """A class declared twice: GKE would hold one ComputeClass of the name. Also the
    ComputeClasses component's rule (gke_ai_batch/components/computeclasses.py)."""
    names: set[str] = set()
    for i, cc in valid(classes):
        if cc.name in names:
            yield RuleError(("computeClasses", i, "name"), f"compute class {cc.name!r} is declared twice")
        names.add(cc.name)


def compute_class_problems(cfg) -> Iterator[RuleError]:
    """The stack's rules that relate compute classes to its other keys (`cfg`: StackConfig):
    names declared once, flavors that name a declared class, a Standard cluster that can create
    the class's nodes, the GKE version each field needs, machine types GKE has."""
    classes = cfg.compute_classes
    # Sorted by entry afterwards (stack_problems): each class's "declared twice" comes first.
    yield from duplicate_class_names(classes)
    for i, cc in valid(classes):
        yield from _class_cluster_rules(cfg, i, cc)
    names = [cc.name for cc in classes]
    for i, flavor in enumerate(cfg.flavors or []):
        yield from flavor_class_problems(i, flavor, names)


def flavor_class_problems(i: int, flavor, names: list[str]) -> Iterator[RuleError]:
    """A declared flavor, flavors[i], that selects a compute class: one of `names`, and only by it."""
    if flavor.compute_class is None:
        return
    at = ("flavors", i)
    if flavor.compute_class not in names:
        yield RuleError(
            (*at, "computeClass"),
            f"unknown compute class {flavor.compute_class!r}; known: {', '.join(names) or 'none'}",
        )
    if flavor.pools:
        yield RuleError(
            (*at, "pools"),
            "a flavor selects either node pools or a compute class (whose nodes GKE creates), not both",
        )
    if flavor.node_labels is not None:
        yield RuleError(
            (*at, "nodeLabels"),
            f"the flavor selects the class's nodes by {naming.COMPUTE_CLASS_LABEL}; remove nodeLabels",
        )


def _class_cluster_rules(cfg, i: int, cc: ComputeClassConfig) -> Iterator[RuleError]:
    at = ("computeClasses", i)
    cluster = cfg.cluster
    yield from version_floor(cfg.facts, (*at, "name"), versions.CUSTOM_COMPUTE_CLASS_MIN, "custom ComputeClasses")
    if cluster.standard and cluster.auto_provisioning is None:
        if not cc.auto_create:
            # On Standard a class's nodes come from node pools that carry its label and taint,
            # created by hand or auto-created: this program labels none of its pools so, and
            # without auto-creation GKE creates none (GKE docs concepts/about-custom-compute-classes,
            # "Node pool auto-creation with ComputeClasses").
            yield RuleError(
                (*at, "autoCreate"),
                "on a Standard cluster without cluster.autoProvisioning no node pool would serve this class: "
                "set autoCreate true (GKE creates its node pools) or turn on cluster.autoProvisioning",
            )
        else:
            yield from version_floor(
                cfg.facts,
                (*at, "autoCreate"),
                versions.COMPUTE_CLASS_AUTO_CREATION_MIN,
                "ComputeClasses that create their own node pools (autoCreate) without cluster.autoProvisioning",
            )
    for j, p in enumerate(cc.priorities):
        where = (*at, "priorities", j)
        if p.capacity == "flexStart" and p.kind in ("tpu", "gpu"):
            yield from version_floor(
                cfg.facts, (*where, "capacity"), versions.FLEX_START_MIN[p.kind], f"flex-start {p.kind.upper()} nodes"
            )
        if p.kind == "cpu":
            problem = cfg.catalogue.machine_type_problem(p.machine_type)
            if problem:
                yield RuleError((*where, "machineType"), problem)
        else:
            yield from _offered(cfg, where, p)


def _offered(cfg, where: tuple, p: ClassPriority) -> Iterator[RuleError]:
    """GKE creates a priority's nodes in the cluster's zones (the class names none here): a
    priority whose accelerator none of them offers never gets a node
    (gke_ai_batch/domain/regions.py, or the stack's catalogue override)."""
    zones = cluster_zones(cfg.facts)
    if not zones_known(cfg.facts, zones):
        return  # the cluster's location is reported already
    cat = cfg.regions
    region = region_of(cfg.cluster.location)
    allowed = zones or cat.zones_of(region)
    if p.tpu is not None:
        name, offering, key = p.tpu.version, cat.tpu_zones(region, p.tpu.version), ("tpu", "version")
    else:
        name, offering, key = p.gpu.type, cat.gpu_zones(region, p.gpu.type), ("gpu", "type")
    if not set(offering) & set(allowed):
        yield RuleError(
            (*where, *key),
            f"GKE offers {name} in {region} only in {', '.join(offering) or 'no zone'}, none of them in the "
            f"cluster's zones ({', '.join(allowed)}), so GKE never creates this priority's nodes",
        )
