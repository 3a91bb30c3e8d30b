"""NodePoolGroup: one stack-file pool entry. A TPU entry with N slices becomes N node pools
(<name>-0 .. <name>-N-1), each one slice; other entries become one pool."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.components.cluster import GkeCluster
from gke_ai_batch.config.cluster import region_of
from gke_ai_batch.domain.naming import scoped
from gke_ai_batch.plan import Plan, PoolPlan
from gke_ai_batch.plan.pools import workload_policy_args


class NodePoolGroup(pulumi.ComponentResource):
    def __init__(
        self,
        resource_name: str,
        plan: Plan,
        pools: list[PoolPlan],
        cluster: GkeCluster,
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
        apis: Sequence[pulumi.Resource] = (),
    ):
        """`apis`: the project's enabled APIs (Compute Engine's for the workload policy)."""
        super().__init__("gke-ai-batch:nodepools:NodePoolGroup", resource_name, None, opts)
        cfg = plan.config
        self.workload_policy = None
        if pools and pools[0].workload_policy is not None:
            self.workload_policy = gcp.compute.ResourcePolicy(
                scoped(scope, pools[0].workload_policy),
                project=plan.project,
                **workload_policy_args(pools[0], region_of(cfg.cluster.location)),
                # Fixed names: a replacement must delete the old one first.
                opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True, depends_on=list(apis)),
            )
        self.node_pools: list[gcp.container.NodePool] = []
        for pool in pools:
            args = dict(pool.args)
            args["node_config"] = {**args["node_config"], "service_account": cluster.node_service_account}
            if self.workload_policy is not None:
                # Same name as planned; the Output makes the pool wait for the policy.
                args["placement_policy"] = {**args["placement_policy"], "policy_name": self.workload_policy.name}
            self.node_pools.append(
                gcp.container.NodePool(
                    scoped(scope, pool.name),
                    cluster=cluster.name,
                    location=cluster.cluster.location,
                    project=plan.project,
                    **args,
                    opts=pulumi.ResourceOptions(
                        parent=self,
                        protect=cfg.production,
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
            )
        self.pool_names: pulumi.Output[list[str]] = pulumi.Output.all(*[p.name for p in self.node_pools])
        self.register_outputs({"poolNames": self.pool_names})
