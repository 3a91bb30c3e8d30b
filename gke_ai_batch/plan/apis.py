"""The Google Cloud APIs a cluster's project must have enabled, worked out from what the stack
creates there. This module is the one home of the API names: the main program enables them
(gke_ai_batch/components/services.py) and the bootstrap reads the ones it needs from here too.

A project created today has none of these on; GKE refuses to create a cluster until
container.googleapis.com is enabled, and each API below is called (by this program or by GKE on
the cluster's behalf) only when the stack uses what needs it."""

from __future__ import annotations

from gke_ai_batch.config.stack import StackConfig

CONTAINER = "container.googleapis.com"
COMPUTE = "compute.googleapis.com"
IAM = "iam.googleapis.com"
IAM_CREDENTIALS = "iamcredentials.googleapis.com"
STS = "sts.googleapis.com"
RESOURCE_MANAGER = "cloudresourcemanager.googleapis.com"
SERVICE_USAGE = "serviceusage.googleapis.com"
STORAGE = "storage.googleapis.com"
KMS = "cloudkms.googleapis.com"
BINARY_AUTHORIZATION = "binaryauthorization.googleapis.com"
LOGGING = "logging.googleapis.com"
MONITORING = "monitoring.googleapis.com"

# Why a cluster's project needs each one (the report and the docs say the same).
WHY: dict[str, str] = {
    # GKE docs (how-to/creating-a-regional-cluster and every quickstart, "Before you begin":
    # "Enable the Google Kubernetes Engine API").
    CONTAINER: "GKE: the cluster and its node pools",
    # GKE's nodes are Compute Engine VMs in the cluster's project (GKE docs concepts/node-pools);
    # the tpu7x workload policy is a Compute Engine resource policy (gke_ai_batch/components/nodepools.py).
    COMPUTE: "Compute Engine: the nodes' VMs, their disks and the tpu7x workload policy",
    # Projects are read through Resource Manager, and the node role grant (projects.IAMMember, for
    # an account the program creates) reads and writes the project's IAM policy through it
    # (projects.getIamPolicy / setIamPolicy,
    # https://cloud.google.com/resource-manager/reference/rest/v3/projects/setIamPolicy).
    RESOURCE_MANAGER: "Resource Manager: the project itself, and its IAM policy where the program grants the node role",
    # Service accounts are created through the IAM API
    # (https://cloud.google.com/iam/docs/service-accounts-create, "Before you begin").
    IAM: "IAM: the node service account this program creates (no cluster.nodeServiceAccount)",
    # GKE clusters send system logs and metrics to Cloud Logging and Cloud Monitoring unless
    # told otherwise, and Managed Service for Prometheus' managed collection is on by default in
    # new clusters from 1.27 (https://cloud.google.com/kubernetes-engine/docs/concepts/observability,
    # https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed); the program
    # leaves loggingConfig and monitoringConfig at those defaults unless gke-ai-batch:metrics
    # sets monitoringConfig (docs/metrics.md). Its dashboard is a Cloud Monitoring resource.
    LOGGING: "Cloud Logging: GKE's system and workload logs (on by default)",
    MONITORING: "Cloud Monitoring: GKE's system metrics and Managed Service for Prometheus (on by default)",
    # The checkpoint buckets and their IAM grants (https://cloud.google.com/storage/docs/json_api,
    # buckets.insert and buckets.setIamPolicy); a new project may have it off.
    STORAGE: "Cloud Storage: the teams' checkpoint buckets (gke-ai-batch:checkpoints)",
    # GKE docs how-to/encrypting-secrets, "Before you begin": enable the Cloud KMS API.
    KMS: "Cloud KMS: application-layer secrets encryption (cluster.databaseEncryption)",
    # Binary Authorization docs (setting-up/enable-gke, "Enable the Binary Authorization API").
    BINARY_AUTHORIZATION: "Binary Authorization: cluster.binaryAuthorization",
}


def kms_key_project(key_name: str) -> str:
    # projects/<project>/locations/... (gke_ai_batch/config/cluster.py checks the form).
    return key_name.split("/")[1]


def required_apis(cfg: StackConfig, project: str) -> tuple[str, ...]:
    """The APIs `project`, the cluster's, must have enabled, in a fixed order (WHY's).

    Workload Identity Federation for GKE needs no API of its own on the cluster's project (GKE
    docs how-to/workload-identity, "Before you begin": the GKE API only); a pod that then
    impersonates a service account calls iamcredentials in that account's project, which this
    program does not choose. A KMS key in another project is that project's business: the key
    exists, so Cloud KMS is on there already."""
    c = cfg.cluster
    if c.existing:
        # The cluster runs, so its APIs are on; its pools need GKE's and Compute Engine's, and
        # nothing here grants a project role (no node role: the existing nodes' account has it).
        dashboard = cfg.collected is not None and cfg.collected.dashboard
        return tuple(
            api
            for api in WHY
            if api in (CONTAINER, COMPUTE) or (api == STORAGE and cfg.checkpoints) or (api == MONITORING and dashboard)
        )
    wanted = {CONTAINER, COMPUTE, RESOURCE_MANAGER, LOGGING, MONITORING}
    if c.node_service_account is None:
        wanted.add(IAM)
    if c.database_encryption is not None and kms_key_project(c.database_encryption.key_name) == project:
        wanted.add(KMS)
    if c.binary_authorization:
        wanted.add(BINARY_AUTHORIZATION)
    if cfg.checkpoints is not None:
        wanted.add(STORAGE)
    return tuple(api for api in WHY if api in wanted)


def in_project(name: str, project: str, home: str) -> str:
    """A logical name as it is in the stack's own project `home`, <project>/<name> in another
    (a fleet worker's project): one project's resources never take another's URN."""
    return name if project == home else f"{project}/{name}"


def resource_name(api: str, project: str, home: str) -> str:
    """The Service resource's logical name: api-<name> (api-container), in_project."""
    return in_project(f"api-{api.split('.', 1)[0]}", project, home)
