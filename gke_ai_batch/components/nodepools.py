"""Node pools as components any Pulumi program can use, on a cluster it did not create:
TpuSlices (one node pool per slice), GpuPool and CpuPool, each X(name, args: XArgs, opts).

The cluster is passed as data (ClusterRef). Args mirror a stack file's pool entry in
snake_case and are checked on construction by the stack config's own rules
(gke_ai_batch/config/standalone.py), every problem at once, at its arg path. protect, the
provider and the parent come from `opts` through Pulumi's inheritance (a child's protect and
providers default to its parent's: pulumi/resource.py, Resource.__init__, "Infer protection
from parent" and "Infer providers ... from parent"), so nothing here sets them.

No `from __future__ import annotations`: Pulumi's component analyzer
(pulumi.provider.experimental.analyzer) reads these annotations as objects."""

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp
from pydantic.alias_generators import to_camel

from gke_ai_batch.components.args import (
    child_options, not_strings, opts_problems, project_problems, snake, type_token, unknown_keys, whole_numbers,
)
from gke_ai_batch.components.component import Component
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.config.errors import ArgsError, join_path
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.config.standalone import OUTPUT_ACCOUNT, pool_on_cluster
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.flavors import plan_flavors
from gke_ai_batch.plan.pools import PoolPlan, plan_pools, workload_policy_args

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


# Args that are not keys of the pool entry, and TpuSlices' keys that sit under the entry's tpu.
_NOT_ENTRY_KEYS = ("cluster", "pool_name")
_TPU_KEYS = ("version", "topology", "machine_type")


class _NodePools(Component):
    """What the three pool components share: check the args as a stack entry, plan the pools
    as the stack program does (gke_ai_batch/plan/pools.py), register them."""

    # Class-level annotations are the component's outputs: Pulumi's component analyzer
    # (pulumi/provider/experimental/analyzer.py, Analyzer.analyze_type) turns every public one
    # into a schema output, so only Outputs are declared here; the Python-only attributes
    # (flavor, pools, config) are annotated where __init__ sets them.
    pool_names: pulumi.Output[list[str]]
    """The GKE node pools, in order (a TPU group's slices <pool_name>-0, -1, ...)."""
    node_labels: pulumi.Output[dict[str, str]]
    """The labels every node of the group carries that a Kueue ResourceFlavor may select on."""

    _kind = ""
    _args: type = _PoolArgs

    def __init__(self, name: str, args: Any, opts: pulumi.ResourceOptions | None = None):
        # Checked before anything registers: bad args leave no half-made component behind.
        args = whole_numbers(args)
        stack = _checked(type(self).__name__, name, self._kind, args, self._args, opts)
        aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TYPE)])
        super().__init__(type_token(type(self)), name, None, pulumi.ResourceOptions.merge(opts, aliased))
        ref: ClusterRef = args["cluster"]
        # The args as a validated stack entry.
        self.config: NodePoolConfig = stack.node_pools[0]
        # The planned pools: VMs and chips per pool, the exact NodePool arguments.
        self.pools: list[PoolPlan] = plan_pools(stack)
        flavors = plan_flavors(stack, self.pools)
        # The ResourceFlavor derived for the group (TPU and GPU; None for CPU), as the stack
        # program derives one per accelerator shape and capacity: a FlavorArgs
        # (gke_ai_batch/components/queues.py), data that a ResourceFlavor and a ClusterQueue take.
        self.flavor: dict[str, Any] | None = flavors[0].args() if flavors else None
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
        self.node_labels = pulumi.Output.from_input(dict(self.flavor["node_labels"]) if self.flavor else {})
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


# ClusterRef's keys that may be Outputs (they only pass through to resources), and the types of
# the rest, which are read on construction.
_REF_INPUTS = ("project", "node_service_account")
_REF_TYPES: dict[str, type] = {"node_locations": list, "catalogue": dict}


def _shape_problems(args: dict[str, Any], ref: dict[str, Any]) -> list[tuple[str, str]]:
    """Values of the wrong kind, before they reach the rules: an Output where a value must be
    known when the component is built (it decides what is registered, or is checked against
    GKE's rules), a string where a list of zones is meant (it would be read letter by letter)."""
    found = []
    for where, values, inputs in (("args", args, ("cluster",)), ("args.cluster", ref, _REF_INPUTS)):
        for key, value in values.items():
            if key in inputs:
                if where == "args.cluster":
                    # Outputs, or strings: an account or project given as a number would reach
                    # every node pool as one (a project's form is judged with the other rules).
                    found += not_strings(values, where, (), (key,))
                continue
            if isinstance(value, pulumi.Output):
                found.append((f"{where}.{key}", "must be a plain value known when the component is built, not an Output"))
            elif where == "args.cluster":
                want = _REF_TYPES.get(key, str)
                if not isinstance(value, want) or (want is list and not all(isinstance(z, str) for z in value)):
                    found.append((f"{where}.{key}", f"must be {'a list of zone names' if want is list else 'a mapping' if want is dict else 'a string'}, not {type(value).__name__}"))
    return found


