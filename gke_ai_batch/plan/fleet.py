"""A fleet's plan: one single-cluster Plan per worker (its pools, flavors, mirrored queues and
teams, plus the RBAC and token the manager connects with), and the manager's Plan, whose flavors
and queues are the workers' added up and whose queues admit through MultiKueue alone.

Pure, like the rest of the plan: the components register what it says, the report and the
policy pack read the same numbers (a manager queue's quota is the sum of its workers')."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.domain import quantity
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.config.errors import at_key
from gke_ai_batch.model.requests import CPU, MEMORY
from gke_ai_batch.config.batch import FlavorConfig, QueueFlavor
from gke_ai_batch.config.fleet import worker_stack
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.plan.multikueue import MULTIKUEUE_CONTROLLER, cluster_queue_problems, manager_manifests
from gke_ai_batch.domain.multikueue_worker import JOB_RESOURCES, worker_rbac_manifests
from gke_ai_batch.plan import Plan, build_plan, team_plans
from gke_ai_batch.plan.rbac import team_rbac_manifests
from gke_ai_batch.plan.admission import Admission
from gke_ai_batch.plan.flavors import FlavorPlan
from gke_ai_batch.plan.workloads import WorkloadPlan
from gke_ai_batch.plan.kueue import (
    KUEUE_API,
    QueuePlan,
    idle_cluster_queue,
    namespace_manifests,
    namespace_patches,
    network_policy_manifests,
    quota_quantity,
)


@dataclass(frozen=True)
class WorkerPlan:
    name: str
    plan: Plan
    rbac: list[dict[str, Any]]  # ServiceAccount, ClusterRoles, the read binding, token Secret: the manager's access
    access: dict[str, Any]  # the same as MultiKueueWorkerArgs, but for the cluster's endpoint and CA


@dataclass(frozen=True)
class FleetPlan:
    manager: Plan
    workers: list[WorkerPlan]
    multikueue: list[dict[str, Any]]  # AdmissionCheck, MultiKueueConfig, MultiKueueClusters, kubeconfig Secrets (shape)
    landing: dict[str, dict[str, Finding | None]] = dataclasses.field(default_factory=dict)
    """workload -> worker -> None where that worker's Kueue could admit it and its nodes run it,
    else why not, the verdict's refusal (the admission model, gke_ai_batch/model): where each
    sample can land."""

    def problems(self) -> list[Finding]:
        """What Kueue would refuse or deactivate on the manager, and flavors the workers define
        apart under one name (the manager's queue would count chips that are not alike)."""
        out: list[Finding] = []
        checks = [m for m in self.multikueue if m["kind"] == "AdmissionCheck"]
        for q in self.manager.queues:
            out += [at_key(f"gke-ai-batch:clusterQueues[{q.name}]", p.render()) for p in cluster_queue_problems(q.manifest, checks)]
        seen: dict[str, tuple[str, FlavorPlan]] = {}
        for w in self.workers:
            for f in w.plan.flavors:
                first = seen.setdefault(f.name, (w.name, f))
                if (f.node_labels, f.tolerations, f.kind) != (first[1].node_labels, first[1].tolerations, first[1].kind):
                    out.append(at_key(
                        "gke-ai-batch:fleet.workers",
                        f"flavor {f.name!r} means other nodes on worker {w.name} than on worker {first[0]}: the "
                        "manager would add up quotas of unlike capacity; name them apart",
                    ))
        index = {w.name: i for i, w in enumerate(self.manager.config.workloads)}
        for name, verdicts in self.landing.items():
            if verdicts and all(refusal is not None for refusal in verdicts.values()):
                why = "; ".join(f"worker {w}: {refusal.message}" for w, refusal in verdicts.items() if refusal)
                out.append(at_key(f"gke-ai-batch:workloads[{index[name]}]", f"no worker could ever run it: {why}"))
        return out


def job_frameworks(cfg: StackConfig) -> set[str]:
    """The job kinds the workers run for the manager: Kueue's integrations the worker RBAC
    covers (batch Jobs and JobSets)."""
    return {f for f in cfg.kueue.integrations if f in JOB_RESOURCES}


def build_fleet_plan(cfg: StackConfig, project: str = "my-project") -> FleetPlan:
    fleet = cfg.fleet
    assert fleet is not None, "build_fleet_plan needs a stack with a fleet"
    full = {w.name: build_plan(worker_stack(cfg, w).config, w.project or project) for w in fleet.workers}
    landing = _landing(cfg, full)
    # Workers run the samples only as MultiKueue's copies: their plans register none.
    workers = [_with_manager_access(name, _mirror_all(cfg, dataclasses.replace(plan, workloads=[])), cfg,
                                    {t.namespace for t in plan.teams})
               for name, plan in full.items()]
    checks = dispatch_checks(fleet.name, workers)
    manager = _manager_plan(cfg, project, workers, checks, _sample_plans(cfg, full))
    # One MultiKueueCluster (and kubeconfig Secret) per worker; one AdmissionCheck and
    # MultiKueueConfig per set of workers that some queue dispatches to.
    used = sorted(dict(checks.values()).items())
    return FleetPlan(manager, workers, manager_manifests(fleet.name, [w.name for w in fleet.workers], used), landing)


def _landing(cfg: StackConfig, plans: dict[str, Plan]) -> dict[str, dict[str, Finding | None]]:
    out: dict[str, dict[str, Finding | None]] = {wl.name: {} for wl in cfg.workloads}
    for worker, plan in plans.items():
        for verdict in Admission(plan).verdicts:
            out[verdict.workload.name][worker] = verdict.refusal
    return out


def _sample_plans(cfg: StackConfig, plans: dict[str, Plan]) -> list[WorkloadPlan]:
    """Each sample as the manager submits it: the workload the first worker that has its pool
    planned (the pod spec follows the pool, the same on every worker that has it)."""
    by_name: dict[str, WorkloadPlan] = {}
    for plan in plans.values():
        for w in plan.workloads:
            by_name.setdefault(w.name, w)
    return [by_name[wl.name] for wl in cfg.workloads if wl.name in by_name]


def dispatch_checks(fleet_name: str, workers: list[WorkerPlan]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """queue -> (its MultiKueue AdmissionCheck, the workers it dispatches to): the workers that
    serve the queue (mirror it with quota), in the fleet's order. MultiKueue creates a copy of each workload on every
    cluster of the check's MultiKueueConfig (the AllAtOnce dispatcher at once, Incremental in
    rounds: pkg/controller/admissionchecks/multikueue/workload.go), so a worker without the queue
    would only get copies that can never be admitted. Queues every worker serves share the
    fleet's own check; a queue only some workers serve gets one named after it."""
    everyone = tuple(w.name for w in workers)
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name in dict.fromkeys(q.name for w in workers for q in w.plan.queues if q.flavors):
        subset = tuple(w.name for w in workers if any(q.name == name and q.flavors for q in w.plan.queues))
        out[name] = (fleet_name, subset) if subset == everyone else (_check_name(fleet_name, name), subset)
    return out


def _check_name(fleet_name: str, queue: str) -> str:
    # An AdmissionCheck and a MultiKueueConfig are named like any object (DNS subdomain, 253
    # characters); the 63 kept here matches the other names a reviewer sees.
    name = f"{fleet_name}-{queue}"
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-')}-{digest}"


def _mirror_all(cfg: StackConfig, plan: Plan) -> Plan:
    """The worker's plan with every team and queue of the fleet: the namespaces (labels,
    NetworkPolicy, the teams' RBAC) and LocalQueues of all teams, and every ClusterQueue in the
    fleet's order, a queue none of whose flavors the worker has kept as an idle queue (no
    resource groups: idle_cluster_queue). The same namespaces and queues on every cluster is
    what MultiKueue assumes (the copy of a workload keeps its namespace and queue name) and
    what a team reading its jobs on any cluster expects."""
    every = plan.config.model_construct(**{**dict(plan.config), "teams": cfg.teams, "cluster_queues": cfg.cluster_queues})
    served = {q.name: q for q in plan.queues}
    return dataclasses.replace(
        plan,
        queues=[served.get(cq.name) or idle_cluster_queue(every, cq) for cq in cfg.cluster_queues],
        namespaces=namespace_manifests(every),
        namespace_patches=namespace_patches(every),
        network_policies=network_policy_manifests(every.teams),
        teams=team_plans(every),
        team_rbac=team_rbac_manifests(every),
    )


def _with_manager_access(name: str, plan: Plan, cfg: StackConfig, namespaces: set[str]) -> WorkerPlan:
    """The manager writes only in the team namespaces whose queues the worker serves (the only
    ones it dispatches to there: dispatch_checks). Those RoleBindings go with the namespace's
    own RBAC (Plan.team_rbac), which is registered once the namespace exists: registered with
    the rest, before it, the API server would refuse them (namespace not found). Everything
    else is the worker's `rbac`, registered once Kueue is in."""
    frameworks = sorted(job_frameworks(cfg))
    manifests = worker_rbac_manifests(frameworks, namespaces)
    team_rbac = {ns: list(docs) for ns, docs in plan.team_rbac.items()}
    for m in manifests:
        if m["kind"] == "RoleBinding":
            team_rbac.setdefault(m["metadata"]["namespace"], []).append(m)
    rbac = [m for m in manifests if m["kind"] != "RoleBinding"]
    access = {"worker": name, "namespaces": sorted(namespaces), "frameworks": frameworks, "bind_namespaces": False}
    return WorkerPlan(name, dataclasses.replace(plan, team_rbac=team_rbac), rbac, access)


def _manager_plan(
    cfg: StackConfig,
    project: str,
    workers: list[WorkerPlan],
    checks: dict[str, tuple[str, tuple[str, ...]]],
    samples: list[WorkloadPlan],
) -> Plan:
    """The manager queues every job and runs none: its flavors are the workers' (same names,
    labels and tolerations, no pools), each queue's quota is what its workers' mirrored queues
    hold together, and its queues admit through the MultiKueue check only (Kueue deactivates a
    queue that also has a ProvisioningRequest check: cluster_queue_problems)."""
    fleet = cfg.fleet
    flavors = _merged_flavors(workers)
    quotas = _summed_quotas(workers)
    queues = []
    for cq in cfg.cluster_queues:
        names = [f.name for f in cq.flavors] or list(flavors)
        entries = [QueueFlavor.model_construct(name=n, quotas={r: _text(r, a) for r, a in quotas.get((cq.name, n), {}).items()})
                   for n in names if n in flavors]
        queues.append(cq.model_copy(update={"flavors": entries}))
    manager_cfg = StackConfig.model_construct(
        **{**dict(cfg), "fleet": None, "node_pools": [], "workloads": [], "cluster_queues": queues,
           "flavors": [FlavorConfig.model_construct(name=f.name, pools=[], node_labels=f.node_labels,
                                                    tolerations=None, queued_provisioning=False) for f in flavors.values()]}
    )
    plan = build_plan(manager_cfg, project)
    multikueue_queues = [_through_multikueue(q, checks[q.name][0]) for q in plan.queues]
    return dataclasses.replace(
        plan, flavors=list(flavors.values()), queues=multikueue_queues, provisioning=[], multi_kueue=fleet.multi_kueue,
        # The manager submits the samples; its config names them, as the stack does.
        workloads=samples, config=plan.config.model_copy(update={"workloads": cfg.workloads}),
    )


def _merged_flavors(workers: list[WorkerPlan]) -> dict[str, FlavorPlan]:
    """Each flavor once, in the workers' order, with what all workers hold of it and no pools
    (the manager has none)."""
    merged: dict[str, FlavorPlan] = {}
    for w in workers:
        for f in w.plan.flavors:
            if f.name not in merged:
                merged[f.name] = dataclasses.replace(f, entries=(), pools=(), queued=False, capacity={}, slices=0, vms=0)
            m = merged[f.name]
            capacity = dict(m.capacity)
            for resource, amount in f.capacity.items():
                capacity[resource] = capacity.get(resource, 0) + amount
            merged[f.name] = dataclasses.replace(m, capacity=capacity, slices=m.slices + f.slices, vms=m.vms + f.vms)
    return merged


def _summed_quotas(workers: list[WorkerPlan]) -> dict[tuple[str, str], dict[str, float]]:
    """(queue, flavor) -> resource -> the workers' nominal quotas added up, in base units
    (cpu in millicores, memory in bytes, chips as counts)."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for w in workers:
        for q in w.plan.queues:
            for flavor, resources in q.quotas.items():
                into = out.setdefault((q.name, flavor), {})
                for resource, nominal in resources.items():
                    amount = quantity.value(nominal) or 0
                    if resource == CPU:
                        amount *= 1000
                    into[resource] = into.get(resource, 0) + amount
    return out


def _text(resource: str, amount: float) -> Any:
    if resource in (CPU, MEMORY):
        return quota_quantity(resource, int(amount))
    return int(amount) if float(amount).is_integer() else amount


def _through_multikueue(queue: QueuePlan, check: str) -> QueuePlan:
    spec = dict(queue.manifest["spec"])
    # One check for every flavor: where a job runs is the worker's choice, not the manager's.
    spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": check}]}
    manifest = {**queue.manifest, "spec": spec}
    return dataclasses.replace(queue, manifest=manifest, admission_checks=(check,))


__all__ = ["FleetPlan", "WorkerPlan", "build_fleet_plan", "MULTIKUEUE_CONTROLLER", "KUEUE_API"]
