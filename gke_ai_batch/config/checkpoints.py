"""`gke-ai-batch:checkpoints`: a Cloud Storage bucket per team namespace that only the team's
Kubernetes service account may use (Workload Identity Federation for GKE), the Cloud Storage FUSE
CSI driver that mounts it in pods, and the Managed Lustre CSI driver where the region has
Managed Lustre; and a workload's `checkpoints` mount. docs/checkpoints.md."""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import Iterator, Literal

from pydantic import Field, field_validator

from gke_ai_batch.config.base import K8sName, Model, Quantity, RuleError
from gke_ai_batch.config.gcpnames import is_project_id
from gke_ai_batch.config.lookups import ClusterFacts, version_floor
from gke_ai_batch.domain import gcsfuse, naming, regions, versions

# A project number is a positive decimal integer (Resource Manager Project.name is
# projects/{project_number}; gcloud projects describe PROJECT --format='value(projectNumber)').
PROJECT_NUMBER_RX = re.compile(r"[1-9][0-9]{0,18}", re.ASCII)
BUCKET_SUFFIX = "-ckpt"
BUCKET_HASH_LEN = 6
# Lowercase letters, digits, '-' and '_', starting and ending with a letter or digit (dots left
# out: gcsfuse.BUCKET_NAME_* says why).
_BUCKET_RX = re.compile(r"[a-z0-9][a-z0-9_-]*[a-z0-9]", re.ASCII)


class CheckpointsConfig(Model):
    """Checkpoint storage: per team namespace a bucket <bucketPrefix>-<namespace>-ckpt in the
    cluster's region and a Kubernetes service account that alone may read and write it."""

    project_number: str
    """The cluster project's number (gcloud projects describe PROJECT --format='value(projectNumber)'):
    Workload Identity principals name the project by number, and the recording engine cannot look it up."""
    service_account: K8sName = "checkpoints"
    """The Kubernetes service account created in each team namespace; pods that mount the bucket run as it."""
    bucket_prefix: str | None = None
    """Bucket names are <bucketPrefix>-<namespace>-ckpt and global across Cloud Storage; default <project>-<cluster name>."""
    soft_delete_days: int = Field(7, ge=0)
    """Days a deleted or overwritten checkpoint stays restorable: 0 (off) or 7 to 90."""
    delete_after_days: int | None = Field(None, ge=1, le=36500)
    """Delete checkpoints this many days after they were written; unset: keep them."""
    lustre: bool = False
    """Also enable GKE's Managed Lustre CSI driver (a cluster this program creates, in a region with Managed Lustre)."""
    fuse_driver: bool | None = None
    """Existing cluster only: whether its Cloud Storage FUSE CSI driver is on (addonsConfig.gcsFuseCsiDriverConfig.enabled);
    must be true on Standard, and need not be stated on Autopilot (GKE turns it on there). A cluster
    this program creates gets the driver from it (Autopilot has it always)."""

    @field_validator("project_number")
    @classmethod
    def _project_number(cls, v: str) -> str:
        if not PROJECT_NUMBER_RX.fullmatch(v):
            raise ValueError(
                f"{v!r} is not a project number: the digits gcloud projects describe PROJECT "
                "--format='value(projectNumber)' prints (not the project id)"
            )
        return v

    @field_validator("service_account")
    @classmethod
    def _own_account(cls, v: str) -> str:
        if v == naming.DEFAULT_SERVICE_ACCOUNT:
            # The grant would reach every pod of the namespace that names no account, not the
            # checkpointing pods alone; and the program would take over, and on destroy delete,
            # an object Kubernetes made.
            raise ValueError(
                f"{v!r} is the account every pod of the namespace runs as unless it names another, so the bucket "
                "would be every such pod's, and Kubernetes creates it in each namespace already: name the team's own"
            )
        return v

    @field_validator("soft_delete_days")
    @classmethod
    def _soft_delete(cls, v: int) -> int:
        if v != 0 and not gcsfuse.SOFT_DELETE_DAYS_MIN <= v <= gcsfuse.SOFT_DELETE_DAYS_MAX:
            raise ValueError(
                f"Cloud Storage keeps soft-deleted objects 0 (off) or {gcsfuse.SOFT_DELETE_DAYS_MIN} to "
                f"{gcsfuse.SOFT_DELETE_DAYS_MAX} days, not {v}"
            )
        return v

    def bucket_name(self, project: str, cluster: str, namespace: str) -> str:
        """<bucketPrefix>-<namespace>-ckpt. The default prefix, <project>-<cluster>, can make a
        name longer than Cloud Storage's 63 characters (a 30-character project, a 40-character
        cluster): such a name is cut, and a stable hash of the whole replaces the cut tail, so
        two long names stay two buckets."""
        if self.bucket_prefix is not None:
            return f"{self.bucket_prefix}-{namespace}{BUCKET_SUFFIX}"
        stem = f"{project}-{cluster}-{namespace}"
        if len(stem) + len(BUCKET_SUFFIX) <= gcsfuse.BUCKET_NAME_MAX:
            return stem + BUCKET_SUFFIX
        digest = hashlib.sha256(stem.encode()).hexdigest()[:BUCKET_HASH_LEN]
        room = gcsfuse.BUCKET_NAME_MAX - len(BUCKET_SUFFIX) - 1 - BUCKET_HASH_LEN
        return f"{stem[:room].rstrip('-_')}-{digest}{BUCKET_SUFFIX}"