def _checked(component: str, name: str, kind: str, args: Any, spec: type, opts: pulumi.ResourceOptions | None) -> StackConfig:
    """The args as a one-pool stack on their cluster, validated; ArgsError with every problem."""
    where = f"{component} {name}"
    if not isinstance(args, dict) or not isinstance(args.get("cluster"), dict):
        raise ArgsError(where, [("args.cluster" if isinstance(args, dict) else "args", "required: a ClusterRef mapping")])
    ref = args["cluster"]
    unknown = opts_problems(opts) + unknown_keys(args, spec, "args") + unknown_keys(ref, ClusterRef, "args.cluster")
    if isinstance(args.get("gpu"), dict):
        unknown += unknown_keys(args["gpu"], GpuArgs, "args.gpu")
    if isinstance(args.get("reservation_spec"), dict):
        unknown += unknown_keys(args["reservation_spec"], ReservationArgs, "args.reservation_spec")
    if "reservation" in args and "reservation_spec" in args:
        unknown.append(("args.reservation_spec", "give reservation or reservation_spec, not both"))
    missing = [(f"args.cluster.{k}", "required") for k in ("name", "location", "project") if k not in ref]
    shape = _shape_problems(args, ref)
    if missing or shape:
        raise ArgsError(where, unknown + missing + shape)
    missing += [(f"args.{k}", "required") for k in sorted(spec.__required_keys__ - {"cluster"}) if k not in args]
    unknown += project_problems(ref, "args.cluster", True)
    # The rest is judged without the unknown keys, so that every problem is said at once.
    known = spec.__required_keys__ | spec.__optional_keys__
    args = {k: v for k, v in args.items() if k in known}
    cluster = {"name": ref["name"], "location": ref["location"], "nodeLocations": list(ref.get("node_locations", []))}
    for key in ("release_channel", "min_master_version", "version", "endpoint", "mode"):
        if key in ref:
            cluster[to_camel(key)] = ref[key]
    if "version" in ref:
        # A cluster that exists: its declared facts, as a stack file's cluster.existing states them.
        cluster["existing"] = True
        if isinstance(ref.get("node_service_account"), (str, pulumi.Output)):
            cluster["nodeServiceAccount"] = declared_account(ref["node_service_account"])
    stack, problems = pool_on_cluster(cluster, _entry(name, kind, args), ref.get("catalogue"))
    if unknown or missing or problems:
        spec = "reservation_spec" in args
        raise ArgsError(
            where, unknown + missing + [(join_path("args", _arg_path(kind, loc, spec)), msg) for loc, msg in problems]
        )
    return stack


def declared_account(value: Any) -> Any:
    """A node service account as the rules read it: an Output (an account the same program
    creates) is one that is given, whose email only the deploy knows."""
    return OUTPUT_ACCOUNT if isinstance(value, pulumi.Output) else value


def _entry(name: str, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    """The pool entry a stack file would hold for these args (camelCase keys)."""
    entry: dict[str, Any] = {"name": args.get("pool_name", name)}
    for key, value in args.items():
        if key in _NOT_ENTRY_KEYS:
            continue
        if kind == "tpu" and key in _TPU_KEYS:
            entry.setdefault("tpu", {})[to_camel(key)] = value
        elif key == "reservation_spec":
            entry["reservation"] = _camel_keys(value)
        elif key in ("gpu", "taints", "upgrade"):
            entry[key] = _camel_keys(value)
        else:
            entry[to_camel(key)] = value
    return entry


def _camel_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {to_camel(k) if isinstance(k, str) else k: v for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def _arg_path(kind: str, loc: tuple, reservation_spec: bool = False) -> tuple:
    """A stack key path of the one-pool stack -> the arg it came from (snake_case)."""
    head, rest = (loc[0], loc[1:]) if loc else (None, ())
    if head == "cluster":
        return ("cluster", *snake(rest))
    if head == "catalogue":
        return ("cluster", "catalogue", *rest)
    if head != "nodePools" or len(rest) < 2:
        return ()
    rest = rest[1:]
    if rest[0] == "name":
        return ("pool_name",)
    if kind == "tpu" and rest[0] == "tpu":
        rest = rest[1:]
    if rest and rest[0] == "labels":
        return ("labels", *rest[1:])  # label keys are the user's, not snake-cased
    if rest and rest[0] == "reservation" and reservation_spec:
        return ("reservation_spec", *snake(rest[1:]))
    return snake(rest)


def stack_pool_args(entry: NodePoolConfig, cluster: ClusterRef) -> tuple[type[_NodePools], dict[str, Any]]:
    """The component and args the stack program builds for one of its pool entries: the entry's
    keys as set in the stack file, in snake_case (gke_ai_batch/components/platform.py)."""
    data = entry.model_dump(exclude_unset=True, exclude={"name", "tpu", "taints"})
    args: dict[str, Any] = {"cluster": cluster, "pool_name": entry.name, **data}
    if entry.tpu is not None:
        args.update(entry.tpu.model_dump(exclude_unset=True))
    if "max_run_duration" in data:
        args["max_run_duration"] = f"{int(data['max_run_duration'])}s"
    if "taints" in entry.model_fields_set:
        args["taints"] = [t.model_dump(exclude_unset=True) for t in entry.taints]
    if isinstance(data.get("reservation"), dict):
        args["reservation_spec"] = args.pop("reservation")
    kind = {"tpu": TpuSlices, "gpu": GpuPool, "cpu": CpuPool}[entry.kind]
    return kind, args
