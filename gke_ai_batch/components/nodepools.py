"""Node pools as components any Pulumi program can use, on a cluster it did not create:
TpuSlices (one node pool per slice), GpuPool and CpuPool, each X(name, args: XArgs, opts).

The cluster is passed as data (ClusterRef). Args are a stack file's pool entry by its field
names (snake_case), validated on construction by the entry's own model (NodePoolConfig) and the
same per-entry rules the stack runs (gke_ai_batch/config/checks/pools.py, pool_problems) on
the facts of the cluster (ClusterFacts): every problem at once, at its arg path. protect, the
provider and the parent come from `opts` through Pulumi's inheritance (a child's protect and
providers default to its parent's: pulumi/resource.py, Resource.__init__, "Infer protection
from parent" and "Infer providers ... from parent"), so nothing here sets them.

No `from __future__ import annotations`: Pulumi's component analyzer
(pulumi.provider.experimental.analyzer) reads these annotations as objects."""

from typing import Any, NotRequired, Self, TypedDict, cast

import pulumi
import pulumi_gcp as gcp
from pydantic import ValidationError

from gke_ai_batch.components.args import (
    child_options, not_strings, opts_problems, project_problems, type_token, unknown_keys, whole_numbers,
)
from gke_ai_batch.components.component import Component
from gke_ai_batch.components.queues import FlavorArgs
from gke_ai_batch.config.checks.flavors import flavor_limit_problems
from gke_ai_batch.config.checks.cluster import fact_problems
from gke_ai_batch.config.checks.pools import pool_problems
from gke_ai_batch.config.cluster import OUTPUT_ACCOUNT, ClusterConfig, region_of
from gke_ai_batch.config.errors import ARGS, NOT_AN_OUTPUT, ArgsError, at_arg, field_path, join_path, located
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.config.lookups import ClusterFacts, validated_cluster
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.flavors import FlavorPlan, PoolSpec, pool_spec
from gke_ai_batch.plan.pools import PoolPlan, plan_entry, workload_policy_args

# The type token all three components registered before they were a component package. A
# package's component must register the token its schema names, <package>:index:<Class> (the
# SDK's ComponentProvider.validate_resource_type accepts only the index module:
# pulumi/provider/experimental/component.py), so each registers its own with this one as an
# alias: the engine maps the old URNs of deployed stacks (and their children's) to the new, and
# `pulumi up` neither replaces nor re-parents a pool.
OLD_TYPE = "gke-ai-batch:nodepools:NodePoolGroup"


class ClusterRef(TypedDict):
    """A GKE Standard cluster, as data: one this program created (GkeCluster.ref()) or one
    that exists already.

    name, location and node_locations are plain: the pools' zones, the accelerator offer of
    those zones and the tpu7x workload policy's name (<cluster>-<pool>, which GCP limits to 63
    characters) are checked against them on construction, which an Output cannot be."""

    name: str
    """The cluster's GKE name."""
    location: str
    """Its region (a regional cluster) or zone."""
    project: pulumi.Input[str]
    """The Google Cloud project the cluster is in."""
    node_service_account: NotRequired[pulumi.Input[str]]
    """Email of the service account nodes run as; unset: the Compute Engine default account."""
    node_locations: NotRequired[list[str]]
    """The cluster's node zones: a pool's default zones (a TPU slice needs exactly one)."""
    release_channel: NotRequired[str]
    """RAPID, REGULAR (default) or STABLE: with min_master_version, the GKE version the
    flexStart and tpu7x version floors are checked against."""
    min_master_version: NotRequired[str]
    """The cluster's GKE minor (e.g. '1.34'); unset: the release channel's default."""
    version: NotRequired[str]
    """A cluster that exists already: its control plane's exact GKE version (e.g.
    '1.35.7-gke.1222000'), which the version floors are checked against; with endpoint."""
    endpoint: NotRequired[str]
    """A cluster that exists already: its DNS endpoint (gke-<id>.<region>.gke.goog)."""
    catalogue: NotRequired[dict[str, Any]]
    """Zones, accelerators and versions newer than the built-in catalogue, as the stack key
    gke-ai-batch:catalogue spells them (camelCase)."""
    mode: NotRequired[str]
    """standard (default) or autopilot, as the cluster was created: an Autopilot cluster has no
    node pools, so a pool on one is refused (GKE docs concepts/autopilot-overview)."""


