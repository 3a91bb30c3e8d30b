"""Kueue's objects as components any Pulumi program can use, each X(name, args: XArgs, opts):
ResourceFlavor (one flavor, e.g. a pool component's `flavor`), ProvisioningCheck (the
ProvisioningRequest admission check queued flavors admit through), ClusterQueue, and Team (a
namespace with its LocalQueues, NetworkPolicy and RBAC).

Flavors are data (FlavorArgs), so a queue can name the flavors of pools this program did not
create. Args mirror the stack file's keys in snake_case and are checked on construction by the
stack config's own rules (gke_ai_batch/config/standalone.py), every problem at once, at its arg
path; the manifests are planned by the stack program's own functions (gke_ai_batch/plan/kueue.py).
protect and the provider come from `opts` through Pulumi's inheritance; every child waits for
what `opts.depends_on` lists (the Kueue install, the flavors a queue names).

No `from __future__ import annotations`: Pulumi's component analyzer
(pulumi.provider.experimental.analyzer) reads these annotations as objects."""

import functools
import re
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s
from pydantic import ValidationError
from pydantic import alias_generators

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import type_token, unknown_keys, whole_numbers
from gke_ai_batch.config.batch import KueueConfig, QueueFlavor, QuotaLimits
from gke_ai_batch.config.errors import ArgsError, join_path, located_problems
from gke_ai_batch.config.standalone import flavor_entry_problems, queue_entry_problems, team_entries_problems

from gke_ai_batch.domain import catalogue
from gke_ai_batch.domain.naming import BUILTIN_NAMESPACES, child_name
from gke_ai_batch.plan import Plan, QueuePlan
from gke_ai_batch.plan.flavors import FlavorPlan, plan_flavors
from gke_ai_batch.plan.kueue import (
    cluster_queue_plan,
    local_queue_manifest,
    network_policy_manifests,
    pod_security_version,
    provisioning_check_manifests,
    team_namespaces,
)
from gke_ai_batch.plan.rbac import namespace_rbac_manifests

# The tokens the stack program registered before these were components of the package: its one
# Queues component held every flavor, check and queue (the stack program keeps it as their
# parent: gke_ai_batch/components/platform.py), and Team was a component of its own.
OLD_QUEUES_TYPE = "gke-ai-batch:queues:Queues"
OLD_TEAM_TYPE = "gke-ai-batch:queues:Team"


class TolerationArgs(TypedDict):
    key: NotRequired[str]
    """The taint key tolerated (empty with operator Exists: every taint)."""
    operator: NotRequired[str]
    """Equal (default) or Exists."""
    value: NotRequired[str]
    """The taint value tolerated (operator Equal)."""
    effect: NotRequired[str]
    """NoSchedule, PreferNoSchedule or NoExecute; unset: every effect."""


class FlavorArgs(TypedDict):
    """A Kueue ResourceFlavor as data: what a pool component's `flavor` is (TpuSlices,
    GpuPool), or a flavor of nodes this program does not manage."""

    name: str
    """The ResourceFlavor's name, which cluster queues refer to."""
    node_labels: NotRequired[dict[str, str]]
    """Labels the flavor's nodes carry; Kueue puts them in an admitted pod's nodeSelector."""
    tolerations: NotRequired[list[TolerationArgs]]
    """Tolerations for the nodes' taints; Kueue adds them to an admitted pod."""
    capacity: NotRequired[dict[str, int]]
    """What the nodes hold at their ceiling, per resource (accelerators in devices, cpu in
    millicores, memory in bytes): a cluster queue's default nominal quota."""
    queued: NotRequired[bool]
    """Queued provisioning (capacity queued, DWS): admits only through a ProvisioningCheck."""
    accelerator: NotRequired[str]
    """The accelerator resource the nodes hold (google.com/tpu or nvidia.com/gpu) when capacity
    does not say (nodes GKE creates on demand, a ComputeClass's): a queue lists the flavor after
    those without accelerators."""
    topology_name: NotRequired[str]
    """A Kueue Topology (a Topologies component's): Kueue places the flavor's pods by its levels."""


