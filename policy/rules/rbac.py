"""RBAC rules over what the stack binds: teams run work only through Kueue and cannot touch
quota, and the program's own service accounts hold namespaced rights only.

Roles are resolved within the stack: a binding's roleRef is looked up among the Roles and
ClusterRoles the stack creates, and among the built-in ClusterRoles whose rights Kubernetes
documents (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .base import (
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    EMPTY,
    ROLE,
    ROLE_BINDING,
    K8S_SERVICE_ACCOUNT,
    Resource,
    as_dict,
    as_list,
    k8s_name,
    k8s_namespace,
    of_type,
)

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection", "*")
# Cluster-scoped quota objects and the LocalQueue that points at one: whoever writes them sets
# what every team may use. RBAC objects: whoever writes them grants themselves the rest.
PROTECTED = {
    "kueue.x-k8s.io": (
        "clusterqueues",
        "resourceflavors",
        "workloadpriorityclasses",
        "cohorts",
        "admissionchecks",
        "provisioningrequestconfigs",
        "localqueues",
    ),
    "rbac.authorization.k8s.io": ("roles", "rolebindings", "clusterroles", "clusterrolebindings"),
}
# cluster-admin is the administrators' own role. admin and edit let a subject create Pods
# (and much else) in the namespace they are bound in.
ADMIN_ROLE = "cluster-admin"
BUILTIN_RULES = {
    "admin": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}],
    "edit": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}],
    "view": [],
}


def _matches(values: Any, wanted: str) -> bool:
    items = as_list(values)
    return wanted in items or "*" in items


def _resource_matches(resources: Any, wanted: str) -> bool:
    # A grant on a subresource (clusterqueues/status) writes the object's status, which is
    # where Kueue keeps admission: it counts.
    return any(r == "*" or r == wanted or (isinstance(r, str) and r.startswith(wanted + "/")) for r in as_list(resources))


def forbidden_grants(rules: Any) -> list[str]:
    """What a role's rules grant that no team may hold: Pod creation, quota or RBAC writes."""
    found = []
    for rule in as_list(rules):
        rule = as_dict(rule)
        groups, resources, verbs = rule.get("apiGroups"), rule.get("resources"), rule.get("verbs")
        if _matches(groups, "") and _resource_matches(resources, "pods") and _matches(verbs, "create"):
            found.append("create pods")
        for group, names in PROTECTED.items():
            if not _matches(groups, group):
                continue
            for name in names:
                if _resource_matches(resources, name):
                    written = [v for v in WRITE_VERBS if v in as_list(verbs)]
                    if written:
                        found.append(f"{'/'.join(written)} {group} {name}")
    return list(dict.fromkeys(found))


def _bindings(resources: Sequence[Resource]) -> Iterator[tuple[Resource, str | None, Mapping[str, Any]]]:
    """(binding, its namespace or None for a ClusterRoleBinding, roleRef)."""
    for b in of_type(resources, ROLE_BINDING):
        yield b, k8s_namespace(b.props), as_dict(b.props.get("roleRef"))
    for b in of_type(resources, CLUSTER_ROLE_BINDING):
        yield b, None, as_dict(b.props.get("roleRef"))


def no_queue_bypass(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    roles = {(k8s_namespace(r.props), k8s_name(r)): r.props.get("rules") for r in of_type(resources, ROLE)}
    cluster_roles = {k8s_name(r): r.props.get("rules") for r in of_type(resources, CLUSTER_ROLE)}
    for binding, namespace, ref in _bindings(resources):
        kind, name = ref.get("kind"), ref.get("name")
        if kind == "ClusterRole" and name == ADMIN_ROLE:
            continue
        if kind == "Role" and namespace is not None:
            rules = roles.get((namespace, name))
        elif kind == "ClusterRole":
            rules = cluster_roles.get(name, BUILTIN_RULES.get(name))
        else:
            continue
        granted = forbidden_grants(rules)
        if granted:
            subjects = ", ".join(
                f"{as_dict(s).get('kind', '?')} {as_dict(s).get('name', '?')}" for s in as_list(binding.props.get("subjects"))
            )
            where = f"in namespace {namespace}" if namespace else "cluster-wide"
            message = (
                f"{k8s_name(binding)} binds {kind} {name} {where} to {subjects or 'no subject'}, which grants "
                f"{'; '.join(granted)}: Pods created directly skip Kueue's queues, and quota, queue and RBAC "
                "objects are for cluster admins (cluster-admin or IAM roles/container.admin) only"
            )
            yield binding.urn, message


def probe_namespaced_rbac(
    resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY
) -> Iterator[tuple[str, str]]:
    """The service accounts the stack creates (the Kueue webhook probe's) need rights in their
    own namespace only; a ClusterRoleBinding would let a compromised probe image act in every
    namespace."""
    ours = {(k8s_namespace(sa.props), k8s_name(sa)) for sa in of_type(resources, K8S_SERVICE_ACCOUNT)}
    for binding in of_type(resources, CLUSTER_ROLE_BINDING):
        for s in as_list(binding.props.get("subjects")):
            s = as_dict(s)
            if s.get("kind") == "ServiceAccount" and (s.get("namespace"), s.get("name")) in ours:
                message = (
                    f"ClusterRoleBinding {k8s_name(binding)} gives ServiceAccount {s.get('namespace')}/"
                    f"{s.get('name')}, which this stack creates, cluster-wide rights; bind a Role in its "
                    "namespace instead"
                )
                yield binding.urn, message
