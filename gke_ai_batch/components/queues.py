"""Kueue's objects: ResourceFlavors, the ProvisioningRequest admission check, ClusterQueues,
team namespaces with their LocalQueues (priorities: priorities.py). Every Kueue object waits for the Kueue
install (and its webhook probe); namespaces come before what lives in them."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.plan import Plan, TeamPlan


def _opts(parent: pulumi.Resource, provider: k8s.Provider, depends_on: list[pulumi.Resource]) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=depends_on)


class KueueQueues(pulumi.ComponentResource):
    """ResourceFlavors, the admission check for queued flavors, and ClusterQueues."""

    def __init__(
        self,
        resource_name: str,
        plan: Plan,
        provider: k8s.Provider,
        kueue_ready: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
        checks: Sequence[dict] = (),
        check_needs: Sequence[pulumi.Resource] = (),
    ):
        """`checks`: admission objects beyond the plan's ProvisioningRequest check (a fleet
        manager's kubeconfig Secrets and MultiKueue objects), each after the ones before it and
        after `check_needs`."""
        super().__init__("gke-ai-batch:queues:Queues", resource_name, None, opts)
        self.flavors: dict[str, pulumi.Resource] = {
            f.name: k8s_objects.apply(f.manifest(), _opts(self, provider, kueue_ready), scope=scope)
            for f in plan.flavors
        }
        made: list[pulumi.Resource] = []
        for manifest in [*plan.provisioning, *checks]:
            # An AdmissionCheck names its parameters object (ProvisioningRequestConfig,
            # MultiKueueConfig, which names its MultiKueueClusters, which name their Secrets):
            # each is created after what it names.
            made.append(
                k8s_objects.apply(manifest, _opts(self, provider, [*kueue_ready, *check_needs, *made]), scope=scope)
            )
        checks = made
        self.cluster_queues: dict[str, pulumi.Resource] = {}
        for queue in plan.queues:
            needs = [self.flavors[f] for f in queue.flavors] + (checks if queue.admission_checks else [])
            self.cluster_queues[queue.name] = k8s_objects.apply(
                queue.manifest, _opts(self, provider, [*kueue_ready, *needs]), scope=scope
            )
        self.register_outputs(
            {"flavors": sorted(self.flavors), "clusterQueues": sorted(self.cluster_queues)}
        )


class Team(pulumi.ComponentResource):
    """A team's namespace (created, or for one every cluster has, patched with its Pod Security
    labels), its NetworkPolicy, its LocalQueues, and the Role and RoleBinding of its Google
    Group."""

    def __init__(
        self,
        resource_name: str,
        namespace_manifest: dict | None,
        namespace_patch: dict | None,
        network_policy: dict | None,
        teams: list[TeamPlan],
        provider: k8s.Provider,
        queues: KueueQueues,
        kueue_ready: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        rbac: list[dict] | None = None,
        *,
        scope: str = "",
    ):
        super().__init__("gke-ai-batch:queues:Team", resource_name, None, opts)
        self.namespace: pulumi.Resource | None = None
        if namespace_manifest is not None:
            self.namespace = k8s_objects.apply(
                namespace_manifest, pulumi.ResourceOptions(parent=self, provider=provider), scope=scope
            )
        elif namespace_patch is not None:
            # Its pods' level must be in place before any workload's pods are created.
            self.namespace = k8s_objects.apply(
                namespace_patch, pulumi.ResourceOptions(parent=self, provider=provider), patch=True, scope=scope
            )
        ns = [self.namespace] if self.namespace is not None else []
        self.network_policy: pulumi.Resource | None = None
        if network_policy is not None:
            self.network_policy = k8s_objects.apply(network_policy, _opts(self, provider, ns), scope=scope)
        self.local_queues: dict[str, pulumi.Resource] = {
            t.local_queue: k8s_objects.apply(
                t.manifest,
                _opts(self, provider, [*kueue_ready, *ns, queues.cluster_queues[t.cluster_queue]]),
                scope=scope,
            )
            for t in teams
        }
        # Role first, then the RoleBinding that names it; both inside the namespace.
        self.rbac: list[pulumi.Resource] = []
        for manifest in rbac or []:
            self.rbac.append(k8s_objects.apply(manifest, _opts(self, provider, [*ns, *self.rbac]), scope=scope))
        # The namespace's own name: resource_name carries the cluster's scope.
        self.register_outputs({"namespace": teams[0].namespace, "localQueues": sorted(self.local_queues)})