class ResourceFlavorArgs(FlavorArgs):
    """One ResourceFlavor: a pool component's `flavor`, or a FlavorArgs of your own."""


class QueueFlavorArgs(FlavorArgs):
    """A flavor of a cluster queue, in order of preference, with its quotas."""

    quotas: NotRequired[dict[str, Any]]
    """Per resource: a quantity (32, '256Gi') or {nominal, borrowing_limit, lending_limit};
    resources the flavor has capacity for default to all of it."""


class LabelSelectorRequirementArgs(TypedDict):
    key: str
    """The label key the requirement is about."""
    operator: str
    """In, NotIn, Exists or DoesNotExist."""
    values: NotRequired[list[str]]
    """The values for In and NotIn; empty for Exists and DoesNotExist."""


class LabelSelectorArgs(TypedDict):
    match_labels: NotRequired[dict[str, str]]
    """Labels a namespace must carry, each with this exact value."""
    match_expressions: NotRequired[list[LabelSelectorRequirementArgs]]
    """Requirements a namespace must meet, all of them."""


class BorrowWithinCohortArgs(TypedDict):
    policy: NotRequired[str]
    """Never (default) or LowerPriority."""
    max_priority_threshold: NotRequired[int]
    """Only workloads at or below this priority may be preempted to borrow."""


class PreemptionArgs(TypedDict):
    reclaim_within_cohort: NotRequired[str]
    """Never (default), LowerPriority or Any."""
    within_cluster_queue: NotRequired[str]
    """Never (default), LowerPriority or LowerOrNewerEqualPriority."""
    borrow_within_cohort: NotRequired[BorrowWithinCohortArgs]
    """Whether a workload may preempt others in its cohort to borrow quota, and up to which priority."""


class ClusterQueueArgs(TypedDict):
    """A Kueue ClusterQueue: a stack's clusterQueues entry in snake_case, its flavors as data.
    Plain values: they are checked by the stack's rules on construction and size the quotas."""

    flavors: list[QueueFlavorArgs]
    """In order of preference; none: a queue that admits nothing (a fleet worker's mirror)."""
    queue_name: NotRequired[str]
    """The ClusterQueue's name; default: the component's name."""
    cohort: NotRequired[str]
    """Queues of one cohort borrow each other's unused quota."""
    queueing_strategy: NotRequired[str]
    """BestEffortFIFO (default) or StrictFIFO."""
    namespace_selector: NotRequired[LabelSelectorArgs]
    """The namespaces whose LocalQueues may submit; unset: none (Kueue's default), {}: all."""
    preemption: NotRequired[PreemptionArgs]
    """Kueue's preemption policy, as ClusterQueue spec.preemption in snake_case."""
    fair_sharing_weight: NotRequired[str]
    """The queue's share when fair sharing is on (spec.fairSharing.weight, Kueue's default 1)."""
    stop_policy: NotRequired[str]
    """None, Hold or HoldAndDrain."""
    provisioning_check: NotRequired[str]
    """The ProvisioningRequest AdmissionCheck (a ProvisioningCheck's admission_check) its
    queued flavors admit through; required when one is queued."""
    admission_checks: NotRequired[list[str]]
    """Further AdmissionChecks for every flavor (a MultiKueue check)."""


class ProvisioningCheckArgs(TypedDict):
    """GKE's ProvisioningRequest admission check, once per cluster: queued (DWS) flavors admit
    through it once GKE has provisioned their nodes."""

    flavors: NotRequired[list[FlavorArgs]]
    """The queued flavors it serves: their accelerators are the config's managedResources."""
    admission_check: NotRequired[str]
    """The AdmissionCheck's name (default dws-prov), which cluster queues name."""
    request_config: NotRequired[str]
    """The ProvisioningRequestConfig's name (default dws-config)."""


class LocalQueueArgs(TypedDict):
    name: str
    """The LocalQueue's name: workloads name it in kueue.x-k8s.io/queue-name."""
    cluster_queue: str
    """The ClusterQueue it submits to."""


