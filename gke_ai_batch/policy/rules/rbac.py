"""RBAC rules over what the stack binds: teams run work only through Kueue and cannot touch
quota, and the program's own service accounts hold namespaced rights only.

Roles are resolved within the stack: a binding's roleRef is looked up among the Roles and
ClusterRoles the stack creates, and among the built-in ClusterRoles whose rights Kubernetes
documents (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#default-roles-and-role-bindings).
A roleRef that resolves to neither is a violation: what it grants cannot be verified, and a
binding may name a role before anyone creates it."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from gke_ai_batch.domain import multikueue_worker as multikueue_worker

from .base import (
    CLUSTER_QUEUE,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    EMPTY,
    K8S_SERVICE_ACCOUNT,
    LOCAL_QUEUE,
    ROLE,
    ROLE_BINDING,
    UNKNOWN,
    Resource,
    as_dict,
    as_list,
    clusters_in,
    is_list,
    k8s_name,
    k8s_namespace,
    of_type,
)
from .fleet import serves

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
KUEUE_GROUP = "kueue.x-k8s.io"
# What "*" on Kueue's group names in messages: every kind Kueue v0.19 serves.
KUEUE_RESOURCES = (
    "clusterqueues",
    "localqueues",
    "workloads",
    "resourceflavors",
    "workloadpriorityclasses",
    "cohorts",
    "admissionchecks",
    "provisioningrequestconfigs",
    "topologies",
    "multikueueclusters",
    "multikueueconfigs",
)


class Grant(NamedTuple):
    """Rights that let a subject run work outside Kueue's queues or grant itself more."""

    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]


# Anything that makes Pods, or Jobs no queue admitted: a bare Pod skips Kueue's Job
# integration, and a Deployment, StatefulSet, DaemonSet, ReplicaSet or ReplicationController
# creates Pods itself, as does updating or scaling one that exists (a new template or more
# replicas); a CronJob's Jobs are created by the cronjob controller. A ProvisioningRequest
# makes GKE provision nodes outside every ClusterQueue's quota
# (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest). Workload
# creation is how the RBAC good-practices page lists privilege escalation
# (https://kubernetes.io/docs/concepts/security/rbac-good-practices/#workload-creation).
POD_MAKERS = ("create", "update", "patch")
GRANTS = (
    Grant("", ("pods",), ("create",)),
    Grant("", ("replicationcontrollers",), POD_MAKERS),
    Grant("apps", ("deployments", "replicasets", "statefulsets", "daemonsets"), POD_MAKERS),
    Grant("batch", ("cronjobs",), POD_MAKERS),
    Grant("autoscaling.x-k8s.io", ("provisioningrequests",), ("create",)),
    # Whoever writes RBAC objects grants themselves the rest; escalate and bind let a subject
    # write roles and bindings beyond its own rights
    # (https://kubernetes.io/docs/concepts/security/rbac-good-practices/#escalate-verb).
    Grant(
        "rbac.authorization.k8s.io",
        ("roles", "rolebindings", "clusterroles", "clusterrolebindings"),
        (*WRITE_VERBS, "escalate", "bind"),
    ),
    # Impersonation acts as another user, group or service account, with its rights
    # (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation);
    # a token request for a service account is the same, by other means.
    Grant("", ("users", "groups", "serviceaccounts"), ("impersonate",)),
    Grant("authentication.k8s.io", ("userextras", "uids"), ("impersonate",)),
    Grant("", ("serviceaccounts/token",), ("create",)),
)
# Every Kueue object is quota or admission: ClusterQueues, Cohorts, ResourceFlavors and the
# like set what every team may use, a LocalQueue names its ClusterQueue, and a Workload's
# status holds its admission (https://kueue.sigs.k8s.io/docs/concepts/workload/), so a status
# patch admits a Job no queue did. No write on the group is a team's.
#
# One exception: `create` on workloads (not workloads/status) where the stack has no
# LocalQueue. The Workload CRD serves status as a subresource, so a create cannot carry an
# admission, and a Workload's spec.queueName names a LocalQueue of its own namespace
# (https://kueue.sigs.k8s.io/docs/concepts/local_queue/): without one it is never admitted. The
# Kueue webhook probe's server-side dry run in kueue-system is authorized as such a create.
PROBE_WORKLOAD_CREATE = ("workloads", "create")

