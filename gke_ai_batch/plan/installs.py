"""What the Kueue install is made of, from its own settings alone (the stack's kueue key, or
KueueInstall's args): the chart's values and the webhook probe. Neither reads a Plan, so the
stack program and a component used from any Pulumi program derive them alike."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.config.batch import KueueConfig
from gke_ai_batch.config.fleet import MultiKueueSettings
from gke_ai_batch.plan.kueue import kueue_values, webhook_probe_manifests
from gke_ai_batch.plan.multikueue import multikueue_configuration


def kueue_install_values(kueue: KueueConfig, multi_kueue: MultiKueueSettings | None = None) -> dict[str, Any]:
    """The Helm values of Kueue's release; `multi_kueue`: a MultiKueue manager's settings (the
    stack's fleet.multiKueue), written into its Configuration."""
    block = multikueue_configuration(multi_kueue, kueue.version) if multi_kueue is not None else None
    return kueue_values(kueue, block)


def webhook_probe(kueue: KueueConfig) -> list[dict[str, Any]]:
    """The probe's objects, in the order they are created; none with the gate off, or for a
    Kueue someone else installed (it answers already, and kueue-system is not this program's)."""
    if not kueue.webhook_gate or kueue.installed is not None:
        return []
    return webhook_probe_manifests(kueue.probe_image)