class TeamArgs(TypedDict):
    """A team namespace: a stack's teams entries of one namespace, in snake_case."""

    namespace: str
    """Created, unless it is one every cluster has (default), which is patched with its Pod
    Security labels only."""
    local_queues: list[LocalQueueArgs]
    """The LocalQueues in the namespace, each pointing at a ClusterQueue."""
    labels: NotRequired[dict[str, str]]
    """Extra labels on the Namespace."""
    groups: NotRequired[list[str]]
    """Google Groups bound to the team Role (Jobs, JobSets, reading pods, logs and queues); the
    cluster needs Google Groups for RBAC (its security group)."""
    pod_security: NotRequired[str]
    """restricted, baseline (default) or privileged."""
    pod_security_version: NotRequired[str]
    """The Pod Security Standards version enforced: 'latest' (default) or the cluster's minor,
    e.g. 'v1.34'."""
    network_policy: NotRequired[bool]
    """Deny ingress except from the namespace's own pods (default true; needs Dataplane V2)."""


def _opts(parent: pulumi.Resource, provider: k8s.Provider, depends_on: list[pulumi.Resource]) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=depends_on)


def depends_on_of(opts: pulumi.ResourceOptions | None) -> list[Any]:
    """What the component depends on: Pulumi's children do not wait for it, so each gets it."""
    depends = opts.depends_on if opts is not None else None
    return list(depends) if isinstance(depends, (list, tuple)) else ([depends] if depends is not None else [])


def _child(name: str, base: str, manifest: dict[str, Any]) -> str:
    return child_name(name, base, k8s_objects.resource_name(manifest))


# Memoized: a stack program's 32 queues over 7 flavors spell the same few keys a thousand times.
to_camel = functools.lru_cache(maxsize=None)(alias_generators.to_camel)
to_snake = functools.lru_cache(maxsize=None)(alias_generators.to_snake)


# Keys whose values are maps keyed by the user (label keys, resource names): neither camelCased
# on the way in nor snake_cased on the way back.
_USER_KEYS = ("quotas", "capacity", "node_labels", "match_labels", "labels")


def camel(value: Any) -> Any:
    """Args (snake_case) as the stack file spells them (camelCase), user keys kept."""
    if isinstance(value, dict):
        return {
            (to_camel(k) if isinstance(k, str) else k): (
                {r: camel(v) for r, v in val.items()} if k in _USER_KEYS and isinstance(val, dict) else camel(val)
            )
            for k, val in value.items()
        }
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def _arg_path(loc: tuple, renames: dict[str, str] | None = None) -> tuple:
    """A stack key path -> the arg it came from (snake_case; a user key as written)."""
    out: list = []
    for i, part in enumerate(loc):
        if isinstance(part, str) and not (i and loc[i - 1] in ("quotas", "capacity", "nodeLabels", "matchLabels", "labels")):
            part = (renames or {}).get(part, to_snake(part)) if i == 0 else to_snake(part)
        out.append(part)
    return tuple(out)


def _plain(where: str, args: Any, spec: type) -> dict[str, Any]:
    """Args as a mapping of plain values (an Output cannot be checked on construction), with
    whole-number floats as ints (a package caller's numbers arrive as doubles)."""
    if not isinstance(args, dict):
        raise ArgsError(where, [("args", f"must be a {spec.__name__} mapping, not {type(args).__name__}")])
    outputs = [(path, "must be a plain value known when the component is built, not an Output")
               for path in outputs_in(args, "args")]
    if outputs:
        raise ArgsError(where, outputs)
    return whole_numbers(args)


def outputs_in(value: Any, at: str) -> list[str]:
    """Where Outputs sit in nested args: the rules read every value on construction."""
    if isinstance(value, pulumi.Output):
        return [at]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in outputs_in(v, join_path(at, (str(k),)))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in outputs_in(v, f"{at}[{i}]")]
    return []


def _located(model: type, data: dict[str, Any]) -> list[tuple[tuple, str]]:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return located_problems(exc, model)
    return []


