"""Register a fleet: every worker as a cluster of its own (scope = its name), then the manager
(scope "manager"), whose MultiKueue objects wait for the workers.

Order, as gke_ai_batch/components/fleet/__init__.py explains: on a worker, Kueue and JobSet
first, then its MultiKueueWorker (the manager's ServiceAccount, ClusterRoles, read binding and
token Secret; the write RoleBindings go with each Team, once its namespace exists); on the
manager, a MultiKueueManager (each worker's kubeconfig Secret, from that worker's
MultiKueueWorker.kubeconfig, a Pulumi secret from end to end, then the MultiKueueClusters, the
MultiKueueConfigs and the AdmissionChecks), then the ClusterQueues that use it. The stack
program registers these objects through the same public components a library user has."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.config.fleet import MANAGER_SCOPE
from gke_ai_batch.plan.fleet import FleetPlan
from gke_ai_batch.components.platform import ClusterDeployment, deploy_cluster
from gke_ai_batch.components.services import enable_apis


def deploy_fleet(fleet: FleetPlan) -> dict[str, Any]:
    """Register every cluster; return the stack outputs, flat per cluster ("<scope>.<key>"), so
    that one cluster's secret kubeconfig does not make every output secret."""
    # One Service per API and project: clusters that share a project share its Services.
    apis = enable_apis([*(w.plan for w in fleet.workers), fleet.manager], fleet.manager.project)
    workers: dict[str, ClusterDeployment] = {
        w.name: deploy_cluster(w.plan, w.name, worker_access=w.access, apis=apis[w.plan.project]) for w in fleet.workers
    }
    access = {
        "workers": [
            {"name": name, "kubeconfig": d.multikueue.kubeconfig} for name, d in workers.items() if d.multikueue
        ],
        "admission_checks": [
            {"name": m["metadata"]["name"], "workers": list(m["spec"]["clusters"])}
            for m in fleet.multikueue
            if m["kind"] == "MultiKueueConfig"
        ],
    }
    needs = [r for d in workers.values() for r in [*d.kueue_ready, *([d.multikueue] if d.multikueue else [])]]
    manager = deploy_cluster(
        fleet.manager, MANAGER_SCOPE, manager_access=access, manager_needs=needs, apis=apis[fleet.manager.project]
    )
    outputs: dict[str, Any] = {}
    for scope, d in [(MANAGER_SCOPE, manager), *workers.items()]:
        outputs.update({f"{scope}.{key}": value for key, value in d.outputs.items()})
    return outputs
