"""The GKE cluster as its component registers it (ClusterSpec: from a stack's plan, or from a
program's args), and the Cluster resource's arguments, less what only exists at deploy time (the
node service account's email), which the component adds."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gke_ai_batch.config.cluster import ClusterConfig
from gke_ai_batch.config.lookups import ClusterFacts
from gke_ai_batch.config.maintenance import Exclusion, MaintenancePolicy
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.plan.checkpoints import addons_args, addons_config
from gke_ai_batch.plan.metrics import monitoring_config
from gke_ai_batch.plan.pools import CLOUD_PLATFORM_SCOPE, system_pool_args

# pulumi-gcp Cluster: datapath_provider ADVANCED_DATAPATH is Dataplane V2 (the default,
# LEGACY_DATAPATH, is kube-proxy on iptables); binary_authorization.evaluation_mode.
ADVANCED_DATAPATH = "ADVANCED_DATAPATH"
BINAUTHZ_ENFORCE = "PROJECT_SINGLETON_POLICY_ENFORCE"
NODE_SA_ROLE = "roles/container.defaultNodeServiceAccount"  # GKE's least-privilege node role
SA_ID_MAX = 30

# Pulling from a private Artifact Registry repository takes roles/artifactregistry.reader on
# it; the node role above carries no Artifact Registry permission, and only the Compute Engine
# default account gets same-project pulls by default (cloud.google.com/artifact-registry/docs/
# integrate-gke; GKE docs security/configure-node-service-accounts; CIS GKE 5.2.1: grant
# artifactregistry.reader "for pulling private images from Artifact Registry repositories").
REGISTRY_READER_ROLE = "roles/artifactregistry.reader"
# Docker repositories are addressed <location>-docker.pkg.dev/<project>/<repository>/<image>
# (domain-scoped projects as <domain>/<project>; Artifact Registry docs docker/names).
_AR_IMAGE = re.compile(r"(?P<location>[a-z][a-z0-9-]*[a-z0-9])-docker\.pkg\.dev/(?P<path>[^@]+)(@.*)?")
# Google's public image projects: anyone may pull, and nobody outside Google may change their
# IAM policy, so a grant would only fail (us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu
# is the image GKE's TPU guides run).
PUBLIC_REGISTRY_PROJECTS = frozenset({"cloud-tpu-images"})


@dataclass(frozen=True, order=True)
class RegistryGrant:
    """roles/artifactregistry.reader for the node service account on one repository."""

    project: str
    location: str
    repository: str

    @property
    def resource_name(self) -> str:
        # Slashes keep it unambiguous (locations and project ids contain dashes).
        return f"nodes-reader/{self.location}/{self.project}/{self.repository}"


def registry_repository(image: str) -> RegistryGrant | None:
    """The Artifact Registry repository an image is pulled from, or None when it is not on
    Artifact Registry or is one of Google's public images."""
    m = _AR_IMAGE.fullmatch(image)
    if m is None:
        return None
    parts = m["path"].split("/")
    if "." in parts[0]:  # domain-scoped project: <domain>/<project> stands for <domain>:<project>
        parts = [f"{parts[0]}:{parts[1]}", *parts[2:]] if len(parts) > 1 else parts
    if len(parts) < 3:  # no image below the repository: nothing a pod could pull
        return None
    project, repository = parts[0], parts[1]
    if project in PUBLIC_REGISTRY_PROJECTS:
        return None
    return RegistryGrant(project=project, location=m["location"], repository=repository)


def registry_images(cfg: StackConfig) -> list[str]:
    """The images the stack's pods pull: every workload's and the Kueue webhook probe's."""
    images = [wl.image for wl in cfg.workloads]
    if cfg.kueue.webhook_gate:
        images.append(cfg.kueue.probe_image)
    return images


def grants_for(images: list[str]) -> list[RegistryGrant]:
    """One grant per repository these images are pulled from. Every node runs as the
    cluster's node service account (Standard pools, auto-provisioned pools and Autopilot
    alike), so that account is the one to grant."""
    return sorted({g for g in map(registry_repository, images) if g is not None})


def registry_grants(cfg: StackConfig) -> list[RegistryGrant]:
    return grants_for(registry_images(cfg))


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


