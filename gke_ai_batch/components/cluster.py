"""GkeCluster (the cluster, its node service account, the system pool and a Kubernetes
provider for the layers above) and ExistingCluster (the same provider and ClusterRef for a
cluster this program did not create), each X(name, args: XArgs, opts).

Args mirror the stack key gke-ai-batch:cluster in snake_case and are checked on construction as
that key: validated by its model by field name (ClusterConfig, config/cluster.py) and judged by
the stack's own rules about it (config/checks/cluster.py, cluster_problems) on the facts of the
cluster (ClusterFacts), every problem at once, at its arg path. The stack program hands its
plan's ClusterSpec instead (from_spec), validated and planned already.

protect, the provider and the parent come from `opts` through Pulumi's inheritance; what
opts.depends_on lists, the Google Cloud children wait for too (children do not inherit
depends_on); opts.retain_on_delete reaches the Google Cloud children (Pulumi does not inherit
it: gke_ai_batch/components/nodepools.py, child_options).

No `from __future__ import annotations`: Pulumi's component analyzer
(pulumi.provider.experimental.analyzer) reads these annotations as objects."""

import typing
from functools import partial
from typing import Any, NotRequired, Self, TypedDict

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gke_ai_batch.components.component import Component
from gke_ai_batch.components.nodepools import ClusterRef, declared_account
from gke_ai_batch.components.args import child_options, opts_problems, project_problems, type_token, whole_numbers
from gke_ai_batch.config.checkpoints import lustre_driver_problems
from gke_ai_batch.config.checks.cluster import cluster_problems
from gke_ai_batch.config.cluster import ClusterConfig
from gke_ai_batch.config.errors import NOT_AN_OUTPUT, ArgsError, at_arg, did_you_mean, field_path, join_path
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.config.lookups import ClusterFacts, validated_cluster, version_floor
from gke_ai_batch.config.metrics import Collected, MetricsConfig, metrics_problems
from gke_ai_batch.domain.naming import KUBERNETES_PROVIDER, child_name
from gke_ai_batch.plan.cluster import (
    NODE_SA_ROLE,
    REGISTRY_READER_ROLE,
    ClusterSpec,
    RegistryGrant,
    node_service_account_id,
    registry_repository,
)


