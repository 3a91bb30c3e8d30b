"""Checkpoint storage as the plan has it: one bucket per team namespace, the Kubernetes service
account that alone may use it, the cluster's CSI driver add-ons, and what a pod that mounts its
bucket carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.domain import gcsfuse
from gke_ai_batch.domain.regions import region_of

VOLUME_NAME = "checkpoints"
# Directories exist in a flat bucket only as object prefixes: implicit-dirs lets the mount list
# and enter them (GKE docs cloud-storage-fuse-csi-driver, "Mount options"), which a framework
# that writes step_100/ and lists it on restore needs.
MOUNT_OPTIONS = "implicit-dirs"


@dataclass(frozen=True)
class BucketPlan:
    """A team namespace's checkpoint bucket and the one principal allowed to use it."""

    namespace: str
    bucket: str
    location: str
    project: str
    project_number: str
    service_account: str
    soft_delete_days: int
    delete_after_days: int | None

    @property
    def member(self) -> str:
        return gcsfuse.workload_identity_member(self.project_number, self.project, self.namespace, self.service_account)

    @property
    def service_account_manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": self.service_account, "namespace": self.namespace},
        }


def plan_buckets(cfg: StackConfig, project: str) -> list[BucketPlan]:
    ck = cfg.checkpoints
    if ck is None or cfg.fleet is not None:
        return []
    # Cloud Storage reports a region's location in capitals (US-CENTRAL1); writing it so keeps the
    # provider from seeing a change on every refresh.
    location = region_of(cfg.cluster.location or "").upper()
    return [
        BucketPlan(
            namespace=ns,
            bucket=ck.bucket_name(project, cfg.cluster.name, ns),
            location=location,
            project=project,
            project_number=ck.project_number,
            service_account=ck.service_account,
            soft_delete_days=ck.soft_delete_days,
            delete_after_days=ck.delete_after_days,
        )
        for ns in dict.fromkeys(t.namespace for t in cfg.teams)
    ]


def addons_args(cfg: StackConfig) -> dict[str, Any]:
    """The cluster component's `addons` for checkpoints (gke_ai_batch/components/cluster.py,
    AddonsArgs): the Cloud Storage FUSE CSI driver, and the Managed Lustre one when asked for."""
    ck = cfg.checkpoints
    if ck is None or cfg.cluster.existing:
        return {}
    return {"gcs_fuse_csi_driver": True, **({"lustre_csi_driver": True} if ck.lustre else {})}


def addons_config(standard: bool, gcs_fuse_csi_driver: bool = False, lustre_csi_driver: bool = False) -> dict[str, Any]:
    """The Cluster's addons_config for those drivers: the Cloud Storage FUSE CSI driver on a
    Standard cluster (off there unless enabled; Autopilot has it always: GKE docs
    how-to/cloud-storage-fuse-csi-driver-setup), and the Managed Lustre CSI driver (off by
    default on both: GKE docs concepts/managed-lustre, "Requirements")."""
    addons: dict[str, Any] = {}
    if standard and gcs_fuse_csi_driver:
        addons["gcs_fuse_csi_driver_config"] = {"enabled": True}
    if lustre_csi_driver:
        addons["lustre_csi_driver_config"] = {"enabled": True}
    return {"addons_config": addons} if addons else {}


def pod_annotations(wl) -> dict[str, str]:
    """The pod template's annotations: the one that makes GKE inject the FUSE sidecar, and the
    sidecar's requests the workload sets."""
    if wl.checkpoints is None:
        return {}
    out = {gcsfuse.VOLUMES_ANNOTATION: "true"}
    for resource, amount in wl.checkpoints.sidecar.items():
        out[gcsfuse.request_annotation(resource)] = str(amount)
    return out


def mount(cfg: StackConfig, wl, spec: dict[str, Any], project: str) -> None:
    """Mount the team's bucket in a pod spec (its one container) as a CSI ephemeral volume, and
    run the pod as the team's service account, the principal the bucket grants."""
    if wl.checkpoints is None or cfg.checkpoints is None:
        return
    bucket = cfg.checkpoints.bucket_name(project, cfg.cluster.name, wl.team)
    spec["serviceAccountName"] = cfg.checkpoints.service_account
    spec["volumes"] = [
        {
            "name": VOLUME_NAME,
            "csi": {
                "driver": gcsfuse.DRIVER,
                "volumeAttributes": {"bucketName": bucket, "mountOptions": MOUNT_OPTIONS},
            },
        }
    ]
    for container in spec["containers"]:
        container["volumeMounts"] = [{"name": VOLUME_NAME, "mountPath": wl.checkpoints.mount_path}]
