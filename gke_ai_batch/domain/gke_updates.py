"""What GKE does to running work when an input of a cluster or node pool changes in place.

One table per Pulumi type, by input path (camelCase, as the program records them): the class
of the update and the GKE page that documents it. A change that replaces the resource is not
here (gke_ai_batch/synth/report/replacement.py FORCE_NEW holds the provider's ForceNew inputs); a path not
listed updates in place with nothing restarted.

Classes, as GKE's "Manage cluster lifecycle changes to minimize disruption" page sorts them
(https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters, "Types of
changes" and "Changes that require recreating nodes"):
- in place: GKE updates the setting; nodes and the control plane keep running;
- control plane: GKE restarts or upgrades the control plane; a zonal cluster has one replica,
  so its Kubernetes API is unavailable for a few minutes; a regional cluster's replicas
  restart one at a time (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters);
- recreates nodes: GKE recreates every node of the affected node pools (with the pool's
  upgrade strategy, and not waiting for a maintenance window for a cluster-level change), so
  every running pod on them stops; a TPU slice's job restarts whole.
"""

from __future__ import annotations

from dataclasses import dataclass

IN_PLACE = "in place"
CONTROL_PLANE = "control plane"
RECREATES_NODES = "recreates nodes"

MANAGING_CLUSTERS = "https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters"
NODE_UPGRADES = "https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies"
CLUSTER_UPGRADES = "https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades"
SHIELDED_NODES = "https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes"
WORKLOAD_IDENTITY = "https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity"
NETWORK_POLICY = "https://cloud.google.com/kubernetes-engine/docs/how-to/network-policy"
INTRANODE = "https://cloud.google.com/kubernetes-engine/docs/how-to/intranode-visibility"
PRIVATE_NODES = "https://cloud.google.com/kubernetes-engine/docs/how-to/latest/network-isolation"
SECRETS = "https://cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets"


@dataclass(frozen=True)
class Update:
    effect: str  # IN_PLACE | CONTROL_PLANE | RECREATES_NODES
    doc: str


# The order of the effects from least to most disruptive: a resource's step is its worst field's.
SEVERITY = (IN_PLACE, CONTROL_PLANE, RECREATES_NODES)

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"

UPDATES: dict[str, dict[str, Update]] = {
    CLUSTER_TYPE: {
        # A version change is a control plane upgrade; nodes follow by auto-upgrade later.
        "minMasterVersion": Update(CONTROL_PLANE, CLUSTER_UPGRADES),
        # Application-layer secrets encryption re-encrypts etcd through the control plane.
        "databaseEncryption": Update(CONTROL_PLANE, SECRETS),
        "controlPlaneEndpointsConfig": Update(CONTROL_PLANE, PRIVATE_NODES),
        "privateClusterConfig.enablePrivateEndpoint": Update(CONTROL_PLANE, PRIVATE_NODES),
        # Cluster-wide workload identity is a control plane change; each pool's metadata mode
        # (nodeConfig.workloadMetadataConfig below) is what recreates nodes.
        "workloadIdentityConfig": Update(CONTROL_PLANE, WORKLOAD_IDENTITY),
        # Cluster-level changes GKE applies by recreating every node of every pool.
        "enableShieldedNodes": Update(RECREATES_NODES, SHIELDED_NODES),
        "privateClusterConfig.enablePrivateNodes": Update(RECREATES_NODES, PRIVATE_NODES),
        "networkPolicy": Update(RECREATES_NODES, NETWORK_POLICY),
        "addonsConfig.networkPolicyConfig": Update(RECREATES_NODES, NETWORK_POLICY),
        "enableIntranodeVisibility": Update(RECREATES_NODES, INTRANODE),
        "nodeConfig": Update(RECREATES_NODES, MANAGING_CLUSTERS),
    },
    NODE_POOL_TYPE: {
        # Node configuration GKE rolls out by recreating the pool's nodes with its upgrade strategy.
        "version": Update(RECREATES_NODES, NODE_UPGRADES),
        "nodeConfig.machineType": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.gvnic": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.workloadMetadataConfig": Update(RECREATES_NODES, WORKLOAD_IDENTITY),
        "nodeConfig.imageType": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.tags": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.diskSizeGb": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.diskType": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.kubeletConfig": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.linuxNodeConfig": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.gcfsConfig": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.confidentialNodes": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "nodeConfig.sandboxConfig": Update(RECREATES_NODES, MANAGING_CLUSTERS),
        "networkConfig.enablePrivateNodes": Update(RECREATES_NODES, PRIVATE_NODES),
        # Nodes in a zone dropped from the list are deleted (their pods evicted).
        "nodeLocations": Update(RECREATES_NODES, MANAGING_CLUSTERS),
    },
}


def update_of(type_: str, path: str) -> Update:
    """The class of an in-place change at `path` (a leaf or a block) of a `type_` resource."""
    for key, update in (UPDATES.get(type_) or {}).items():
        if path == key or path.startswith(key + ".") or key.startswith(path + "."):
            return update
    return Update(IN_PLACE, "")


def worst(updates) -> Update:
    return max(updates, key=lambda u: SEVERITY.index(u.effect), default=Update(IN_PLACE, ""))
