"""What a deployer needs for each Google Cloud resource type the main program registers: the IAM
permissions pulumi-gcp's create, read, update and delete of that type call, and the grant that
gives them. The one home of these facts: the bootstrap's custom roles are built from it
(bootstrap/resources.py), and tests/test_dayone_deployer_iam.py fails when a shipped stack
registers a type that is not here, or when the bootstrap's deployer does not hold a row's grant.

Kubernetes objects (kubernetes:*) are not here: the deployer reaches the cluster's API with
roles/container.admin, which holds every Kubernetes permission GKE maps from IAM
(https://cloud.google.com/kubernetes-engine/docs/how-to/iam, "Predefined GKE roles").

Permissions per method: https://cloud.google.com/iam/docs/permissions-reference; which calls
each resource makes: hashicorp/terraform-provider-google (pulumi-gcp wraps it), the service's
resource_*.go."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Scope = Literal["project", "checkpoint-buckets", "node-service-account", "by-hand"]

CONTAINER_ADMIN = "roles/container.admin"
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
SERVICE_ACCOUNT_USER = "roles/iam.serviceAccountUser"
DASHBOARD_EDITOR = "roles/monitoring.dashboardEditor"

# The bootstrap's custom roles, one per stack (a custom role id is its project's, and two
# stacks may share a project): <id>_<stack>.
RESOURCE_POLICY_ROLE_ID = "gkeAiBatchResourcePolicies"
SERVICE_ENABLER_ROLE_ID = "gkeAiBatchServices"
CHECKPOINT_BUCKETS_ROLE_ID = "gkeAiBatchCheckpointBuckets"
CUSTOM_ROLE_IDS = (RESOURCE_POLICY_ROLE_ID, SERVICE_ENABLER_ROLE_ID, CHECKPOINT_BUCKETS_ROLE_ID)


@dataclass(frozen=True)
class Need:
    permissions: tuple[str, ...]
    grant: str
    """A predefined role (roles/...) or one of CUSTOM_ROLE_IDS."""
    scope: Scope
    """Where the grant is: the stack's project; the stack's project, conditioned to the stack's
    checkpoint buckets; the node service account only; or not by the bootstrap at all."""
    why: str = ""
    """For a by-hand row: why the bootstrap does not grant it, and where the docs say what to grant."""


DEPLOYER_NEEDS: dict[str, tuple[Need, ...]] = {
    # Create, get, update and delete of the cluster and its node pools return operations the
    # provider polls (container.operations.get); GKE checks iam.serviceAccounts.actAs on the
    # account the nodes run as (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa).
    # Kubernetes Engine Admin holds container.* (https://cloud.google.com/iam/docs/roles-permissions/container).
    "gcp:container/cluster:Cluster": (
        Need(("container.clusters.create", "container.clusters.get", "container.clusters.update",
              "container.clusters.delete", "container.operations.get"), CONTAINER_ADMIN, "project"),
        Need(("iam.serviceAccounts.actAs",), SERVICE_ACCOUNT_USER, "node-service-account"),
    ),
    "gcp:container/nodePool:NodePool": (
        Need(("container.clusters.get", "container.clusters.update", "container.operations.get"), CONTAINER_ADMIN, "project"),
        Need(("iam.serviceAccounts.actAs",), SERVICE_ACCOUNT_USER, "node-service-account"),
    ),
    # The tpu7x workload policy (gke_ai_batch/components/nodepools.py); node pools name it in
    # their placement policy, which GKE checks as compute.resourcePolicies.use. A custom role
    # with just these, rather than roles/compute.admin.
    "gcp:compute/resourcePolicy:ResourcePolicy": (
        Need(("compute.resourcePolicies.create", "compute.resourcePolicies.delete", "compute.resourcePolicies.get",
              "compute.resourcePolicies.list", "compute.resourcePolicies.use"), RESOURCE_POLICY_ROLE_ID, "project"),
    ),
    # The main program enables its APIs with disableOnDestroy false (gke_ai_batch/components/services.py):
    # enable and read, never disable (serviceusage.services.disable is not here). Enabling returns
    # an operation the provider polls (Service Usage REST reference, services.enable).
    "gcp:projects/service:Service": (
        Need(("serviceusage.services.enable", "serviceusage.services.get", "serviceusage.services.list",
              "serviceusage.operations.get"), SERVICE_ENABLER_ROLE_ID, "project"),
    ),
    # The node service account's role (gke_ai_batch/components/cluster.py), which the program
    # grants only to an account it creates: the bootstrap creates each stack's account and grants
    # its role, so its deployer changes no project IAM policy (IAM conditions could limit the
    # roles such a deployer grants, not to whom; bootstrap/resources.py).
    "gcp:projects/iAMMember:IAMMember": (
        Need(("resourcemanager.projects.getIamPolicy", "resourcemanager.projects.setIamPolicy"), PROJECT_IAM_ADMIN, "by-hand",
             "a stack without cluster.nodeServiceAccount grants its own node account "
             "roles/container.defaultNodeServiceAccount, which needs a deployer that may change the "
             "project's IAM policy (docs/bootstrap.md); the bootstrap's stacks name its account"),
    ),
    # Checkpoint buckets (gke_ai_batch/components/storage.py): buckets.insert, get, patch and
    # delete (terraform-provider-google google/services/storage/resource_storage_bucket.go; its
    # delete lists the objects first but deletes anyway when it may not, and Cloud Storage refuses
    # to delete a bucket that is not empty, so storage.objects.list is left out), and the
    # bucket's policy read-modify-write for the team's grant (iam_storage_bucket.go). Not
    # roles/storage.admin: that reads and writes every object of every bucket in the project.
    "gcp:storage/bucket:Bucket": (
        Need(("storage.buckets.create", "storage.buckets.get", "storage.buckets.update", "storage.buckets.delete"),
             CHECKPOINT_BUCKETS_ROLE_ID, "checkpoint-buckets"),
    ),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (
        Need(("storage.buckets.getIamPolicy", "storage.buckets.setIamPolicy"), CHECKPOINT_BUCKETS_ROLE_ID, "checkpoint-buckets"),
    ),
    # The checkpoint bucket's whole policy, set to the team's grant alone (storage.py: it takes
    # out the project's convenience bindings), written and read back.
    "gcp:storage/bucketIAMPolicy:BucketIAMPolicy": (
        Need(("storage.buckets.getIamPolicy", "storage.buckets.setIamPolicy"), CHECKPOINT_BUCKETS_ROLE_ID, "checkpoint-buckets"),
    ),
    # The cluster's dashboard (gke_ai_batch/components/metrics.py). Monitoring Dashboard
    # Configuration Editor holds monitoring.dashboards.create, get, list, update and delete, and
    # no other Monitoring write (https://cloud.google.com/iam/docs/roles-permissions/monitoring);
    # dashboards accept no resource conditions, so it is on the project.
    "gcp:monitoring/dashboard:Dashboard": (
        Need(("monitoring.dashboards.create", "monitoring.dashboards.get", "monitoring.dashboards.update",
              "monitoring.dashboards.delete"), DASHBOARD_EDITOR, "project"),
    ),
    "gcp:serviceaccount/account:Account": (
        Need(("iam.serviceAccounts.create", "iam.serviceAccounts.get", "iam.serviceAccounts.update",
              "iam.serviceAccounts.delete"), "roles/iam.serviceAccountCreator", "by-hand",
             "the bootstrap creates each stack's node service account (nodeServiceAccount), so its "
             "deployer creates none; a stack without cluster.nodeServiceAccount needs a deployer that may "
             "create service accounts (docs/bootstrap.md)"),
    ),
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": (
        Need(("artifactregistry.repositories.getIamPolicy", "artifactregistry.repositories.setIamPolicy"),
             "roles/artifactregistry.admin", "by-hand",
             "granted per repository by the repository's owner, which the bootstrap does not manage "
             "(docs/bootstrap.md)"),
    ),
}


def role_permissions(role_id: str) -> list[str]:
    """A custom role's permissions: every permission of the rows it grants, in table order."""
    return list(dict.fromkeys(p for needs in DEPLOYER_NEEDS.values() for n in needs if n.grant == role_id for p in n.permissions))
