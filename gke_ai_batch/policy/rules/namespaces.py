"""Namespace rules: every team namespace (one with a LocalQueue) carries a Pod Security level
and, on production stacks, isolates its pods' ingress with a NetworkPolicy.

Stack rules: `check(resources, config)` yields (urn, message) per problem."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gke_ai_batch.model.podsecurity import AUDIT_LABEL, ENFORCE_LABEL, LEVELS, WARN_LABEL, stricter

from .base import (
    EMPTY,
    LOCAL_QUEUE,
    UNKNOWN,
    Resource,
    as_dict,
    as_list,
    dig,
    k8s_labels,
    k8s_name,
    k8s_namespace,
    of_type,
)

NAMESPACE = "kubernetes:core/v1:Namespace"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
NETWORK_POLICY = "kubernetes:networking.k8s.io/*:NetworkPolicy"


def team_namespaces(resources: Sequence[Resource]) -> list[str]:
    """Namespaces with a LocalQueue: where teams submit work."""
    return sorted({k8s_namespace(q.props) for q in of_type(resources, LOCAL_QUEUE)})


def pod_security(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str | None, str]]:
    """Every team namespace's Namespace (or, for default, NamespacePatch) names its Pod Security
    level: a namespace without the enforce label admits privileged pods unless the cluster's
    admission configuration says otherwise. On production stacks a privileged namespace also
    warns and audits at baseline, so that what needs the host stays visible."""
    objects: dict[str, list[Resource]] = {}
    for r in of_type(resources, NAMESPACE, NAMESPACE_PATCH):
        objects.setdefault(k8s_name(r), []).append(r)
    for ns in team_namespaces(resources):
        found = objects.get(ns, [])
        if not found:
            yield None, (
                f"team namespace {ns} (it has a LocalQueue) gets no Pod Security label: the stack declares no "
                "Namespace or NamespacePatch for it; label it pod-security.kubernetes.io/enforce"
            )
            continue
        labels: dict[str, Any] = {}
        for r in found:
            labels.update(k8s_labels(r.props))
        level = labels.get(ENFORCE_LABEL)
        if level == UNKNOWN:
            continue
        urn = found[0].urn
        if level not in LEVELS:
            shown = repr(level) if level is not None else "unset"
            yield urn, (
                f"namespace {ns}: {ENFORCE_LABEL} is {shown}; set it to "
                f"{', '.join(reversed(LEVELS))} (teams[].podSecurity)"
            )
        elif level == "privileged" and config.get("production"):
            for label in (WARN_LABEL, AUDIT_LABEL):
                value = labels.get(label)
                if value != UNKNOWN and (value not in LEVELS or not stricter(value, "privileged")):
                    yield urn, (
                        f"production namespace {ns} enforces privileged but its {label} is "
                        f"{value if value is not None else 'unset'}: set it to baseline so that pods needing "
                        "host access are reported"
                    )


def network_policy(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str | None, str]]:
    """On production stacks, every team namespace has a NetworkPolicy that selects all its pods
    for Ingress (podSelector {}): without one, any pod in the cluster reaches the team's pods."""
    if not config.get("production"):
        return
    policies = of_type(resources, NETWORK_POLICY)
    isolated = {k8s_namespace(p.props) for p in policies if _isolates_ingress(p.props)}
    teams = team_namespaces(resources)
    for ns in teams:
        if ns not in isolated:
            yield None, (
                f"production team namespace {ns} has no NetworkPolicy selecting all its pods (podSelector {{}}) "
                "for Ingress: every pod of the cluster can reach its pods; set teams[].networkPolicy true"
            )
    # Policies add up: one that lets other namespaces or addresses in undoes the isolation of
    # the pods it selects (https://kubernetes.io/docs/concepts/services-networking/network-policies/,
    # "policies are additive").
    for p in policies:
        if k8s_namespace(p.props) in teams:
            for reason in _outside_ingress(p.props):
                yield p.urn, f"production team namespace {k8s_namespace(p.props)}: NetworkPolicy {k8s_name(p)} {reason}"


def _outside_ingress(props: Mapping[str, Any]) -> Iterator[str]:
    """How the policy lets in traffic from outside its namespace: an ingress rule without
    `from` (or with an empty one) admits every source; a namespaceSelector or ipBlock peer
    admits other namespaces or addresses."""
    for i, rule in enumerate(as_list(dig(props, "spec", "ingress"))):
        if rule == UNKNOWN:
            continue
        peers = as_list(dig(rule, "from"))
        if not peers:
            yield f"ingress[{i}] has no `from`: it admits every source"
        for j, peer in enumerate(peers):
            if peer == UNKNOWN:
                continue
            if not isinstance(peer, Mapping) or "podSelector" not in peer or set(peer) - {"podSelector"}:
                yield f"ingress[{i}].from[{j}] admits sources outside the namespace (only podSelector peers keep it in)"


def _isolates_ingress(props: Mapping[str, Any]) -> bool:
    spec = as_dict(props.get("spec"))
    selector = spec.get("podSelector")
    if selector == UNKNOWN or not isinstance(selector, Mapping):
        return selector == UNKNOWN
    if dig(selector, "matchLabels") or as_list(dig(selector, "matchExpressions")):
        return False
    types = spec.get("policyTypes")
    # Unset policyTypes always include Ingress (NetworkPolicySpec.policyTypes).
    return types is None or types == UNKNOWN or "Ingress" in as_list(types)
