"""The report's Checkpoint storage section: each team's bucket and the one principal that may
read and write it, the CSI drivers the cluster has, and the samples that mount a bucket with the
FUSE sidecar's requests. Read from the plan (gke_ai_batch/plan/checkpoints.py) and the workloads'
rendered pod templates."""

from __future__ import annotations

from gke_ai_batch.domain import gcsfuse
from gke_ai_batch.domain.podtemplates import workload_pod_sets

from .md import DASH, code, table

GUIDE = "docs/checkpoints.md"


def section(plan) -> list[str]:
    cfg = plan.config
    ck = cfg.checkpoints
    if ck is None:
        return []
    rows = [
        [code(b.bucket), code(b.namespace), b.location, code(f"{b.namespace}/{b.service_account}"), gcsfuse.OBJECT_USER_ROLE,
         f"{b.soft_delete_days} days" if b.soft_delete_days else "off",
         f"{b.delete_after_days} days" if b.delete_after_days else "never"]
        for b in plan.checkpoint_buckets
    ]
    lines = [
        "Each team namespace's bucket grants one principal, the namespace's Kubernetes service account through "
        "Workload Identity, and nothing wider: no project role, no public access (uniform bucket-level access, "
        f"public access prevention enforced). {GUIDE}",
        "",
        *table(["bucket", "namespace", "location", "who may read and write", "role", "soft delete", "deleted after"], rows),
        "",
        f"- Cloud Storage FUSE CSI driver: {_fuse(cfg)}",
        f"- Managed Lustre CSI driver: {'on' if ck.lustre else 'off'}",
    ]
    mounts = [_mount(wl) for wl in plan.workloads if wl.checkpoints]
    if mounts:
        lines += ["", *table(["sample", "mount path", "FUSE sidecar requests per pod"], mounts)]
    return lines


def _fuse(cfg) -> str:
    if cfg.cluster.existing:
        return "on (declared for the existing cluster: checkpoints.fuseDriver)"
    if not cfg.cluster.standard:
        return "on (Autopilot has it always)"
    return "on (addonsConfig.gcsFuseCsiDriverConfig)"


def _mount(wl) -> list[str]:
    found = workload_pod_sets(wl.manifests)
    pod_sets = found[1] if found else ()
    paths = sorted({m["mountPath"] for ps in pod_sets for c in ps.spec.get("containers", ()) for m in c.get("volumeMounts", ())})
    sidecar = next((gcsfuse.sidecar_requests(ps.annotations) for ps in pod_sets), {})
    return [code(wl.name), ", ".join(code(p) for p in paths) or DASH,
            ", ".join(f"{r} {q}" for r, q in sidecar.items()) or "none"]
