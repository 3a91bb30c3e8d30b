"""`gke-ai-batch:nodePools`: accelerator and CPU node pools, one entry per intent."""

from __future__ import annotations

import re
from typing import Annotated, Iterator, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from gke_ai_batch.domain import catalogue, machines
from gke_ai_batch.domain import naming
from gke_ai_batch.config.base import (
    CLUSTER_NODES_MAX,
    GPUS_PER_VM_MAX,
    LABEL_VALUE_RULE,
    QUALIFIED_NAME_RULE,
    SEVEN_DAYS,
    Duration,
    GkeName,
    GKE_NAME_MAX,
    Labels,
    Model,
    RuleError,
    is_label_value,
    is_qualified_name,
    raise_all,
)
from gke_ai_batch.config.cluster import Zones
from gke_ai_batch.config.gcpnames import check_reservation
from gke_ai_batch.config.maintenance import UpgradeSettings
from gke_ai_batch.config.reservations import ReservationConfig, reservation_problems

# The capacity types are GKE's provisioning models as the domain names them (naming.CAPACITY_VALUES).
Capacity = Literal[tuple(naming.CAPACITY_VALUES)]  # type: ignore[valid-type]
# Capacity types whose nodes are created on demand by GKE and must start from zero.
PROVISIONED_ON_DEMAND = ("flexStart", "queued")

_TOPOLOGY_RX = re.compile(r"[0-9]+x[0-9]+(x[0-9]+)?", re.ASCII)
# "name-<i>" for a TPU entry's slices: leave room for "-" and up to three digits.
SLICE_SUFFIX_ROOM = 4


class TpuSpec(Model):
    # The catalogue's generations (gke_ai_batch/domain/catalogue.py), never retyped here.
    version: Literal[catalogue.TPU_VERSIONS]  # type: ignore[valid-type]
    topology: str
    """AxB for v5e and v6e, AxBxC for v4, v5p and tpu7x."""
    machine_type: str | None = None
    """Overrides the default: the 4-chip type, or the 1-chip type for 1x1."""

    @field_validator("topology")
    @classmethod
    def _shape(cls, v: str) -> str:
        if not _TOPOLOGY_RX.fullmatch(v):
            raise ValueError(f"{v!r} is not a topology; write it as AxB or AxBxC (e.g. 2x4, 4x4x4)")
        return v

    @model_validator(mode="after")
    def _in_catalogue(self):
        problem = catalogue.topology_problem(catalogue.TPU_GENERATIONS[self.version], self.topology)
        if problem is not None:
            raise RuleError("topology", problem)
        if self.machine_type is not None:
            try:
                catalogue.tpu_slice(self.version, self.topology, self.machine_type)
            except catalogue.CatalogueError as e:
                raise RuleError("machineType", str(e)) from None
        return self

    @property
    def slice(self) -> catalogue.TpuSlice:
        return catalogue.tpu_slice(self.version, self.topology, self.machine_type)


class GpuSpec(Model):
    type: str
    """GKE accelerator type, e.g. nvidia-h100-80gb, nvidia-l4, nvidia-tesla-t4."""
    count: int = Field(1, ge=1, le=GPUS_PER_VM_MAX)
    """GPUs per VM."""
    driver_version: Literal["default", "latest"] = "default"

    @field_validator("type")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in catalogue.GPU_TYPES:
            raise ValueError(f"unknown GPU type {v!r}; allowed: {', '.join(catalogue.GPU_TYPES)}")
        return v


# Label and taint-key domains a node pool may not set. Kubernetes: the NodeRestriction
# admission plugin lets a kubelet set only an allow-list of kubernetes.io/ and k8s.io/ labels,
# and kubelet refuses other --node-labels in those domains at start-up
# (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction,
# https://kubernetes.io/docs/reference/labels-annotations-taints/); GKE node pool labels are
# passed to the kubelet that way. cloud.google.com/ is the domain of the labels and taints GKE
# itself puts on nodes (gke-nodepool, gke-spot, gke-accelerator, gke-tpu-*, gke-queued...:
# the GKE TPU, GPU, Spot and DWS docs cited in gke_ai_batch/domain/catalogue.py and naming.py), which it sets and
# overrides (not verified offline that GKE's API refuses a user's; kubelet's refusal of the
# other two is). gke-ai-batch/ is this program's own (naming.CAPACITY_LABEL): a pool that set it
# would no longer match the flavor derived for it.
RESERVED_NODE_DOMAINS = ("kubernetes.io", "k8s.io", "cloud.google.com", naming.CAPACITY_LABEL.split("/")[0])