class TaintArgs(TypedDict):
    key: str
    """A qualified name, e.g. example.com/dedicated."""
    value: NotRequired[str]
    """A label value (may be empty)."""
    effect: NotRequired[str]
    """NoSchedule (default), PreferNoSchedule or NoExecute."""


class UpgradeArgs(TypedDict):
    strategy: NotRequired[str]
    """surge (default) or blueGreen."""
    max_surge: NotRequired[int]
    """surge: extra nodes during the upgrade (GKE's default 1)."""
    max_unavailable: NotRequired[int]
    """surge: nodes down at once (GKE's default 0)."""
    soak: NotRequired[str]
    """blueGreen: how long the old nodes stay after draining, e.g. '1h'."""


class ReservationArgs(TypedDict):
    """A reservation as a mapping (docs/capacity-types.md, "Reservations")."""

    affinity: NotRequired[str]
    """specific (default) or any: any matching reservation, else on-demand."""
    name: NotRequired[str]
    """The reservation's name (specific)."""
    project: NotRequired[str]
    """The project that owns a shared reservation (it must share it with the cluster's)."""
    block: NotRequired[str]
    """One block of the reservation."""
    sub_block: NotRequired[str]
    """One sub-block of that block."""
    zone: NotRequired[str]
    """The reservation's zone: the pool's zones must be it."""
    count: NotRequired[int]
    """The VMs the reservation holds: the pool may not need more."""
    machine_type: NotRequired[str]
    """The reservation's machine type: the pool's must be the same."""
    calendar: NotRequired[bool]
    """A future reservation in calendar mode."""


class _PoolArgs(TypedDict):
    cluster: ClusterRef
    """The cluster the pools join, as data: GkeCluster.ref() or a ClusterRef of one that exists."""
    pool_name: NotRequired[str]
    """The GKE node pool name (a TPU slice's: <pool_name>-<i>); default: the component's name."""
    capacity: NotRequired[str]
    """onDemand (default), spot, reservation, flexStart or queued (docs/capacity-types.md)."""
    reservation: NotRequired[str]
    """capacity reservation: the reservation's name, or projects/P/reservations/R (either optionally
    with /reservationBlocks/B[/reservationSubBlocks/S])."""
    reservation_spec: NotRequired[ReservationArgs]
    """capacity reservation, instead of reservation: any matching one, or one with what it holds
    declared (the stack key's mapping form; Pulumi's component schema has no string-or-mapping type)."""
    max_run_duration: NotRequired[str]
    """flexStart and queued: how long a node may live, e.g. '24h' or '3600s' (at most 7 days)."""
    zones: NotRequired[list[str]]
    """The pool's zones; default: the cluster's node_locations."""
    labels: NotRequired[dict[str, str]]
    """Extra Kubernetes labels on the nodes (the flavor selects on them too)."""
    taints: NotRequired[list[TaintArgs]]
    """Extra taints; the flavor tolerates them."""
    gvnic: NotRequired[bool]
    """Google Virtual NIC on the nodes (recommended for GPU pools; GKE's default: off)."""
    upgrade: NotRequired[UpgradeArgs]
    """How GKE replaces the nodes in an upgrade; not for flexStart or queued (docs/maintenance.md)."""
    auto_repair: NotRequired[bool]
    """Default: on, off for flexStart and queued."""
    auto_upgrade: NotRequired[bool]
    """Always true: the cluster is in a release channel."""