def kubeconfig(name: str, endpoint: str, ca_certificate: str | None) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin (the machine running
    `pulumi up` needs it, as kubectl does): no long-lived credential is stored in state.

    `endpoint` is the DNS endpoint (ca_certificate None) or the IP endpoint with the cluster's
    CA. The DNS endpoint is served by Google's front end with a publicly trusted certificate,
    which is why `gcloud container clusters get-credentials --dns-endpoint` writes no
    certificate-authority-data either (GKE docs concepts/network-isolation, "DNS-based
    endpoint"); pinning the cluster CA there would fail verification."""
    ca = f"\n    certificate-authority-data: {ca_certificate}" if ca_certificate is not None else ""
    return f"""apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: https://{endpoint}{ca}
contexts:
- name: {name}
  context:
    cluster: {name}
    user: {name}
current-context: {name}
users:
- name: {name}
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin)
      provideClusterInfo: true
"""




class ControlPlaneArgs(TypedDict):
    dns_endpoint: NotRequired[bool]
    """Serve the control plane at its IAM-authorized DNS name (default true)."""
    ip_endpoint: NotRequired[str]
    """disabled, private or authorizedNetworks (default)."""


class AuthorizedNetworkArgs(TypedDict):
    cidr: str
    """A CIDR block allowed to reach the IP endpoint, e.g. 203.0.113.0/24."""
    name: NotRequired[str]
    """A name for the block, shown by GKE."""


class DatabaseEncryptionArgs(TypedDict):
    key_name: str
    """A Cloud KMS key of the cluster's region: projects/P/locations/L/keyRings/R/cryptoKeys/K."""


class SystemPoolArgs(TypedDict):
    machine_type: NotRequired[str]
    """The machine type (default e2-standard-4)."""
    min_nodes: NotRequired[int]
    """The autoscaling floor (default 1)."""
    max_nodes: NotRequired[int]
    """The autoscaling ceiling (default 3)."""


class LimitArgs(TypedDict):
    min: NotRequired[int]
    """The lower bound (default 0)."""
    max: int
    """The upper bound."""


class AutoProvisioningArgs(TypedDict):
    cpu: LimitArgs
    """vCPUs across the cluster."""
    memory_gb: LimitArgs
    """GB of memory across the cluster."""
    accelerators: NotRequired[dict[str, LimitArgs]]
    """Per accelerator type (a GPU type or a TPU accelerator such as tpu-v6e-slice)."""
    locations: NotRequired[list[str]]
    """Zones for auto-provisioned pools (default: the cluster's node locations)."""


class MaintenanceWindowArgs(TypedDict):
    start: str
    """RFC 3339 in UTC (ending in Z): the first window's start."""
    end: str
    """RFC 3339 in UTC: the first window's end (its length is every window's)."""
    recurrence: str
    """An RFC 5545 RRULE: FREQ=DAILY, or FREQ=WEEKLY with BYDAY."""


class MaintenanceExclusionArgs(TypedDict):
    name: str
    """Unique among the exclusions."""
    scope: str
    """NO_UPGRADES, NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES."""
    start: str
    """RFC 3339 start, e.g. 2026-12-20T00:00:00Z."""
    end: NotRequired[str]
    """RFC 3339 end; exactly one of end and until_end_of_support."""
    until_end_of_support: NotRequired[bool]
    """The exclusion lasts until the cluster's minor leaves support."""


class MaintenanceArgs(TypedDict):
    """The stack key cluster.maintenance in snake_case (docs/maintenance.md)."""

    window: NotRequired[MaintenanceWindowArgs]
    """A recurring window (start, end, RFC 5545 recurrence), or daily_start for a daily window."""
    daily_start: NotRequired[str]
    """HH:MM in UTC: a daily four-hour window instead of a recurring one."""
    exclusions: NotRequired[list[MaintenanceExclusionArgs]]
    """Spans in which GKE upgrades nothing of the exclusion's scope."""


class AddonsArgs(TypedDict):
    """CSI drivers for checkpoint storage (docs/checkpoints.md)."""

    gcs_fuse_csi_driver: NotRequired[bool]
    """The Cloud Storage FUSE CSI driver (off on Standard unless enabled; Autopilot has it)."""
    lustre_csi_driver: NotRequired[bool]
    """The Managed Lustre CSI driver."""


class MonitoringArgs(TypedDict):
    """What the cluster reports to Cloud Monitoring (docs/metrics.md); unset: GKE's defaults."""

    managed_prometheus: NotRequired[bool]
    """Managed Service for Prometheus' managed collection."""
    dcgm: NotRequired[bool]
    """GKE's managed DCGM metrics of GPU nodes."""


class _ClusterArgs(TypedDict):
    name: str
    """The cluster's GKE name."""
    location: str
    """Its region (a regional cluster) or zone."""
    mode: NotRequired[str]
    """standard (default) or autopilot."""
    node_locations: NotRequired[list[str]]
    """The cluster's node zones, within its region."""
    registry_images: NotRequired[list[str]]
    """Images the cluster's pods pull: the node service account may read each one's Artifact
    Registry repository (roles/artifactregistry.reader on that repository alone)."""
    catalogue: NotRequired[dict[str, Any]]
    """Zones, accelerators and versions newer than the built-in catalogue, as the stack key
    gke-ai-batch:catalogue spells them (camelCase)."""


class GkeClusterArgs(_ClusterArgs):
    """The stack key gke-ai-batch:cluster in snake_case (docs/configuration.md says what each
    does and its default), and the project. Plain values: they are checked against GKE's rules
    when the component is built; node_service_account alone may be an Output."""

    project: str
    """The Google Cloud project to create the cluster in (its Workload Identity pool is <project>.svc.id.goog)."""
    release_channel: NotRequired[str]
    """RAPID, REGULAR (default) or STABLE; the cluster is always enrolled, so security patches arrive on their own."""
    min_master_version: NotRequired[str]
    """GKE minor to create the control plane at, e.g. '1.35' (default: the channel's)."""
    deletion_protection: NotRequired[bool]
    """GKE refuses to delete the cluster while true (default true)."""
    private_nodes: NotRequired[bool]
    """Nodes without public IPs (default false); they pull images from outside Google through a Cloud NAT this component does not create."""
    control_plane: NotRequired[ControlPlaneArgs]
    """How the control plane is reached: its DNS endpoint (default) and IP endpoint."""
    master_authorized_networks: NotRequired[list[AuthorizedNetworkArgs]]
    """CIDR blocks allowed to reach the IP endpoint."""
    dataplane_v2: NotRequired[bool]
    """GKE Dataplane V2, eBPF networking with NetworkPolicy enforced (default true; Standard only, Autopilot always has it)."""
    database_encryption: NotRequired[DatabaseEncryptionArgs]
    """Encrypt Secrets with a Cloud KMS key of the cluster's region."""
    binary_authorization: NotRequired[bool]
    """Admit only images the project's Binary Authorization policy allows."""
    network: NotRequired[str]
    """VPC network: a name, global/networks/NAME or projects/PROJECT/global/networks/NAME (default: default)."""
    subnetwork: NotRequired[str]
    """Subnetwork of the cluster's region: a name or regions/REGION/subnetworks/NAME."""
    system_pool: NotRequired[SystemPoolArgs]
    """Standard only: the pool for system and CPU work (default e2-standard-4, 1 to 3 nodes)."""
    node_service_account: NotRequired[pulumi.Input[str]]
    """Email of the account nodes run as, which already holds roles/container.defaultNodeServiceAccount
    (the bootstrap creates and grants it); unset: the component creates <name>-nodes and grants it that role."""
    labels: NotRequired[dict[str, str]]
    """GCP resource labels on the cluster."""
    auto_provisioning: NotRequired[AutoProvisioningArgs]
    """Node auto-provisioning: the CPU and memory limits across the cluster, and its zones."""
    security_group: NotRequired[str]
    """Google Groups for RBAC: gke-security-groups@<your domain>."""
    maintenance: NotRequired[MaintenanceArgs]
    """When GKE may upgrade the cluster and its nodes, and what it may not (docs/maintenance.md)."""
    addons: NotRequired[AddonsArgs]
    """Add-ons: the Cloud Storage FUSE and Managed Lustre CSI drivers."""
    monitoring: NotRequired[MonitoringArgs]
    """Managed Prometheus and the DCGM GPU metrics GKE collects."""


class ExistingClusterArgs(_ClusterArgs):
    """A cluster this program did not create, as declared (a stack's cluster.existing)."""

    project: pulumi.Input[str]
    """The Google Cloud project the cluster is in."""
    version: str
    """Its control plane's exact GKE version (e.g. '1.35.7-gke.1222000'): the version floors are checked against it."""
    endpoint: str
    """Its control plane's DNS endpoint (gke-<id>.<region>.gke.goog), which the Kubernetes provider talks to."""
    node_service_account: pulumi.Input[str]
    """Email of the account its nodes run as."""


class _Cluster(Component):
    """What both cluster components share: checked args, outputs, the registry grants of the
    nodes' account, a Kubernetes provider and the ClusterRef for the pool components."""

    name: pulumi.Output[str]
    """The cluster's GKE name."""
    endpoint: pulumi.Output[str]
    """The control plane's IP endpoint (GkeCluster) or DNS endpoint (ExistingCluster)."""
    api_server: pulumi.Output[str]
    """The address this component's Kubernetes provider (and its kubeconfig) talks to."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig through gke-gcloud-auth-plugin (a secret)."""
    node_service_account: pulumi.Output[str]
    """Email of the account the nodes run as."""
    location: pulumi.Output[str]
    """The cluster's region or zone."""
    project: pulumi.Output[str]
    """The Google Cloud project the cluster is in."""
    mode: pulumi.Output[str]
    """standard or autopilot: how the policy pack and synth judge the cluster's queues and
    workloads (an existing cluster's as declared; gke_ai_batch/model/clusters.py)."""

    _old_type = ""
    _args: type = _ClusterArgs
    # Children are named "<name>-<child>", so that two clusters side by side never register one
    # URN twice, whatever their names (a child's URN has its parent's type, not its name). The
    # stack program's subclasses (StackGkeCluster, StackExistingCluster) name them in the
    # cluster's scope instead ("cluster", "us-east4/cluster"), as its deployed stacks have them,
    # and register the token of the class they specialise (_token_of).
    _scoped_children = False
    _token_of: type | None = None
    _outputs_only = ("project", "node_service_account")  # may be Outputs: they only pass through

    def _checked(self, name: str, args: Any, opts: pulumi.ResourceOptions | None) -> ClusterSpec:
        """The args as the cluster they state, or ArgsError with every problem (before anything
        registers)."""
        return _checked_cluster(type(self).__name__, name, args, self._args, self._outputs_only, opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: ClusterSpec, project: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None
    ) -> Self:
        """The component for a cluster the stack validated and planned already (the stack
        program's: gke_ai_batch/components/platform.py, Plan.cluster_spec): registered as
        planned, not checked again. Its nodes run as the cluster's node_service_account, or one
        the component creates."""
        self = cls.__new__(cls)
        self._build(name, spec, project, spec.cluster.node_service_account, opts)
        return self

    def _build(
        self, name: str, spec: ClusterSpec, project: pulumi.Input[str], account: pulumi.Input[str] | None, opts
    ) -> None:
        raise NotImplementedError

    def _begin(self, name: str, spec: ClusterSpec, project: pulumi.Input[str], opts: pulumi.ResourceOptions | None) -> None:
        """Register the component under its package token, aliased to the one the stack program used."""
        aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=self._old_type)])
        super().__init__(type_token(self._token_of or type(self)), name, None, pulumi.ResourceOptions.merge(opts, aliased))
        self._spec = spec
        self._project = project

    def _finish(self, name: str, opts, member: pulumi.Input[str]) -> None:
        # The grants, per repository of the images the pods pull, named after the repository.
        self.registry_readers: dict[str, gcp.artifactregistry.RepositoryIamMember] = {
            grant.resource_name: _registry_reader(self, name, self._spec.cluster.name, grant, member, opts)
            for grant in self._spec.registry_grants
        }

    def _ref(self, node_service_account: pulumi.Input[str]) -> ClusterRef:
        c = self._spec.cluster
        ref: ClusterRef = {
            "name": c.name,
            "location": self._spec.facts.location,
            "project": self._project,
            "node_service_account": node_service_account,
            "node_locations": list(c.node_locations),
            "mode": c.mode,
        }
        catalogue = self._spec.facts.catalogue
        if catalogue.model_fields_set:
            ref["catalogue"] = catalogue.model_dump(by_alias=True, exclude_unset=True)
        return ref

    def readers_for(self, image: str) -> list[pulumi.Resource]:
        """The grant pods of this image need before they can pull it ([] for most images)."""
        grant = registry_repository(image)
        if grant is None:
            return []
        if grant.resource_name not in self.registry_readers:
            raise ValueError(
                f"{image}: its nodes may not pull it (roles/artifactregistry.reader on {grant.project}/"
                f"{grant.repository}); add the image to the cluster's registry_images"
            )
        return [self.registry_readers[grant.resource_name]]

    def _child(self, name: str, base: str, child: str) -> str:
        return child_name(name, base, child) if self._scoped_children else f"{name}-{child}"

    def _kubernetes_provider(self, name: str, base: str, opts: pulumi.ResourceOptions) -> k8s.Provider:
        return k8s.Provider(self._child(name, base, KUBERNETES_PROVIDER), kubeconfig=self.kubeconfig, opts=opts)

    def _register(self, **more: pulumi.Output[str]) -> None:
        # The cluster's name, location, project and mode are what a stack policy (and synth)
        # reads off this component to tell which cluster its provider reaches and how to judge
        # it: a Kubernetes object names only its provider, whose parent this is.
        self.location = pulumi.Output.from_input(self._spec.facts.location)
        self.project = pulumi.Output.from_input(self._project)
        self.mode = pulumi.Output.from_input(self._spec.cluster.mode)
        self.register_outputs(
            {
                "name": self.name,
                "location": self.location,
                "project": self.project,
                "mode": self.mode,
                "endpoint": self.endpoint,
                "apiServer": self.api_server,
                "kubeconfig": self.kubeconfig,
                "nodeServiceAccount": self.node_service_account,
                **more,
            }
        )


