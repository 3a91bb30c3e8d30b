"""MultiKueue as components any Pulumi program can use: MultiKueueWorker, on each worker cluster
(the ServiceAccount the manager acts as, its RBAC, a long-lived token, and the manager's
kubeconfig for it), and MultiKueueManager, on the manager (one kubeconfig Secret and
MultiKueueCluster per worker, the MultiKueueConfig and the AdmissionCheck that ClusterQueues
name). Each X(name, args: XArgs, opts), as nodepools.py describes: the Kubernetes provider (each
cluster's own) and protect come from opts; what opts.depends_on lists (that cluster's Kueue
install, the team namespaces) every object waits for, as children do not inherit it.

The objects are the fleet's (gke_ai_batch/domain/multikueue_worker.py, plan/multikueue.py,
plan/kubeconfig.py), in the order gke_ai_batch/components/fleet/__init__.py explains; the stack
program registers the same ones through its fleet deploy (components/fleet/deploy.py).

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations."""

import base64
from typing import Any, NotRequired, TypedDict

import pulumi

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.nodepools import _unknown_keys, not_strings, opts_problems, type_token
from gke_ai_batch.config.base import _check_k8s_name
from gke_ai_batch.config.errors import ArgsError
from gke_ai_batch.domain.multikueue_worker import token_secret, worker_rbac_manifests
from gke_ai_batch.plan.kubeconfig import worker_kubeconfig
from gke_ai_batch.plan.multikueue import encode_kubeconfig, multikueue_manifests, worker_name_problems


def kubeconfig_for(worker: str, endpoint: pulumi.Input[str], ca: pulumi.Input[str], token: Any) -> pulumi.Output[str]:
    """The kubeconfig the manager reads for `worker`, a Pulumi secret from end to end: the
    worker's endpoint, its cluster CA (GKE's masterAuth.clusterCaCertificate: base64 PEM, as
    certificate-authority-data wants) and the token Kubernetes filled into the token Secret."""
    parts = pulumi.Output.all(endpoint, ca, token.data)
    text = parts.apply(lambda a: worker_kubeconfig(worker, a[0], a[1], base64.b64decode(a[2]["token"]).decode()))
    return pulumi.Output.secret(text)


def _in_order(owner: pulumi.Resource, name: str, manifests: list[dict[str, Any]], opts) -> dict[str, pulumi.Resource]:
    """Each object after the one before it and after opts.depends_on, named <name>-<object>."""
    waits = (opts.depends_on if opts is not None else None) or []
    waits = waits if isinstance(waits, list) else [waits]
    made: dict[str, pulumi.Resource] = {}
    previous: list[pulumi.Resource] = []
    for manifest in manifests:
        key = k8s_objects.resource_name(manifest)
        made[key] = k8s_objects.apply(
            manifest, pulumi.ResourceOptions(parent=owner, depends_on=[*waits, *previous]), name=f"{name}-{key}"
        )
        previous = [made[key]]
    return made


def _check(component: str, name: str, args: Any, spec: type, opts, rules) -> None:
    """Every problem at once, at its arg path, before anything registers: `rules(args)` yields
    (path, message) for args of the declared keys."""
    if not isinstance(args, dict):
        raise ArgsError(f"{component} {name}", [("args", f"must be a mapping ({spec.__name__}), not {type(args).__name__}")])
    problems = opts_problems(opts) + _unknown_keys(args, spec, "args")
    missing = [(f"args.{k}", "required") for k in sorted(spec.__required_keys__) if k not in args]
    problems += missing or list(rules(args))
    if problems:
        raise ArgsError(f"{component} {name}", problems)


class MultiKueueWorkerArgs(TypedDict):
    """What a worker cluster grants its manager."""

    namespaces: list[str]
    """The team namespaces the manager may create jobs and Workloads in, one RoleBinding each
    (they must exist: put them in opts.depends_on)."""
    frameworks: list[str]
    """The Kueue integrations whose jobs the manager dispatches: batch/job, jobset.x-k8s.io/jobset."""
    endpoint: pulumi.Input[str]
    """The worker's control plane endpoint (host or IP, no scheme): GkeCluster.endpoint."""
    ca_certificate: pulumi.Input[str]
    """The worker's cluster CA, base64 PEM: GkeCluster.cluster_ca_certificate."""
    worker: NotRequired[str]
    """The worker's name in the manager's kubeconfig and MultiKueueCluster; default: the component's name."""


def _worker_rules(name: str):
    def rules(args: dict[str, Any]):
        wrong = not_strings(args, "args", ("worker",), ("endpoint", "ca_certificate"))
        if wrong:
            yield from wrong
            return
        try:
            _check_k8s_name(args.get("worker", name))
        except ValueError as exc:
            yield ("args.worker" if "worker" in args else "name", str(exc))
        for key in ("namespaces", "frameworks"):
            if not isinstance(args[key], list) or not all(isinstance(v, str) for v in args[key]):
                yield (f"args.{key}", "must be a list of plain strings")
                return
        for i, ns in enumerate(args["namespaces"]):
            try:
                _check_k8s_name(ns)
            except ValueError as exc:
                yield (f"args.namespaces[{i}]", str(exc))
        try:
            worker_rbac_manifests(args["frameworks"], args["namespaces"])
        except ValueError as exc:
            yield ("args.namespaces" if "namespace" in str(exc) else "args.frameworks", str(exc))

    return rules