SidecarResource = Literal["cpu", "memory", "ephemeral-storage"]


class CheckpointMount(Model):
    """Mount the team's checkpoint bucket in the workload's pods through the Cloud Storage FUSE
    CSI driver, which adds a sidecar container to each pod."""

    mount_path: str = "/checkpoints"
    """Where the bucket appears in the workload's container: an absolute path."""
    sidecar: dict[SidecarResource, Quantity] = {}
    """The FUSE sidecar's requests (cpu, memory, ephemeral-storage); unset: GKE's 250m, 256Mi, 5Gi. "0": none."""

    @field_validator("mount_path")
    @classmethod
    def _mount_path(cls, v: str) -> str:
        # VolumeMount.mountPath: the API refuses an empty path and one containing ':' or a '..'
        # element (validateVolumeMounts / ValidatePathNoBacksteps, pkg/apis/core/validation).
        # The path is judged as rendered: '/.' or '//' would otherwise render as the root.
        # (normpath keeps a leading '//', which POSIX leaves to the implementation.)
        path = "/" + posixpath.normpath(v).lstrip("/")
        if not v.startswith("/") or path == "/" or ":" in v or ".." in v.split("/"):
            raise ValueError(f"{v!r} is not an absolute path below / (no ':' or '..')")
        return path


def bucket_name_problem(name: str) -> str | None:
    """Why Cloud Storage would refuse a bucket name (https://cloud.google.com/storage/docs/buckets#naming)."""
    if not gcsfuse.BUCKET_NAME_MIN <= len(name) <= gcsfuse.BUCKET_NAME_MAX:
        return f"is {len(name)} characters; Cloud Storage takes {gcsfuse.BUCKET_NAME_MIN} to {gcsfuse.BUCKET_NAME_MAX}"
    if not _BUCKET_RX.fullmatch(name):
        return "has a character Cloud Storage refuses (lowercase letters, digits, '-' and '_', starting and ending with a letter or digit)"
    if name.startswith(gcsfuse.BUCKET_RESERVED[0]):
        return f"starts with {gcsfuse.BUCKET_RESERVED[0]!r}, which Cloud Storage reserves"
    reserved = next((word for word in gcsfuse.BUCKET_RESERVED[1:] if word in name), None)
    if reserved is not None:
        return f"contains {reserved!r}, which Cloud Storage reserves (with its close misspellings)"
    return None


def checkpoint_problems(cfg, project: str | None) -> Iterator[RuleError]:
    """The rules that relate checkpoints to the cluster, the teams and the workloads of `cfg`, a
    StackConfig (not imported: the stack imports this module)."""
    ck = cfg.checkpoints
    yield from _workload_problems(cfg)
    if ck is None:
        return
    at = ("checkpoints",)
    if cfg.fleet is not None:
        yield RuleError(at, "checkpoint buckets are per cluster; a fleet stack does not create them yet: remove the key")
        return
    yield from _driver_problems(cfg, ck)
    if ck.bucket_prefix is None and not is_project_id(project):
        return  # gcp:project is refused on its own; no bucket name to judge
    for namespace in dict.fromkeys(t.namespace for t in cfg.teams):
        name = ck.bucket_name(project or "", cfg.cluster.name, namespace)
        problem = bucket_name_problem(name)
        if problem:
            yield RuleError(
                (*at, "bucketPrefix"),
                f"team {namespace}'s bucket {name!r} {problem}; its name is <bucketPrefix>-<namespace>{BUCKET_SUFFIX}",
            )