def _registry_reader(
    owner: _Cluster, name: str, base: str, grant: RegistryGrant, member: pulumi.Input[str], opts
) -> "gcp.artifactregistry.RepositoryIamMember":
    # Quoted: evaluated at import, the annotation would load pulumi_gcp.artifactregistry (its
    # ~30 modules) in every run, while only a stack whose pods pull private images needs it.
    """Read access to exactly one Artifact Registry repository the pods' images come from, not
    project-wide (see plan.cluster.registry_grants)."""
    return gcp.artifactregistry.RepositoryIamMember(
        owner._child(name, base, grant.resource_name),
        project=grant.project,
        location=grant.location,
        repository=grant.repository,
        role=REGISTRY_READER_ROLE,
        member=member,
        opts=child_options(owner, opts),
    )


class GkeCluster(_Cluster):
    """Standard (default pool removed, a system pool, a dedicated least-privilege node
    service account, Workload Identity, shielded nodes with secure boot) or Autopilot."""

    cluster_ca_certificate: pulumi.Output[str]
    """The cluster's CA certificate (base64 PEM), for a kubeconfig on the IP endpoint."""

    _old_type = "gke-ai-batch:cluster:GkeCluster"
    _args = GkeClusterArgs
    _outputs_only = ("node_service_account",)

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        spec = self._checked(name, args, opts)
        self._build(name, spec, args["project"], args.get("node_service_account"), opts)

    def _build(
        self, name: str, spec: ClusterSpec, project: pulumi.Input[str], account: pulumi.Input[str] | None, opts
    ) -> None:
        self._begin(name, spec, project, opts)
        c = spec.cluster
        base = c.name
        # The GCP children: the component as parent (protect, providers), its depends_on (on a
        # new project GKE, IAM and Resource Manager refuse calls until their API is on) and
        # retain_on_delete; GKE names are fixed, so a replacement deletes the old one first.
        self.service_account: gcp.serviceaccount.Account | None = None
        self.node_role: gcp.projects.IAMMember | None = None
        if account is not None:
            # Created elsewhere, with its role (the bootstrap, bootstrap/resources.py, which also
            # lets the deployer act as this one account): nothing here creates, deletes or
            # grants on it, so the deployer needs no right to change the project's IAM policy,
            # which IAM could narrow to this role but not to this account
            # (https://cloud.google.com/iam/docs/setting-limits-on-granting-roles: limits are on
            # the roles granted, modifiedGrantsByRole).
            node_email: pulumi.Output[str] = pulumi.Output.from_input(account)
        else:
            self.service_account = gcp.serviceaccount.Account(
                self._child(name, base, "nodes"),
                account_id=node_service_account_id(c.name, spec.facts.location),
                display_name=f"GKE nodes of {c.name}",
                project=project,
                opts=child_options(self, opts, delete_before_replace=True),
            )
            node_email = self.service_account.email
        member = node_email.apply(lambda e: f"serviceAccount:{e}")
        if self.service_account is not None:
            self.node_role = gcp.projects.IAMMember(
                self._child(name, base, "nodes-role"),
                project=project,
                role=NODE_SA_ROLE,
                member=member,
                opts=child_options(self, opts),
            )
        # Autopilot nodes run as the same account (auto-provisioning defaults below), so both
        # modes need the registry grants.
        self._finish(name, opts, member)
        cargs = spec.cluster_args(typing.cast(str, project))
        if not c.standard:
            # Autopilot takes the node service account through auto-provisioning defaults.
            cargs["cluster_autoscaling"] = {
                "auto_provisioning_defaults": {
                    "service_account": node_email,
                    "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
                }
            }
        elif "cluster_autoscaling" in cargs:
            ap = dict(cargs["cluster_autoscaling"])
            ap["auto_provisioning_defaults"] = {**ap["auto_provisioning_defaults"], "service_account": node_email}
            cargs["cluster_autoscaling"] = ap
        if c.standard:
            # The default pool lives for minutes; give it the dedicated account all the same.
            cargs["node_config"] = {"service_account": node_email}
        self.cluster = gcp.container.Cluster(
            self._child(name, base, "cluster"),
            project=project,
            **cargs,
            # A fixed cluster name cannot be created beside the old one: replace by deleting
            # first (and protect production clusters from that altogether, through opts).
            opts=child_options(self, opts, depends_on=[self.node_role] if self.node_role else [], delete_before_replace=True),
        )
        self.system_pool: gcp.container.NodePool | None = None
        system = spec.system_pool
        if system is not None:
            system["node_config"] = {**system["node_config"], "service_account": node_email}
            self.system_pool = gcp.container.NodePool(
                self._child(name, base, "system"),
                cluster=self.cluster.name,
                location=self.cluster.location,
                project=project,
                **system,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    retain_on_delete=opts.retain_on_delete if opts is not None else None,
                    ignore_changes=["initialNodeCount", "nodeCount"],
                    delete_before_replace=True,
                ),
            )

        self.name = self.cluster.name
        self.endpoint = self.cluster.endpoint
        self.node_service_account = node_email
        self.cluster_ca_certificate = self.cluster.master_auth.cluster_ca_certificate
        if c.control_plane.dns_endpoint:
            # The program reaches the control plane as people do: through the DNS endpoint,
            # which IAM authorizes (container.clusters.connect) from any network, GitHub's
            # runners included; the IP endpoint may be private, or closed to them.
            host = self.cluster.control_plane_endpoints_config.apply(lambda c: c.dns_endpoint_config.endpoint)
            ca: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        else:
            host, ca = self.cluster.endpoint, self.cluster_ca_certificate
        self.api_server = pulumi.Output.concat("https://", host)
        access = pulumi.Output.all(self.cluster.name, host, ca).apply(lambda a: kubeconfig(a[0], a[1], a[2]))
        self.kubeconfig = pulumi.Output.secret(access)
        # Kubernetes resources wait for a node to run on (Standard) as well as for the API.
        ready = [self.system_pool] if self.system_pool is not None else [self.cluster]
        # The Kubernetes provider, for the layers above (their opts.provider).
        self.provider: k8s.Provider = self._kubernetes_provider(name, base, pulumi.ResourceOptions(parent=self, depends_on=ready))
        self._register(clusterCaCertificate=self.cluster_ca_certificate)

    def ref(self) -> ClusterRef:
        """This cluster as data, for the pool components (gke_ai_batch/components/nodepools.py).
        Its node_service_account resolves only once the cluster exists, so the pools made from
        this ref wait for their cluster, as they would on its name."""
        c = self._spec.cluster
        ref = self._ref(pulumi.Output.all(self.cluster.name, self.node_service_account).apply(lambda a: a[1]))
        ref["release_channel"] = c.release_channel
        if c.min_master_version is not None:
            ref["min_master_version"] = c.min_master_version
        return ref


