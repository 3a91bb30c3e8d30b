"""A MultiKueue fleet in config: the manager cluster, its workers, and what each worker's
cluster must satisfy, checked with the very rules a single-cluster stack gets.

How a fleet maps onto single-cluster configs, so that every existing rule applies unchanged:

* The stack's `cluster` is the manager: small and CPU only, so the stack's own `nodePools` stay
  empty (the manager queues work and runs none of it).
* Each worker is a cluster, its node pools and (optionally) its flavors. `worker_stack` gives it
  a StackConfig of its own with the fleet's Kueue settings, teams and priorities, and the
  fleet's ClusterQueues cut down to the flavors that worker has: the queues it serves, and the
  teams and samples of those queues. That is what its capacity is checked against; its problems
  are reported under `fleet.workers[i]` for its own keys, once for the fleet's shared keys. The
  worker still gets every team and queue of the fleet: the plan adds the ones it does not serve
  as idle queues with no quota (gke_ai_batch/plan/fleet.py _mirror_all).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Iterable, Iterator, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from gke_ai_batch.domain.multikueue_worker import JOB_RESOURCES
from gke_ai_batch.domain.versions import managed_by_problem
from gke_ai_batch.config.base import Duration, GkeName, K8sName, LabelValue, Model, RuleError, raise_all
from gke_ai_batch.config.batch import FlavorConfig
from gke_ai_batch.config.checks import Unknown, valid
from gke_ai_batch.config.cluster import ClusterConfig, region_of
from gke_ai_batch.config.gcpnames import check_project_id
from gke_ai_batch.config.pools import NodePoolConfig

# apis/config/v1beta2/configuration_types.go:393-399
DISPATCHERS = {
    "AllAtOnce": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    "Incremental": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
}


class MultiKueueSettings(Model):
    """The manager's `multiKueue` Configuration. Defaults are Kueue's own
    (apis/config/v1beta2/defaults.go:47-50 and 134-143)."""

    dispatcher: Literal["AllAtOnce", "Incremental"] = "AllAtOnce"
    """AllAtOnce offers each workload to every worker and keeps the first that admits it;
    Incremental offers it to `incrementalStepSize` workers at a time, in the fleet's order
    (MultiKueueIncrementalDispatcherRespectConfigOrder, beta and on in 0.19), so the preferred
    regions are tried first."""
    incremental_step_size: int | None = Field(default=None, ge=1)
    """Workers the Incremental dispatcher adds per round (Kueue's default: 3). Only with
    dispatcher Incremental."""
    gc_interval: Duration = "1m"
    """How often the manager deletes worker copies whose workload is gone from the manager."""
    origin: LabelValue = "multikueue"
    """Label value marking the objects this manager creates on workers. Its garbage collector
    deletes every remote workload with this origin that has no local counterpart
    (runGC, multikueuecluster.go:675-733), so two managers that share a worker need different
    origins or each deletes the other's workloads."""
    worker_lost_timeout: Duration = "15m"
    """How long a workload admitted on a worker that stops answering stays admitted before the
    manager requeues it elsewhere."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        # pkg/config/validation.go:221-225: Kueue refuses to start with an
        # incrementalDispatcherConfig under any other dispatcher.
        if self.incremental_step_size is not None and self.dispatcher != "Incremental":
            yield RuleError(
                "incrementalStepSize",
                f"incrementalStepSize applies to the Incremental dispatcher only, not {self.dispatcher} "
                "(Kueue refuses the Configuration)",
            )


# MultiKueueConfig.spec.clusters: maxItems 20 (kueue.x-k8s.io_multikueueconfigs.yaml, v0.19.2).
WORKERS_MAX = 20
# The manager's naming scope (gke_ai_batch/components/fleet/deploy.py): a worker's scope is its name.
MANAGER_SCOPE = "manager"
# The keys of a stack that belong to one worker; everything else is the fleet's, shared.
WORKER_KEYS = {"cluster", "nodePools", "flavors"}


class WorkerConfig(Model):
    """One worker cluster of a fleet, in its own region or project."""

    name: GkeName
    """The worker's name in the fleet: its MultiKueueCluster, its kubeconfig Secret
    (multikueue-<name>) and its Pulumi naming scope."""
    project: Annotated[str, AfterValidator(check_project_id)] | None = None
    """GCP project id of the worker's cluster; defaults to gcp:project (the same project given
    explicitly counts as the default)."""
    cluster: ClusterConfig
    node_pools: list[NodePoolConfig] = Field(min_length=1, max_length=500)
    """The worker's accelerator pools (DWS queued provisioning and flex-start first of all)."""
    flavors: list[FlavorConfig] | None = Field(None, max_length=500)
    """Omit to derive one flavor per accelerator shape and capacity, as single-cluster stacks do."""


