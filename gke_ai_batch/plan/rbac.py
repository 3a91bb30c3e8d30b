"""Team RBAC: each team namespace's Role and the RoleBinding of its Google Groups to it.

The Role is what a team needs to run batch work through Kueue, and no more: Jobs and JobSets
(which Kueue holds until their queue admits them), read access to pods, logs and its queue.
No Pod creation (a bare Pod skips the Job integration's queueing unless Kueue's pod
integration is on), no LocalQueue writes (a LocalQueue names its ClusterQueue), and nothing
cluster-scoped: ClusterQueues, ResourceFlavors, Cohorts, WorkloadPriorityClasses and
AdmissionChecks hold the quota, and only cluster admins (IAM roles/container.admin or RBAC
cluster-admin) may write them."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.config.stack import StackConfig

RBAC_API = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
TEAM_ROLE = "gke-ai-batch-team"
LABELS = {"app.kubernetes.io/part-of": "gke-ai-batch"}
READ = ["get", "list", "watch"]

TEAM_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", *READ, "delete"]},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["create", *READ, "delete"]},
    {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": READ},
    # Read-only, so that a team sees its workloads' queue position and admission.
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads", "localqueues"], "verbs": READ},
]


def role_manifest(namespace: str, name: str, rules: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "rules": [dict(r) for r in rules],
    }


def role_binding_manifest(
    namespace: str, name: str, role: str, subjects: list[dict[str, Any]], labels: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": role},
        "subjects": subjects,
    }


def group_subject(email: str) -> dict[str, Any]:
    # RBAC validation wants apiGroup rbac.authorization.k8s.io on User and Group subjects
    # (k8s.io/kubernetes pkg/apis/rbac/validation ValidateRoleBindingSubject).
    return {"kind": "Group", "apiGroup": RBAC_GROUP, "name": email}


def team_rbac_manifests(cfg: StackConfig) -> dict[str, list[dict[str, Any]]]:
    """namespace -> [Role, RoleBinding], for each namespace whose teams name a group."""
    groups: dict[str, list[str]] = {}
    for team in cfg.teams:
        if team.group is not None:
            members = groups.setdefault(team.namespace, [])
            if team.group not in members:
                members.append(team.group)
    return {ns: namespace_rbac_manifests(ns, members) for ns, members in groups.items()}


def namespace_rbac_manifests(namespace: str, groups: list[str]) -> list[dict[str, Any]]:
    """The team Role in `namespace`, and the RoleBinding of its Google Groups to it."""
    return [
        role_manifest(namespace, TEAM_ROLE, TEAM_RULES, LABELS),
        role_binding_manifest(namespace, TEAM_ROLE, TEAM_ROLE, [group_subject(g) for g in sorted(groups)], LABELS),
    ]