class TpuSlicesArgs(_PoolArgs):
    """TPU slices of one shape and capacity. Every value is plain: version, topology and
    slices decide how many node pools exist and which (Pulumi cannot create a variable number of
    children from an Output), and the rest are checked against GKE's rules on construction."""

    version: str
    """TPU generation: v4, v5e, v5p, v6e or tpu7x."""
    topology: str
    """Slice topology: AxB (v5e, v6e) or AxBxC (v4, v5p, tpu7x)."""
    machine_type: NotRequired[str]
    """Overrides the default: the 4-chip type, or the 1-chip type for 1x1."""
    slices: NotRequired[int]
    """How many slices, one node pool each (default 1)."""


class GpuArgs(TypedDict):
    type: str
    """GKE accelerator type, e.g. nvidia-h100-80gb, nvidia-l4."""
    count: NotRequired[int]
    """GPUs per VM (default 1)."""
    driver_version: NotRequired[str]
    """default or latest."""


class GpuPoolArgs(_PoolArgs):
    """An autoscaling GPU pool. Plain values: the machine type and counts are checked against
    GKE's rules and the GPU catalogue on construction, and they size the pool's flavor."""

    gpu: GpuArgs
    """The GPUs of each node: type, count per VM, driver version."""
    machine_type: NotRequired[str]
    """Required where the GPU type and count fit several machine types."""
    min_nodes: NotRequired[int]
    """The autoscaling floor (default 0: the pool scales to zero when idle)."""
    max_nodes: int
    """The autoscaling ceiling."""


class CpuPoolArgs(_PoolArgs):
    """An autoscaling CPU pool (plain values, checked on construction)."""

    machine_type: str
    """The machine type of every node, e.g. n2-standard-8."""
    min_nodes: NotRequired[int]
    """The autoscaling floor (default 0: the pool scales to zero when idle)."""
    max_nodes: int
    """The autoscaling ceiling."""


