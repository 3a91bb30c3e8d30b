"""GkeCluster: the cluster, its node service account, the system pool, and a Kubernetes
provider for the layers above."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gke_ai_batch.components.nodepools import ClusterRef
from gke_ai_batch.domain.naming import KUBERNETES_PROVIDER, scoped
from gke_ai_batch.plan import Plan
from gke_ai_batch.plan.cluster import NODE_SA_ROLE, REGISTRY_READER_ROLE, node_service_account_id, registry_repository


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


class GkeCluster(pulumi.ComponentResource):
    """Standard (default pool removed, a system pool, a dedicated least-privilege node
    service account, Workload Identity, shielded nodes with secure boot) or Autopilot."""

    def __init__(
        self,
        resource_name: str,
        plan: Plan,
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
        apis: Sequence[pulumi.Resource] = (),
    ):
        """`scope`: the naming scope of this cluster's resources (gke_ai_batch.domain.naming.scoped);
        `apis`: the project's enabled APIs (gke_ai_batch/components/services.py), which every Google Cloud
        resource here waits for: on a new project GKE, IAM and Resource Manager refuse calls
        until their API is on."""
        super().__init__("gke-ai-batch:cluster:GkeCluster", resource_name, None, opts)
        cfg = plan.config
        protect = cfg.production
        apis = list(apis)
        child = pulumi.ResourceOptions(parent=self, depends_on=apis)

        self.service_account: gcp.serviceaccount.Account | None = None
        if cfg.cluster.node_service_account is not None:
            # Created by the bootstrap project (bootstrap/resources.py), which also lets the
            # deployer act as this one account; nothing here may create or delete it.
            node_email: pulumi.Output[str] = pulumi.Output.from_input(cfg.cluster.node_service_account)
        else:
            self.service_account = gcp.serviceaccount.Account(
                scoped(scope, "nodes"),
                account_id=node_service_account_id(cfg.cluster.name, cfg.cluster.location),
                display_name=f"GKE nodes of {cfg.cluster.name}",
                project=plan.project,
                opts=pulumi.ResourceOptions(parent=self, protect=protect, delete_before_replace=True, depends_on=apis),
            )
            node_email = self.service_account.email
        member = node_email.apply(lambda e: f"serviceAccount:{e}")
        self.node_role = gcp.projects.IAMMember(
            scoped(scope, "nodes-role"),
            project=plan.project,
            role=NODE_SA_ROLE,
            member=member,
            opts=child,
        )
        # Autopilot nodes run as the same account (auto-provisioning defaults below), so both
        # modes need the registry grants.
        self.registry_readers = _registry_readers(plan, scope, member, child)
        args = dict(plan.cluster_args)
        if not cfg.cluster.standard:
            # Autopilot takes the node service account through auto-provisioning defaults.
            args["cluster_autoscaling"] = {
                "auto_provisioning_defaults": {
                    "service_account": node_email,
                    "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
                }
            }
        elif "cluster_autoscaling" in args:
            ap = dict(args["cluster_autoscaling"])
            ap["auto_provisioning_defaults"] = {
                **ap["auto_provisioning_defaults"],
                "service_account": node_email,
            }
            args["cluster_autoscaling"] = ap
        if cfg.cluster.standard:
            # The default pool lives for minutes; give it the dedicated account all the same.
            args["node_config"] = {"service_account": node_email}
        self.cluster = gcp.container.Cluster(
            scoped(scope, "cluster"),
            project=plan.project,
            **args,
            # A fixed cluster name cannot be created beside the old one: replace by deleting
            # first (and protect production clusters from that altogether).
            opts=pulumi.ResourceOptions(
                parent=self, protect=protect, depends_on=[self.node_role, *apis], delete_before_replace=True
            ),
        )
        self.system_pool = None
        if plan.system_pool is not None:
            sys_args = dict(plan.system_pool)
            sys_args["node_config"] = {**sys_args["node_config"], "service_account": node_email}
            self.system_pool = gcp.container.NodePool(
                scoped(scope, "system"),
                cluster=self.cluster.name,
                location=self.cluster.location,
                project=plan.project,
                **sys_args,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    protect=protect,
                    ignore_changes=["initialNodeCount", "nodeCount"],
                    delete_before_replace=True,
                ),
            )

        self.name: pulumi.Output[str] = self.cluster.name
        self.endpoint: pulumi.Output[str] = self.cluster.endpoint
        self.node_service_account: pulumi.Output[str] = node_email
        if cfg.cluster.control_plane.dns_endpoint:
            # The program reaches the control plane as people do: through the DNS endpoint,
            # which IAM authorizes (container.clusters.connect) from any network, GitHub's
            # runners included; the IP endpoint may be private, or closed to them.
            host = self.cluster.control_plane_endpoints_config.apply(lambda c: c.dns_endpoint_config.endpoint)
            ca: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        else:
            host, ca = self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate
        self.api_server: pulumi.Output[str] = pulumi.Output.concat("https://", host)
        """The address this program's Kubernetes provider (and its kubeconfig) talks to."""
        access = pulumi.Output.all(self.cluster.name, host, ca).apply(lambda a: kubeconfig(a[0], a[1], a[2]))
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(access)
        # Kubernetes resources wait for a node to run on (Standard) as well as for the API.
        ready = [self.system_pool] if self.system_pool is not None else [self.cluster]
        self.provider = k8s.Provider(
            scoped(scope, KUBERNETES_PROVIDER),
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=ready),
        )
        self._ref_facts = (cfg, plan.project)
        self.register_outputs(_outputs(self))

    def ref(self) -> ClusterRef:
        """This cluster as data, for the pool components (gke_ai_batch/components/nodepools.py).
        Its node_service_account resolves only once the cluster exists, so the pools made from
        this ref wait for their cluster, as they would on its name."""
        cfg, project = self._ref_facts
        ref = _ref(cfg, project, pulumi.Output.all(self.cluster.name, self.node_service_account).apply(lambda a: a[1]))
        ref["release_channel"] = cfg.cluster.release_channel
        if cfg.cluster.min_master_version is not None:
            ref["min_master_version"] = cfg.cluster.min_master_version
        return ref

    def readers_for(self, image: str) -> list[pulumi.Resource]:
        """The grant pods of this image need before they can pull it ([] for most images)."""
        return _readers_for(self.registry_readers, image)


