"""What a worker cluster holds for its manager: a ServiceAccount in kueue-system, the RBAC
MultiKueue needs, and a long-lived token for the manager's kubeconfig.

Least privilege, from what Kueue v0.19.2's MultiKueue remote client calls on a worker (paths
relative to https://github.com/kubernetes-sigs/kueue/tree/v0.19.2; mc = pkg/controller/
admissionchecks/multikueue/multikueuecluster.go, wl = .../multikueue/workload.go, utils =
pkg/controller/jobframework/utils.go, job = pkg/controller/jobs/job/job_multikueue_adapter.go,
jobset = pkg/controller/jobs/jobset/jobset_multikueue_adapter.go):

* Cluster-wide, reads only (ClusterRole READ_ROLE, ClusterRoleBinding). The remote client
  watches Workloads and every adapter's job kind in all namespaces, selected by the
  kueue.x-k8s.io/multikueue-origin label (establishWatch, mc:421-423, for Workloads mc:342 and
  each adapter's GetEmptyList mc:357); its garbage collector lists Workloads in all namespaces
  by the same label (runGC, mc:693). It also GETs every Workload it manages on every worker of
  the MultiKueueConfig (readGroup, wl:351-357) and the job behind it on every connected worker
  before removing it (RemoveRemoteObjects wl:163 -> DeleteRemoteObjectIfOwned ->
  ValidateRemoteObjectOwnership, utils:302): a namespace a worker does not mirror must answer
  NotFound, which Kueue skips, not Forbidden, which fails the whole reconcile (wl:354-356,
  utils:303-306), so `get` is cluster-wide too. Jobs are only watched and got, never listed.
* Namespaced writes (ClusterRole WRITE_ROLE, one RoleBinding per team namespace the worker
  mirrors): create the Workload copy (wl:819, wl:945), update it (finalizer removal wl:173, spec
  and priority sync wl:524), delete it (wl:178, GC mc:729), patch its status (eviction from the
  manager, PatchAdmissionStatus wl:592 -> c.Status().Patch, pkg/workload/patching/patching.go);
  create the job (job:106, jobset:74), delete it (job:194, jobset:81) and, for batch Jobs only,
  patch it (an elastic Job's parallelism, job:278; ElasticJobsViaWorkloadSlices is beta and on
  by default, pkg/features/kube_features.go:712-715, and a team's Job opts in by annotation).

Left out, against upstream's create-multikueue-kubeconfig.sh
(site/static/examples/multikueue/create-multikueue-kubeconfig.sh): `*/status` get (the status
comes with the object), Workload `patch` (never called), workloads/status `update` (only under
MultiKueueOrchestratedPreemption, wl:638-645, alpha and off, kube_features.go:840-842), and
ClusterQueue/LocalQueue reads (only under MultiKueueManagerQuotaAutomation, mc:239-245 and
pkg/controller/admissionchecks/multikueue/controllers.go:171, alpha and off,
kube_features.go:881-883); the job kinds the stack does not run (pods, StatefulSets,
LeaderWorkerSets, Kubeflow, Ray, AppWrappers) are left out as well. Enabling one of those gates
needs these rules widened first.

Standard library only: the policy pack imports the names below in its own virtualenv to tell
this identity from any other.
"""

from __future__ import annotations

from typing import Any, Iterable

# gke_ai_batch.plan.kueue.KUEUE_NAMESPACE (a test holds them equal); not imported, because that
# module needs the program's dependencies and the policy pack imports this one.
NAMESPACE = "kueue-system"
SERVICE_ACCOUNT = "multikueue-sa"  # the script's MULTIKUEUE_SA, so operators recognise it
READ_ROLE = f"{SERVICE_ACCOUNT}-read"
READ_BINDING = READ_ROLE
WRITE_ROLE = f"{SERVICE_ACCOUNT}-write"
WRITE_BINDING = WRITE_ROLE
TOKEN_SECRET = SERVICE_ACCOUNT
RBAC_API = "rbac.authorization.k8s.io/v1"
_ROLE_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole"}
_SUBJECT = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}