def _flavor_problems(flavor: Any, at: str, spec: type) -> list[tuple[str, str]]:
    """A FlavorArgs (or QueueFlavorArgs) checked as a stack's flavors entry, plus its capacity."""
    if not isinstance(flavor, dict):
        return [(at, f"must be a FlavorArgs mapping (e.g. a pool component's flavor), not {type(flavor).__name__}")]
    problems = unknown_keys(flavor, spec, at)
    if "name" not in flavor:
        return problems + [(f"{at}.name", "required")]
    entry = camel({k: flavor[k] for k in ("name", "node_labels", "tolerations", "topology_name") if k in flavor})
    tolerations = flavor.get("tolerations")
    count = len(tolerations) if isinstance(tolerations, list) else 0
    problems += [(join_path(at, _arg_path(loc)), msg) for loc, msg in flavor_entry_problems(entry, count)]
    capacity = flavor.get("capacity", {})
    if not isinstance(capacity, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in capacity.values()
    ):
        problems.append((f"{at}.capacity", "must map resource names to whole amounts of 0 or more"))
    else:
        # Its resources become a queue's coveredResources, whose names the quotas' rule checks.
        names = {"name": flavor["name"], "quotas": {k: 0 for k in capacity}}
        problems += [(join_path(f"{at}.capacity", loc[1:]), msg) for loc, msg in _located(QueueFlavor, names)]
    if not isinstance(flavor.get("queued", False), bool):
        problems.append((f"{at}.queued", "must be true or false"))
    accelerators = (catalogue.TPU_RESOURCE, catalogue.GPU_RESOURCE)
    if "accelerator" in flavor and flavor["accelerator"] not in accelerators:
        problems.append((f"{at}.accelerator", f"{flavor['accelerator']!r} is not an accelerator resource; allowed: {', '.join(accelerators)}"))
    return problems