class FleetConfig(Model):
    name: K8sName = "multikueue"
    """Name of the manager's AdmissionCheck and MultiKueueConfig."""
    multi_kueue: MultiKueueSettings = MultiKueueSettings()
    workers: list[WorkerConfig] = Field(min_length=2, max_length=WORKERS_MAX)
    """Two or more (at most 20, MultiKueueConfig's limit) worker clusters."""


class _FleetParts(FleetConfig):
    """A fleet's own keys without its workers (validated alone by partial_fleet)."""

    workers: list[Any] = []  # type: ignore[assignment]


def worker_index(loc: tuple[Any, ...], fleet: Any) -> int | None:
    """The worker a shape error at `loc` (rooted at the stack) is in, if it is in one."""
    if len(loc) > 2 and loc[1] == "workers" and isinstance(loc[2], int):
        if isinstance(fleet, dict) and isinstance(fleet.get("workers"), list):
            return loc[2]
    return None


def partial_fleet(data: dict[str, Any], invalid: set[int], context: dict[str, Any]) -> Any:
    """A fleet with invalid workers (their indices `invalid`): each of those unknown
    (checks.Unknown), so the fleet's own rules and the other workers' still run; the whole
    fleet unknown if anything else of it is invalid too."""
    try:
        parts = _FleetParts.model_validate({**data, "workers": []}, context=context)
        workers = [
            Unknown(("fleet", "workers", i)) if i in invalid else WorkerConfig.model_validate(w, context=context)
            for i, w in enumerate(data["workers"])
        ]
    except ValidationError:
        return Unknown(("fleet",))
    values: dict[str, Any] = {**dict(parts), "workers": workers}
    return FleetConfig.model_construct(**values)


@dataclass(frozen=True)
class WorkerStack:
    """A worker's single-cluster config, and where its queues and teams come from in the
    fleet's lists (so a problem found in the worker's config names the fleet's key)."""

    config: Any  # StackConfig (stack.py imports this module, not the other way round)
    queues: tuple[int, ...]  # worker clusterQueues[k] is the fleet's clusterQueues[queues[k]]
    flavors: tuple[tuple[int, ...], ...]  # its flavors[m] is the fleet queue's flavors[flavors[k][m]]
    teams: tuple[int, ...]
    workloads: tuple[int, ...] = ()  # the fleet's workloads this worker could run (pool and team here)

    def fleet_path(self, path: tuple) -> tuple:
        """The fleet's key path for a path of the worker's config."""
        if len(path) >= 2 and path[0] == "clusterQueues" and isinstance(path[1], int):
            k = path[1]
            rest = path[2:]
            if len(rest) >= 2 and rest[0] == "flavors" and isinstance(rest[1], int) and self.flavors[k]:
                rest = ("flavors", self.flavors[k][rest[1]], *rest[2:])
            return ("clusterQueues", self.queues[k], *rest)
        if len(path) >= 2 and path[0] == "teams" and isinstance(path[1], int):
            return ("teams", self.teams[path[1]], *path[2:])
        if len(path) >= 2 and path[0] == "workloads" and isinstance(path[1], int):
            return ("workloads", self.workloads[path[1]], *path[2:])
        return path


