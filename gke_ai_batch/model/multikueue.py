"""The rules Kueue applies to a ClusterQueue that uses a MultiKueue AdmissionCheck.

Standard library only (with gke_ai_batch.model, which is too): the policy pack's
fleet-multikueue-only rule runs this same function over a recording. Sources are Kueue v0.19.2;
paths are relative to https://github.com/kubernetes-sigs/kueue/tree/v0.19.2.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.model.objects import PROVISIONING_CONTROLLER

# apis/kueue/v1beta2/multikueue_types.go:37
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"


def _queue_flavors(spec: Mapping[str, Any]) -> set[str]:
    return {f.get("name") for rg in spec.get("resourceGroups") or [] if isinstance(rg, Mapping)
            for f in rg.get("flavors") or [] if isinstance(f, Mapping)}


def cluster_queue_problems(cluster_queue: Mapping[str, Any], admission_checks: Iterable[Mapping[str, Any]]) -> list[Finding]:
    """Why Kueue would keep this ClusterQueue inactive ("Can't admit new workloads") for its
    admission checks, given every AdmissionCheck the manager has: findings about the queue, each
    rule Kueue's own reason (AdmissionCheckNotFound, ...). Kueue's reasons, from
    clusterQueue.inactiveReason and updateWithAdmissionChecks
    (pkg/cache/scheduler/clusterqueue.go:325-348 and 417-446):
    a referenced check that does not exist; two MultiKueue checks; a MultiKueue check limited
    to some flavors; a MultiKueue check together with a ProvisioningRequest check (the
    provisioning happens on the worker, whose own queue carries that check)."""
    name = (cluster_queue.get("metadata") or {}).get("name", "<unnamed>")
    subject = ("ClusterQueue", "", str(name))
    spec = cluster_queue.get("spec") or {}
    controllers = {
        (ac.get("metadata") or {}).get("name"): (ac.get("spec") or {}).get("controllerName") for ac in admission_checks
    }
    all_flavors = _queue_flavors(spec)
    multikueue: list[str] = []
    provisioning: list[str] = []
    out: list[Finding] = []
    for rule in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []:
        check = rule.get("name") if isinstance(rule, Mapping) else None
        if not isinstance(check, str):
            continue  # not known before deploy: nothing to judge
        if check not in controllers:
            out.append(Finding("AdmissionCheckNotFound", f"AdmissionCheck {check} does not exist (Kueue: AdmissionCheckNotFound)", subject=subject))
            continue
        if controllers[check] == PROVISIONING_CONTROLLER:
            provisioning.append(check)
        if controllers[check] == MULTIKUEUE_CONTROLLER:
            multikueue.append(check)
            # admissioncheck.NewAdmissionChecks (pkg/util/admissioncheck/admissioncheck.go:169-184):
            # no onFlavors means every flavor of the queue.
            on = set(rule.get("onFlavors") or all_flavors)
            if on != all_flavors:
                out.append(Finding(
                    "MultiKueueAdmissionCheckAppliedPerFlavor",
                    f"MultiKueue AdmissionCheck {check} must apply to every flavor, not only "
                    f"{', '.join(sorted(on))} (Kueue: MultiKueueAdmissionCheckAppliedPerFlavor)",
                    subject=subject,
                ))
    if len(multikueue) > 1:
        out.append(Finding(
            "MultipleMultiKueueAdmissionChecks",
            f"more than one MultiKueue AdmissionCheck ({', '.join(multikueue)}) (Kueue: MultipleMultiKueueAdmissionChecks)",
            subject=subject,
        ))
    if multikueue and provisioning:
        out.append(Finding(
            "MultiKueueWithProvisioningRequest",
            f"MultiKueue AdmissionCheck {', '.join(multikueue)} together with ProvisioningRequest "
            f"AdmissionCheck {', '.join(provisioning)}: Kueue deactivates the queue "
            "(MultiKueueWithProvisioningRequest); queued provisioning belongs on the workers' queues",
            subject=subject,
        ))
    return out