def reserved_domain(key: str) -> str | None:
    """The reserved domain a label or taint key is in, if any (subdomains included)."""
    prefix = key.rpartition("/")[0]
    for domain in RESERVED_NODE_DOMAINS:
        if prefix == domain or prefix.endswith("." + domain):
            return domain
    return None


class Taint(Model):
    key: str
    """A qualified name, e.g. example.com/dedicated."""
    value: str = ""
    """A label value (may be empty)."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"

    @model_validator(mode="after")
    def _syntax(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        # Taint key: qualified name; value: label value (core/v1 validation of Node taints,
        # k8s.io/kubernetes pkg/apis/core/validation validateNodeTaints).
        domain = reserved_domain(self.key)
        if not is_qualified_name(self.key):
            yield RuleError("key", f"taint key {self.key!r} is not a valid qualified name: {QUALIFIED_NAME_RULE}")
        elif domain is not None:
            yield RuleError(
                "key",
                f"taint key {self.key!r} is in the {domain}/ domain, which Kubernetes, GKE or this "
                "program reserves for its own taints; use your own domain (e.g. example.com/dedicated)",
            )
        if not is_label_value(self.value):
            yield RuleError("value", f"taint value {self.value!r} is not valid: {LABEL_VALUE_RULE}")


class NodePoolConfig(Model):
    name: GkeName
    """The entry's name; a TPU entry's pools are <name>-0, <name>-1, ..."""
    tpu: TpuSpec | None = None
    """A TPU slice shape: node counts, placement and labels derive from it."""
    gpu: GpuSpec | None = None
    """GPUs per node (with machineType)."""
    machine_type: str | None = None
    """CPU and GPU pools; TPU pools take tpu.machineType."""
    slices: int | None = Field(None, ge=1, le=CLUSTER_NODES_MAX)
    """TPU only: one node pool per slice, named <name>-<i>. Default 1."""
    capacity: Capacity = "onDemand"
    """onDemand, spot, reservation (with reservation), flexStart or queued (Dynamic Workload
    Scheduler); docs/capacity-types.md says what each sets."""
    reservation: Annotated[str, AfterValidator(check_reservation)] | ReservationConfig | None = None
    """capacity reservation only: the reservation's name (projects/P/reservations/R for a shared one,
    either optionally followed by /reservationBlocks/B[/reservationSubBlocks/S]), or a mapping:
    {affinity: any} for any matching reservation, or {name, project, block, subBlock, zone, count,
    machineType, calendar} (docs/capacity-types.md, "Reservations")."""
    min_nodes: int | None = Field(None, ge=0, le=CLUSTER_NODES_MAX)
    """GPU and CPU pools; TPU node counts derive from the topology."""
    max_nodes: int | None = Field(None, ge=1, le=CLUSTER_NODES_MAX)
    zones: Zones = []
    """Node locations; default: the cluster's. TPU slices need exactly one zone."""
    max_run_duration: Duration | None = None
    """flexStart and queued only: how long a node may live, at most 7 days (e.g. '24h')."""
    gvnic: bool = False
    """Google Virtual NIC (recommended for GPU pools)."""
    labels: Labels = {}
    """Extra Kubernetes labels on the nodes."""
    taints: list[Taint] = []
    """Extra taints; flavors and sample workloads tolerate them."""
    upgrade: UpgradeSettings | None = None
    """How GKE replaces the nodes in an upgrade (surge or blueGreen); not for flexStart or queued pools."""
    auto_repair: bool | None = None
    """GKE recreates a node that fails health checks. Default: on, off for flexStart and queued pools."""
    auto_upgrade: bool = True
    """Always on: the cluster is in a release channel. Keep running jobs' nodes with a maintenance exclusion."""

    @field_validator("labels")
    @classmethod
    def _reserved_labels(cls, v: dict[str, str]) -> dict[str, str]:
        raise_all(
            RuleError(
                key,
                f"label {key!r} is in the {domain}/ domain, which Kubernetes, GKE or this program "
                "sets on nodes itself; a node pool may not set it (use your own domain, e.g. example.com/team)",
            )
            for key, domain in ((key, reserved_domain(key)) for key in v)
            if domain is not None
        )
        return v

    @field_validator("taints")
    @classmethod
    def _unique_taints(cls, v: list[Taint]) -> list[Taint]:
        # Unique by key and effect (core/v1 Node validation; Kueue's validateNodeTaints).
        keys = [(taint.key, taint.effect) for taint in v]
        raise_all(
            RuleError(i, f"taint {key}:{effect} is listed twice (taints are unique by key and effect)")
            for i, (key, effect) in enumerate(keys)
            if (key, effect) in keys[:i]
        )
        return v

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        """Every broken rule of the entry; a pool both tpu and gpu is that one mistake."""
        kinds = [k for k in ("tpu", "gpu") if getattr(self, k) is not None]
        if len(kinds) > 1:
            yield RuleError((), "a pool is either tpu or gpu (or a plain machineType for CPU), not both")
            return
        if not kinds and self.machine_type is None:
            # The other rules read what the pool runs (its machine type, its accelerator's
            # reservation features, its node counts' source): without it they are not rules
            # yet, and one of them read the machine type of nothing.
            yield RuleError((), "say what the pool runs: tpu, gpu (with machineType) or a machineType")
            return
        if self.tpu is not None:
            yield from self._tpu_rules()
        else:
            yield from self._node_count_rules()
        yield from self._taints_gke_sets()
        if self.gpu is not None:
            yield from self._gpu_rules()
        yield from self._capacity_rules()
        yield from self._management_rules()

    def _management_rules(self) -> Iterator[RuleError]:
        cap = self.capacity
        if self.upgrade is not None and cap in PROVISIONED_ON_DEMAND:
            # GKE docs concepts/node-pool-upgrade-strategies: "For nodes that use Flex-start VMs,
            # GKE uses short-lived upgrades"; the API's NodePoolUpdateStrategy SHORT_LIVED is "the
            # dedicated upgrade strategy for QueuedProvisioning and flex start node pools".
            yield RuleError(
                "upgrade",
                f"{cap} pools take no upgrade strategy: GKE upgrades their nodes with its short-lived strategy "
                "(their nodes are not upgraded in place); remove upgrade",
            )
        if self.auto_repair and cap in PROVISIONED_ON_DEMAND:
            # A repair recreates the node outside the request it belongs to; the policy pack's
            # mandatory pool-flex-queued-from-zero rule refuses it (gke_ai_batch/policy/rules/gke.py).
            yield RuleError(
                "autoRepair",
                f"{cap} pools run with auto-repair off: a repair would recreate a node outside the request it belongs to",
            )
        if not self.auto_upgrade:
            # The cluster is always enrolled in a release channel, and GKE refuses auto_upgrade=false
            # there ("Auto_upgrade cannot be false when release_channel ... is set").
            yield RuleError(
                "autoUpgrade",
                "GKE keeps node auto-upgrade on in a release channel (this program always enrolls the cluster); "
                "to keep a running job's nodes, add a cluster.maintenance exclusion with scope "
                "NO_MINOR_OR_NODE_UPGRADES",
            )

    @property
    def repaired(self) -> bool:
        """Whether GKE auto-repairs the pool's nodes: stated, or on except for flexStart and queued."""
        return self.capacity not in PROVISIONED_ON_DEMAND if self.auto_repair is None else self.auto_repair

    def _taints_gke_sets(self) -> Iterator[RuleError]:
        """A node's taints are unique by key and effect ("taints must be unique by key and
        effect pair": validateNodeTaints, k8s.io/kubernetes pkg/apis/core/validation/validation.go),
        and that includes the taints GKE puts on the pool's nodes itself (naming.gke_taints):
        the program writes the GPU one into the node config, GKE adds the TPU one."""
        theirs = {(t["key"], t["effect"]) for t in naming.gke_taints(self)}
        for i, taint in enumerate(self.taints):
            if (taint.key, taint.effect) in theirs:
                yield RuleError(
                    ("taints", i),
                    f"taint {taint.key}:{taint.effect} is one GKE puts on this pool's nodes already, and a "
                    "node's taints are unique by key and effect; remove it",
                )

    def _tpu_rules(self) -> Iterator[RuleError]:
        if self.machine_type is not None:
            yield RuleError("machineType", "TPU pools take their machine type from tpu.machineType")
        for key in ("min_nodes", "max_nodes"):
            if getattr(self, key) is not None:
                yield RuleError(
                    # The stack key: the alias the alias generator gives the field.
                    type(self).model_fields[key].alias or key,
                    "TPU node counts derive from tpu.topology (VMs per slice); remove this key",
                )
        if len(f"{self.name}-{self.slice_count - 1}") > GKE_NAME_MAX:
            yield RuleError(
                "name",
                f"{self.name!r} is too long: slice pools are named {self.name}-<i> and GKE allows "
                f"{GKE_NAME_MAX} characters",
            )

    def _gpu_rules(self) -> Iterator[RuleError]:
        gpu = self.gpu
        if self.machine_type is None:
            choices = catalogue.GPU_TYPES[gpu.type].machine_types
            options = [m for m, n in choices.items() if n == gpu.count]
            if len(options) != 1:
                yield RuleError(
                    "machineType",
                    f"required for {gpu.count} x {gpu.type}; choose one of: "
                    f"{', '.join(options or ['an n1-* machine type'])}",
                )
                return  # no machine type to check the GPUs against
        try:
            machines.check_gpu(gpu.type, gpu.count, self.node_machine_type)
        except catalogue.CatalogueError as e:
            yield RuleError("machineType", str(e))

    def _node_count_rules(self) -> Iterator[RuleError]:
        if self.slices is not None:
            yield RuleError("slices", "slices applies to TPU pools only; use minNodes/maxNodes")
        if self.max_nodes is None:
            yield RuleError("maxNodes", "required for GPU and CPU pools (the autoscaling ceiling)")
        elif self.min_nodes is not None and self.min_nodes > self.max_nodes:
            yield RuleError("minNodes", f"minNodes ({self.min_nodes}) exceeds maxNodes ({self.max_nodes})")
        if self.capacity in PROVISIONED_ON_DEMAND and self.min_nodes:
            yield RuleError(
                "minNodes", f"{self.capacity} pools scale from 0: GKE creates their nodes on request"
            )

    def _capacity_rules(self) -> Iterator[RuleError]:
        """One message per key: a reservation on flexStart is refused once, not also as "not
        reservation capacity"; maxRunDuration on the wrong capacity is not also measured."""
        cap = self.capacity
        if cap == "reservation" and not self.reservation:
            yield RuleError("reservation", "required with capacity reservation: the reservation's name")
        elif self.reservation and cap in PROVISIONED_ON_DEMAND:
            yield RuleError(
                "reservation",
                f"{cap} pools cannot consume a reservation (GKE requires reservation affinity NO_RESERVATION)",
            )
        elif self.reservation and cap == "spot":
            # Spot VMs consume no reservation: GoogleCloudPlatform/cluster-toolkit
            # modules/compute/gke-node-pool/main.tf refuses spot with any reservation affinity but
            # NO_RESERVATION ("Spot consumption option only works with ... NO_RESERVATION").
            yield RuleError(
                "reservation",
                "spot pools cannot consume a reservation (Spot VMs take reservation affinity NO_RESERVATION); "
                "use capacity reservation, or remove reservation",
            )
        elif self.reservation and cap != "reservation":
            yield RuleError("reservation", f"only with capacity reservation, not {cap}")
        elif self.reservation:
            yield from reservation_problems(self)
        if self.max_run_duration is not None:
            if cap not in PROVISIONED_ON_DEMAND:
                yield RuleError("maxRunDuration", f"only flexStart and queued pools take maxRunDuration, not {cap}")
            elif self.max_run_duration > SEVEN_DAYS:
                yield RuleError(
                    "maxRunDuration",
                    f"{self.max_run_duration.shown()} exceeds GKE's limit of "
                    f"{self.max_run_duration.limit(SEVEN_DAYS)} (7 days)",
                )
        if cap == "queued" and self.tpu is None and self.gpu is None:
            yield RuleError("capacity", "queued provisioning is for GPU and TPU pools")
        if cap == "flexStart" and self.tpu is None and self.gpu is None:
            yield RuleError("capacity", "flexStart is for GPU and TPU pools")

    @property
    def node_machine_type(self) -> str:
        """The machine type GKE creates: stated, or the only one the catalogue offers."""
        if self.tpu is not None:
            return self.tpu.slice.machine_type
        if self.machine_type is not None:
            return self.machine_type
        return catalogue.default_gpu_machine_type(self.gpu.type, self.gpu.count)

    @property
    def slice_count(self) -> int:
        return self.slices or 1

    @property
    def kind(self) -> Literal["tpu", "gpu", "cpu"]:
        return "tpu" if self.tpu else "gpu" if self.gpu else "cpu"

    @property
    def pool_names(self) -> list[str]:
        """The GKE node pools this entry becomes."""
        if self.tpu is not None:
            return [f"{self.name}-{i}" for i in range(self.slice_count)]
        return [self.name]