def worker_stack(top, worker: WorkerConfig) -> WorkerStack:
    """The single-cluster config a worker deploys: its cluster and pools, the fleet's Kueue,
    teams and priorities, the fleet's queues restricted to the worker's flavors, and the fleet's
    sample workloads whose pool and team it has: they are submitted on the manager and
    MultiKueue copies them here, so each is checked against every worker it could land on."""
    stack_type = type(top)
    probe = stack_type.model_construct(
        **{**dict(top), "fleet": None, "cluster": worker.cluster, "node_pools": worker.node_pools,
           "flavors": worker.flavors, "workloads": []}
    )
    offered = set(probe.flavor_names())
    queues, queue_index, flavor_index = [], [], []
    for i, cq in enumerate(top.cluster_queues):
        if not cq.flavors:  # every flavor of the cluster: the worker's
            queues.append(cq)
            queue_index.append(i)
            flavor_index.append(())
            continue
        kept = [j for j, f in enumerate(cq.flavors) if f.name in offered]
        if not kept:
            continue  # nothing of this queue runs here
        queues.append(cq.model_copy(update={"flavors": [cq.flavors[j] for j in kept]}))
        queue_index.append(i)
        flavor_index.append(tuple(kept))
    mirrored = {cq.name for cq in queues}
    team_index = [i for i, t in enumerate(top.teams) if t.cluster_queue in mirrored]
    teams = [top.teams[i] for i in team_index]
    namespaces = {t.namespace for t in teams}
    pools = {p.name for p in worker.node_pools}
    workload_index = [
        i for i, wl in enumerate(top.workloads) if wl.team in namespaces and (wl.pool is None or wl.pool in pools)
    ]
    config = stack_type.model_construct(
        **{**dict(probe), "cluster_queues": queues, "teams": teams,
           "workloads": [top.workloads[i] for i in workload_index]}
    )
    return WorkerStack(config, tuple(queue_index), tuple(flavor_index), tuple(team_index), tuple(workload_index))


