"""The Cloud Storage FUSE CSI driver as GKE runs it: the pod annotation that asks for its
sidecar, the sidecar's resource requests, the volume's driver name, and Cloud Storage's bucket
rules that a checkpoint bucket must meet. Pure data and functions, read by config (the rules),
plan (the rendered pods and buckets) and model (what kube-scheduler sees of a pod).

Sources:
- GKE docs how-to/persistent-volumes/cloud-storage-fuse-csi-driver (the annotation, the CSI
  ephemeral volume, driver gcsfuse.csi.storage.gke.io) and how-to/cloud-storage-fuse-csi-driver-sidecar
  ("Configure resources for the sidecar container").
- The driver's webhook, GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/mutatingwebhook.go
  (Handle: injects only on pod CREATE, when gke-gcsfuse/volumes parses true) and
  pkg/webhook/config.go (prepareConfig, populateResource: the request/limit defaulting below).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gke_ai_batch.domain import quantity

DRIVER = "gcsfuse.csi.storage.gke.io"
VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
# mutatingwebhook.go ParseBool: "the acceptable values ... are 'True', 'true', 'false' or 'False'".
TRUE_VALUES = ("true", "True")
SIDECAR_NAME = "gke-gcsfuse-sidecar"

# The sidecar's default requests (= its default limits) on GKE: cpu 250m, memory 256Mi,
# ephemeral-storage 5Gi (GKE docs how-to/cloud-storage-fuse-csi-driver-sidecar; the webhook's
# FakeConfig in pkg/webhook/config.go carries the same values).
SIDECAR_DEFAULTS: dict[str, str] = {"cpu": "250m", "memory": "256Mi", "ephemeral-storage": "5Gi"}


def request_annotation(resource: str) -> str:
    """gke-gcsfuse/cpu-request, gke-gcsfuse/memory-request, gke-gcsfuse/ephemeral-storage-request."""
    return f"gke-gcsfuse/{resource}-request"


def limit_annotation(resource: str) -> str:
    return f"gke-gcsfuse/{resource}-limit"


def injects_sidecar(annotations: Mapping[str, Any] | None) -> bool:
    return (annotations or {}).get(VOLUMES_ANNOTATION) in TRUE_VALUES


def sidecar_requests(annotations: Mapping[str, Any] | None) -> dict[str, str]:
    """The requests the webhook gives the sidecar of a pod with these annotations, as
    quantities ({} when it injects none). Per resource (config.go populateResource): neither
    annotation set, the default; a limit of 0 (unlimited) with no request, the default; no
    request annotation, the limit; and a request of 0 is no request (prepareResourceList
    leaves zero quantities out)."""
    if not injects_sidecar(annotations):
        return {}
    annotations = annotations or {}
    out: dict[str, str] = {}
    for resource, default in SIDECAR_DEFAULTS.items():
        request = annotations.get(request_annotation(resource))
        limit = annotations.get(limit_annotation(resource))
        if request is None:
            request = default if limit is None or _is_zero(limit) else limit
        if not _is_zero(request):
            out[resource] = str(request)
    return out


def _is_zero(q: Any) -> bool:
    return quantity.value(q) == 0


# Cloud Storage bucket names (https://cloud.google.com/storage/docs/buckets#naming): 3 to 63
# characters of lowercase letters, digits, '-', '_' (and '.', which this program does not use:
# dotted names are domain names that need verification), starting and ending with a letter or
# digit; not starting with "goog" and not containing "google" or a close misspelling.
BUCKET_NAME_MAX = 63
BUCKET_NAME_MIN = 3
BUCKET_RESERVED = ("goog", "google", "g00gle")

# Soft delete keeps deleted objects restorable for the retention duration: 0 (off) or 7 to 90
# days (Cloud Storage docs soft-delete, "Retention duration"; the bucket's
# softDeletePolicy.retentionDurationSeconds).
SOFT_DELETE_DAYS_MIN = 7
SOFT_DELETE_DAYS_MAX = 90
DAY_SECONDS = 86400

# The role a pod's Kubernetes service account gets on its team's bucket: read, create, list and
# delete objects, which writing a checkpoint through FUSE takes (it rewrites and deletes
# temporary objects), and nothing on the bucket itself (no bucket or IAM policy changes).
# roles/storage.objectUser is the GCS FUSE guide's role for read/write mounts (GKE docs
# cloud-storage-fuse-csi-driver-setup, "Configure access to Cloud Storage buckets"), and the
# driver's own: GoogleCloudPlatform/gcs-fuse-csi-driver docs/authentication.md:100-111 (at
# 5fcdc04a) binds objectViewer (read-only) or objectUser to the pod's Workload Identity principal
# on the bucket, and its mount-time bucket check needs only storage.objects.list
# (pkg/cloud_provider/storage/storage.go:230). No narrower predefined role can overwrite and
# delete objects: objectUser is objectAdmin less object ACLs and retention (google/skills
# skills/cloud/google-cloud-storage-basics/references/data-management.md:48, at 1af77752).
OBJECT_USER_ROLE = "roles/storage.objectUser"

# What Cloud Storage puts in a new bucket's IAM policy besides the grants asked for: the
# project convenience values, bound to the legacy roles (a bucket created with uniform
# bucket-level access keeps the object roles too, which fine-grained buckets hold as default
# object ACLs). projectViewer:P is everyone with roles/viewer on project P, projectEditor:P and
# projectOwner:P everyone with roles/editor and roles/owner
# (https://cloud.google.com/storage/docs/access-control/iam, "convenience values";
# https://cloud.google.com/storage/docs/access-control/iam-roles#basic-roles-modifiable: whether
# uniform bucket-level access is on at creation decides whether Viewer gets storage.objects.get,
# as kubernetes/k8s.io#2007 found; an exported policy of such a bucket shows exactly these
# four bindings). legacyObjectReader holds
# storage.objects.get, legacyBucketReader storage.objects.list
# (https://cloud.google.com/storage/docs/access-control/iam-roles, the Storage Legacy roles).
CONVENIENCE_BINDINGS: dict[str, tuple[str, ...]] = {
    "roles/storage.legacyBucketOwner": ("projectOwner", "projectEditor"),
    "roles/storage.legacyObjectOwner": ("projectOwner", "projectEditor"),
    "roles/storage.legacyBucketReader": ("projectViewer",),
    "roles/storage.legacyObjectReader": ("projectViewer",),
}


def only_policy(role: str, member: str) -> dict:
    """A bucket IAM policy granting `role` to `member` and nothing else: set authoritatively, it
    takes out the convenience bindings above."""
    return {"bindings": [{"role": role, "members": [member]}]}


def workload_identity_member(project_number: str, project: str, namespace: str, service_account: str) -> str:
    """The IAM principal of one Kubernetes service account through Workload Identity Federation
    for GKE (GKE docs how-to/workload-identity, "Grant IAM roles to Kubernetes ServiceAccounts":
    principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/
    PROJECT_ID.svc.id.goog/subject/ns/NAMESPACE/sa/KSA)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
        f"{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}"
    )
