"""The GKE cluster's arguments, less what only exists at deploy time (the node service
account's email), which the component adds."""

from __future__ import annotations

import hashlib
from typing import Any

from ..config.stack import StackConfig
from .pools import CLOUD_PLATFORM_SCOPE

NODE_SA_ROLE = "roles/container.defaultNodeServiceAccount"  # GKE's least-privilege node role
SA_ID_MAX = 30


SA_ID_HASH_LEN = 6


def node_service_account_id(cluster: str, location: str) -> str:
    """The node service account's id: <cluster>-nodes when that fits the 30 characters a
    service account id may have (6 to 30: [a-z][-a-z0-9]*[a-z0-9], IAM CreateServiceAccount
    accountId), as before, so existing stacks keep their account. A longer cluster name is cut,
    and a stable hash of the full name and location replaces the cut tail, so that
    ml-platform-production-us-central1 and ml-platform-production-us-east1 (or one name in two
    locations) get two accounts rather than one shared ml-platform-production-u-nodes."""
    suffix = "-nodes"
    if len(cluster) + len(suffix) <= SA_ID_MAX:
        return cluster + suffix
    digest = hashlib.sha256(f"{cluster}@{location}".encode()).hexdigest()[:SA_ID_HASH_LEN]
    room = SA_ID_MAX - len(suffix) - 1 - SA_ID_HASH_LEN
    return f"{cluster[:room].rstrip('-')}-{digest}{suffix}"


def cluster_args(cfg: StackConfig, project: str) -> dict[str, Any]:
    c = cfg.cluster
    args: dict[str, Any] = {
        "name": c.name,
        "location": c.location,
        "release_channel": {"channel": c.release_channel},
        "deletion_protection": c.deletion_protection,
        "network": c.network,
        # VPC-native (alias IPs): required for private nodes and the default GKE recommends.
        "ip_allocation_policy": {},
        "workload_identity_config": {"workload_pool": f"{project}.svc.id.goog"},
    }
    if c.node_locations:
        args["node_locations"] = list(c.node_locations)
    if c.min_master_version:
        args["min_master_version"] = c.min_master_version
    if c.subnetwork:
        args["subnetwork"] = c.subnetwork
    if c.private_nodes:
        args["private_cluster_config"] = {"enable_private_nodes": True, "enable_private_endpoint": False}
    if c.master_authorized_networks is not None:
        args["master_authorized_networks_config"] = {
            "cidr_blocks": [
                {"cidr_block": n.cidr, **({"display_name": n.name} if n.name else {})}
                for n in c.master_authorized_networks
            ]
        }
    if c.labels:
        args["resource_labels"] = dict(c.labels)
    if c.standard:
        # The default pool is removed at once; the system pool and accelerator pools are
        # separate resources, so changing them never touches the cluster.
        args["remove_default_node_pool"] = True
        args["initial_node_count"] = 1
        args["enable_shielded_nodes"] = True
        if c.auto_provisioning is not None:
            args["cluster_autoscaling"] = auto_provisioning_args(cfg)
    else:
        args["enable_autopilot"] = True
    return args


def auto_provisioning_args(cfg: StackConfig) -> dict[str, Any]:
    ap = cfg.cluster.auto_provisioning
    limits = [
        {"resource_type": "cpu", "minimum": ap.cpu.min, "maximum": ap.cpu.max},
        {"resource_type": "memory", "minimum": ap.memory_gb.min, "maximum": ap.memory_gb.max},
    ]
    limits += [
        {"resource_type": name, "minimum": lim.min, "maximum": lim.max} for name, lim in ap.accelerators.items()
    ]
    args: dict[str, Any] = {
        "enabled": True,
        "resource_limits": limits,
        "auto_provisioning_defaults": {
            "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
            "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
            # Auto-provisioned pools serve queued-provisioning requests (seed 003): a repair
            # would recreate a node outside its request. Auto-upgrade must stay on in a
            # release channel.
            "management": {"auto_repair": False, "auto_upgrade": True},
        },
    }
    locations = ap.locations or cfg.cluster.node_locations
    if locations:
        args["auto_provisioning_locations"] = list(locations)
    return args