class ExistingCluster(_Cluster):
    """A GKE cluster this program did not create: its declared facts as a ClusterRef for the
    pools, the registry grants its nodes' account needs, and a Kubernetes provider on its DNS
    endpoint. Nothing here reads the cluster from GCP: under `pulumi up` as under synth, the
    declared facts are the inputs (a data source would read at preview what the program already
    states, and the checks need them before any call)."""

    _old_type = "gke-ai-batch:cluster:ExistingCluster"
    _args = ExistingClusterArgs

    def __init__(self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None):
        spec = self._checked(name, args, opts)
        self._build(name, spec, args["project"], args["node_service_account"], opts)

    def _build(
        self, name: str, spec: ClusterSpec, project: pulumi.Input[str], account: pulumi.Input[str] | None, opts
    ) -> None:
        self._begin(name, spec, project, opts)
        c = spec.cluster
        # An existing cluster's account is given (ClusterConfig requires it), declared or an Output.
        assert account is not None and c.endpoint is not None
        self._account = account
        node_email = pulumi.Output.from_input(account)
        self._finish(name, opts, node_email.apply(lambda e: f"serviceAccount:{e}"))
        self.name = pulumi.Output.from_input(c.name)
        self.endpoint = pulumi.Output.from_input(c.endpoint)
        self.node_service_account = node_email
        self.api_server = pulumi.Output.from_input(f"https://{c.endpoint}")
        # The DNS endpoint carries a publicly trusted certificate: no CA to pin (kubeconfig()).
        self.kubeconfig = pulumi.Output.secret(kubeconfig(c.name, c.endpoint, None))
        self.provider: k8s.Provider = self._kubernetes_provider(name, c.name, pulumi.ResourceOptions(parent=self))
        self._register()

    def ref(self) -> ClusterRef:
        """The declared facts; version marks the cluster as existing for the pools' checks."""
        c = self._spec.cluster
        ref = self._ref(self._account)
        ref["version"] = typing.cast(str, c.version)
        ref["endpoint"] = typing.cast(str, c.endpoint)
        return ref


