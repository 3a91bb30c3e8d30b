"""`gke-ai-batch:cluster`: the GKE cluster a person decides on."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Iterator, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from gke_ai_batch.domain import netblocks

from gke_ai_batch.domain import versions
from gke_ai_batch.domain.catalogue import GPU_TYPES, TPU_GENERATIONS
from gke_ai_batch.domain.regions import REGION_RX as _REGION_RX, ZONE_RX as _ZONE_RX, region_of  # noqa: F401 (re-exported)
from gke_ai_batch.config.base import CLUSTER_NODES_MAX, GcpLabels, GkeName, GroupEmail, Model, RuleError, raise_all
from gke_ai_batch.config.maintenance import MaintenancePolicy
from gke_ai_batch.config.gcpnames import PROJECT_ID, Reference, check_network, check_subnetwork, parse_network, parse_subnetwork, subnetwork_project_problem


def check_minor_version(value: str) -> str:
    """minMasterVersion: a minor alias ('1.34'), never an exact patch (gke_ai_batch/domain/versions.py
    says why: GKE retires patches, and then refuses to create a cluster at one)."""
    if versions.MINOR_RX.fullmatch(value):
        return value
    if versions.VERSIONISH_RX.fullmatch(value) and value.count(".") >= 2:
        minor = ".".join(value.split("-")[0].split(".")[:2])
        raise ValueError(
            f"{value!r} pins an exact GKE version; GKE retires patch versions within months and then "
            f"refuses to create a cluster at one. Write the minor alias {minor!r} (GKE picks the newest "
            f"{minor} patch of the release channel) or leave minMasterVersion out for the channel's default"
        )
    raise ValueError(f"{value!r} is not a GKE minor version; write it as '1.34' (or leave it out)")


def check_location(value: str) -> str:
    if not (_REGION_RX.fullmatch(value) or _ZONE_RX.fullmatch(value)):
        raise ValueError(f"{value!r} is not a region (us-central1) or a zone (us-central1-a)")
    return value


def check_zones(zones: list[str]) -> list[str]:
    raise_all(_zone_problems(zones))
    return zones


def _zone_problems(zones: list[str]) -> Iterator[RuleError]:
    for i, zone in enumerate(zones):
        if not _ZONE_RX.fullmatch(zone):
            yield RuleError(i, f"{zone!r} is not a zone (example: us-central1-a)")
    if len(set(zones)) != len(zones):
        yield RuleError((), "zones are listed more than once")


Zones = Annotated[list[str], AfterValidator(check_zones)]
SECURITY_GROUP_NAME = "gke-security-groups"


# What a component validates in place of a node service account given as an Output (an account
# the same program creates): one is given, and its email is known only at deploy time. The
# rules need only that one is given (an existing cluster's nodes run as some account); its form
# is then the IAM API's to check.
OUTPUT_ACCOUNT = "output-account@output-project.iam.gserviceaccount.com"

class SystemPool(Model):
    """The CPU pool that runs system pods, Kueue and JobSet (Standard clusters)."""

    machine_type: str = "e2-standard-4"
    min_nodes: int = Field(1, ge=0, le=CLUSTER_NODES_MAX)
    max_nodes: int = Field(3, ge=1, le=CLUSTER_NODES_MAX)

    @model_validator(mode="after")
    def _bounds(self):
        if self.min_nodes > self.max_nodes:
            raise RuleError("minNodes", f"minNodes ({self.min_nodes}) exceeds maxNodes ({self.max_nodes})")
        return self


class AuthorizedNetwork(Model):
    cidr: str
    """A CIDR block allowed to reach the control plane, e.g. 203.0.113.0/24."""
    name: str | None = None

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            ipaddress.ip_network(v, strict=True)
        except ValueError as e:
            raise ValueError(f"{v!r} is not a CIDR block: {e}") from None
        return v


# A key's resource name (https://cloud.google.com/kms/docs/resource-hierarchy#keys); ring and
# key ids are 1 to 63 of [A-Za-z0-9_-] (KMS REST reference, keyRings.create, cryptoKeys.create);
# the project is a project id (gcpnames.PROJECT_ID).
_KMS_KEY_RX = re.compile(
    rf"projects/(?P<project>{PROJECT_ID})/locations/(?P<location>[a-z0-9-]+)"
    r"/keyRings/[A-Za-z0-9_-]{1,63}/cryptoKeys/[A-Za-z0-9_-]{1,63}",
    re.ASCII,
)


def check_kms_key_name(v: str) -> str:
    if not _KMS_KEY_RX.fullmatch(v):
        raise ValueError(
            f"{v!r} is not a Cloud KMS key name: projects/<project>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>"
        )
    return v




class ControlPlane(Model):
    """How the control plane is reached (GKE: concepts/network-isolation, "Control plane
    access"). GKE recommends the DNS-based endpoint alone: every request is authorized by IAM
    (container.clusters.connect) before it reaches the API server, from any network that can
    reach Google APIs, GitHub-hosted runners included."""

    dns_endpoint: bool = True
    """Serve the control plane at its DNS name (https://gke-<id>.<region>.gke.goog), IAM-authorized; the program's Kubernetes provider then uses it."""
    ip_endpoint: Literal["disabled", "private", "authorizedNetworks"] = "authorizedNetworks"
    """disabled: no IP endpoint (DNS only); private: the VPC-internal IP endpoint only (needs privateNodes); authorizedNetworks: the public IP endpoint, answering only masterAuthorizedNetworks (none listed: nobody)."""


class DatabaseEncryption(Model):
    """Application-layer secrets encryption: GKE encrypts Secrets in etcd with a data key that
    this Cloud KMS key wraps (GKE docs how-to/encrypting-secrets)."""

    key_name: str
    """projects/<project>/locations/<cluster's region>/keyRings/<ring>/cryptoKeys/<key>; GKE's service agent needs roles/cloudkms.cryptoKeyEncrypterDecrypter on it (docs/bootstrap.md)."""

    @field_validator("key_name")
    @classmethod
    def _key_name(cls, v: str) -> str:
        return check_kms_key_name(v)

    @property
    def location(self) -> str:
        return _KMS_KEY_RX.fullmatch(self.key_name)["location"]


class Limit(Model):
    min: int = Field(0, ge=0)
    max: int = Field(ge=1)

    @model_validator(mode="after")
    def _bounds(self):
        if self.min > self.max:
            raise RuleError("min", f"min ({self.min}) exceeds max ({self.max})")
        return self


class AutoProvisioning(Model):
    """Node auto-provisioning (Standard only): GKE creates node pools for pending pods, e.g.
    for queued-provisioning workloads that name an accelerator no pool offers (seed 003)."""

    cpu: Limit
    """vCPUs across the cluster."""
    memory_gb: Limit
    """GB of memory across the cluster."""
    accelerators: dict[str, Limit] = {}
    """Per accelerator type (a GPU type or a TPU accelerator such as tpu-v6e-slice)."""
    locations: Zones = []
    """Zones for auto-provisioned pools; defaults to the cluster's node locations."""

    @field_validator("accelerators")
    @classmethod
    def _known_accelerators(cls, v: dict[str, Limit]) -> dict[str, Limit]:
        known = list(GPU_TYPES) + [g.accelerator for g in TPU_GENERATIONS.values()]
        raise_all(
            RuleError(name, f"unknown accelerator {name!r}; allowed: {', '.join(known)}") for name in v if name not in known
        )
        return v


# A user-managed service account's email: <6-30 char id>@<project>.iam.gserviceaccount.com
# (https://cloud.google.com/iam/docs/service-accounts-create#creating: account id rules;
# project ids are 6-30 characters, https://cloud.google.com/resource-manager/docs/creating-managing-projects).
SERVICE_ACCOUNT_EMAIL_RX = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com")


def check_service_account_email(value: str) -> str:
    if not SERVICE_ACCOUNT_EMAIL_RX.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a user-managed service account email "
            "(ACCOUNT_ID@PROJECT_ID.iam.gserviceaccount.com; the bootstrap project's nodeServiceAccount)"
        )
    return value


# A control plane's DNS endpoint: gke-<id>.<region>.gke.goog, served by Google's front end with
# a publicly trusted certificate and authorized by IAM (GKE docs concepts/network-isolation,
# "DNS-based endpoint"; controlPlaneEndpointsConfig.dnsEndpointConfig.endpoint in the API).
DNS_ENDPOINT_RX = re.compile(r"gke-[a-z0-9-]+\.[a-z0-9-]+\.gke\.goog", re.ASCII)

# What only creating a cluster decides: an existing cluster has these already, and this program
# would never send them (it creates no gcp:container/cluster:Cluster for it).
CREATION_ONLY = (
    "release_channel", "min_master_version", "deletion_protection", "private_nodes", "control_plane",
    "master_authorized_networks", "dataplane_v2", "database_encryption", "binary_authorization",
    "network", "subnetwork", "system_pool", "labels", "auto_provisioning", "security_group",
)
EXISTING_ONLY = ("version", "endpoint")


class ClusterConfig(Model):
    name: GkeName
    """GKE cluster name: lowercase letters, digits and -, 40 characters at most."""
    existing: bool = False
    """true: the cluster exists already (another program's or team's); this stack puts its pools,
    Kueue, JobSet and batch layer on it and creates no cluster, system pool or node service account.
    It then needs version, endpoint and nodeServiceAccount, and takes none of the settings only
    creating a cluster decides (releaseChannel, minMasterVersion, controlPlane, ...)."""
    version: str | None = None
    """Existing cluster only: its control plane's exact GKE version, e.g. '1.35.7-gke.1222000'
    (gcloud container clusters describe NAME --format='value(currentMasterVersion)'); the version
    floors (flexStart, TPU generations) are checked against it."""
    endpoint: str | None = None
    """Existing cluster only: its control plane's DNS endpoint, gke-<id>.<region>.gke.goog (gcloud container
    clusters describe NAME --format='value(controlPlaneEndpointsConfig.dnsEndpointConfig.endpoint)'),
    which the program's Kubernetes provider talks to, authorized by IAM."""
    mode: Literal["standard", "autopilot"] = "standard"
    """standard: node pools from this file; autopilot: GKE makes nodes per workload."""
    location: str | None = None
    """Region (regional cluster) or zone; defaults to gcp:region."""
    node_locations: Zones = []
    """Zones for nodes, within the cluster's region."""
    release_channel: Literal[versions.CHANNEL_NAMES] = "REGULAR"  # type: ignore[valid-type]
    """Always enrolled: security patches arrive on their own (and GKE then keeps node auto-upgrade on)."""
    min_master_version: str | None = None
    """GKE minor version to create the control plane at, e.g. '1.35' (the channel's newest patch of
    it); exact patches are refused. Unset: the release channel's default version."""
    deletion_protection: bool = True
    """GKE refuses to delete the cluster while true."""
    private_nodes: bool = False
    """Nodes without public IPs. They reach Google APIs through Private Google Access, but pull
    Kueue's and JobSet's images from registry.k8s.io (and any other public registry) only through
    a Cloud NAT on the cluster's network and region, which this program does not create. Unset:
    public nodes, and the gke-private-nodes advisory asks you to decide; false decides on public
    nodes."""
    control_plane: ControlPlane = ControlPlane()
    """Defaults: the DNS endpoint, and a public IP endpoint closed to every network not in masterAuthorizedNetworks."""
    master_authorized_networks: list[AuthorizedNetwork] = []
    """CIDR blocks allowed to reach the IP endpoint (public, or the private one when ipEndpoint is private)."""
    dataplane_v2: bool = True
    """GKE Dataplane V2 (eBPF networking, network policy enforcement built in); Standard only (Autopilot always has it). Changing it replaces the cluster."""
    database_encryption: DatabaseEncryption | None = None
    """Encrypt Secrets with a Cloud KMS key of the cluster's region (application-layer secrets encryption)."""
    binary_authorization: bool = False
    """Admit only images the project's Binary Authorization policy allows (PROJECT_SINGLETON_POLICY_ENFORCE)."""
    network: Annotated[str, AfterValidator(check_network)] = "default"
    """VPC network: a name, global/networks/NAME, projects/PROJECT/global/networks/NAME or its self link."""
    subnetwork: Annotated[str, AfterValidator(check_subnetwork)] | None = None
    """Subnetwork of the cluster's region: a name, regions/REGION/subnetworks/NAME,
    projects/PROJECT/regions/REGION/subnetworks/NAME or its self link."""
    system_pool: SystemPool | None = None
    """Standard only; defaults to e2-standard-4, 1 to 3 nodes."""
    node_service_account: Annotated[str, AfterValidator(check_service_account_email)] | None = None
    """Email of an existing service account the nodes run as: the one the bootstrap project
    creates for this stack (its nodeServiceAccount, in this stack's project), which it also grants
    roles/container.defaultNodeServiceAccount, so that the deployer needs neither
    serviceAccountCreator nor serviceAccountAdmin nor projectIamAdmin (an account made by hand
    needs that role granted by hand). Unset: the program creates <cluster>-nodes itself and grants
    it the role (the deployer must then be allowed to create accounts and grant roles)."""
    labels: GcpLabels = {}
    """GCP resource labels on the cluster: at most 64; lowercase letters, digits, '_' and '-'."""
    auto_provisioning: AutoProvisioning | None = None
    maintenance: MaintenancePolicy | None = None
    """When GKE may upgrade the cluster and its nodes (a window) and when not (exclusions).
    Unset: GKE upgrades at any time. docs/maintenance.md."""
    security_group: GroupEmail | None = None
    """Google Groups for RBAC: gke-security-groups@<your domain>, the group whose member groups
    (teams[].group) GKE resolves for RBAC. Standard and Autopilot."""

    @field_validator("security_group")
    @classmethod
    def _security_group(cls, v: str | None) -> str | None:
        # "Create a group in your domain named gke-security-groups. The gke-security-groups
        # name is required." (https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac)
        if v is not None and v.partition("@")[0] != SECURITY_GROUP_NAME:
            raise ValueError(
                f"{v!r}: GKE reads groups only through a group named {SECURITY_GROUP_NAME}@<your domain> "
                f"(e.g. {SECURITY_GROUP_NAME}@{v.partition('@')[2]})"
            )
        return v

    @field_validator("location")
    @classmethod
    def _location(cls, v: str | None) -> str | None:
        return None if v is None else check_location(v)

    @field_validator("min_master_version")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        return None if v is None else check_minor_version(v)

    @model_validator(mode="after")
    def _mode_rules(self):
        raise_all(self._problems())
        return self

    def _existing_problems(self) -> Iterator[RuleError]:
        fields = type(self).model_fields
        if not self.existing:
            for name in EXISTING_ONLY:
                if name in self.model_fields_set:
                    yield RuleError(fields[name].alias, "only for an existing cluster (existing: true); remove it")
            return
        for name in CREATION_ONLY:
            if name in self.model_fields_set:
                yield RuleError(
                    fields[name].alias,
                    f"the cluster exists already (existing: true), and {fields[name].alias} is decided when a "
                    "cluster is created; this program creates none and would not apply it: remove it",
                )
        if self.maintenance is not None:
            # The policy is an argument of the gcp:container/cluster:Cluster resource, which this
            # program does not register for an existing cluster: it could not apply it.
            yield RuleError(
                "maintenance",
                "the cluster exists already (existing: true), and this program registers no Cluster resource "
                "for it, so it cannot set its maintenance policy; set it where the cluster is managed "
                "(gcloud container clusters update NAME --maintenance-window-start ... "
                "--add-maintenance-exclusion-name ...) and remove it here",
            )
        for name in ("version", "endpoint", "node_service_account"):
            if getattr(self, name) is None:
                yield RuleError(fields[name].alias, "required for an existing cluster (existing: true)")
        if self.version is not None and not versions.PATCH_RX.fullmatch(self.version):
            yield RuleError(
                "version",
                f"{self.version!r} is not an exact GKE version such as 1.35.7-gke.1222000: the control plane "
                "runs one patch, and the version floors compare patches",
            )
        elif self.version is not None and versions.minor_of(self.version) < versions.minor_of(versions.EXISTING_CLUSTER_MIN):
            # Kueue and JobSet go on every cluster of a stack, and a program's pools are there for them
            # (versions.EXISTING_CLUSTER_MIN says whose floor it is).
            yield RuleError(
                "version",
                f"GKE {self.version} is Kubernetes {versions.minor_text(versions.minor_of(self.version))}, and Kueue "
                f"runs on Kubernetes {versions.KUEUE_MIN_KUBERNETES} or newer (kubernetes-sigs/kueue README.md, "
                f"\"Installation\"; JobSet on {versions.JOBSET_MIN_KUBERNETES} or newer): upgrade the cluster to GKE "
                f"{versions.EXISTING_CLUSTER_MIN} or later first",
            )
        if self.endpoint is not None and not DNS_ENDPOINT_RX.fullmatch(self.endpoint):
            yield RuleError(
                "endpoint",
                f"{self.endpoint!r} is not a GKE DNS endpoint (gke-<id>.<region>.gke.goog); turn the cluster's "
                "DNS endpoint on (gcloud container clusters update NAME --enable-dns-access) and name it here",
            )
        elif self.endpoint is not None and self.location is not None:  # no location: refused as such
            # The endpoint names the cluster's location: one of another region is another cluster's.
            where = self.endpoint.split(".")[1]
            if not (_REGION_RX.fullmatch(where) or _ZONE_RX.fullmatch(where)) or region_of(where) != region_of(self.location):
                yield RuleError(
                    "endpoint",
                    f"{self.endpoint!r} is not a DNS endpoint of a cluster in {region_of(self.location)}: its location "
                    f"part is {where!r}; copy the endpoint of cluster {self.name} in {self.location}",
                )

    def _problems(self) -> Iterator[RuleError]:
        yield from self._existing_problems()
        if self.mode == "autopilot":
            if self.system_pool is not None:
                yield RuleError("systemPool", "Autopilot clusters have no system pool; GKE manages nodes")
            if self.auto_provisioning is not None:
                yield RuleError(
                    "autoProvisioning", "Autopilot provisions nodes itself; autoProvisioning is Standard only"
                )
        yield from self._control_plane_problems()
        subnetwork = parse_subnetwork(self.subnetwork) if self.subnetwork else None
        network = self.network_reference
        # Both projects stated here; one implied by the cluster's project is checked by the stack,
        # which knows it (gke_ai_batch/config/checks/network.py).
        problem = subnetwork_project_problem(network, subnetwork)
        if problem:
            yield RuleError("subnetwork", problem)
        if self.mode == "autopilot" and not self.dataplane_v2:
            # GKE docs concepts/dataplane-v2: "Autopilot clusters use GKE Dataplane V2" (always).
            yield RuleError("dataplaneV2", "Autopilot clusters always run GKE Dataplane V2; it cannot be turned off")
        if self.location is None:
            yield RuleError("location", "required: a region or zone (or set gcp:region in the stack)")
            return  # no region to hold the zones to
        region = region_of(self.location)
        if self.mode == "autopilot" and region != self.location:
            # "GKE Autopilot clusters are always regional" (GKE docs concepts/regional-clusters);
            # the API refuses to create one in a zone.
            yield RuleError(
                "location",
                f"{self.location!r} is a zone, and GKE creates Autopilot clusters only in a region: "
                f"set location to {region!r} (Autopilot spreads the nodes over its zones)",
            )
        if subnetwork is not None and subnetwork.region not in (None, region):
            # Subnetworks are regional, and a node's interface can only be in a subnetwork of
            # the node's own region (https://cloud.google.com/vpc/docs/subnets); GKE takes the
            # cluster's subnetwork in the cluster's region (GKE docs how-to/alias-ips).
            yield RuleError(
                "subnetwork",
                f"the subnetwork is in {subnetwork.region!r}, and the cluster's nodes are in {region!r}: "
                "a cluster's subnetwork must be in its region",
            )
        if self.database_encryption is not None and self.database_encryption.location != region:
            # GKE docs how-to/encrypting-secrets: the key must be in the cluster's location (a
            # zonal cluster takes a key of its region); a global or multi-region key is refused.
            yield RuleError(
                ("databaseEncryption", "keyName"),
                f"the key is in {self.database_encryption.location!r}; GKE needs a key in the cluster's region {region!r}",
            )
        for i, zone in enumerate(self.node_locations):
            if region_of(zone) != region:
                yield RuleError(("nodeLocations", i), f"{zone} is not in the cluster's region {region}")
        for i, zone in enumerate(self.auto_provisioning.locations if self.auto_provisioning else []):
            if region_of(zone) != region:
                yield RuleError(
                    ("autoProvisioning", "locations", i), f"{zone} is not in the cluster's region {region}"
                )

    def _control_plane_problems(self) -> Iterator[RuleError]:
        """No combination may leave the control plane open to the internet or unreachable
        (GKE docs concepts/network-isolation, "Control plane access")."""
        cp = self.control_plane
        if cp.ip_endpoint == "disabled" and not cp.dns_endpoint:
            yield RuleError(
                ("controlPlane", "ipEndpoint"),
                "with no IP endpoint and no DNS endpoint nothing could reach the control plane; "
                "set controlPlane.dnsEndpoint true",
            )
        if cp.ip_endpoint == "disabled" and self.master_authorized_networks:
            yield RuleError(
                "masterAuthorizedNetworks",
                "ipEndpoint is disabled: authorized networks limit only IP endpoints, so these would limit nothing",
            )
        if not cp.dns_endpoint and cp.ip_endpoint == "authorizedNetworks" and not self.master_authorized_networks:
            yield RuleError(
                ("controlPlane", "dnsEndpoint"),
                "without the DNS endpoint and with no masterAuthorizedNetworks, no client (this program's "
                "Kubernetes provider included) could reach the control plane; keep dnsEndpoint true",
            )
        if cp.ip_endpoint == "private" and not self.private_nodes:
            # The provider applies enable_private_endpoint only with private nodes
            # (pulumi-gcp Cluster privateClusterConfig.enablePrivateEndpoint: "only applies to
            # private clusters, when enable_private_nodes is true"): without them the public IP
            # endpoint would stay open.
            yield RuleError(
                ("controlPlane", "ipEndpoint"),
                "ipEndpoint private needs privateNodes true (GKE keeps the public IP endpoint of a cluster "
                "with public nodes); use disabled or authorizedNetworks",
            )
        # The list as a whole, by the public address space it covers (gke_ai_batch/domain/netblocks.py):
        # 0.0.0.0/1 and 128.0.0.0/1 together are as open as 0.0.0.0/0.
        for i, message in netblocks.problems([n.cidr for n in self.master_authorized_networks], self.private_nodes):
            yield RuleError(("masterAuthorizedNetworks",) if i is None else ("masterAuthorizedNetworks", i, "cidr"), message)

    @property
    def private_nodes_decided(self) -> bool:
        """privateNodes is written in the stack file, true or false (not left to the default)."""
        return "private_nodes" in self.model_fields_set

    @property
    def network_reference(self) -> Reference:
        """The VPC network as the reference names it: its name, and its project where it says."""
        return parse_network(self.network)

    def implied_project_problem(self, project: str | None) -> str | None:
        """Why GKE would refuse this network and subnetwork in a cluster of `project`, where one
        of them is named without a project (both named with one: _problems)."""
        if not self.subnetwork:
            return None
        network, subnetwork = self.network_reference, parse_subnetwork(self.subnetwork)
        if subnetwork is None or (network.project and subnetwork.project):
            return None
        return subnetwork_project_problem(network, subnetwork, project)

    @property
    def standard(self) -> bool:
        return self.mode == "standard"

    @property
    def system(self) -> SystemPool | None:
        """The system pool a Standard cluster this program creates gets: the stated one or the
        default (an existing cluster runs its system pods on nodes it has)."""
        return (self.system_pool or SystemPool()) if self.standard and not self.existing else None
