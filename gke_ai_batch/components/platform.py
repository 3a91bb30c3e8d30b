"""Wire the components together in dependency order: cluster, node pools, JobSet, Kueue,
queues, teams, priorities, workloads.

The components annotate their attributes where __init__ sets them, not on the class: the SDK
takes a resource class's own annotations for output properties and resolves their types
(typing.get_type_hints on a class it makes for the purpose) at every registration of it,
64 Teams at 256 slices, for outputs no component has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.batch import JobSetInstall, KueueInstall, stack_jobset_args, stack_kueue_args
from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster, StackExistingCluster, StackGkeCluster
from gke_ai_batch.components.computeclasses import ComputeClasses, stack_compute_classes_args
from gke_ai_batch.components.topology import Topologies, stack_topologies_args
from gke_ai_batch.components.metrics import Metrics, stack_metrics_args
from gke_ai_batch.components.multikueue import BASE as MULTIKUEUE, MultiKueueManager, MultiKueueWorker
from gke_ai_batch.domain.naming import scoped
from gke_ai_batch.components.nodepools import POOL_COMPONENTS
from gke_ai_batch.plan import Plan
from gke_ai_batch.plan.kueue import TeamSpec
from gke_ai_batch.components.priorities import Priorities, stack_priorities_args
from gke_ai_batch.components.queues import (
    OLD_QUEUES_TYPE,
    ClusterQueue,
    ProvisioningCheck,
    ResourceFlavor,
    Team,
)
from gke_ai_batch.components.services import enable_apis
from gke_ai_batch.components.storage import CheckpointBucket, stack_bucket_args
from gke_ai_batch.components.workloads import SampleWorkload


@dataclass
class ClusterDeployment:
    """What a fleet needs of one cluster it deployed: the cluster, what Kueue objects wait for,
    and on a worker the manager's access to it (its kubeconfig among MultiKueueWorker's outputs)."""

    cluster: GkeCluster | ExistingCluster
    kueue_ready: list[pulumi.Resource]
    multikueue: MultiKueueWorker | None
    outputs: dict[str, Any]


def deploy(plan: Plan, scope: str = "") -> dict[str, Any]:
    """Register every resource of the plan, its project's APIs first; return the stack outputs.

    `scope`: "" for a stack of one cluster; for one cluster of several, every logical name this
    registers is "<scope>/<name>" (gke_ai_batch.domain.naming.scoped) so that the clusters' URNs differ,
    and the outputs are returned as they are, for the caller to nest per cluster."""
    apis = enable_apis([plan], plan.project, scope)[plan.project]
    return deploy_cluster(plan, scope, apis=apis).outputs


def deploy_cluster(
    plan: Plan,
    scope: str = "",
    *,
    worker_access: Mapping[str, Any] | None = None,
    manager_access: Mapping[str, Any] | None = None,
    manager_needs: Sequence[pulumi.Resource] = (),
    apis: Sequence[pulumi.Resource] = (),
) -> ClusterDeployment:
    """deploy(), plus what one cluster of a fleet adds: on a worker, `worker_access`
    (MultiKueueWorkerArgs but for this cluster's endpoint and CA), a MultiKueueWorker once Kueue
    is installed (the manager's ServiceAccount, RBAC and token); on the manager,
    `manager_access` (MultiKueueManagerArgs), a MultiKueueManager before the ClusterQueues and
    after `manager_needs` (the workers' Kueue and MultiKueueWorkers); `apis`, the Service
    resources of the cluster's project (gke_ai_batch/components/services.py)."""
    cfg = plan.config
    # Production protects the cluster, every pool and what they need (the node service account,
    # the tpu7x workload policy): through the components' opts, which their children inherit.
    # Every Google Cloud resource waits for the project's APIs.
    opts = pulumi.ResourceOptions(protect=cfg.production, depends_on=list(apis))
    # The cluster from the plan, as the stack validated it: registered as planned.
    kind = StackExistingCluster if cfg.cluster.existing else StackGkeCluster
    cluster = kind.from_spec(scoped(scope, cfg.cluster.name), plan.cluster_spec, plan.project, opts)
    ref = cluster.ref()
    # Each pool entry's component from the plan: the entry the stack validated and the pools it
    # planned, registered as they are.
    groups = [
        POOL_COMPONENTS[spec.entry.kind].from_spec(scoped(scope, spec.entry.name), spec, ref, opts)
        for spec in plan.pool_specs
    ]
    provider = cluster.provider
    k8s_opts = pulumi.ResourceOptions(provider=provider)
    # Kueue and JobSet some other party installed (an existing cluster's): nothing to install,
    # nothing to wait for; their objects still are this program's.
    jobset: list[pulumi.Resource] = []
    if cfg.jobset.installed is None:
        jobset.append(JobSetInstall(scoped(scope, "jobset"), stack_jobset_args(cfg.jobset), k8s_opts))
    kueue_ready: list[pulumi.Resource] = []
    if cfg.kueue.installed is None:
        kueue = KueueInstall(
            scoped(scope, "kueue"),
            stack_kueue_args(plan.kueue, plan.multi_kueue),
            # Kueue's chart after JobSet's; the probe Pod after its image is readable.
            pulumi.ResourceOptions(provider=provider, depends_on=[*jobset, *cluster.readers_for(cfg.kueue.probe_image)]),
        )
        kueue_ready = kueue.ready
    if cfg.metrics is not None:
        # Its objects live in Kueue's and JobSet's namespaces, which their releases create.
        Metrics(
            scoped(scope, "metrics"),
            stack_metrics_args(plan),
            pulumi.ResourceOptions(provider=provider, depends_on=[*jobset, *kueue_ready]),
        )
    worker = None
    if worker_access is not None:
        # Its objects had no parent before the component: the aliases keep their URNs.
        worker = MultiKueueWorker(
            scoped(scope, MULTIKUEUE),
            {**worker_access, "endpoint": cluster.endpoint, "ca_certificate": cluster.cluster_ca_certificate},
            pulumi.ResourceOptions(provider=provider, depends_on=kueue_ready, transformations=[_moved_from(None)]),
        )
    if cfg.compute_classes:
        ComputeClasses(scoped(scope, "compute-classes"), stack_compute_classes_args(cfg.compute_classes), k8s_opts)
    if cfg.topologies:
        # Kueue serves the Topology CRD; the flavors name these objects.
        Topologies(
            scoped(scope, "topologies"),
            stack_topologies_args(cfg.topologies),
            pulumi.ResourceOptions(provider=provider, depends_on=kueue_ready),
        )
    queues = _queues(plan, scope, provider, kueue_ready, manager_access, manager_needs)

    teams: dict[str, Team] = {}
    specs = plan.team_specs
    for team in plan.teams:
        if team.namespace not in teams:
            used = dict.fromkeys(t.cluster_queue for t in plan.teams if t.namespace == team.namespace)
            teams[team.namespace] = _team(plan, scope, specs[team.namespace], provider, [*kueue_ready, *(queues[q] for q in used)])
    buckets = deploy_checkpoints(plan, scope, teams, provider, apis)
    priorities = Priorities(
        scoped(scope, "priorities"),
        stack_priorities_args(cfg.priorities),
        pulumi.ResourceOptions(provider=provider, depends_on=kueue_ready),
    )

    for wl in plan.workloads:
        team = teams[wl.namespace]
        needs: list[pulumi.Resource] = [*kueue_ready, *jobset]
        needs.append(team.namespace_object)
        if wl.queue is not None:
            needs.append(team.queue_objects[wl.queue])
        if wl.priority is not None:
            needs.extend(priorities.classes[wl.priority])
        # Its pods pull only once the nodes may read the image's repository. A fleet manager's
        # samples are not among its images: MultiKueue runs their pods on the workers, whose
        # nodes have the grant.
        if wl.image in plan.registry_images:
            needs.extend(cluster.readers_for(wl.image))
        if wl.checkpoints:
            # Its pods run as the team's service account and mount the bucket it may use.
            needs.append(buckets[wl.namespace])
        SampleWorkload(scoped(scope, wl.name), wl, provider, needs, scope=scope)

    outputs = {
        "clusterName": cluster.name,
        "endpoint": cluster.endpoint,
        "apiServer": cluster.api_server,
        "kubeconfig": cluster.kubeconfig,
        "nodePools": pulumi.Output.all(*[g.pool_names for g in groups]).apply(
            lambda names: [n for group in names for n in group]
        ),
        "flavors": [f.name for f in plan.flavors],
        "clusterQueues": [q.name for q in plan.queues],
        "capacity": {"slices": plan.slices, "vms": plan.vms, "tpuChips": plan.tpu_chips, "gpus": plan.gpus},
    }
    return ClusterDeployment(cluster, kueue_ready, worker, outputs)


def _moved_from(old_parent: pulumi.Resource | None):
    """A transformation that gives each resource of a component the alias of its old URN, as a
    child of `old_parent` (None: of the stack itself): an object Queues, or the stack, held
    before it had a component of its own keeps its identity, and `pulumi up` neither replaces
    nor deletes it (a transformation reaches every child of the component it is given to:
    pulumi/resource.py, Resource.__init__; Alias(parent=None) is "no parent", pulumi/resource.py
    ROOT_STACK_RESOURCE)."""

    def alias(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
        if isinstance(args.resource, pulumi.ComponentResource):
            return None
        moved = pulumi.ResourceOptions(aliases=[pulumi.Alias(parent=old_parent)])
        return pulumi.ResourceTransformationResult(args.props, pulumi.ResourceOptions.merge(args.opts, moved))

    return alias


def _queues(
    plan: Plan,
    scope: str,
    provider: pulumi.ProviderResource,
    kueue_ready: list[pulumi.Resource],
    manager_access: Mapping[str, Any] | None,
    manager_needs: Sequence[pulumi.Resource],
) -> dict[str, ClusterQueue]:
    """The flavors, the admission checks and the ClusterQueues, in that order, under the
    component that held them all before each had its own (so their URNs keep a parent of that
    type, and the objects their aliases)."""
    group = pulumi.ComponentResource(OLD_QUEUES_TYPE, scoped(scope, "queues"))
    moved = pulumi.ResourceOptions(parent=group, provider=provider, transformations=[_moved_from(group)])

    def opts(*needs: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(moved, pulumi.ResourceOptions(depends_on=[*kueue_ready, *needs]))

    flavors = {f.name: ResourceFlavor.from_spec(scoped(scope, f.name), f, opts()) for f in plan.flavors}
    checks: list[pulumi.Resource] = []
    if plan.provisioning:
        k = plan.config.kueue
        checks.append(ProvisioningCheck.from_spec(scoped(scope, k.provisioning_admission_check), plan.provisioning, opts()))
    if manager_access is not None:
        # A fleet manager's kubeconfig Secrets and MultiKueue objects, after the workers'.
        checks.append(MultiKueueManager(scoped(scope, MULTIKUEUE), manager_access, opts(*manager_needs, *checks)))
    queues = {
        q.name: ClusterQueue.from_spec(
            scoped(scope, q.name),
            q,
            opts(*[flavors[f] for f in q.flavors], *(checks if q.admission_checks else [])),
        )
        for q in plan.queues
    }
    group.register_outputs({"flavors": sorted(flavors), "clusterQueues": sorted(q.name for q in plan.queues)})
    return queues


def _team(
    plan: Plan, scope: str, spec: TeamSpec, provider: pulumi.ProviderResource, needs: list[pulumi.Resource]
) -> Team:
    """A team namespace's Team, then the RoleBindings a fleet's manager has in it (which wait
    for the namespace and are the Team's children, as they always were)."""
    team = Team.from_spec(scoped(scope, spec.namespace), spec, pulumi.ResourceOptions(provider=provider, depends_on=needs))
    previous = [team.namespace_object, *team.rbac]
    for manifest in plan.team_rbac.get(spec.namespace, []):
        if manifest not in spec.rbac:
            previous.append(
                k8s_objects.apply(manifest, pulumi.ResourceOptions(parent=team, provider=provider, depends_on=list(previous)), scope=scope)
            )
    return team


def deploy_checkpoints(
    plan: Plan, scope: str, teams: dict[str, Team], provider: pulumi.ProviderResource, apis: Sequence[pulumi.Resource]
) -> dict[str, CheckpointBucket]:
    """A CheckpointBucket per team namespace (gke-ai-batch:checkpoints), each after the project's
    APIs and the namespace its service account lives in."""
    out: dict[str, CheckpointBucket] = {}
    for bucket in plan.checkpoint_buckets:
        team = teams[bucket.namespace]
        needs = [*apis, team.namespace_object]
        out[bucket.namespace] = CheckpointBucket(
            scoped(scope, f"{bucket.namespace}-checkpoints"),
            stack_bucket_args(bucket),
            pulumi.ResourceOptions(provider=provider, depends_on=needs, protect=plan.config.production),
        )
    return out