class StackGkeCluster(GkeCluster):
    """GkeCluster as the stack program registers it (gke_ai_batch/components/platform.py)."""

    _scoped_children = True
    _token_of = GkeCluster


class StackExistingCluster(ExistingCluster):
    """ExistingCluster as the stack program registers it."""

    _scoped_children = True
    _token_of = ExistingCluster


def _checked_cluster(
    component: str, name: str, args: Any, spec: type, outputs_only: tuple[str, ...], opts
) -> ClusterSpec:
    """The args as the cluster they state: the stack's cluster key by field name, the catalogue
    as the stack spells it, judged by the stack's rules about that key; ArgsError with every
    problem at its arg path."""
    where = f"{component} {name}"
    if not isinstance(args, dict):
        raise ArgsError(where, [at_arg("args", f"must be a mapping ({spec.__name__}), not {type(args).__name__}")])
    args = whole_numbers(args)
    declared, problems = _declared(args, spec, ("args",))
    problems = opts_problems(opts) + problems
    problems += [at_arg(f"args.{k}", "required") for k in sorted(spec.__required_keys__) if k not in args]
    for key, value in args.items():
        if key not in outputs_only and _has_output(value):
            problems.append(at_arg(f"args.{key}", NOT_AN_OUTPUT))
    images = args.get("registry_images", [])
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        # A string would be read letter by letter, and no grant made.
        problems.append(at_arg("args.registry_images", "must be a list of image names"))
    if not isinstance(args.get("catalogue", {}), dict):
        problems.append(at_arg("args.catalogue", f"must be a mapping, not {type(args['catalogue']).__name__}"))
    for key in ("addons", "monitoring"):
        flags = args.get(key, {})
        if not isinstance(flags, dict):
            problems.append(at_arg(f"args.{key}", f"must be a mapping of true or false, not {type(flags).__name__}"))
        else:
            problems += [at_arg(f"args.{key}.{k}", "must be true or false") for k, v in flags.items() if not isinstance(v, bool)]
    project = args.get("project")
    problems += project_problems(args, "args", "project" in outputs_only)
    said = {p.path for p in problems}
    # The cluster key's fields, as named (the args that are not the key's: project, images,
    # catalogue, addons, monitoring), but those refused already: every problem is said once.
    entry = {
        k: declared_account(v) if k == "node_service_account" else v
        for k, v in declared.items()
        if k in ClusterConfig.model_fields and f"args.{k}" not in said
    }
    if spec is ExistingClusterArgs:
        entry["existing"] = True
    found, cluster, facts = _cluster_of(entry, declared.get("catalogue"), project if isinstance(project, str) else None)
    problems += [p for p in found if p.path not in said]
    addons, monitoring = declared.get("addons", {}), declared.get("monitoring")
    if facts is not None and isinstance(addons, dict) and addons.get("lustre_csi_driver") is True:
        # The stack's checkpoints.lustre rule, for the driver a program turns on itself.
        problems += [at_arg(join_path("args", e.path), e.message) for e in lustre_driver_problems(facts, ("addons", "lustre_csi_driver"))]
    if facts is not None and isinstance(monitoring, dict) and monitoring.get("dcgm") is True:
        # The stack's metrics.dcgm rules (GKE's floor for the DCGM package, collection by managed
        # Prometheus) for the package a program turns on itself; managed_prometheus unset is off,
        # as monitoring_config renders it.
        on = Collected(monitoring.get("managed_prometheus") is True, dcgm=True, tpu=False, dashboard=False, existing=False)
        found_dcgm = metrics_problems(MetricsConfig.model_construct(dcgm=True), on, partial(version_floor, facts), ("monitoring",),
                                      "monitoring.managed_prometheus")
        problems += [at_arg(join_path("args", e.path), e.message) for e in found_dcgm]
    if problems or cluster is None or facts is None:
        raise ArgsError(where, problems)
    return ClusterSpec(cluster, facts, tuple(images), dict(addons), dict(monitoring) if monitoring is not None else None)