class _NodePools(Component):
    """What the three pool components share: validate the args as a pool entry on the facts of
    its cluster, plan its GKE node pools (gke_ai_batch/plan/pools.py), register them."""

    # Class-level annotations are the component's outputs: Pulumi's component analyzer
    # (pulumi/provider/experimental/analyzer.py, Analyzer.analyze_type) turns every public one
    # into a schema output, so only Outputs are declared here; the Python-only attributes
    # (flavor, pools, config) are annotated where _register sets them.
    pool_names: pulumi.Output[list[str]]
    """The GKE node pools, in order (a TPU group's slices <pool_name>-0, -1, ...)."""
    node_labels: pulumi.Output[dict[str, str]]
    """The labels every node of the group carries that a Kueue ResourceFlavor may select on."""

    _kind = ""
    _args: type = _PoolArgs

    def __init__(self, name: str, args: Any, opts: pulumi.ResourceOptions | None = None):
        # Checked before anything registers: bad args leave no half-made component behind.
        args = whole_numbers(args)
        spec = _checked(type(self).__name__, name, self._kind, args, self._args, opts)
        self._register(name, spec, args["cluster"], opts)

    @classmethod
    def from_spec(cls, name: str, spec: PoolSpec, cluster: ClusterRef, opts: pulumi.ResourceOptions | None = None) -> Self:
        """The component for a pool entry the stack validated and planned already (the stack
        program's: gke_ai_batch/components/platform.py): registered as planned, not checked or
        planned again."""
        self = cls.__new__(cls)
        self._register(name, spec, cluster, opts)
        return self

    def _register(self, name: str, spec: PoolSpec, ref: ClusterRef, opts: pulumi.ResourceOptions | None) -> None:
        aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TYPE)])
        super().__init__(type_token(type(self)), name, None, pulumi.ResourceOptions.merge(opts, aliased))
        # The args as a validated pool entry.
        self.config: NodePoolConfig = spec.entry
        # The planned pools: VMs and chips per pool, the exact NodePool arguments.
        self.pools: list[PoolPlan] = list(spec.pools)
        # The ResourceFlavor of the group's nodes (plan/flavors.py, entry_flavor): data that a
        # ResourceFlavor and a ClusterQueue take (FlavorArgs, gke_ai_batch/components/queues.py).
        self.flavor: FlavorArgs = flavor_args(spec.flavor)
        self.workload_policy: gcp.compute.ResourcePolicy | None = None
        first = self.pools[0]
        if first.workload_policy is not None:
            self.workload_policy = gcp.compute.ResourcePolicy(
                child_name(name, self.config.name, first.workload_policy),
                project=ref["project"],
                **workload_policy_args(first, region_of(ref["location"])),
                # Fixed names: a replacement must delete the old one first.
                opts=child_options(self, opts, delete_before_replace=True),
            )
        self.node_pools: list[gcp.container.NodePool] = [
            self._node_pool(name, ref, pool, opts) for pool in self.pools
        ]
        self.pool_names = pulumi.Output.all(*[p.name for p in self.node_pools])
        self.node_labels = pulumi.Output.from_input(dict(self.flavor.get("node_labels", {})))
        self.register_outputs({"poolNames": self.pool_names, "nodeLabels": self.node_labels})

    # The return type quoted: evaluated at import, it would load pulumi_gcp.container (~0.2 s)
    # for stacks and programs that make no node pool.
    def _node_pool(self, name: str, ref: ClusterRef, pool: PoolPlan, opts) -> "gcp.container.NodePool":
        args = dict(pool.args)
        if "node_service_account" in ref:
            args["node_config"] = {**args["node_config"], "service_account": ref["node_service_account"]}
        if self.workload_policy is not None:
            # Same name as planned; the Output makes the pool wait for the policy.
            args["placement_policy"] = {**args["placement_policy"], "policy_name": self.workload_policy.name}
        return gcp.container.NodePool(
            # Children are named from the component's name: a TPU group's slices name-0, name-1...
            f"{name}-{pool.index}" if pool.tpu is not None else name,
            cluster=ref["name"],
            location=ref["location"],
            project=ref["project"],
            **args,
            opts=child_options(
                self,
                opts,
                # GKE names are fixed (Jobs select pools by name), so the default
                # create-before-delete would collide with the old pool; delete first.
                delete_before_replace=True,
                # The autoscaler owns the node count; initialNodeCount only matters at
                # creation and would otherwise force a replacement if GKE reports it back
                # differently.
                ignore_changes=["initialNodeCount", "nodeCount"] if pool.autoscaled else None,
                # A new slice shape is a new slice: the provider would update tpuTopology
                # or the machine type in place, which GKE cannot do to a TPU slice.
                replace_on_changes=["placementPolicy", "nodeConfig.machineType"] if pool.tpu else None,
            ),
        )


class TpuSlices(_NodePools):
    """TPU slices of one shape on a cluster: one node pool per slice, any capacity type."""

    _kind = "tpu"
    _args = TpuSlicesArgs

    def __init__(self, name: str, args: TpuSlicesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)


class GpuPool(_NodePools):
    """An autoscaling GPU node pool on a cluster, any capacity type."""

    _kind = "gpu"
    _args = GpuPoolArgs

    def __init__(self, name: str, args: GpuPoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)


class CpuPool(_NodePools):
    """An autoscaling CPU node pool on a cluster (onDemand, spot or reservation capacity)."""

    _kind = "cpu"
    _args = CpuPoolArgs

    def __init__(self, name: str, args: CpuPoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)


# The component of each kind of pool entry.
POOL_COMPONENTS: dict[str, type[_NodePools]] = {"tpu": TpuSlices, "gpu": GpuPool, "cpu": CpuPool}

# ClusterRef's keys that may be Outputs (they only pass through to resources), and the types of
# the rest, which are read on construction.
_REF_INPUTS = ("project", "node_service_account")
_REF_TYPES: dict[str, type] = {"node_locations": list, "catalogue": dict}


