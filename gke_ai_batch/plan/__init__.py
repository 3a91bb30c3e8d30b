"""The derived plan: everything the stack file implies, computed once, without Pulumi.

Components register what the plan says; synth's report and the policy rules read the same
numbers (VMs and chips per slice, flavors, quotas), so they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gke_ai_batch.config.batch import KueueConfig, TeamConfig
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.plan.apis import required_apis
from gke_ai_batch.plan.checkpoints import BucketPlan, plan_buckets
from gke_ai_batch.plan.computeclasses import compute_class_manifest
from gke_ai_batch.plan.cluster import ClusterSpec, RegistryGrant, cluster_spec, grants_for, registry_images
from gke_ai_batch.plan.flavors import FlavorPlan, PoolSpec, plan_flavors, pool_spec
from gke_ai_batch.plan.kueue import (
    QueuePlan,
    TeamSpec,
    local_queue_manifest,
    namespace_manifests,
    namespace_patches,
    network_policy_manifests,
    plan_cluster_queues,
    pod_security_version,
    priority_manifests,
    provisioning_manifests,
    team_specs,
)
from gke_ai_batch.config.fleet import MultiKueueSettings
from gke_ai_batch.plan.installs import kueue_install_values, webhook_probe
from gke_ai_batch.plan.pools import PoolPlan, plan_pools, system_pool_args
from gke_ai_batch.plan.rbac import team_rbac_manifests
from gke_ai_batch.plan.topology import topology_manifest
from gke_ai_batch.plan.workloads import WorkloadPlan, plan_workloads

__all__ = ["Plan", "build_plan", "PoolPlan", "FlavorPlan", "QueuePlan", "WorkloadPlan"]


@dataclass(frozen=True)
class TeamPlan:
    namespace: str
    local_queue: str
    cluster_queue: str
    manifest: dict[str, Any]  # the LocalQueue
    config: TeamConfig | None = None  # the teams entry it was planned from (its component's args)


@dataclass(frozen=True)
class PriorityPlan:
    name: str
    value: int
    priority_class: dict[str, Any]
    workload_priority_class: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    config: StackConfig
    project: str
    pools: list[PoolPlan]
    system_pool: dict[str, Any] | None
    flavors: list[FlavorPlan]
    queues: list[QueuePlan]
    provisioning: list[dict[str, Any]]  # ProvisioningRequestConfig + AdmissionCheck, or []
    namespaces: list[dict[str, Any]]  # the team namespaces the program creates
    namespace_patches: list[dict[str, Any]]  # labels of team namespaces every cluster has (default)
    network_policies: list[dict[str, Any]]  # one per team namespace with networkPolicy on
    teams: list[TeamPlan]
    team_rbac: dict[str, list[dict[str, Any]]]  # namespace -> [Role, RoleBinding] of its teams' groups
    priorities: list[PriorityPlan]
    workloads: list[WorkloadPlan]
    registry_images: list[str]  # the images the cluster's pods pull (plan.cluster.registry_images)
    registry_grants: list[RegistryGrant]  # Artifact Registry repositories the nodes pull from
    apis: tuple[str, ...]  # Google Cloud APIs the cluster's project must have enabled (plan.apis)
    multi_kueue: MultiKueueSettings | None = None  # a fleet manager's (gke_ai_batch/plan/fleet.py)
    compute_classes: tuple[dict[str, Any], ...] = ()  # the ComputeClass objects (plan/computeclasses.py)
    topologies: tuple[dict[str, Any], ...] = ()  # the Kueue Topology objects (plan/topology.py)

    @property
    def kueue(self) -> KueueConfig:
        """The stack's kueue key as KueueInstall takes it: resourceMetrics, left unset, is on
        where gke-ai-batch:metrics collects Kueue's metrics (the dashboard charts quota used)
        and this program installs Kueue (an installed one is configured as it is);
        manageJobsWithoutQueueName is resolved against the cluster (StackConfig.manages_unqueued_jobs),
        since KueueInstall's own default is Kueue's."""
        k = self.config.kueue
        c = self.config.collected
        update: dict[str, Any] = {"manage_jobs_without_queue_name": self.config.manages_unqueued_jobs}
        if k.resource_metrics is None and k.installed is None and c is not None and c.managed_prometheus:
            update["resource_metrics"] = True
        return k.model_copy(update=update)

    @property
    def kueue_values(self) -> dict[str, Any]:
        """The Kueue chart's values, as KueueInstall derives them from its args."""
        return kueue_install_values(self.kueue, self.multi_kueue)

    @property
    def webhook_probe(self) -> list[dict[str, Any]]:
        return webhook_probe(self.config.kueue)

    @property
    def checkpoint_buckets(self) -> list[BucketPlan]:
        """A checkpoint bucket per team namespace (gke-ai-batch:checkpoints), or none."""
        return plan_buckets(self.config, self.project)

    @property
    def cluster_spec(self) -> ClusterSpec:
        """The stack's cluster as its component registers it (gke_ai_batch/components/platform.py)."""
        return cluster_spec(self.config, self.registry_images)

    @property
    def cluster_args(self) -> dict[str, Any]:
        return self.cluster_spec.cluster_args(self.project)

    @property
    def pool_specs(self) -> list[PoolSpec]:
        """Each pool entry with its planned GKE node pools: what the stack program hands each
        pool component (gke_ai_batch/components/platform.py)."""
        return [pool_spec(e, [p for p in self.pools if p.entry == e.name]) for e in self.config.node_pools]

    @property
    def team_specs(self) -> dict[str, TeamSpec]:
        """Each team namespace's TeamSpec: what the stack program hands its Team component."""
        teams = [t.config for t in self.teams if t.config is not None]
        return {spec.namespace: spec for spec in team_specs(teams, pod_security_version(self.config))}

    @property
    def slices(self) -> int:
        return sum(1 for p in self.pools if p.tpu is not None)

    @property
    def vms(self) -> int:
        return sum(p.nodes for p in self.pools)

    @property
    def tpu_chips(self) -> int:
        return sum(p.chips for p in self.pools if p.tpu is not None)

    @property
    def gpus(self) -> int:
        return sum(p.chips for p in self.pools if p.kind == "gpu")


