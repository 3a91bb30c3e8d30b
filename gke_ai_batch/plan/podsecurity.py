"""Pod Security admission applied to the plan: every sample workload's pods against its
namespace's enforce level (gke_ai_batch/model/podsecurity.py), refused as config errors.

Pod Security admission rejects Pods, not the Job or JobSet that makes them: the workload is
created and admitted by Kueue, then every pod create fails and it waits forever, holding its
quota. So a workload whose pods the level would reject is refused here, naming the field, the
level and the teams[] key to change."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.domain import podtemplates
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.model import podsecurity
from gke_ai_batch.plan.workloads import namespace_level

RULE = "pod-security"
"""The rule id of a sample whose pods its namespace's Pod Security level rejects."""
# A violation's pod field, and the workload key that put it there.
_CAUSE = {"privileged": "privileged", "hostNetwork": "pool", "hostPort": "ports"}


def pod_specs(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pod specs a workload's pods are made from: Jobs' and JobSets' templates (a
    PodTemplate only describes a ProvisioningRequest's pods; its Job makes them)."""
    return [
        t.get("spec") or {}
        for m in manifests
        if m["kind"] in ("Job", "JobSet")
        for t in podtemplates.pod_templates(m["kind"], m)
    ]


def problems(plan) -> list[Finding]:
    """Each sample whose pods its namespace's enforce level rejects, at its stack key."""
    cfg = plan.config
    teams = {}
    for j, team in enumerate(cfg.teams):
        teams.setdefault(team.namespace, j)
    out = []
    for i, (wl, planned) in enumerate(zip(cfg.workloads, plan.workloads)):
        level = namespace_level(cfg, wl.team)
        for spec in pod_specs(planned.manifests):
            found = podsecurity.violations(spec, level)
            if not found:
                continue
            j = teams.get(wl.team)
            setting = f"teams[{j}].podSecurity" if j is not None else "the team's podSecurity"
            # GKE's TPU Multislice guide deploys multi-host TPU pods with hostNetwork: true
            # and dnsPolicy ClusterFirstWithHostNet
            # (https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-multislice).
            why = " (multi-host TPU pods on Standard use the host network)" if spec.get("hostNetwork") else ""
            cause = next((_CAUSE[k] for k in _CAUSE if any(k in (v.path or "") for v in found)), None)
            if cause == "pool" and wl.pool is None:
                cause = "tpu"  # a bare multi-host shape
            key = f"gke-ai-batch:workloads[{i}]" + (f".{cause}" if cause else "")
            kind = planned.manifests[-1]["kind"]
            out.append(Finding(
                RULE,
                f"{kind} {wl.team}/{wl.name}: its pods set {_fields(found)}, which Pod Security level {level} "
                f"of namespace {wl.team} rejects at pod creation, so the {kind} would wait forever; set "
                f"{setting}: {podsecurity.lowest_level(spec)}{why}",
                path=key,
            ))
            break  # one message per workload: its replicated jobs share a pod spec
    return out


def _fields(found: list[podsecurity.Violation]) -> str:
    """spec.hostNetwork (Host Namespaces), spec.containers[0].ports[0].hostPort and ... (Host Ports)."""
    by_check: dict[str, list[str]] = {}
    for v in found:
        by_check.setdefault(v.rule, []).append(v.path or "")
    return ", ".join(f"{' and '.join(fields)} ({check})" for check, fields in by_check.items())