class ResourceFlavor(Component):
    """One Kueue ResourceFlavor (kueue.x-k8s.io/v1beta2): node labels, tolerations."""

    flavor_name: pulumi.Output[str]
    """The ResourceFlavor's name."""

    def __init__(self, name: str, args: ResourceFlavorArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"ResourceFlavor {name}"
        args = _plain(where, args, ResourceFlavorArgs)
        problems = _flavor_problems(args, "args", ResourceFlavorArgs)
        if problems:
            raise ArgsError(where, problems)
        super().__init__(type_token(ResourceFlavor), name, None, opts)
        # The flavor as planned: its manifest is the stack program's.
        self.plan: FlavorPlan = FlavorPlan.from_args(args)
        manifest = self.plan.manifest()
        self.resource = k8s_objects.apply(
            manifest, pulumi.ResourceOptions(parent=self, depends_on=depends_on_of(opts)), name=_child(name, self.plan.name, manifest)
        )
        self.flavor_name = pulumi.Output.from_input(self.plan.name)
        self.register_outputs({"flavorName": self.flavor_name})


_KUEUE_DEFAULTS = KueueConfig()


class ProvisioningCheck(Component):
    """GKE's ProvisioningRequest admission check (Dynamic Workload Scheduler): a
    ProvisioningRequestConfig and the AdmissionCheck that names it, once per cluster. A
    ClusterQueue with a queued flavor names it in `provisioning_check`."""

    admission_check: pulumi.Output[str]
    """The AdmissionCheck's name."""

    def __init__(self, name: str, args: ProvisioningCheckArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"ProvisioningCheck {name}"
        args = _plain(where, args, ProvisioningCheckArgs)
        problems = unknown_keys(args, ProvisioningCheckArgs, "args")
        flavors = args.get("flavors", [])
        if not isinstance(flavors, list):
            problems.append(("args.flavors", "must be a list of FlavorArgs"))
            flavors = []
        for j, flavor in enumerate(flavors):
            problems += _flavor_problems(flavor, f"args.flavors[{j}]", FlavorArgs)
        # The names are Kueue config's keys: checked by their rules, defaulting as they do.
        names = {"admission_check": "provisioningAdmissionCheck", "request_config": "provisioningRequestConfig"}
        given = {names[k]: args[k] for k in names if k in args}
        back = {v: k for k, v in names.items()}
        problems += [(join_path("args", (back.get(loc[0], loc[0]), *loc[1:])), msg)
                     for loc, msg in _located(KueueConfig, given)]
        if problems:
            raise ArgsError(where, problems)
        super().__init__(type_token(ProvisioningCheck), name, None, opts)
        check = args.get("admission_check", _KUEUE_DEFAULTS.provisioning_admission_check)
        config = args.get("request_config", _KUEUE_DEFAULTS.provisioning_request_config)
        queued = [FlavorPlan.from_args(f) for f in flavors]
        # The AdmissionCheck names its ProvisioningRequestConfig: created after it.
        self.resources: list[pulumi.Resource] = []
        for manifest in provisioning_check_manifests(check, config, queued):
            self.resources.append(
                k8s_objects.apply(
                    manifest,
                    pulumi.ResourceOptions(parent=self, depends_on=[*depends_on_of(opts), *self.resources]),
                    name=_child(name, check, manifest),
                )
            )
        self.admission_check = pulumi.Output.from_input(check)
        self.register_outputs({"admissionCheck": self.admission_check})


class ClusterQueue(Component):
    """One Kueue ClusterQueue over flavors given as data, quotas defaulting to the flavors'
    capacity, as the stack program plans them."""

    queue_name: pulumi.Output[str]
    """The ClusterQueue's name."""

    def __init__(self, name: str, args: ClusterQueueArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"ClusterQueue {name}"
        args = _plain(where, args, ClusterQueueArgs)
        problems = unknown_keys(args, ClusterQueueArgs, "args")
        flavors = args.get("flavors")
        if not isinstance(flavors, list):
            problems.append(("args.flavors", "required: a list of flavors (e.g. a pool component's flavor)"))
            flavors = []
        for j, flavor in enumerate(flavors):
            problems += _flavor_problems(flavor, f"args.flavors[{j}]", QueueFlavorArgs)
        if problems:
            raise ArgsError(where, problems)
        queue_name = args.get("queue_name", name)
        keys = ("cohort", "queueing_strategy", "namespace_selector", "preemption", "fair_sharing_weight", "stop_policy")
        entry = camel({"name": queue_name, **{k: args[k] for k in keys if k in args}})
        entry["flavors"] = [camel({k: f[k] for k in ("name", "quotas") if k in f}) for f in flavors]
        planned = [FlavorPlan.from_args(f) for f in flavors]
        queue, found = queue_entry_problems(entry, {f.name: f.accelerator_resource is not None for f in planned})
        problems += [(join_path("args", _arg_path(loc, {"name": "queue_name"})), msg) for loc, msg in found]
        queued = [f.name for f in planned if f.queued]
        if queued and "provisioning_check" not in args:
            # A queued-provisioning node pool gets nodes only through a ProvisioningRequest, which
            # Kueue creates for a workload only through a ProvisioningRequest admission check
            # (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest, "Create
            # the Kueue objects": the AdmissionCheck with controllerName
            # kueue.x-k8s.io/provisioning-request); without one its jobs never get nodes.
            problems.append((
                "args.provisioning_check",
                f"flavor {', '.join(map(repr, queued))} is queued (DWS): its nodes come only through a "
                "ProvisioningRequest; name the admission check of a ProvisioningCheck",
            ))
        checks = args.get("admission_checks", [])
        named = [(("provisioning_check",), args["provisioning_check"])] if "provisioning_check" in args else []
        if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
            problems.append(("args.admission_checks", "must be a list of AdmissionCheck names"))
        else:
            named += [(("admission_checks", k), c) for k, c in enumerate(checks)]
        # Each names an AdmissionCheck, whose name is a Kubernetes name: one that is not could never
        # exist, and the queue would stay inactive. Checked as the stack's
        # kueue.provisioningAdmissionCheck is (a ProvisioningCheck's admission_check).
        problems += [(join_path("args", (*at, *loc[1:])), msg)
                     for at, check in named for loc, msg in _located(KueueConfig, {"provisioningAdmissionCheck": check})]
        if problems or queue is None:
            raise ArgsError(where, problems)
        super().__init__(type_token(ClusterQueue), name, None, opts)
        selector = queue.namespace_selector.model_dump(by_alias=True, exclude_defaults=True) if queue.namespace_selector else None
        self.plan = cluster_queue_plan(
            queue,
            list(zip(queue.flavors, planned)),
            selector,
            provisioning_check=args.get("provisioning_check"),
            admission_checks=tuple(checks),
            idle=not flavors,
        )
        self.resource = k8s_objects.apply(
            self.plan.manifest,
            pulumi.ResourceOptions(parent=self, depends_on=depends_on_of(opts)),
            name=_child(name, queue_name, self.plan.manifest),
        )
        self.queue_name = pulumi.Output.from_input(queue_name)
        self.register_outputs({"queueName": self.queue_name})


# "<VERSION> must be a valid Kubernetes minor version, or latest"
# (https://kubernetes.io/docs/concepts/security/pod-security-admission/#pod-security-admission-labels-for-namespaces).
_POD_SECURITY_VERSION_RX = re.compile(r"latest|v1\.(0|[1-9][0-9]*)", re.ASCII)


class Team(Component):
    """A team's namespace (created, or for one every cluster has, patched with its Pod Security
    labels), its NetworkPolicy, its LocalQueues, and the Role and RoleBinding of its Google
    Groups."""

    namespace: pulumi.Output[str]
    """The team's namespace."""
    local_queues: pulumi.Output[list[str]]
    """Its LocalQueues, in the args' order."""

    def __init__(self, name: str, args: TeamArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"Team {name}"
        args = _plain(where, args, TeamArgs)
        problems = unknown_keys(args, TeamArgs, "args")
        queues = args.get("local_queues")
        if not isinstance(queues, list) or not queues:
            problems.append(("args.local_queues", "required: at least one {name, cluster_queue}"))
            queues = []
        for i, q in enumerate(queues):
            if not isinstance(q, dict):
                problems.append((f"args.local_queues[{i}]", "must be a {name, cluster_queue} mapping"))
            else:
                problems += unknown_keys(q, LocalQueueArgs, f"args.local_queues[{i}]")
        groups = args.get("groups", [])
        if not isinstance(groups, list):
            problems.append(("args.groups", "must be a list of Google Group emails"))
            groups = []
        if problems:
            raise ArgsError(where, problems)
        shared = camel({k: args[k] for k in ("namespace", "labels", "pod_security", "network_policy") if k in args})
        # One teams entry per LocalQueue, each checked by the stack's rules and reported at its
        # arg; the groups as the first entry's (a stack names a team's group on its entry).
        entries = [{**shared, "localQueue": q.get("name"), "clusterQueue": q.get("cluster_queue")} for q in queues]
        teams, found = team_entries_problems(entries, groups)
        seen: set[tuple[str, str]] = set()
        for loc, msg in found:
            if loc[0] == "groups":
                problem = (join_path("args", loc), msg)
            else:
                i, key, rest = loc[1], loc[2], loc[3:]
                renames = {"localQueue": "name", "clusterQueue": "cluster_queue"}
                path = ("local_queues", i, renames[key], *rest) if key in renames else _arg_path((key, *rest))
                problem = (join_path("args", path), msg.replace(f"teams[{i}].", ""))
            if problem not in seen:  # the namespace's keys are every entry's
                seen.add(problem)
                problems.append(problem)
        version = args.get("pod_security_version", "latest")
        if not isinstance(version, str) or not _POD_SECURITY_VERSION_RX.fullmatch(version):
            problems.append(("args.pod_security_version", f"{version!r} is not 'latest' or a Kubernetes minor such as 'v1.34'"))
        if problems or teams is None:
            raise ArgsError(where, problems)
        super().__init__(type_token(Team), name, None, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TEAM_TYPE)])))
        mine = teams[: len(queues)]
        ns = mine[0].namespace
        waits = depends_on_of(opts)
        manifest = team_namespaces(mine, version)[ns]
        # A namespace every cluster has is patched: its Pod Security level must be in place
        # before any workload's pods are created.
        self.namespace_object: pulumi.Resource = k8s_objects.apply(
            manifest,
            pulumi.ResourceOptions(parent=self, depends_on=waits),
            patch=ns in BUILTIN_NAMESPACES,
            name=_child(name, ns, manifest),
        )
        after_ns = [*waits, self.namespace_object]
        self.network_policy: pulumi.Resource | None = None
        for policy in network_policy_manifests(mine):
            self.network_policy = k8s_objects.apply(
                policy, pulumi.ResourceOptions(parent=self, depends_on=after_ns), name=_child(name, ns, policy)
            )
        self.queue_objects: dict[str, pulumi.Resource] = {}
        for team in mine:
            lq = local_queue_manifest(ns, team.local_queue, team.cluster_queue)
            self.queue_objects[team.local_queue] = k8s_objects.apply(
                lq, pulumi.ResourceOptions(parent=self, depends_on=after_ns), name=_child(name, ns, lq)
            )
        # Role first, then the RoleBinding that names it; both inside the namespace.
        self.rbac: list[pulumi.Resource] = []
        for rbac in namespace_rbac_manifests(ns, list(dict.fromkeys(groups))) if groups else []:
            self.rbac.append(
                k8s_objects.apply(
                    rbac, pulumi.ResourceOptions(parent=self, depends_on=[*after_ns, *self.rbac]), name=_child(name, ns, rbac)
                )
            )
        self.namespace = pulumi.Output.from_input(ns)
        self.local_queues = pulumi.Output.from_input(list(self.queue_objects))
        self.register_outputs({"namespace": self.namespace, "localQueues": self.local_queues})


