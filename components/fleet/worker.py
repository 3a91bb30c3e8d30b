"""What a worker cluster holds for its manager: a ServiceAccount in kueue-system, the RBAC
MultiKueue needs, and a long-lived token for the manager's kubeconfig.

The rules are those of upstream's create-multikueue-kubeconfig.sh (Kueue v0.19.2,
site/static/examples/multikueue/create-multikueue-kubeconfig.sh, included by
site/content/en/docs/tasks/manage/setup_multikueue.md), narrowed to the job kinds the stack
runs: the script grants every kind Kueue can dispatch (pods, StatefulSets, LeaderWorkerSets,
Kubeflow, Ray, AppWrappers), and a token that can create pods in any namespace of a worker is
worth more to an attacker than one that can create only the Jobs the fleet runs.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..plan.kueue import KUEUE_NAMESPACE

SERVICE_ACCOUNT = "multikueue-sa"  # the script's MULTIKUEUE_SA, so operators recognise it
CLUSTER_ROLE = f"{SERVICE_ACCOUNT}-role"
CLUSTER_ROLE_BINDING = f"{SERVICE_ACCOUNT}-crb"
TOKEN_SECRET = SERVICE_ACCOUNT

# What the manager does to a dispatched job on a worker (the script, lines 38-53 and 96-111):
# create it, watch it, delete it; it reads status, never writes it there.
_JOB_VERBS = ["create", "delete", "get", "list", "watch"]

# Kueue integration framework (Configuration integrations.frameworks) -> (API group, resource).
JOB_RESOURCES: dict[str, tuple[str, str]] = {
    "batch/job": ("batch", "jobs"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
}

# Always needed, whatever the job kinds (the script, lines 112-140): the manager creates the
# workload on the worker first, patches its status, and reads the worker's queues.
_KUEUE_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"],
     "verbs": ["create", "delete", "get", "list", "watch", "update", "patch"]},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
]


def worker_rules(kinds: Iterable[str]) -> list[dict[str, Any]]:
    """The ClusterRole's rules for these integration frameworks (e.g. {'batch/job'})."""
    kinds = set(kinds)
    unknown = sorted(kinds - set(JOB_RESOURCES))
    if unknown:
        raise ValueError(
            f"no MultiKueue worker RBAC is written for {', '.join(unknown)}; "
            f"supported: {', '.join(sorted(JOB_RESOURCES))}"
        )
    if not kinds:
        raise ValueError("a worker that runs no job kind has nothing to do; name at least one framework")
    rules = []
    for framework in sorted(kinds):
        group, resource = JOB_RESOURCES[framework]
        rules.append({"apiGroups": [group], "resources": [resource], "verbs": list(_JOB_VERBS)})
        rules.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    return rules + [dict(r, verbs=list(r["verbs"])) for r in _KUEUE_RULES]


def worker_rbac_manifests(kinds: Iterable[str]) -> list[dict[str, Any]]:
    """ServiceAccount, ClusterRole, ClusterRoleBinding and the token Secret, in creation order:
    the token controller fills a token only for an existing ServiceAccount (pulumi-kubernetes
    panicked on one created first, pulumi-kubernetes#4396)."""
    ns = KUEUE_NAMESPACE
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": ns}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": CLUSTER_ROLE},
            "rules": worker_rules(kinds),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": CLUSTER_ROLE_BINDING},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CLUSTER_ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": ns}],
        },
        token_secret(),
    ]


def token_secret() -> dict[str, Any]:
    """A long-lived token: Kubernetes fills `data.token` and `data["ca.crt"]` into a Secret of
    this type that names its ServiceAccount in the annotation
    (https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/, "Manually
    create a long-lived API token for a ServiceAccount";
    https://kubernetes.io/docs/concepts/configuration/secret/#serviceaccount-token-secrets).
    Not a TokenRequest token: those expire, and the manager's kubeconfig holds a static token
    that nothing on the manager would renew. The token lives until this Secret is deleted,
    which is how it is rotated. pulumi-kubernetes waits for the token to be filled in before
    it reports the Secret created (pulumi-kubernetes#2048)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": TOKEN_SECRET,
            "namespace": KUEUE_NAMESPACE,
            "annotations": {"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
        },
        "type": "kubernetes.io/service-account-token",
    }