def _shape_problems(args: dict[str, Any], ref: dict[str, Any], spec: type) -> list[Finding]:
    """Values of the wrong kind, before they reach the rules: an Output where a value must be
    known when the component is built (it decides what is registered, or is checked against
    GKE's rules), a string where a list of zones is meant (it would be read letter by letter).
    An undeclared key is refused once, as unknown, and does not stop the rules."""
    found: list[Finding] = []
    for where, values, inputs, declared in (("args", args, ("cluster",), spec), ("args.cluster", ref, _REF_INPUTS, ClusterRef)):
        for key, value in values.items():
            if key not in declared.__required_keys__ | declared.__optional_keys__:
                continue
            if key in inputs:
                if where == "args.cluster":
                    # Outputs, or strings: an account or project given as a number would reach
                    # every node pool as one (a project's form is judged with the other rules).
                    found += not_strings(values, where, (), (key,))
                continue
            if isinstance(value, pulumi.Output):
                found.append(at_arg(f"{where}.{key}", NOT_AN_OUTPUT))
            elif where == "args.cluster":
                want = _REF_TYPES.get(key, str)
                if not isinstance(value, want) or (want is list and not all(isinstance(z, str) for z in value)):
                    found.append(at_arg(f"{where}.{key}", f"must be {'a list of zone names' if want is list else 'a mapping' if want is dict else 'a string'}, not {type(value).__name__}"))
    return found


def _checked(component: str, name: str, kind: str, args: Any, spec: type, opts: pulumi.ResourceOptions | None) -> PoolSpec:
    """The args as a pool entry on the facts of its cluster, validated and planned; ArgsError
    with every problem."""
    where = f"{component} {name}"
    if not isinstance(args, dict) or not isinstance(args.get("cluster"), dict):
        if isinstance(args, dict) and isinstance(args.get("cluster"), pulumi.Output):
            # Its zones, version and mode decide the pools and are checked now: a ClusterRef of
            # plain values (GkeCluster.ref() gives one), whose project and account may be Outputs.
            raise ArgsError(where, [at_arg("args.cluster", f"{NOT_AN_OUTPUT}: a ClusterRef mapping (GkeCluster.ref())")])
        raise ArgsError(where, [at_arg("args.cluster" if isinstance(args, dict) else "args", "required: a ClusterRef mapping")])
    ref = args["cluster"]
    unknown = opts_problems(opts) + unknown_keys(args, spec, "args") + unknown_keys(ref, ClusterRef, "args.cluster")
    if isinstance(args.get("gpu"), dict):
        unknown += unknown_keys(args["gpu"], GpuArgs, "args.gpu")
    if isinstance(args.get("reservation_spec"), dict):
        unknown += unknown_keys(args["reservation_spec"], ReservationArgs, "args.reservation_spec")
    if "reservation" in args and "reservation_spec" in args:
        unknown.append(at_arg("args.reservation_spec", "give reservation or reservation_spec, not both"))
    missing = [at_arg(f"args.cluster.{k}", "required") for k in ("name", "location", "project") if k not in ref]
    shape = _shape_problems(args, ref, spec)
    if missing or shape:
        raise ArgsError(where, unknown + missing + shape)
    missing += [at_arg(f"args.{k}", "required") for k in sorted(spec.__required_keys__ - {"cluster"}) if k not in args]
    unknown += project_problems(ref, "args.cluster", True)
    # The rest is judged without the unknown keys, so that every problem is said at once.
    known = spec.__required_keys__ | spec.__optional_keys__
    args = {k: v for k, v in args.items() if k in known}
    facts, problems = _cluster_facts(ref)
    entry, found = _as_entry(name, kind, args)
    problems += found
    if entry is not None and facts is not None:
        found = list(pool_problems(entry, facts))
        planned = spec_of(entry, facts) if not found else None
        if planned is not None and kind != "cpu":
            # The flavor the component hands out must be one Kueue takes (a stack's derived
            # flavors are checked as the stack's: config/checks/flavors.py).
            flavor = planned.flavor
            found += flavor_limit_problems((), "labels", "taints", flavor.name, flavor.node_labels, len(flavor.tolerations))
        problems += [at_arg(_arg_at(kind, field_path(NodePoolConfig, e.path), args), e.message) for e in found]
    if unknown or missing or problems:
        raise ArgsError(where, unknown + missing + problems)
    assert entry is not None and facts is not None
    return spec_of(entry, facts)