@dataclass(frozen=True)
class ClusterSpec:
    """A cluster as its component registers it (gke_ai_batch/components/cluster.py): the
    validated cluster key, the facts its rules (and its pools' rules) stand on, the images its
    pods pull, and what else the cluster turns on: the CSI drivers of `addons` (AddonsArgs: a
    stack's checkpoints key, addons_args) and the metrics of `monitoring` (MonitoringArgs: a
    stack's metrics key; None: GKE's defaults). The stack's plan makes it from the stack
    (cluster_spec), a cluster component from its args."""

    cluster: ClusterConfig
    facts: ClusterFacts
    registry_images: tuple[str, ...] = ()
    addons: Mapping[str, bool] = field(default_factory=dict)
    monitoring: Mapping[str, bool] | None = None

    @property
    def registry_grants(self) -> list[RegistryGrant]:
        return grants_for(list(self.registry_images))

    @property
    def system_pool(self) -> dict[str, Any] | None:
        return system_pool_args(self.cluster)

    def cluster_args(self, project: str) -> dict[str, Any]:
        """The Cluster resource's arguments, less the node service account's email."""
        c = self.cluster
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
        args.update(control_plane_args(c))
        if c.database_encryption is not None:
            args["database_encryption"] = {"state": "ENCRYPTED", "key_name": c.database_encryption.key_name}
        if c.binary_authorization:
            # evaluation_mode replaces the deprecated `enabled` (pulumi-gcp ClusterBinaryAuthorization).
            args["binary_authorization"] = {"evaluation_mode": BINAUTHZ_ENFORCE}
        if c.labels:
            args["resource_labels"] = dict(c.labels)
        if c.maintenance is not None:
            args["maintenance_policy"] = maintenance_policy_args(c.maintenance)
        args.update(addons_config(c.standard, **self.addons))
        if self.monitoring is not None:
            args["monitoring_config"] = monitoring_config(**self.monitoring)
        if c.security_group:
            # Google Groups for RBAC, Standard and Autopilot alike (gcloud's create-auto takes
            # --security-group: 'authenticatorsecurity' is among its auto_flags).
            args["authenticator_groups_config"] = {"security_group": c.security_group}
        if c.standard:
            # The default pool is removed at once; the system pool and accelerator pools are
            # separate resources, so changing them never touches the cluster.
            args["remove_default_node_pool"] = True
            args["initial_node_count"] = 1
            args["enable_shielded_nodes"] = True
            if c.dataplane_v2:
                # Autopilot always runs Dataplane V2 and takes no datapath_provider of ours.
                args["datapath_provider"] = ADVANCED_DATAPATH
            if c.auto_provisioning is not None:
                args["cluster_autoscaling"] = auto_provisioning_args(c)
        else:
            args["enable_autopilot"] = True
        return args


def cluster_spec(cfg: StackConfig, images: Sequence[str] = ()) -> ClusterSpec:
    """The stack's cluster as its component registers it; `images`: the plan's registry_images.
    An existing cluster's drivers and metrics are set where it is managed (the stack's rules
    refuse them here), so it turns none on."""
    c = cfg.collected
    monitoring = {"managed_prometheus": c.managed_prometheus, "dcgm": c.dcgm} if c is not None and not c.existing else None
    return ClusterSpec(cfg.cluster, cfg.facts, tuple(images), addons_args(cfg), monitoring)


def maintenance_policy_args(policy: MaintenancePolicy) -> dict[str, Any]:
    """pulumi-gcp ClusterMaintenancePolicy: recurring_window or daily_maintenance_window, and
    maintenance_exclusions, each with exclusion_options.scope and either end_time or
    end_time_behavior UNTIL_END_OF_SUPPORT."""
    args: dict[str, Any] = {}
    if policy.window is not None:
        w = policy.window
        args["recurring_window"] = {"start_time": w.start, "end_time": w.end, "recurrence": w.recurrence}
    else:
        args["daily_maintenance_window"] = {"start_time": policy.daily_start}
    if policy.exclusions:
        args["maintenance_exclusions"] = [_exclusion_args(e) for e in policy.exclusions]
    return args


def _exclusion_args(e: Exclusion) -> dict[str, Any]:
    options: dict[str, Any] = {"scope": e.scope}
    args: dict[str, Any] = {"exclusion_name": e.name, "start_time": e.start, "exclusion_options": options}
    if e.end is not None:
        args["end_time"] = e.end
    else:
        options["end_time_behavior"] = "UNTIL_END_OF_SUPPORT"
    return args


def control_plane_args(c: ClusterConfig) -> dict[str, Any]:
    """Who reaches the control plane, and how (GKE docs concepts/network-isolation, "Control
    plane access"; how-to/latest/network-isolation). The public IP endpoint is never left open:
    it is off, or authorized networks limit it (an empty list shuts it to every outside
    address); gcp_public_cidrs_access_enabled stays false because any Compute Engine VM, anyone's,
    has a Google Cloud public address."""
    cp = c.control_plane
    args: dict[str, Any] = {
        "control_plane_endpoints_config": {
            "dns_endpoint_config": {"allow_external_traffic": cp.dns_endpoint},
            "ip_endpoints_config": {"enabled": cp.ip_endpoint != "disabled"},
        }
    }
    if c.private_nodes:
        args["private_cluster_config"] = {
            "enable_private_nodes": True,
            "enable_private_endpoint": cp.ip_endpoint == "private",
        }
    elif c.private_nodes_decided:
        # Public nodes, written down: the gke-private-nodes advisory reads the explicit false as
        # the decision it asks for. GKE reports a public cluster's enablePrivateNodes as false,
        # so an existing cluster sees no diff.
        args["private_cluster_config"] = {"enable_private_nodes": False}
    if cp.ip_endpoint != "disabled":
        networks: dict[str, Any] = {
            "cidr_blocks": [
                {"cidr_block": n.cidr, **({"display_name": n.name} if n.name else {})}
                for n in c.master_authorized_networks
            ],
            "gcp_public_cidrs_access_enabled": False,
        }
        if cp.ip_endpoint == "private" and c.master_authorized_networks:
            # Listed networks limit the private endpoint too, not only the (absent) public one.
            networks["private_endpoint_enforcement_enabled"] = True
        args["master_authorized_networks_config"] = networks
    return args


def auto_provisioning_args(cluster: ClusterConfig) -> dict[str, Any]:
    ap = cluster.auto_provisioning
    assert ap is not None
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
    locations = ap.locations or cluster.node_locations
    if locations:
        args["auto_provisioning_locations"] = list(locations)
    return args