def _outputs(cluster) -> dict[str, pulumi.Output[str]]:
    return {
        "name": cluster.name,
        "endpoint": cluster.endpoint,
        "apiServer": cluster.api_server,
        "kubeconfig": cluster.kubeconfig,
        "nodeServiceAccount": cluster.node_service_account,
    }


def _ref(cfg, project: str, node_service_account: pulumi.Input[str]) -> ClusterRef:
    ref: ClusterRef = {
        "name": cfg.cluster.name,
        "location": cfg.cluster.location,
        "project": project,
        "node_service_account": node_service_account,
        "node_locations": list(cfg.cluster.node_locations),
    }
    if cfg.catalogue.model_fields_set:
        ref["catalogue"] = cfg.catalogue.model_dump(by_alias=True, exclude_unset=True)
    return ref


def _readers_for(readers: dict[str, pulumi.Resource], image: str) -> list[pulumi.Resource]:
    grant = registry_repository(image)
    return [readers[grant.resource_name]] if grant is not None else []


def _registry_readers(
    plan: Plan, scope: str, member: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> dict[str, gcp.artifactregistry.RepositoryIamMember]:
    """Read access to exactly the Artifact Registry repositories the stack's images come from,
    not project-wide (see plan.cluster.registry_grants)."""
    return {
        grant.resource_name: gcp.artifactregistry.RepositoryIamMember(
            scoped(scope, grant.resource_name),
            project=grant.project,
            location=grant.location,
            repository=grant.repository,
            role=REGISTRY_READER_ROLE,
            member=member,
            opts=opts,
        )
        for grant in plan.registry_grants
    }


class ExistingCluster(pulumi.ComponentResource):
    """A GKE cluster this program did not create (cluster.existing): its declared facts as a
    ClusterRef for the pools, the registry grants its nodes' account needs, and a Kubernetes
    provider on its DNS endpoint. Nothing here reads the cluster from GCP: under `pulumi up` as
    under synth, the stack file's facts are the inputs (a data source would read at preview what
    the stack already states, and the checks need them before any call)."""

    def __init__(
        self,
        resource_name: str,
        plan: Plan,
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
        apis: Sequence[pulumi.Resource] = (),
    ):
        super().__init__("gke-ai-batch:cluster:ExistingCluster", resource_name, None, opts)
        cfg = plan.config
        c = cfg.cluster
        node_email = c.node_service_account
        self.registry_readers = _registry_readers(
            plan, scope, f"serviceAccount:{node_email}", pulumi.ResourceOptions(parent=self, depends_on=list(apis))
        )
        self.name: pulumi.Output[str] = pulumi.Output.from_input(c.name)
        self.endpoint: pulumi.Output[str] = pulumi.Output.from_input(c.endpoint)
        self.node_service_account: pulumi.Output[str] = pulumi.Output.from_input(node_email)
        self.api_server: pulumi.Output[str] = pulumi.Output.from_input(f"https://{c.endpoint}")
        # The DNS endpoint carries a publicly trusted certificate: no CA to pin (kubeconfig()).
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(kubeconfig(c.name, c.endpoint, None))
        self.provider = k8s.Provider(
            scoped(scope, KUBERNETES_PROVIDER), kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self)
        )
        self._ref_facts = (cfg, plan.project)
        self.register_outputs(_outputs(self))

    def ref(self) -> ClusterRef:
        """The declared facts; version marks the cluster as existing for the pools' checks."""
        cfg, project = self._ref_facts
        ref = _ref(cfg, project, cfg.cluster.node_service_account)
        ref["version"] = cfg.cluster.version
        ref["endpoint"] = cfg.cluster.endpoint
        return ref

    def readers_for(self, image: str) -> list[pulumi.Resource]:
        return _readers_for(self.registry_readers, image)