# The other exception: a MultiKueue worker's access for its manager (gke_ai_batch/domain/multikueue_worker.py),
# ServiceAccount kueue-system/multikueue-sa bound to the fleet's two ClusterRoles. It IS the
# queue: the manager's Kueue admitted the job and creates its Workload and job on the worker,
# where the worker's Kueue queues them again. Its cluster-wide binding may only read; its
# namespaced writes (Workloads, their status, the jobs) only where a LocalQueue points at a
# ClusterQueue with quota, the team namespaces the worker serves. Anything more still fires.
MULTIKUEUE_SUBJECT = {"kind": "ServiceAccount", "name": multikueue_worker.SERVICE_ACCOUNT,
                      "namespace": multikueue_worker.NAMESPACE}
MULTIKUEUE_ROLES = (multikueue_worker.READ_ROLE, multikueue_worker.WRITE_ROLE)

# cluster-admin is the administrators' own role.
ADMIN_ROLE = "cluster-admin"
READ = ["get", "list", "watch"]
# Built-in ClusterRoles a binding may name, with the rights that matter here. admin and edit
# create Pods and workload controllers and impersonate the namespace's service accounts; admin
# also writes Roles and RoleBindings
# (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles). The system:
# ones are the few that grant nothing but reviews and discovery (k8s.io/kubernetes
# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, ClusterRoles()). Every other
# built-in, system:controller:* above all (job-controller, replicaset-controller and
# daemon-set-controller create Pods), is unresolvable here and so a violation.
BUILTIN_RULES: dict[str, list[dict[str, Any]]] = {
    "admin": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": ["create"]},
    ],
    "edit": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
    ],
    "view": [{"apiGroups": ["*"], "resources": ["*"], "verbs": READ}],
    "system:basic-user": [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ],
    "system:auth-delegator": [
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    ],
    "system:discovery": [{"nonResourceURLs": ["/api", "/apis", "/version", "/openapi/*"], "verbs": ["get"]}],
    "system:public-info-viewer": [{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version"], "verbs": ["get"]}],
    "system:monitoring": [{"nonResourceURLs": ["/metrics", "/healthz", "/livez", "/readyz"], "verbs": ["get"]}],
}
CONTROLLER_PREFIX = "system:controller:"


def _granted(values: Any, wanted: str) -> bool:
    items = as_list(values)
    return wanted in items or "*" in items


def _resources(resources: Any, wanted: str) -> list[str]:
    """The rule's resources that cover `wanted`. A grant on a subresource (clusterqueues/status,
    deployments/scale) writes the object's status or size, which is where Kueue keeps
    admission and how a Deployment makes more Pods: it counts."""
    return [
        r for r in as_list(resources)
        if r == "*" or r == wanted or (isinstance(r, str) and r.startswith(wanted + "/"))
    ]


def _unknown(value: Any) -> bool:
    return value == UNKNOWN or (is_list(value) and UNKNOWN in value)


def _what(verbs: Sequence[str], group: str, resource: str) -> str:
    return f"{'/'.join(verbs)} {group + ' ' if group else ''}{resource}"


def forbidden_grants(
    rules: Any, *, namespace_has_queue: bool = True, allowed: Collection[tuple[str, str]] = ()
) -> list[str]:
    """What a role's rules grant that no team may hold: making Pods or unqueued Jobs, any Kueue
    write, RBAC writes, escalation or impersonation. `namespace_has_queue` False: the rules
    are bound in a namespace without a LocalQueue, where creating a Workload admits nothing.
    `allowed`: (resource, verb) pairs on kueue.x-k8s.io this binding may hold."""
    allowed = set(allowed) | (set() if namespace_has_queue else {PROBE_WORKLOAD_CREATE})
    if _unknown(rules) or (rules is not None and not is_list(rules)):
        return ["rights that cannot be verified (its rules are unknown before deploy)"]
    found = []
    for rule in as_list(rules):
        rule = as_dict(rule)
        groups, resources, verbs = rule.get("apiGroups"), rule.get("resources"), rule.get("verbs")
        if any(map(_unknown, (groups, resources, verbs))):
            found.append("rights that cannot be verified (a rule is unknown before deploy)")
            continue
        for grant in GRANTS:
            if not _granted(groups, grant.group):
                continue
            written = [v for v in grant.verbs if _granted(verbs, v)]
            for name in grant.resources:
                if written and _resources(resources, name):
                    found.append(_what(written, grant.group, name))
        if _granted(groups, KUEUE_GROUP):
            written = [v for v in WRITE_VERBS if _granted(verbs, v)]
            for r in as_list(resources):
                names = KUEUE_RESOURCES if r == "*" else (r,)
                for name in names:
                    verbs_here = [v for v in written if (name, v) not in allowed]
                    if verbs_here:
                        found.append(_what(verbs_here, KUEUE_GROUP, str(name)))
    return list(dict.fromkeys(found))


def _bindings(resources: Sequence[Resource]) -> Iterator[tuple[Resource, str | None, Mapping[str, Any]]]:
    """(binding, its namespace or None for a ClusterRoleBinding, roleRef)."""
    for b in of_type(resources, ROLE_BINDING):
        yield b, k8s_namespace(b.props), as_dict(b.props.get("roleRef"))
    for b in of_type(resources, CLUSTER_ROLE_BINDING):
        yield b, None, as_dict(b.props.get("roleRef"))


def _unresolved(kind: Any, name: Any) -> str:
    if kind == "ClusterRole" and isinstance(name, str) and name.startswith(CONTROLLER_PREFIX):
        return (
            f"the rights of a Kubernetes controller ({name}; job-controller, replicaset-controller and their "
            "like create Pods for any object they are given)"
        )
    return (
        "rights that cannot be verified: the role is neither created by this stack nor a built-in role known "
        "to grant nothing that bypasses Kueue (view, system:basic-user, system:auth-delegator, system:discovery, "
        "system:public-info-viewer, system:monitoring)"
    )


def is_multikueue_manager(binding: Resource) -> bool:
    """A binding of a MultiKueue worker's own roles to exactly the manager's ServiceAccount."""
    ref = as_dict(binding.props.get("roleRef"))
    subjects = [dict(as_dict(x)) for x in as_list(binding.props.get("subjects"))]
    for s in subjects:
        s.pop("apiGroup", None)
    return ref.get("kind") == "ClusterRole" and ref.get("name") in MULTIKUEUE_ROLES and subjects == [MULTIKUEUE_SUBJECT]


def beyond_reads(rules: Any) -> list[str]:
    """Every right the rules grant other than get, list and watch."""
    if _unknown(rules) or (rules is not None and not is_list(rules)):
        return ["rights that cannot be verified (its rules are unknown before deploy)"]
    found = []
    for rule in as_list(rules):
        rule = as_dict(rule)
        verbs, resources = rule.get("verbs"), rule.get("resources") or rule.get("nonResourceURLs")
        if any(map(_unknown, (verbs, resources, rule.get("apiGroups")))):
            found.append("rights that cannot be verified (a rule is unknown before deploy)")
            continue
        written = [str(v) for v in as_list(verbs) if v not in READ]
        if written:
            groups = ",".join(str(g) or "core" for g in as_list(rule.get("apiGroups")))
            found.append(f"{'/'.join(written)} {groups + ' ' if groups else ''}{','.join(map(str, as_list(resources)))}")
    return found


# Everything the MultiKueue manager may hold on a worker, for any job kind the program covers:
# the cluster-wide reads, and in a served namespace the writes too (gke_ai_batch/domain/multikueue_worker.py).
_MULTIKUEUE_READS = multikueue_worker.granted_triples(multikueue_worker.read_rules(multikueue_worker.JOB_RESOURCES))
_MULTIKUEUE_WRITES = multikueue_worker.granted_triples(multikueue_worker.write_rules(multikueue_worker.JOB_RESOURCES))


def _beyond_multikueue(rules: Any, allowed: set[tuple[str, str, str]]) -> list[str]:
    """Rights outside `allowed`, wildcards and named resources included: the manager's token
    is a credential on every worker, so it holds what Kueue's remote client calls and no more
    (reading Secrets, say, would hand the manager every worker token)."""
    found = []
    for rule in as_list(rules):
        rule = as_dict(rule)
        if rule.get("nonResourceURLs") or rule.get("resourceNames"):
            found.append("nonResourceURLs or resourceNames (MultiKueue needs neither)")
            continue
        for g in as_list(rule.get("apiGroups")):
            for r in as_list(rule.get("resources")):
                extra = [str(v) for v in as_list(rule.get("verbs")) if (g, r, v) not in allowed]
                if extra:
                    found.append(f"{'/'.join(extra)} {g or 'core'} {r} (beyond what Kueue's MultiKueue client calls)")
    return found


def _multikueue_grants(rules: Any, namespace: str | None, served: bool) -> list[str]:
    if _unknown(rules) or (rules is not None and not is_list(rules)):
        return ["rights that cannot be verified (its rules are unknown before deploy)"]
    if namespace is None:
        return ([f"{g} (cluster-wide, the MultiKueue manager may only read)" for g in beyond_reads(rules)]
                or _beyond_multikueue(rules, _MULTIKUEUE_READS))
    granted = forbidden_grants(rules, allowed=multikueue_worker.KUEUE_WRITES)
    granted += [g for g in _beyond_multikueue(rules, _MULTIKUEUE_READS | _MULTIKUEUE_WRITES) if g not in granted]
    if not served and beyond_reads(rules):
        granted.append(
            f"the MultiKueue manager's writes in {namespace}, where no LocalQueue points at a ClusterQueue with "
            "quota (MultiKueue sends a worker only the jobs of queues it has capacity for)"
        )
    return granted


def _served_namespaces(resources: Sequence[Resource]) -> set[tuple[str, str | None]]:
    """(cluster, namespace) where some LocalQueue points at a ClusterQueue of that cluster
    with resource groups: where a workload can be admitted at all. A fleet's worker mirrors
    every team's LocalQueue, and those of queues it has no capacity for point at an idle
    ClusterQueue (no resource groups) that admits nothing; MultiKueue never sends work there.
    Unknown values count as no queue (fail closed)."""
    cluster_of = clusters_in(resources)
    serving = {(cluster_of(q), k8s_name(q)) for q in of_type(resources, CLUSTER_QUEUE) if serves(q) and not _unknown(
        as_dict(q.props.get("spec")).get("resourceGroups"))}
    return {
        (cluster_of(lq), k8s_namespace(lq.props)) for lq in of_type(resources, LOCAL_QUEUE)
        if isinstance(cq := as_dict(lq.props.get("spec")).get("clusterQueue"), str) and (cluster_of(lq), cq) in serving
    }


def no_queue_bypass(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    # Roles, LocalQueues and bindings are per cluster: in a fleet, a worker's binding resolves
    # against that worker's roles and namespaces only: the cluster each one's provider reaches.
    cluster_of = clusters_in(resources)
    roles = {(cluster_of(r), k8s_namespace(r.props), k8s_name(r)): r.props for r in of_type(resources, ROLE)}
    cluster_roles = {(cluster_of(r), k8s_name(r)): r.props for r in of_type(resources, CLUSTER_ROLE)}
    queued = {(cluster_of(q), k8s_namespace(q.props)) for q in of_type(resources, LOCAL_QUEUE)}
    served = _served_namespaces(resources)
    for binding, namespace, ref in _bindings(resources):
        kind, name = ref.get("kind"), ref.get("name")
        if kind == "ClusterRole" and name == ADMIN_ROLE:
            continue
        cluster = cluster_of(binding)
        role: Mapping[str, Any] | None = None
        if kind == "Role" and namespace is not None:
            role = roles.get((cluster, namespace, name))
        elif kind == "ClusterRole" and isinstance(name, str):
            builtin = BUILTIN_RULES.get(name)
            role = cluster_roles.get((cluster, name), None if builtin is None else {"rules": builtin})
        if role is None:
            granted = [_unresolved(kind, name)]
        elif role.get("aggregationRule"):
            # The controller fills an aggregated ClusterRole's rules from every ClusterRole whose
            # labels match, including ones installed later
            # (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#aggregated-clusterroles).
            granted = ["rights that cannot be verified (an aggregated ClusterRole)"]
        elif is_multikueue_manager(binding):
            granted = _multikueue_grants(role.get("rules"), namespace, (cluster, namespace) in served)
        else:
            has_queue = namespace is None or (cluster, namespace) in queued
            granted = forbidden_grants(role.get("rules"), namespace_has_queue=has_queue)
        if granted:
            subjects = ", ".join(
                f"{as_dict(s).get('kind', '?')} {as_dict(s).get('name', '?')}" for s in as_list(binding.props.get("subjects"))
            )
            where = f"in namespace {namespace}" if namespace else "cluster-wide"
            message = (
                f"{k8s_name(binding)} binds {kind} {name} {where} to {subjects or 'no subject'}, which grants "
                f"{'; '.join(granted)}: Pods made outside Kueue skip its queues, and quota, queue, admission and RBAC "
                "objects are for cluster admins (cluster-admin or IAM roles/container.admin) only"
            )
            yield binding.urn, message


def _only_non_resource_reads(rules: Any) -> bool:
    """Rules that read URLs such as /metrics and no object: such a right exists only cluster-wide
    (a Role cannot grant nonResourceURLs; Kubernetes docs reference/access-authn-authz/rbac,
    "ClusterRole"), and it opens no namespace. The metrics scrapers' (gke_ai_batch/plan/metrics.py)."""
    if _unknown(rules) or not is_list(rules) or not rules or beyond_reads(rules):
        return False
    return all(as_dict(r).get("nonResourceURLs") and not as_dict(r).get("resources") for r in as_list(rules))


def probe_namespaced_rbac(
    resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY
) -> Iterator[tuple[str, str]]:
    """The service accounts the stack creates (the Kueue webhook probe's) need rights in their
    own namespace only; a ClusterRoleBinding would let a compromised probe image act in every
    namespace. Two exceptions: a MultiKueue worker's binding of its read-only ClusterRole to the
    manager's ServiceAccount: Kueue's remote client watches, lists and gets in every namespace
    (gke_ai_batch/domain/multikueue_worker.py), and reading is all that binding may do; and a
    ClusterRole that only reads non-resource URLs (the metrics scrapers' /metrics)."""
    cluster_of = clusters_in(resources)
    ours = {(cluster_of(sa), k8s_namespace(sa.props), k8s_name(sa)) for sa in of_type(resources, K8S_SERVICE_ACCOUNT)}
    cluster_roles = {(cluster_of(r), k8s_name(r)): r.props for r in of_type(resources, CLUSTER_ROLE)}
    for binding in of_type(resources, CLUSTER_ROLE_BINDING):
        cluster = cluster_of(binding)
        role = cluster_roles.get((cluster, as_dict(binding.props.get("roleRef")).get("name")))
        if is_multikueue_manager(binding):
            if role is not None and not role.get("aggregationRule") and not beyond_reads(role.get("rules")):
                continue
        if role is not None and not role.get("aggregationRule") and _only_non_resource_reads(role.get("rules")):
            continue
        for s in as_list(binding.props.get("subjects")):
            s = as_dict(s)
            if s.get("kind") == "ServiceAccount" and (cluster, s.get("namespace"), s.get("name")) in ours:
                message = (
                    f"ClusterRoleBinding {k8s_name(binding)} gives ServiceAccount {s.get('namespace')}/"
                    f"{s.get('name')}, which this stack creates, cluster-wide rights; bind a Role in its "
                    "namespace instead"
                )
                yield binding.urn, message
