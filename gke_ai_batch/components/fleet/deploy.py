"""Register a fleet: every worker as a cluster of its own (scope = its name), then the manager
(scope "manager"), whose MultiKueue objects wait for the workers.

Order, as gke_ai_batch/components/fleet/__init__.py explains: on a worker, Kueue and JobSet first, then the
manager's ServiceAccount, ClusterRole, binding and token Secret; on the manager, each worker's
kubeconfig Secret (its endpoint, its CA and that token, assembled here, a Pulumi secret from
end to end), then the MultiKueueClusters, the MultiKueueConfig and the AdmissionCheck, then
the ClusterQueues that use it."""

from __future__ import annotations

from typing import Any

import pulumi

from gke_ai_batch.config.fleet import MANAGER_SCOPE
from gke_ai_batch.components.k8s import resource_name
from gke_ai_batch.plan.fleet import FleetPlan
from gke_ai_batch.components.platform import ClusterDeployment, deploy_cluster
from gke_ai_batch.components.services import enable_apis
from gke_ai_batch.components.multikueue import kubeconfig_for
from gke_ai_batch.plan.multikueue import encode_kubeconfig, kubeconfig_secret
from gke_ai_batch.domain.multikueue_worker import token_secret



def deploy_fleet(fleet: FleetPlan) -> dict[str, Any]:
    """Register every cluster; return the stack outputs, flat per cluster ("<scope>.<key>"), so
    that one cluster's secret kubeconfig does not make every output secret."""
    # One Service per API and project: clusters that share a project share its Services.
    apis = enable_apis([*(w.plan for w in fleet.workers), fleet.manager], fleet.manager.project)
    workers: dict[str, ClusterDeployment] = {
        w.name: deploy_cluster(w.plan, w.name, after_kueue=w.rbac, apis=apis[w.plan.project]) for w in fleet.workers
    }
    secrets = [kubeconfig_secret(name, _kubeconfig(name, d)) for name, d in workers.items()]
    # Each after what it names: Secrets, then MultiKueueClusters, the MultiKueueConfig, the check.
    order = {"MultiKueueCluster": 0, "MultiKueueConfig": 1, "AdmissionCheck": 2}
    multikueue = sorted((m for m in fleet.multikueue if m["kind"] in order), key=lambda m: order[m["kind"]])
    needs = [r for d in workers.values() for r in [*d.kueue_ready, *d.after_kueue.values()]]
    manager = deploy_cluster(
        fleet.manager,
        MANAGER_SCOPE,
        admission_objects=[*secrets, *multikueue],
        admission_needs=needs,
        apis=apis[fleet.manager.project],
    )
    outputs: dict[str, Any] = {}
    for scope, d in [(MANAGER_SCOPE, manager), *workers.items()]:
        outputs.update({f"{scope}.{key}": value for key, value in d.outputs.items()})
    return outputs


def _kubeconfig(worker: str, d: ClusterDeployment) -> pulumi.Output[str]:
    """The Secret's data value: base64 of the kubeconfig Kueue reads (key `kubeconfig`)."""
    token = d.after_kueue[resource_name(token_secret())]
    text = kubeconfig_for(worker, d.cluster.endpoint, d.cluster.cluster_ca_certificate, token)
    return pulumi.Output.secret(text.apply(encode_kubeconfig))
