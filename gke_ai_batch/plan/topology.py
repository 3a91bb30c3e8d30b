"""Kueue Topology objects and the pod-template annotation of a sample that asks for a domain
(gke_ai_batch/config/topology.py; docs/batch-layer.md, "Topology-aware scheduling")."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.domain import topology
from gke_ai_batch.domain.podtemplates import pod_templates


def topology_manifest(name: str, levels: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": label} for label in levels]},
    }


def annotate(wl, manifests: list[dict[str, Any]]) -> None:
    """Kueue reads the request off each pod template (a JobSet's replicated jobs, a Job's)."""
    if wl.topology is None:
        return
    annotation = {}
    if wl.topology.mode is not None:
        annotation[topology.ANNOTATIONS[wl.topology.mode]] = wl.topology.level
    if wl.topology.slice is not None:
        annotation[topology.SLICE_ANNOTATION] = wl.topology.slice.level
        annotation[topology.SLICE_SIZE_ANNOTATION] = str(wl.topology.slice.size)
    for manifest in manifests:
        for template in pod_templates(manifest.get("kind", ""), manifest):
            template.setdefault("metadata", {}).setdefault("annotations", {}).update(annotation)