def spec_of(entry: NodePoolConfig, facts: ClusterFacts) -> PoolSpec:
    """A validated entry's GKE node pools and flavor."""
    return pool_spec(entry, plan_entry(entry, facts))


def flavor_args(flavor: FlavorPlan) -> FlavorArgs:
    """A planned flavor as the FlavorArgs a ResourceFlavor and a ClusterQueue take."""
    return cast(FlavorArgs, flavor.args())


# ClusterRef keys that are facts of the cluster: fields of the stack's cluster key, by name.
_REF_FACTS = ("name", "location", "node_locations", "release_channel", "min_master_version", "version", "endpoint", "mode")


def _cluster_facts(ref: dict[str, Any]) -> tuple[ClusterFacts | None, list[Finding]]:
    """The ClusterRef validated as a stack's cluster key (ClusterConfig, by field name) and
    catalogue key (CatalogueOverride, camelCase as the stack spells it) state a cluster, and
    judged by the stack's rules about its locations and version: the facts its pools' rules
    stand on, or None, and every problem at its arg path."""
    data = {key: ref[key] for key in _REF_FACTS if key in ref}
    if "version" in ref:
        # A cluster that exists: its declared facts, as a stack file's cluster.existing states them.
        data["existing"] = True
        if isinstance(ref.get("node_service_account"), (str, pulumi.Output)):
            data["node_service_account"] = declared_account(ref["node_service_account"])
    found, _, facts = validated_cluster(data, ref.get("catalogue") or {})
    problems = [at_arg(join_path("args", ("cluster", *loc)), msg) for loc, msg in found]
    if facts is None:
        return None, problems
    problems += [at_arg(join_path("args", ("cluster", *field_path(ClusterConfig, e.path))), e.message) for e in fact_problems(facts)]
    # The pools' rules run on facts with a problem too: each skips what a refused fact decides.
    return facts, problems


def declared_account(value: Any) -> Any:
    """A node service account as the rules read it: an Output (an account the same program
    creates) is one that is given, whose email only the deploy knows."""
    return OUTPUT_ACCOUNT if isinstance(value, pulumi.Output) else value


# Where a component's args and the pool entry they are differ in shape, not in case: the GKE
# name is pool_name, a TpuSlices' version, topology and machine_type sit under the entry's tpu,
# and the mapping form of a reservation is reservation_spec (a component schema has no
# string-or-mapping type). Every other arg is the entry's field of that name.
_TPU_KEYS = ("version", "topology", "machine_type")


def _as_entry(name: str, kind: str, args: dict[str, Any]) -> tuple[NodePoolConfig | None, list[Finding]]:
    """The args validated as the pool entry they are (by field name), or None and every problem
    at its arg path."""
    data: dict[str, Any] = {"name": args.get("pool_name", name)}
    for key, value in args.items():
        if key in ("cluster", "pool_name"):
            continue
        if kind == "tpu" and key in _TPU_KEYS:
            data.setdefault("tpu", {})[key] = value
        else:
            data["reservation" if key == "reservation_spec" else key] = value
    try:
        return NodePoolConfig.model_validate(data, by_alias=False, by_name=True), []
    except ValidationError as exc:
        # By name: an unknown key is named as written and offered the fields' names.
        return None, located(exc, NodePoolConfig, lambda loc: _arg_at(kind, loc, args), ARGS, by_name=True)


def _arg_at(kind: str, path: tuple, args: dict[str, Any]) -> str:
    """A key path of the pool entry by its fields' names (config/errors.py, field_path) -> the
    arg path it came from: the differences in shape above."""
    head, rest = (path[0], path[1:]) if path else (None, ())
    if head == "name":
        path = ("pool_name", *rest)
    elif head == "tpu" and kind == "tpu":
        path = rest
    elif head == "reservation" and "reservation_spec" in args:
        path = ("reservation_spec", *rest)
    return join_path("args", path)