def _snake_keys(value: Any, user: bool = False) -> Any:
    """A stack's camelCase mapping as args (snake_case), user keys kept: the inverse of camel."""
    if isinstance(value, dict):
        if user:
            return dict(value)
        return {to_snake(k): _snake_keys(v, to_snake(k) in _USER_KEYS) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


def queue_flavors(plan: Plan) -> dict[str, FlavorPlan]:
    """The flavors as the plan's queues were planned over them: a fleet manager's carry their
    workers' capacity only after its queues are planned with quotas of their own
    (gke_ai_batch/plan/fleet.py)."""
    return {f.name: f for f in plan_flavors(plan.config, plan.pools)}


def stack_queue_args(plan: Plan, queue: QueuePlan, flavors: dict[str, FlavorPlan]) -> dict[str, Any]:
    """The args the stack program gives the ClusterQueue of one of its planned queues: the
    stack's entry in snake_case, its `flavors` (queue_flavors), its namespace selector as
    planned (the stack's default is its teams' namespaces)."""
    cfg = plan.config
    cq = queue.config
    entries = {e.name: e for e in cq.flavors}
    args: dict[str, Any] = cq.model_dump(exclude_unset=True, exclude={"name", "flavors", "namespace_selector"})
    args["queue_name"] = cq.name
    args["flavors"] = []
    for name in queue.flavors:
        flavor = flavors[name].args()
        if name in entries and entries[name].quotas:
            flavor["quotas"] = {
                r: q.model_dump(exclude_unset=True) if isinstance(q, QuotaLimits) else q
                for r, q in entries[name].quotas.items()
            }
        args["flavors"].append(flavor)
    selector = queue.manifest["spec"].get("namespaceSelector")
    if selector is not None:
        args["namespace_selector"] = _snake_keys(selector)
    queued = any(flavors[n].queued for n in queue.flavors)
    checks = list(queue.admission_checks)
    if queued:
        args["provisioning_check"] = cfg.kueue.provisioning_admission_check
        checks.remove(cfg.kueue.provisioning_admission_check)
    if checks:
        args["admission_checks"] = checks
    return args


def stack_team_args(plan: Plan, namespace: str) -> dict[str, Any]:
    """The args of the Team the stack program registers for one team namespace: its teams
    entries, one LocalQueue each."""
    teams = [t.config for t in plan.teams if t.namespace == namespace]
    labels: dict[str, str] = {}
    for t in teams:
        labels.update(t.labels)
    args: dict[str, Any] = {
        "namespace": namespace,
        "local_queues": [{"name": t.local_queue, "cluster_queue": t.cluster_queue} for t in teams],
        "pod_security": teams[0].pod_security,
        "pod_security_version": pod_security_version(plan.config),
        "network_policy": teams[0].network_policy,
    }
    if labels:
        args["labels"] = labels
    groups = list(dict.fromkeys(t.group for t in teams if t.group is not None))
    if groups:
        args["groups"] = groups
    return args
