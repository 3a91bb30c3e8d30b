"""Wire the components together in dependency order: cluster, node pools, JobSet, Kueue,
queues, teams, priorities, workloads.

The components annotate their attributes where __init__ sets them, not on the class: the SDK
takes a resource class's own annotations for output properties and resolves their types
(typing.get_type_hints on a class it makes for the purpose) at every registration of it,
64 Teams at 256 slices, for outputs no component has."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.batch import JobSetInstall, KueueInstall, stack_jobset_args, stack_kueue_args
from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster
from gke_ai_batch.components.metrics import Metrics, stack_metrics_args
from gke_ai_batch.domain.naming import scoped
from gke_ai_batch.components.nodepools import stack_pool_args
from gke_ai_batch.plan import Plan
from gke_ai_batch.components.priorities import Priorities, stack_priorities_args
from gke_ai_batch.components.queues import KueueQueues, Team
from gke_ai_batch.components.services import enable_apis
from gke_ai_batch.components.workloads import SampleWorkload


@dataclass
class ClusterDeployment:
    """What a fleet needs of one cluster it deployed: the cluster (endpoint, CA), what Kueue
    objects wait for, and the objects registered after Kueue (`after_kueue`), by name."""

    cluster: GkeCluster | ExistingCluster
    kueue_ready: list[pulumi.Resource]
    after_kueue: dict[str, pulumi.Resource]
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
    after_kueue: Sequence[dict[str, Any]] = (),
    admission_objects: Sequence[dict[str, Any]] = (),
    admission_needs: Sequence[pulumi.Resource] = (),
    apis: Sequence[pulumi.Resource] = (),
) -> ClusterDeployment:
    """deploy(), plus what one cluster of a fleet adds: `after_kueue`, objects registered in
    order once Kueue is installed (a worker's ServiceAccount, RBAC and token for the manager);
    `admission_objects`, registered in order before the ClusterQueues and after
    `admission_needs` (the manager's kubeconfig Secrets and MultiKueue objects, which wait for
    the workers); `apis`, the Service resources of the cluster's project (gke_ai_batch/components/services.py)."""
    cfg = plan.config
    kind = ExistingCluster if cfg.cluster.existing else GkeCluster
    cluster = kind(scoped(scope, cfg.cluster.name), plan, scope=scope, apis=apis)
    ref = cluster.ref()
    # Production protects every pool and what it needs (the tpu7x workload policy): through the
    # components' opts, which their children inherit.
    pool_opts = pulumi.ResourceOptions(protect=cfg.production, depends_on=list(apis))
    groups = []
    for entry in cfg.node_pools:
        component, args = stack_pool_args(entry, ref)
        groups.append(component(scoped(scope, entry.name), args, pool_opts))
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
    extra: dict[str, pulumi.Resource] = {}
    previous: list[pulumi.Resource] = list(kueue_ready)
    for manifest in after_kueue:
        made = k8s_objects.apply(manifest, pulumi.ResourceOptions(provider=provider, depends_on=previous), scope=scope)
        extra[k8s_objects.resource_name(manifest)] = made
        previous = [*kueue_ready, made]
    queues = KueueQueues(
        scoped(scope, "queues"),
        plan,
        provider,
        kueue_ready,
        scope=scope,
        checks=admission_objects,
        check_needs=admission_needs,
    )

    namespaces = {m["metadata"]["name"]: m for m in plan.namespaces}
    patches = {m["metadata"]["name"]: m for m in plan.namespace_patches}
    policies = {m["metadata"]["namespace"]: m for m in plan.network_policies}
    teams: dict[str, Team] = {}
    for team in plan.teams:
        if team.namespace not in teams:
            members = [t for t in plan.teams if t.namespace == team.namespace]
            teams[team.namespace] = Team(
                scoped(scope, team.namespace),
                namespaces.get(team.namespace),
                patches.get(team.namespace),
                policies.get(team.namespace),
                members,
                provider,
                queues,
                kueue_ready,
                rbac=plan.team_rbac.get(team.namespace, []),
                scope=scope,
            )
    priorities = Priorities(
        scoped(scope, "priorities"),
        stack_priorities_args(cfg.priorities),
        pulumi.ResourceOptions(provider=provider, depends_on=kueue_ready),
    )

    for wl in plan.workloads:
        team = teams[wl.namespace]
        needs: list[pulumi.Resource] = [*kueue_ready, *jobset]
        if team.namespace is not None:
            needs.append(team.namespace)
        if wl.queue is not None:
            needs.append(team.local_queues[wl.queue])
        if wl.priority is not None:
            needs.extend(priorities.classes[wl.priority])
        # Its pods pull only once the nodes may read the image's repository.
        needs.extend(cluster.readers_for(wl.image))
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
    return ClusterDeployment(cluster, kueue_ready, extra, outputs)
