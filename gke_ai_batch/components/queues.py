"""Kueue's objects as components any Pulumi program can use, each X(name, args: XArgs, opts):
ResourceFlavor (one flavor, e.g. a pool component's `flavor`), ProvisioningCheck (the
ProvisioningRequest admission check queued flavors admit through), ClusterQueue, and Team (a
namespace with its LocalQueues, NetworkPolicy and RBAC).

Flavors are data (FlavorArgs), so a queue can name the flavors of pools this program did not
create. Args are a stack file's entry by its field names (snake_case): each component validates
them with the entry's own model, by name (FlavorConfig, ClusterQueueConfig, TeamConfig), and runs
the stack's rules for one entry (gke_ai_batch/config/checks/: flavors, queues, teams) on them,
every problem at once, at its arg path; the manifests are planned by the stack program's own
functions (gke_ai_batch/plan/kueue.py). The stack program hands each its plan's spec instead
(from_spec): registered as planned, not checked or planned again. protect and the provider come
from `opts` through Pulumi's inheritance; every child waits for what `opts.depends_on` lists (the
Kueue install, the flavors a queue names).

No `from __future__ import annotations`: Pulumi's component analyzer
(pulumi.provider.experimental.analyzer) reads these annotations as objects."""

import re
from functools import partial
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi

from gke_ai_batch.components.component import Planned
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import depends_on_of, entry_rules, type_token, unknown_keys, validated, whole_numbers
from gke_ai_batch.config.batch import ClusterQueueConfig, FlavorConfig, KueueConfig, QueueFlavor, TeamConfig
from gke_ai_batch.config.checks.flavors import flavor_limit_problems
from gke_ai_batch.config.checks.queues import cluster_queue_problems
from gke_ai_batch.config.checks.teams import local_queue_problems, namespace_settings_problems, team_namespace_problems
from gke_ai_batch.config.errors import NOT_AN_OUTPUT, ArgsError, at_arg, field_path, join_path
from gke_ai_batch.domain import catalogue
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.domain.naming import BUILTIN_NAMESPACES, child_name
from gke_ai_batch.plan.flavors import FlavorPlan
from gke_ai_batch.plan.kueue import QueuePlan, TeamSpec, cluster_queue_plan, provisioning_check_manifests, team_spec

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


class ResourceFlavorArgs(TypedDict):
    """One Kueue ResourceFlavor as data: a pool component's `flavor` (TpuSlices, GpuPool,
    CpuPool), or a flavor of nodes this program does not manage."""

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


class FlavorArgs(ResourceFlavorArgs):
    """A Kueue ResourceFlavor as data: what a pool component's `flavor` is, or a flavor of nodes
    this program does not manage; in a ClusterQueue's flavors (in order of preference), with the
    queue's quotas of it. A pool's flavor is listed as it is: its quotas default to its capacity."""

    quotas: NotRequired[dict[str, Any]]
    """A ClusterQueue's flavors only (a ResourceFlavor and a ProvisioningCheck refuse it): per
    resource, a quantity (32, '256Gi') or {nominal, borrowing_limit, lending_limit}; resources
    the flavor has capacity for default to all of it."""


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
    """A Kueue ClusterQueue: a stack's clusterQueues entry by its field names, its flavors as
    data. Plain values: they are checked by the stack's rules on construction and size the quotas."""

    flavors: list[FlavorArgs]
    """In order of preference (a pool component's `flavor` as it is, or with quotas); none: a
    queue that admits nothing (a fleet worker's mirror)."""
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
    """A team namespace: a stack's teams entries of one namespace, by their field names."""

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


def _child(name: str, base: str, manifest: dict[str, Any]) -> str:
    return child_name(name, base, k8s_objects.resource_name(manifest))


