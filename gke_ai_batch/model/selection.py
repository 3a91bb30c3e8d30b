"""Node selection as kube-scheduler and Kueue evaluate it: nodeSelector and required node
affinity against node labels, and taints against tolerations.

- Node affinity: k8s.io/component-helpers/scheduling/corev1/nodeaffinity (GetRequiredNodeAffinity:
  every nodeSelector pair must match, and at least one required nodeSelectorTerm must match;
  a term matches when all its matchExpressions do). Kueue's flavor check uses the same code on
  a flavor's nodeLabels, keeping only the flavor's own label keys
  (pkg/scheduler/flavorassigner/flavorassigner.go:flavorSelector at v0.19.2).
- Taints: k8s.io/component-helpers/scheduling/corev1 FindMatchingUntoleratedTaint with the
  NoSchedule and NoExecute effects (kube-scheduler's TaintToleration filter; Kueue's
  checkFlavorForPodSets). Toleration matching is v1.Toleration.ToleratesTaint: an empty key with
  Exists tolerates everything, an empty effect tolerates every effect, Equal compares values."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")


def _requirement(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), list(expr.get("values") or ())
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        try:
            have, want = int(labels[key]), int(values[0])
        except (KeyError, ValueError, IndexError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def required_terms(spec: Mapping[str, Any]) -> list[list[Mapping[str, Any]]]:
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    return [list(t.get("matchExpressions") or ()) for t in required.get("nodeSelectorTerms") or ()]


def matches(spec: Mapping[str, Any], labels: Mapping[str, str], keys: Collection[str] | None = None) -> bool:
    """Whether a pod spec's nodeSelector and required node affinity admit nodes with `labels`.
    With `keys`, only selector entries and expressions on those keys count (Kueue's flavor
    check); a term left empty by that filter admits any node."""
    for k, v in (spec.get("nodeSelector") or {}).items():
        if keys is not None and k not in keys:
            continue
        if labels.get(k) != v:
            return False
    terms = required_terms(spec)
    if keys is not None:
        filtered = [[e for e in t if e.get("key") in keys] for t in terms]
        terms = [] if any(not t for t in filtered) else filtered
    if not terms:
        return True
    return any(all(_requirement(e, labels) for e in term) for term in terms)


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    op = toleration.get("operator") or "Equal"
    if not key:
        return op == "Exists"
    if key != taint.get("key"):
        return False
    if op == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first NoSchedule or NoExecute taint no toleration tolerates, if any."""
    for taint in taints:
        if taint.get("effect") not in SCHEDULING_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"