def team_plans(cfg: StackConfig) -> list[TeamPlan]:
    return [
        TeamPlan(t.namespace, t.local_queue, t.cluster_queue, local_queue_manifest(t.namespace, t.local_queue, t.cluster_queue), t)
        for t in cfg.teams
    ]


def build_plan(cfg: StackConfig, project: str = "my-project") -> Plan:
    pools = plan_pools(cfg)
    flavors = plan_flavors(cfg, pools)
    queues = plan_cluster_queues(cfg, flavors)
    teams = team_plans(cfg)
    images = registry_images(cfg)
    priorities = [PriorityPlan(p.name, p.value, *priority_manifests(p.name, p.value, p.description)) for p in cfg.priorities]
    return Plan(
        config=cfg,
        project=project,
        pools=pools,
        system_pool=system_pool_args(cfg.cluster),
        flavors=flavors,
        queues=queues,
        provisioning=provisioning_manifests(cfg, flavors, queues),
        namespaces=namespace_manifests(cfg),
        namespace_patches=namespace_patches(cfg),
        network_policies=network_policy_manifests(cfg.teams),
        teams=teams,
        team_rbac=team_rbac_manifests(cfg),
        priorities=priorities,
        workloads=plan_workloads(cfg, project),
        registry_images=images,
        registry_grants=grants_for(images),
        apis=required_apis(cfg, project),
        compute_classes=tuple(compute_class_manifest(cc) for cc in cfg.compute_classes),
        topologies=tuple(topology_manifest(t.name, t.levels) for t in cfg.topologies),
    )