def fleet_problems(
    top, fleet: FleetConfig, shared: Iterable[RuleError], cluster_problems: Callable[[Any], Iterable[RuleError]]
) -> Iterator[RuleError]:
    """Every reason the fleet would not work, each at its key path (rooted at the stack); a
    partial stack's invalid workers (checks.Unknown) left out, the others judged each on its own.
    `shared`: the problems of the fleet's teams and priorities; `cluster_problems(config)`: the
    stack's checks run on one worker's single-cluster config (gke_ai_batch/config/checks)."""
    if top.node_pools:
        yield RuleError(
            ("nodePools",),
            "a fleet's manager runs no workload (MultiKueue dispatches every job to a worker): move these pools "
            "to fleet.workers[].nodePools",
        )
    # Job spec.managedBy on the manager, which MultiKueue needs for batch Jobs (workers need
    # nothing: the copy they get has it cleared).
    if "batch/job" in top.kueue.integrations and top.cluster.min_master_version:
        problem = managed_by_problem(top.cluster.min_master_version)
        if problem:
            yield RuleError(("cluster", "minMasterVersion"), problem)
    yield from _name_problems(fleet)
    yield from _integration_problems(top)
    yield from _placement_problems(top, fleet)
    yield from _reach_problems(top, fleet)
    # The fleet's teams and priorities once, at their own indices; then each worker as a stack
    # of its own, its problems under fleet.workers[i] or, for the fleet's queues, named once.
    yield from shared
    reported: set[tuple] = set()
    offered_anywhere: set[str] = set()
    # A workload is the fleet's problem only if no worker could take it: MultiKueue dispatches
    # it to every worker of its queue, and the first that admits it runs it.
    workload_faults: dict[int, list[str]] = {}
    workload_fits: set[int] = set()
    placed: set[int] = set()
    workers = valid(fleet.workers)
    for i, worker in workers:
        ws = worker_stack(top, worker)
        offered_anywhere |= set(ws.config.flavor_names())
        if not ws.queues:
            yield RuleError(
                ("fleet", "workers", i, "nodePools"),
                f"worker {worker.name} serves no ClusterQueue: none of its flavors "
                f"({', '.join(ws.config.flavor_names()) or 'none'}) is in a queue, so MultiKueue would send it nothing; "
                "add its flavor to a queue or drop the worker",
            )
        faulty: set[int] = set()
        for problem in cluster_problems(ws.config):
            path = problem.path  # RuleError keeps it as a tuple
            if path and path[0] == "workloads" and len(path) > 1 and isinstance(path[1], int):
                k = ws.workloads[path[1]]
                faulty.add(k)
                workload_faults.setdefault(k, []).append(f"worker {worker.name}: {problem.message}")
                continue
            if path and path[0] in WORKER_KEYS:
                yield RuleError(("fleet", "workers", i, *path), f"worker {worker.name}: {problem.message}")
            elif path and path[0] in ("teams", "priorities"):
                continue  # the fleet's own, checked above
            else:
                fleet_path = ws.fleet_path(path)
                if (fleet_path, problem.message) not in reported:
                    reported.add((fleet_path, problem.message))
                    yield RuleError(fleet_path, f"on worker {worker.name}: {problem.message}")
        workload_fits |= set(ws.workloads) - faulty
        placed |= set(ws.workloads)
    if len(workers) < len(fleet.workers):
        return  # an invalid worker may be the one that has what the fleet lacks below
    for k, wl in enumerate(top.workloads):
        if k not in placed:
            yield RuleError(
                ("workloads", k, "pool" if wl.pool else "team"),
                f"no worker has {'pool ' + repr(wl.pool) + ' and ' if wl.pool else ''}a queue for team {wl.team!r}: "
                "MultiKueue could dispatch this workload nowhere",
            )
        elif k not in workload_fits:
            yield RuleError(("workloads", k), "no worker could run it: " + "; ".join(workload_faults[k]))
    for i, cq in enumerate(top.cluster_queues):
        for j, flavor in enumerate(cq.flavors):
            if flavor.name not in offered_anywhere:
                yield RuleError(
                    ("clusterQueues", i, "flavors", j, "name"),
                    f"no worker offers flavor {flavor.name!r}: MultiKueue could dispatch this queue's jobs nowhere",
                )


def _name_problems(fleet: FleetConfig) -> Iterator[RuleError]:
    """A worker's name is its MultiKueueCluster, its Secret and its naming scope: one per worker,
    and not the manager's. Checked with the fleet's other rules, so every mistake shows at once."""
    seen: dict[str, int] = {}
    for i, w in valid(fleet.workers):
        at = ("fleet", "workers", i, "name")
        if w.name == MANAGER_SCOPE:
            yield RuleError(at, f"{MANAGER_SCOPE!r} names the manager's resources; call the worker otherwise")
        elif w.name in seen:
            yield RuleError(at, f"worker {w.name!r} is listed already (workers[{seen[w.name]}])")
        seen.setdefault(w.name, i)


def _integration_problems(top) -> Iterator[RuleError]:
    """The manager's remote client watches, on every worker, the kind of each enabled
    integration that has a MultiKueue adapter (GetMultiKueueAdapters, cmd/kueue/main.go:529),
    and a worker where one watch is refused stays disconnected altogether
    (multikueuecluster.go:352-366: "however let's not accept this for now"). The worker's RBAC
    for the manager covers the job kinds in JOB_RESOURCES (gke_ai_batch/domain/multikueue_worker.py), so the
    fleet enables those and nothing else."""
    covered = ", ".join(sorted(JOB_RESOURCES))
    integrations = list(top.kueue.integrations)
    for j, framework in enumerate(integrations):
        if framework not in JOB_RESOURCES:
            yield RuleError(
                ("kueue", "integrations", j),
                f"{framework} in a fleet: the manager would watch its kind on every worker, where its access covers "
                f"only {covered}, and a worker with one refused watch never connects (Kueue multikueuecluster.go:352-366)",
            )
    if not any(f in JOB_RESOURCES for f in integrations):
        yield RuleError(("kueue", "integrations"), f"a fleet dispatches batch work: enable at least one of {covered}")


