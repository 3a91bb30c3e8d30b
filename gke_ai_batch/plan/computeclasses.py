"""GKE custom ComputeClasses as the cluster receives them (cloud.google.com/v1 ComputeClass,
https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass), and what a flavor
that selects one carries.

Each priority says what GKE creates: a TPU priority its tpu.type (the generation's
cloud.google.com/gke-tpu-accelerator value), tpu.topology and tpu.count (chips per VM, which
picks the machine type); a GPU priority its gpu.type and count on a machineType; the capacity
as spot: true, flexStart.enabled: true, or a Specific reservation (the CRD's
reservations.specific[].name, project, reservationBlock.name and
reservationBlock.reservationSubBlock.name), and spot: false for on-demand."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.domain import naming
from gke_ai_batch.config.computeclasses import ClassPriority, ComputeClassConfig
from gke_ai_batch.config.gcpnames import parse_reservation


def compute_class_manifest(cc: ComputeClassConfig) -> dict[str, Any]:
    return {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        "metadata": {"name": cc.name},
        "spec": {
            "priorities": [_priority(p) for p in cc.priorities],
            "nodePoolAutoCreation": {"enabled": cc.auto_create},
            "whenUnsatisfiable": cc.when_unsatisfiable,
        },
    }


def _priority(p: ClassPriority) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.tpu is not None:
        s = p.tpu.slice
        out["tpu"] = {"type": s.accelerator, "count": s.chips_per_vm, "topology": s.topology}
    else:
        out["machineType"] = p.node_machine_type
        if p.gpu is not None:
            out["gpu"] = {"type": p.gpu.type, "count": p.gpu.count, "driverVersion": p.gpu.driver_version}
    if p.capacity == "flexStart":
        out["flexStart"] = {"enabled": True}
    elif p.capacity == "reservation":
        # Every form config accepts (gcpnames.check_reservation), sub-blocks included.
        ref = parse_reservation(p.reservation or "")
        specific: dict[str, Any] = {"name": ref.name}
        if ref.project:
            specific["project"] = ref.project
        if ref.block:
            specific["reservationBlock"] = {"name": ref.block}
            if ref.sub_block:
                specific["reservationBlock"]["reservationSubBlock"] = {"name": ref.sub_block}
        out["reservations"] = {"affinity": "Specific", "specific": [specific]}
    else:
        out["spot"] = p.capacity == "spot"
    if p.local_ssd_count is not None:
        out["storage"] = {"localSSDCount": p.local_ssd_count}
    return out


def class_flavor_labels(name: str) -> dict[str, str]:
    """What a flavor that selects class `name` injects into its pods' nodeSelector."""
    return {naming.COMPUTE_CLASS_LABEL: name}


def class_flavor_tolerations(name: str, standard: bool) -> list[dict[str, str]]:
    """The toleration of GKE's taint on a Standard cluster's class nodes (Autopilot taints none
    a pod must tolerate)."""
    if not standard:
        return []
    taint = naming.compute_class_taint(name)
    return [{"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}]