# Kueue integration framework (Configuration integrations.frameworks) -> (API group, resource).
JOB_RESOURCES: dict[str, tuple[str, str]] = {
    "batch/job": ("batch", "jobs"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
}
_JOB_WRITES = {"batch/job": ["create", "delete", "patch"], "jobset.x-k8s.io/jobset": ["create", "delete"]}
KUEUE_GROUP = "kueue.x-k8s.io"
# (resource, verb) on kueue.x-k8s.io the manager writes in a mirrored namespace.
KUEUE_WRITES: tuple[tuple[str, str], ...] = (
    ("workloads", "create"), ("workloads", "update"), ("workloads", "delete"), ("workloads/status", "patch"),
)


def kubeconfig_secret_name(worker: str) -> str:
    """The manager's Secret (in kueue-system) holding the kubeconfig for `worker`."""
    return f"multikueue-{worker}"


def granted_triples(rules: Iterable[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(API group, resource, verb) for every right the rules grant, as written."""
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def _checked(kinds: Iterable[str]) -> list[str]:
    kinds = set(kinds)
    unknown = sorted(kinds - set(JOB_RESOURCES))
    if unknown:
        raise ValueError(
            f"no MultiKueue worker RBAC is written for {', '.join(unknown)}; "
            f"supported: {', '.join(sorted(JOB_RESOURCES))}"
        )
    if not kinds:
        raise ValueError("a worker that runs no job kind has nothing to do; name at least one framework")
    return sorted(kinds)


def read_rules(kinds: Iterable[str]) -> list[dict[str, Any]]:
    """The cluster-wide ClusterRole's rules: watch and get the jobs, get, list and watch Workloads."""
    rules = [{"apiGroups": [JOB_RESOURCES[k][0]], "resources": [JOB_RESOURCES[k][1]], "verbs": ["get", "watch"]}
             for k in _checked(kinds)]
    return rules + [{"apiGroups": [KUEUE_GROUP], "resources": ["workloads"], "verbs": ["get", "list", "watch"]}]


def write_rules(kinds: Iterable[str]) -> list[dict[str, Any]]:
    """The namespaced writes: the jobs' and the Workloads' (see the module's docstring)."""
    rules = [{"apiGroups": [JOB_RESOURCES[k][0]], "resources": [JOB_RESOURCES[k][1]], "verbs": list(_JOB_WRITES[k])}
             for k in _checked(kinds)]
    by_resource: dict[str, list[str]] = {}
    for resource, verb in KUEUE_WRITES:
        by_resource.setdefault(resource, []).append(verb)
    return rules + [{"apiGroups": [KUEUE_GROUP], "resources": [r], "verbs": v} for r, v in by_resource.items()]


def worker_rbac_manifests(kinds: Iterable[str], namespaces: Iterable[str]) -> list[dict[str, Any]]:
    """ServiceAccount, the read ClusterRole and its ClusterRoleBinding, the write ClusterRole,
    one RoleBinding of it per namespace in `namespaces` (the team namespaces the worker mirrors:
    the manager can write nowhere else), and the token Secret, in creation order: the token
    controller fills a token only for an existing ServiceAccount (pulumi-kubernetes panicked on
    one created first, pulumi-kubernetes#4396)."""
    namespaces = sorted(set(namespaces))
    if not namespaces:
        raise ValueError("a worker that mirrors no team namespace has nowhere to run the manager's jobs")
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}},
        {"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": {"name": READ_ROLE}, "rules": read_rules(kinds)},
        {
            "apiVersion": RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": READ_BINDING},
            "roleRef": {**_ROLE_REF, "name": READ_ROLE},
            "subjects": [dict(_SUBJECT)],
        },
        {"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": {"name": WRITE_ROLE}, "rules": write_rules(kinds)},
        *(
            {
                "apiVersion": RBAC_API,
                "kind": "RoleBinding",
                "metadata": {"name": WRITE_BINDING, "namespace": ns},
                "roleRef": {**_ROLE_REF, "name": WRITE_ROLE},
                "subjects": [dict(_SUBJECT)],
            }
            for ns in namespaces
        ),
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
            "namespace": NAMESPACE,
            "annotations": {"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
        },
        "type": "kubernetes.io/service-account-token",
    }