def _driver_problems(cfg, ck: CheckpointsConfig) -> Iterator[RuleError]:
    at = ("checkpoints",)
    if cfg.cluster.existing:
        if cfg.cluster.mode == "autopilot":
            # "The Cloud Storage FUSE CSI driver is enabled by default for Autopilot clusters"
            # (GKE docs how-to/cloud-storage-fuse-csi-driver-setup, "Enable the Cloud Storage
            # FUSE CSI driver", Autopilot): nothing to declare; only a stated false is a problem.
            if ck.fuse_driver is False:
                yield RuleError(
                    (*at, "fuseDriver"),
                    "you declare the cluster's Cloud Storage FUSE CSI driver off, and then no bucket mounts; GKE turns it "
                    "on in every Autopilot cluster, so leave fuseDriver out (or true) once it is on",
                )
        elif ck.fuse_driver is not True:
            # GKE's Standard clusters have the driver off unless it is enabled (GKE docs
            # how-to/cloud-storage-fuse-csi-driver-setup, "Enable the Cloud Storage FUSE CSI
            # driver"); without it no sidecar is injected and the volume never mounts.
            yield RuleError(
                (*at, "fuseDriver"),
                "the cluster exists already: declare fuseDriver: true once its Cloud Storage FUSE CSI driver is on "
                "(gcloud container clusters update NAME --update-addons GcsFuseCsiDriver=ENABLED); this program "
                "registers no Cluster resource for it and cannot turn it on",
            )
        if ck.lustre:
            yield RuleError(
                (*at, "lustre"),
                "the cluster exists already, and this program registers no Cluster resource for it, so it cannot "
                "enable the Managed Lustre CSI driver; enable it where the cluster is managed "
                "(gcloud container clusters update NAME --enable-lustre-csi-driver) and remove it here",
            )
        return
    if ck.fuse_driver is not None:
        yield RuleError(
            (*at, "fuseDriver"),
            "only for an existing cluster (existing: true): this program turns the driver on in the cluster it creates; remove it",
        )
    if ck.lustre:
        yield from lustre_driver_problems(cfg.facts, (*at, "lustre"))


def lustre_driver_problems(facts: ClusterFacts, at: tuple) -> Iterator[RuleError]:
    """Why the Managed Lustre CSI driver cannot serve the cluster of `facts`, at `at`: the
    stack's checkpoints.lustre, or a cluster component's addons.lustre_csi_driver."""
    if facts.location:
        region = facts.region
        if region not in regions.LUSTRE_REGIONS:
            yield RuleError(
                at,
                f"Managed Lustre has no instances in {region} (https://cloud.google.com/managed-lustre/docs/locations), "
                f"so the driver would have nothing of the cluster's region to mount; it is offered in "
                f"{', '.join(sorted(regions.LUSTRE_REGIONS))}",
            )
    yield from version_floor(facts, at, versions.LUSTRE_CSI_MIN, "the Managed Lustre CSI driver and its volumes")


def _workload_problems(cfg) -> Iterator[RuleError]:
    pools = {p.name for p in cfg.node_pools}
    for i, wl in enumerate(cfg.workloads):
        if wl.checkpoints is None:
            continue
        at = ("workloads", i, "checkpoints")
        if cfg.checkpoints is None:
            yield RuleError(at, "mounts the team's checkpoint bucket, and the stack has none: add gke-ai-batch:checkpoints")
        if (wl.pool is None or wl.pool in pools) and cfg.uses_host_network(wl):
            # Pods on the host network reach no GKE metadata server, which is how the sidecar gets
            # the pod's Workload Identity token; the driver serves them only through a projected
            # token and its own volume attributes (GoogleCloudPlatform/gcs-fuse-csi-driver#460),
            # which this program does not render.
            yield RuleError(
                at,
                "its pods run on the host network (a multi-host TPU slice on Standard), and this program mounts the "
                "bucket only in pods that are not: mount it in a single-host or Autopilot workload",
            )