def _cluster_of(
    entry: dict[str, Any], catalogue: Any, project: str | None
) -> tuple[list[Finding], ClusterConfig | None, ClusterFacts | None]:
    """The cluster key validated by field name (its model's error locations are arg paths; a
    rule's, named by the key's aliases, become them through field_path), the catalogue as the
    stack spells it, and the stack's rules about that key on their facts, as a stack runs them
    once both are valid: every problem at its arg path, the cluster and its facts."""
    located, cluster, facts = validated_cluster(entry, catalogue)
    found = [at_arg(join_path("args", loc), msg) for loc, msg in located]
    if cluster is None or facts is None:
        return found, None, None
    found += [at_arg(join_path("args", field_path(ClusterConfig, e.path)), e.message) for e in cluster_problems(cluster, facts, project)]
    return found, cluster, facts


def _has_output(value: Any) -> bool:
    if isinstance(value, pulumi.Output):
        return True
    if isinstance(value, dict):
        return any(_has_output(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_output(v) for v in value)
    return False


def _declared(value: Any, spec: Any, path: tuple) -> tuple[Any, list[Finding]]:
    """`value` without the keys its TypedDict (and the TypedDicts inside it) does not declare, and
    those keys as problems at their arg paths: a TypedDict is not checked at run time, and a
    camelCase key (the stack file's spelling) is no arg; the model then judges the declared args
    alone, so that each problem is said once."""
    known: list[str] = []
    if typing.is_typeddict(spec) and isinstance(value, dict):
        # The raw annotations: resolving them (typing.get_type_hints) trips on pulumi.Input's
        # forward reference to Output, and only the nested TypedDicts matter here.
        hints = {k: _required(v) for k, v in spec.__annotations__.items()}
        known = sorted(hints)
        inner = [(k, v, hints.get(k, _UNDECLARED)) for k, v in value.items()]
    elif typing.get_origin(spec) is dict and isinstance(value, dict):
        inner = [(k, v, typing.get_args(spec)[1]) for k, v in value.items()]
    elif typing.get_origin(spec) is list and isinstance(value, list):
        inner = [(i, v, typing.get_args(spec)[0]) for i, v in enumerate(value)]
    else:
        return value, []
    kept: dict[Any, Any] = {}
    found: list[Finding] = []
    for key, v, annotation in inner:
        if annotation is _UNDECLARED:
            where = join_path(path[0], (*path[1:], key))
            found.append(at_arg(where, f"unknown arg{did_you_mean(str(key), known)}; known: {', '.join(known)}"))
        else:
            kept[key], more = _declared(v, annotation, (*path, key))
            found += more
    return (list(kept.values()) if isinstance(value, list) else kept), found


_UNDECLARED = object()


def _required(annotation: Any) -> Any:
    """NotRequired[X] -> X."""
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is NotRequired else annotation