class MultiKueueWorker(Component):
    """On a worker cluster: ServiceAccount multikueue-sa in kueue-system, a read-only
    ClusterRole bound cluster-wide, a write ClusterRole bound in each team namespace, a
    long-lived token Secret, and the manager's kubeconfig for this worker (hand it to
    MultiKueueManager)."""

    kubeconfig: pulumi.Output[str]
    """The kubeconfig the manager reads for this worker (a secret)."""

    def __init__(self, name: str, args: MultiKueueWorkerArgs, opts: pulumi.ResourceOptions | None = None):
        _check(type(self).__name__, name, args, MultiKueueWorkerArgs, opts, _worker_rules(name))
        super().__init__(type_token(type(self)), name, None, opts)
        # Kubernetes resources of the worker, by their namespace/name.
        self.objects: dict[str, pulumi.Resource] = _in_order(
            self, name, worker_rbac_manifests(args["frameworks"], args["namespaces"]), opts
        )
        token = self.objects[k8s_objects.resource_name(token_secret())]
        self.kubeconfig = kubeconfig_for(args.get("worker", name), args["endpoint"], args["ca_certificate"], token)
        self.register_outputs({"kubeconfig": self.kubeconfig})


class WorkerKubeconfigArgs(TypedDict):
    name: str
    """The worker's name (its MultiKueueCluster's), as its MultiKueueWorker has it."""
    kubeconfig: pulumi.Input[str]
    """MultiKueueWorker.kubeconfig."""


class MultiKueueManagerArgs(TypedDict):
    """The workers a manager dispatches to, in order of preference."""

    workers: list[WorkerKubeconfigArgs]
    """1 to 20 workers (a MultiKueueConfig's limit); the Incremental dispatcher follows this order."""
    admission_check: NotRequired[str]
    """The AdmissionCheck's (and MultiKueueConfig's) name; default: the component's name."""


def _manager_rules(name: str):
    def rules(args: dict[str, Any]):
        workers = args["workers"]
        if not isinstance(workers, list) or not all(isinstance(w, dict) and isinstance(w.get("name"), str) for w in workers):
            yield ("args.workers", "must be a list of {name, kubeconfig}, each name a plain string")
            return
        wrong = not_strings(args, "args", ("admission_check",), ())
        for i, w in enumerate(workers):
            yield from _unknown_keys(w, WorkerKubeconfigArgs, f"args.workers[{i}]")
            if "kubeconfig" not in w:
                yield (f"args.workers[{i}].kubeconfig", "required")
            else:
                wrong += not_strings(w, f"args.workers[{i}]", (), ("kubeconfig",))
        if wrong:
            yield from wrong
            return
        check = args.get("admission_check", name)
        for problem in worker_name_problems(check, [w["name"] for w in workers]):
            where = "args.admission_check" if problem.startswith("fleet name") and "admission_check" in args else (
                "name" if problem.startswith("fleet name") else "args.workers")
            yield (where, problem.replace("fleet name", "admission check name"))

    return rules


class MultiKueueManager(Component):
    """On the manager cluster: each worker's kubeconfig Secret (kueue-system/multikueue-<worker>)
    and MultiKueueCluster, the MultiKueueConfig listing them, and the AdmissionCheck a
    ClusterQueue names (spec.admissionChecks) to dispatch its jobs through MultiKueue."""

    admission_check: pulumi.Output[str]
    """The AdmissionCheck's name, for the ClusterQueues."""

    def __init__(self, name: str, args: MultiKueueManagerArgs, opts: pulumi.ResourceOptions | None = None):
        _check(type(self).__name__, name, args, MultiKueueManagerArgs, opts, _manager_rules(name))
        super().__init__(type_token(type(self)), name, None, opts)
        check = args.get("admission_check", name)
        data = {w["name"]: pulumi.Output.secret(pulumi.Output.from_input(w["kubeconfig"]).apply(encode_kubeconfig))
                for w in args["workers"]}
        manifests = multikueue_manifests(check, list(data), data)
        # Each after what it names: Secrets, then MultiKueueClusters, the MultiKueueConfig, the check.
        order = {"Secret": 0, "MultiKueueCluster": 1, "MultiKueueConfig": 2, "AdmissionCheck": 3}
        self.objects: dict[str, pulumi.Resource] = _in_order(
            self, name, sorted(manifests, key=lambda m: order[m["kind"]]), opts
        )
        self.admission_check = pulumi.Output.from_input(check)
        self.register_outputs({"admissionCheck": self.admission_check})