def _plain(where: str, args: Any, spec: type) -> dict[str, Any]:
    """Args as a mapping of plain values (an Output cannot be checked on construction), with
    whole-number floats as ints (a package caller's numbers arrive as doubles)."""
    if not isinstance(args, dict):
        raise ArgsError(where, [at_arg("args", f"must be a {spec.__name__} mapping, not {type(args).__name__}")])
    outputs = [at_arg(path, NOT_AN_OUTPUT)
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


# The FlavorArgs that are a stack's flavors entry's fields; capacity, queued and accelerator are
# what a stack derives from the flavor's pools.
_FLAVOR_FIELDS = ("name", "node_labels", "tolerations", "topology_name")


def _flavor_problems(flavor: Any, at: str, spec: type) -> list[Finding]:
    """A flavor (FlavorArgs, or a ResourceFlavor's args) checked as a stack's flavors entry by
    the stack's rules (Kueue's ResourceFlavor limits), plus its capacity."""
    if not isinstance(flavor, dict):
        return [at_arg(at, f"must be a FlavorArgs mapping (e.g. a pool component's flavor), not {type(flavor).__name__}")]
    problems = unknown_keys(flavor, spec, at)
    if "name" not in flavor:
        return problems + [at_arg(f"{at}.name", "required")]
    below = partial(join_path, at)
    entry, found = validated(FlavorConfig, {k: flavor[k] for k in _FLAVOR_FIELDS if k in flavor}, place=below)
    if entry is not None:
        labels, tolerations = dict(entry.node_labels or {}), len(entry.tolerations or ())
        found += entry_rules(FlavorConfig, flavor_limit_problems((), "nodeLabels", "tolerations", entry.name, labels, tolerations), below)
    problems += found
    capacity = flavor.get("capacity", {})
    if not isinstance(capacity, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in capacity.values()
    ):
        problems.append(at_arg(f"{at}.capacity", "must map resource names to whole amounts of 0 or more"))
    else:
        # Its resources become a queue's coveredResources, whose names the quotas' rule checks.
        _, found = validated(
            QueueFlavor, {"name": flavor["name"], "quotas": {k: 0 for k in capacity}},
            place=lambda loc: join_path(f"{at}.capacity", loc[1:]) if loc[:1] == ("quotas",) else None,
        )
        problems += found
    if not isinstance(flavor.get("queued", False), bool):
        problems.append(at_arg(f"{at}.queued", "must be true or false"))
    accelerators = (catalogue.TPU_RESOURCE, catalogue.GPU_RESOURCE)
    if "accelerator" in flavor and flavor["accelerator"] not in accelerators:
        problems.append(at_arg(f"{at}.accelerator", f"{flavor['accelerator']!r} is not an accelerator resource; allowed: {', '.join(accelerators)}"))
    return problems


class ResourceFlavor(Planned[FlavorPlan]):
    """One Kueue ResourceFlavor (kueue.x-k8s.io/v1beta2): node labels, tolerations."""

    flavor_name: pulumi.Output[str]
    """The ResourceFlavor's name."""

    def __init__(self, name: str, args: ResourceFlavorArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"ResourceFlavor {name}"
        given: dict[str, Any] = _plain(where, args, ResourceFlavorArgs)
        problems = _flavor_problems(given, "args", ResourceFlavorArgs)
        if problems:
            raise ArgsError(where, problems)
        self._register(name, FlavorPlan.from_args(given), opts)

    def _register(self, name: str, spec: FlavorPlan, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__(type_token(ResourceFlavor), name, None, opts)
        # The flavor as planned: its manifest is the stack program's.
        self.plan: FlavorPlan = spec
        manifest = spec.manifest()
        self.resource = k8s_objects.apply(
            manifest, pulumi.ResourceOptions(parent=self, depends_on=depends_on_of(opts)), name=_child(name, spec.name, manifest)
        )
        self.flavor_name = pulumi.Output.from_input(spec.name)
        self.register_outputs({"flavorName": self.flavor_name})


_KUEUE_DEFAULTS = KueueConfig()
# ProvisioningCheck's args: the stack's kueue keys of those names, checked by their rules.
_CHECK_FIELDS = {"admission_check": "provisioning_admission_check", "request_config": "provisioning_request_config"}


def _check_name_problems(at: str, field: str, value: Any) -> list[Finding]:
    """A name checked as the stack's kueue key `field` is (a Kubernetes name)."""
    return validated(KueueConfig, {field: value}, place=lambda loc: join_path(at, loc[1:]))[1]


class ProvisioningCheck(Planned[Sequence[dict[str, Any]]]):
    """GKE's ProvisioningRequest admission check (Dynamic Workload Scheduler): a
    ProvisioningRequestConfig and the AdmissionCheck that names it, once per cluster. A
    ClusterQueue with a queued flavor names it in `provisioning_check`."""

    admission_check: pulumi.Output[str]
    """The AdmissionCheck's name."""

    def __init__(self, name: str, args: ProvisioningCheckArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"ProvisioningCheck {name}"
        given: dict[str, Any] = _plain(where, args, ProvisioningCheckArgs)
        problems = unknown_keys(given, ProvisioningCheckArgs, "args")
        flavors = given.get("flavors", [])
        if not isinstance(flavors, list):
            problems.append(at_arg("args.flavors", "must be a list of FlavorArgs"))
            flavors = []
        for j, flavor in enumerate(flavors):
            # Quotas are a queue's: refused here, as a ResourceFlavor refuses them.
            problems += _flavor_problems(flavor, f"args.flavors[{j}]", ResourceFlavorArgs)
        # The names are Kueue config's keys: checked by their rules, defaulting as they do.
        for arg, field in _CHECK_FIELDS.items():
            if arg in given:
                problems += _check_name_problems(f"args.{arg}", field, given[arg])
        if problems:
            raise ArgsError(where, problems)
        check = given.get("admission_check", _KUEUE_DEFAULTS.provisioning_admission_check)
        config = given.get("request_config", _KUEUE_DEFAULTS.provisioning_request_config)
        queued = [FlavorPlan.from_args(f) for f in flavors]
        self._register(name, provisioning_check_manifests(check, config, queued), opts)

    def _register(self, name: str, spec: Sequence[dict[str, Any]], opts: pulumi.ResourceOptions | None) -> None:
        super().__init__(type_token(ProvisioningCheck), name, None, opts)
        check = next(m["metadata"]["name"] for m in spec if m["kind"] == "AdmissionCheck")
        # The AdmissionCheck names its ProvisioningRequestConfig: created after it.
        self.resources: list[pulumi.Resource] = []
        for manifest in spec:
            self.resources.append(
                k8s_objects.apply(
                    manifest,
                    pulumi.ResourceOptions(parent=self, depends_on=[*depends_on_of(opts), *self.resources]),
                    name=_child(name, check, manifest),
                )
            )
        self.admission_check = pulumi.Output.from_input(check)
        self.register_outputs({"admissionCheck": self.admission_check})


# ClusterQueueArgs that are a stack's clusterQueues entry's fields (its name is queue_name).
_QUEUE_FIELDS = ("cohort", "queueing_strategy", "namespace_selector", "preemption", "fair_sharing_weight", "stop_policy")


def _queue_arg(loc: tuple) -> str:
    """A clusterQueues entry's field path -> the arg path: the entry's name is queue_name."""
    return join_path("args", ("queue_name", *loc[1:]) if loc[:1] == ("name",) else loc)


class ClusterQueue(Planned[QueuePlan]):
    """One Kueue ClusterQueue over flavors given as data, quotas defaulting to the flavors'
    capacity, as the stack program plans them."""

    queue_name: pulumi.Output[str]
    """The ClusterQueue's name."""

    def __init__(self, name: str, args: ClusterQueueArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"ClusterQueue {name}"
        given: dict[str, Any] = _plain(where, args, ClusterQueueArgs)
        # An unknown arg is left out of the entry (only its fields are read), so the rules still
        # judge the rest; a flavor that is not one stops them, as they plan each flavor.
        unknown = unknown_keys(given, ClusterQueueArgs, "args")
        problems: list[Finding] = []
        flavors = given.get("flavors")
        if not isinstance(flavors, list):
            problems.append(at_arg("args.flavors", "required: a list of flavors (e.g. a pool component's flavor)"))
            flavors = []
        for j, flavor in enumerate(flavors):
            problems += _flavor_problems(flavor, f"args.flavors[{j}]", FlavorArgs)
        if problems:
            raise ArgsError(where, unknown + problems)
        problems = unknown
        queue_name = given.get("queue_name", name)
        entry = {
            "name": queue_name,
            **{k: given[k] for k in _QUEUE_FIELDS if k in given},
            "flavors": [{k: f[k] for k in ("name", "quotas") if k in f} for f in flavors],
        }
        planned = [FlavorPlan.from_args(f) for f in flavors]
        queue, found = validated(ClusterQueueConfig, entry, place=_queue_arg)
        if queue is not None:
            # The queue's flavors are the ones there are; none at all is a queue that admits
            # nothing, not "every flavor of the stack".
            known = list(dict.fromkeys(f.name for f in planned))
            derived = {f.name for f in planned if f.accelerator_resource is not None}
            found += entry_rules(ClusterQueueConfig, cluster_queue_problems((), queue, known, derived, flavors_known=bool(known)), _queue_arg)
        problems += found
        queued = [f.name for f in planned if f.queued]
        if queued and "provisioning_check" not in given:
            # A queued-provisioning node pool gets nodes only through a ProvisioningRequest, which
            # Kueue creates for a workload only through a ProvisioningRequest admission check
            # (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest, "Create
            # the Kueue objects": the AdmissionCheck with controllerName
            # kueue.x-k8s.io/provisioning-request); without one its jobs never get nodes.
            problems.append(at_arg(
                "args.provisioning_check",
                f"flavor {', '.join(map(repr, queued))} is queued (DWS): its nodes come only through a "
                "ProvisioningRequest; name the admission check of a ProvisioningCheck",
            ))
        checks = given.get("admission_checks", [])
        named = [("args.provisioning_check", given["provisioning_check"])] if "provisioning_check" in given else []
        if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
            problems.append(at_arg("args.admission_checks", "must be a list of AdmissionCheck names"))
        else:
            named += [(f"args.admission_checks[{k}]", c) for k, c in enumerate(checks)]
        # Each names an AdmissionCheck, whose name is a Kubernetes name: one that is not could never
        # exist, and the queue would stay inactive. Checked as the stack's
        # kueue.provisioningAdmissionCheck is (a ProvisioningCheck's admission_check).
        problems += [p for at, check in named for p in _check_name_problems(at, "provisioning_admission_check", check)]
        if problems or queue is None:
            raise ArgsError(where, problems)
        selector = queue.namespace_selector.model_dump(by_alias=True, exclude_defaults=True) if queue.namespace_selector else None
        spec = cluster_queue_plan(
            queue,
            list(zip(queue.flavors, planned)),
            selector,
            provisioning_check=given.get("provisioning_check"),
            admission_checks=tuple(checks),
            idle=not flavors,
        )
        self._register(name, spec, opts)

    def _register(self, name: str, spec: QueuePlan, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__(type_token(ClusterQueue), name, None, opts)
        self.plan: QueuePlan = spec
        self.resource = k8s_objects.apply(
            spec.manifest,
            pulumi.ResourceOptions(parent=self, depends_on=depends_on_of(opts)),
            name=_child(name, spec.name, spec.manifest),
        )
        self.queue_name = pulumi.Output.from_input(spec.name)
        self.register_outputs({"queueName": self.queue_name})


# "<VERSION> must be a valid Kubernetes minor version, or latest"
# (https://kubernetes.io/docs/concepts/security/pod-security-admission/#pod-security-admission-labels-for-namespaces).
_POD_SECURITY_VERSION_RX = re.compile(r"latest|v1\.(0|[1-9][0-9]*)", re.ASCII)
# TeamArgs that are each of its teams entries' fields; and a LocalQueueArgs' keys as the entry's.
_TEAM_FIELDS = ("namespace", "labels", "pod_security", "network_policy")
_LOCAL_QUEUE_FIELDS = {"name": "local_queue", "cluster_queue": "cluster_queue"}
_LOCAL_QUEUE_ARGS = {field: arg for arg, field in _LOCAL_QUEUE_FIELDS.items()}


def _team_arg(i: int, loc: tuple) -> str:
    """A path in the teams entry of local queue i -> the arg path: its local queue's own keys
    are local_queues[i]'s, the rest the namespace's (every entry's)."""
    if loc[:1] and loc[0] in _LOCAL_QUEUE_ARGS:
        loc = ("local_queues", i, _LOCAL_QUEUE_ARGS[loc[0]], *loc[1:])
    return join_path("args", loc)


def _team_entries(args: Mapping[str, Any], queues: list[Any], groups: list[Any]) -> tuple[list[TeamConfig] | None, list[Finding]]:
    """The Team's args as the stack's teams entries they are (one per LocalQueue, sharing the
    namespace), validated by TeamConfig and the stack's team rules that need no cluster, with
    each group checked as an entry's group: the entries, or None and every problem once, at its
    arg path."""
    shared = {k: args[k] for k in _TEAM_FIELDS if k in args}
    data = [{**shared, **{field: q[arg] for arg, field in _LOCAL_QUEUE_FIELDS.items() if arg in q}} for q in queues]
    teams: list[TeamConfig] = []
    found: list[Finding] = []
    for i, entry in enumerate(data):
        team, bad = validated(TeamConfig, entry, place=partial(_team_arg, i))
        found += bad
        if team is not None:
            teams.append(team)
    if not found:
        for k, group in enumerate(groups):
            _, bad = validated(
                TeamConfig, {**data[0], "group": group},
                place=lambda loc, k=k: join_path("args", ("groups", k, *loc[1:])) if loc[:1] == ("group",) else None,
            )
            found += bad
        rules = [
            *local_queue_problems(teams),
            *(p for i, team in enumerate(teams) for p in team_namespace_problems(i, team)),
            # One namespace: its entries' own keys are the args'.
            *namespace_settings_problems(teams, lambda i: ""),
        ]
        for e in rules:  # each at ("teams", i, ...): local queue i's entry
            _, i, *rest = list(e.path)
            found.append(at_arg(_team_arg(int(i), field_path(TeamConfig, tuple(rest))), e.message))
    return (None if found else teams), list(dict.fromkeys(found))


class Team(Planned[TeamSpec]):
    """A team's namespace (created, or for one every cluster has, patched with its Pod Security
    labels), its NetworkPolicy, its LocalQueues, and the Role and RoleBinding of its Google
    Groups."""

    namespace: pulumi.Output[str]
    """The team's namespace."""
    local_queues: pulumi.Output[list[str]]
    """Its LocalQueues, in the args' order."""

    def __init__(self, name: str, args: TeamArgs, opts: pulumi.ResourceOptions | None = None):
        where = f"Team {name}"
        given: dict[str, Any] = _plain(where, args, TeamArgs)
        # An unknown arg is left out of the entries (only their fields are read), so the rules
        # still judge the rest; a queue or group list of the wrong shape stops them.
        unknown = unknown_keys(given, TeamArgs, "args")
        problems: list[Finding] = []
        queues = given.get("local_queues")
        if not isinstance(queues, list) or not queues:
            problems.append(at_arg("args.local_queues", "required: at least one {name, cluster_queue}"))
            queues = []
        for i, q in enumerate(queues):
            if not isinstance(q, dict):
                problems.append(at_arg(f"args.local_queues[{i}]", "must be a {name, cluster_queue} mapping"))
            else:
                problems += unknown_keys(q, LocalQueueArgs, f"args.local_queues[{i}]")
        groups = given.get("groups", [])
        if not isinstance(groups, list):
            problems.append(at_arg("args.groups", "must be a list of Google Group emails"))
            groups = []
        if problems:
            raise ArgsError(where, unknown + problems)
        problems = unknown
        teams, found = _team_entries(given, queues, groups)
        problems += found
        version = given.get("pod_security_version", "latest")
        if not isinstance(version, str) or not _POD_SECURITY_VERSION_RX.fullmatch(version):
            problems.append(at_arg("args.pod_security_version", f"{version!r} is not 'latest' or a Kubernetes minor such as 'v1.34'"))
        if problems or teams is None:
            raise ArgsError(where, problems)
        self._register(name, team_spec(teams, version, groups), opts)

    def _register(self, name: str, spec: TeamSpec, opts: pulumi.ResourceOptions | None) -> None:
        aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TEAM_TYPE)])
        super().__init__(type_token(Team), name, None, pulumi.ResourceOptions.merge(opts, aliased))
        self.spec: TeamSpec = spec
        ns = spec.namespace
        waits = depends_on_of(opts)
        manifest = spec.namespace_manifest
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
        for policy in spec.network_policies:
            self.network_policy = k8s_objects.apply(
                policy, pulumi.ResourceOptions(parent=self, depends_on=after_ns), name=_child(name, ns, policy)
            )
        self.queue_objects: dict[str, pulumi.Resource] = {}
        for lq in spec.local_queues:
            self.queue_objects[lq["metadata"]["name"]] = k8s_objects.apply(
                lq, pulumi.ResourceOptions(parent=self, depends_on=after_ns), name=_child(name, ns, lq)
            )
        # Role first, then the RoleBinding that names it; both inside the namespace.
        self.rbac: list[pulumi.Resource] = []
        for rbac in spec.rbac:
            self.rbac.append(
                k8s_objects.apply(
                    rbac, pulumi.ResourceOptions(parent=self, depends_on=[*after_ns, *self.rbac]), name=_child(name, ns, rbac)
                )
            )
        self.namespace = pulumi.Output.from_input(ns)
        self.local_queues = pulumi.Output.from_input(list(self.queue_objects))
        self.register_outputs({"namespace": self.namespace, "localQueues": self.local_queues})