def _reach_problems(top, fleet: FleetConfig) -> Iterator[RuleError]:
    """The manager must reach every worker's API server with the kubeconfig the program gives it:
    the worker's IP endpoint, its CA and a static token (gke_ai_batch/components/fleet/deploy.py). Kueue
    refuses exec plugins in it (gke_ai_batch/plan/kubeconfig.py kubeconfig_problems), so the
    DNS endpoint, which wants a Google credential, is not a way in for the manager."""
    for i, w in valid(fleet.workers):
        ip = w.cluster.control_plane.ip_endpoint
        at = ("fleet", "workers", i, "cluster", "controlPlane", "ipEndpoint")
        if ip == "disabled":
            yield RuleError(at, f"worker {w.name}: the manager reaches a worker through its IP endpoint (a static "
                                "token and the cluster CA; Kueue runs no credential plugin), and this one has none")
        elif ip == "authorizedNetworks" and not w.cluster.master_authorized_networks:
            yield RuleError(
                ("fleet", "workers", i, "cluster", "masterAuthorizedNetworks"),
                f"worker {w.name}: no authorized network lets the manager in: list the manager's egress address "
                "(its Cloud NAT's)",
            )
        elif ip == "private" and (w.project is not None or w.cluster.network_reference != top.cluster.network_reference
                                  or region_of(w.cluster.location or "") != region_of(top.cluster.location or "")):
            # A network name is per project: "default" in another project is another VPC. Two
            # references name one network when name and stated project agree ("vpc" and
            # "global/networks/vpc" do).
            # A private endpoint answers its own VPC, and other regions only with global access,
            # which this program does not turn on (GKE docs how-to/latest/network-isolation).
            yield RuleError(at, f"worker {w.name}: its private endpoint answers only its VPC in its region; the manager "
                                "is elsewhere: use authorizedNetworks with the manager's egress addresses")
    if not top.cluster.private_nodes and any(w.cluster.control_plane.ip_endpoint == "authorizedNetworks"
                                             for _, w in valid(fleet.workers)):
        # Cloud NAT translates only for VM interfaces without an external IP
        # (https://cloud.google.com/nat/docs/overview): with public nodes, the manager's calls
        # leave from its nodes' own ephemeral addresses, which change on every scale-up or
        # upgrade and are in no worker's authorized networks.
        yield RuleError(
            ("cluster", "privateNodes"),
            "the manager reaches its workers' authorized networks from one fixed egress address (its Cloud NAT's); with "
            "public nodes its calls leave from each node's own ephemeral IP instead: set privateNodes true",
        )


def _placement_problems(top, fleet: FleetConfig) -> Iterator[RuleError]:
    """GKE names a cluster by project, location and name: two clusters of the fleet at one
    place must differ by name; and a fleet is for regions (or projects) apart, so two workers
    in one region of one project are one region's capacity counted twice."""
    default = "(gcp:project)"
    seen: dict[tuple[str, str, str], str] = {(default, top.cluster.location or "", top.cluster.name): "the manager"}
    regions: dict[tuple[str, str], str] = {}
    for i, w in valid(fleet.workers):
        project = w.project or default
        where = (project, w.cluster.location or "", w.cluster.name)
        if where in seen:
            yield RuleError(("fleet", "workers", i, "cluster", "name"), f"cluster {w.cluster.name!r} in {w.cluster.location} is {seen[where]}'s already")
        seen.setdefault(where, f"workers[{i}]")
        region = (project, region_of(w.cluster.location or ""))
        if region in regions:
            yield RuleError(
                ("fleet", "workers", i, "cluster", "location"),
                f"{regions[region]} is in {region[1]} of the same project already: a fleet spreads workers over regions "
                "or projects, where capacity differs",
            )
        regions.setdefault(region, f"workers[{i}]")
