"""MultiKueue as components any Pulumi program can use: MultiKueueWorker, on each worker cluster
(the ServiceAccount the manager acts as, its RBAC, a long-lived token, and the manager's
kubeconfig for it), and MultiKueueManager, on the manager (one kubeconfig Secret and
MultiKueueCluster per worker, the MultiKueueConfig and the AdmissionCheck that ClusterQueues
name). Each X(name, args: XArgs, opts), as nodepools.py describes: the Kubernetes provider (each
cluster's own) and protect come from opts; what opts.depends_on lists (that cluster's Kueue
install, the team namespaces) every object waits for, as children do not inherit it.

The objects are the fleet's (gke_ai_batch/domain/multikueue_worker.py, plan/multikueue.py,
plan/kubeconfig.py), in the order gke_ai_batch/components/fleet/__init__.py explains; the stack
program registers its fleet through these two (components/fleet/deploy.py): named
"<cluster>/multikueue", their objects keep the names (and, through aliases, the URNs) the stack
gave them before.

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations."""

import base64
from typing import Any, NotRequired, TypedDict

import pulumi

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import not_strings, opts_problems, type_token, unknown_keys
from gke_ai_batch.config.base import check_k8s_name
from gke_ai_batch.config.errors import ArgsError, at_arg
from gke_ai_batch.domain.multikueue_worker import token_secret, worker_rbac_manifests
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.kubeconfig import worker_kubeconfig
from gke_ai_batch.plan.multikueue import encode_kubeconfig, manager_manifests, worker_name_problems


def kubeconfig_for(worker: str, endpoint: pulumi.Input[str], ca: pulumi.Input[str], token: Any) -> pulumi.Output[str]:
    """The kubeconfig the manager reads for `worker`, a Pulumi secret from end to end: the
    worker's endpoint, its cluster CA (GKE's masterAuth.clusterCaCertificate: base64 PEM, as
    certificate-authority-data wants) and the token Kubernetes filled into the token Secret."""
    parts = pulumi.Output.all(endpoint, ca, token.data)
    text = parts.apply(lambda a: worker_kubeconfig(worker, a[0], a[1], base64.b64decode(a[2]["token"]).decode()))
    return pulumi.Output.secret(text)


# The base name of both components: named "<scope>/multikueue", as the stack program names
# them, their objects are "<scope>/<namespace>/<name>" (naming.child_name), which the policy pack
# and the report read a cluster's scope from; any other name prefixes its objects': "<name>-<object>".
BASE = "multikueue"


def _in_order(
    owner: pulumi.Resource, name: str, manifests: list[dict[str, Any]], opts, *, after_all: bool = False
) -> dict[tuple[str, str], pulumi.Resource]:
    """Each object, by (kind, namespace/name), after opts.depends_on and the one before it, or,
    `after_all`, every one before it (the manager's: a MultiKueueConfig names every
    MultiKueueCluster, not only the last)."""
    waits = (opts.depends_on if opts is not None else None) or []
    waits = waits if isinstance(waits, list) else [waits]
    made: dict[tuple[str, str], pulumi.Resource] = {}
    previous: list[pulumi.Resource] = []
    for manifest in manifests:
        key = k8s_objects.resource_name(manifest)
        options = pulumi.ResourceOptions(parent=owner, depends_on=[*waits, *previous])
        made[(manifest["kind"], key)] = done = k8s_objects.apply(manifest, options, name=child_name(name, BASE, key))
        previous = [*previous, done] if after_all else [done]
    return made


def _check(component: str, name: str, args: Any, spec: type, opts, rules) -> None:
    """Every problem at once, at its arg path, before anything registers: `rules(args)` yields
    the Findings about args of the declared keys."""
    if not isinstance(args, dict):
        raise ArgsError(f"{component} {name}", [at_arg("args", f"must be a mapping ({spec.__name__}), not {type(args).__name__}")])
    problems = opts_problems(opts) + unknown_keys(args, spec, "args")
    missing = [at_arg(f"args.{k}", "required") for k in sorted(spec.__required_keys__) if k not in args]
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
    bind_namespaces: NotRequired[bool]
    """Default true: one RoleBinding of the write ClusterRole in each of `namespaces`, in the chain
    (so every object waits for the namespaces). False: none; the caller binds each namespace once
    it exists (`role_bindings` holds the manifests), and the rest need not wait for the namespaces
    (the stack program binds them with each Team)."""


def _worker_rules(name: str):
    def rules(args: dict[str, Any]):
        wrong = not_strings(args, "args", ("worker",), ("endpoint", "ca_certificate"))
        bind = args.get("bind_namespaces", True)
        if not isinstance(bind, bool):
            wrong.append(at_arg("args.bind_namespaces", f"must be true or false, not {type(bind).__name__}"))
        if wrong:
            yield from wrong
            return
        try:
            check_k8s_name(args.get("worker", name))
        except ValueError as exc:
            yield at_arg("args.worker" if "worker" in args else "name", str(exc))
        for key in ("namespaces", "frameworks"):
            if not isinstance(args[key], list) or not all(isinstance(v, str) for v in args[key]):
                yield at_arg(f"args.{key}", "must be a list of plain strings")
                return
        for i, ns in enumerate(args["namespaces"]):
            try:
                check_k8s_name(ns)
            except ValueError as exc:
                yield at_arg(f"args.namespaces[{i}]", str(exc))
        try:
            worker_rbac_manifests(args["frameworks"], args["namespaces"])
        except ValueError as exc:
            yield at_arg("args.namespaces" if "namespace" in str(exc) else "args.frameworks", str(exc))

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
        manifests = worker_rbac_manifests(args["frameworks"], args["namespaces"])
        bind = args.get("bind_namespaces", True)
        # The RoleBindings the caller registers, where bind_namespaces is false.
        self.role_bindings: list[dict[str, Any]] = [] if bind else [m for m in manifests if m["kind"] == "RoleBinding"]
        # Kubernetes resources of the worker, by (kind, namespace/name).
        self.objects: dict[tuple[str, str], pulumi.Resource] = _in_order(
            self, name, [m for m in manifests if m not in self.role_bindings], opts
        )
        token = self.objects[("Secret", k8s_objects.resource_name(token_secret()))]
        self.kubeconfig = kubeconfig_for(args.get("worker", name), args["endpoint"], args["ca_certificate"], token)
        self.register_outputs({"kubeconfig": self.kubeconfig})


class WorkerKubeconfigArgs(TypedDict):
    name: str
    """The worker's name (its MultiKueueCluster's), as its MultiKueueWorker has it."""
    kubeconfig: pulumi.Input[str]
    """MultiKueueWorker.kubeconfig."""


class ManagerCheckArgs(TypedDict):
    """One AdmissionCheck and the MultiKueueConfig it names, over some of the workers."""

    name: str
    """The AdmissionCheck's name, and its MultiKueueConfig's."""
    workers: list[str]
    """The workers it dispatches to, in order of preference: names from args.workers."""


class MultiKueueManagerArgs(TypedDict):
    """The workers a manager dispatches to, in order of preference."""

    workers: list[WorkerKubeconfigArgs]
    """1 to 20 workers (a MultiKueueConfig's limit); the Incremental dispatcher follows this order."""
    admission_check: NotRequired[str]
    """The AdmissionCheck's (and MultiKueueConfig's) name; default: the component's name."""
    admission_checks: NotRequired[list[ManagerCheckArgs]]
    """Instead of admission_check: several AdmissionChecks, each with a MultiKueueConfig of its
    own over some of the workers, for ClusterQueues that only those workers serve (a worker
    without the queue would only get copies it can never admit). Each worker's Secret and
    MultiKueueCluster are still registered once."""


def _named(problems: list[str], check_at: str | None, workers_at: str):
    """worker_name_problems' findings at their arg paths: the check's name at `check_at` (None:
    reported elsewhere), the rest at `workers_at`."""
    for problem in problems:
        if not problem.startswith("fleet name"):
            yield at_arg(workers_at, problem)
        elif check_at is not None:
            yield at_arg(check_at, problem.replace("fleet name", "admission check name"))


def _checks_rules(checks: Any, workers: list[str]):
    if not isinstance(checks, list) or not checks or not all(isinstance(c, dict) for c in checks):
        yield at_arg("args.admission_checks", "must be a non-empty list of {name, workers}")
        return
    seen: set[str] = set()
    for i, c in enumerate(checks):
        at = f"args.admission_checks[{i}]"
        problems = list(unknown_keys(c, ManagerCheckArgs, at))
        problems += [at_arg(f"{at}.{k}", "required") for k in sorted(ManagerCheckArgs.__required_keys__) if k not in c]
        problems += not_strings(c, at, ("name",), ())
        if "workers" in c and not (isinstance(c["workers"], list) and all(isinstance(w, str) for w in c["workers"])):
            problems.append(at_arg(f"{at}.workers", "must be a list of plain strings"))
        if problems:
            yield from problems
            continue
        if c["name"] in seen:
            yield at_arg(f"{at}.name", f"{c['name']!r} is named twice: each AdmissionCheck once")
        seen.add(c["name"])
        yield from _named(worker_name_problems(c["name"], c["workers"]), f"{at}.name", f"{at}.workers")
        for j, w in enumerate(c["workers"]):
            if w not in workers:
                yield at_arg(f"{at}.workers[{j}]", f"{w!r} is not one of args.workers")


def _manager_rules(name: str):
    def rules(args: dict[str, Any]):
        workers = args["workers"]
        if not isinstance(workers, list) or not all(isinstance(w, dict) and isinstance(w.get("name"), str) for w in workers):
            yield at_arg("args.workers", "must be a list of {name, kubeconfig}, each name a plain string")
            return
        wrong = not_strings(args, "args", ("admission_check",), ())
        if "admission_check" in args and "admission_checks" in args:
            wrong.append(at_arg("args.admission_checks", "give admission_check or admission_checks, not both"))
        for i, w in enumerate(workers):
            yield from unknown_keys(w, WorkerKubeconfigArgs, f"args.workers[{i}]")
            if "kubeconfig" not in w:
                yield at_arg(f"args.workers[{i}].kubeconfig", "required")
            else:
                wrong += not_strings(w, f"args.workers[{i}]", (), ("kubeconfig",))
        if wrong:
            yield from wrong
            return
        names = [w["name"] for w in workers]
        if "admission_checks" in args:
            # The workers' own names, count and repeats; each check's name at that check.
            yield from _named(worker_name_problems(name, names), None, "args.workers")
            yield from _checks_rules(args["admission_checks"], names)
            return
        check_at = "args.admission_check" if "admission_check" in args else "name"
        yield from _named(worker_name_problems(args.get("admission_check", name), names), check_at, "args.workers")

    return rules


class MultiKueueManager(Component):
    """On the manager cluster: each worker's kubeconfig Secret (kueue-system/multikueue-<worker>)
    and MultiKueueCluster, the MultiKueueConfig listing them, and the AdmissionCheck a
    ClusterQueue names (spec.admissionChecks) to dispatch its jobs through MultiKueue (or, with
    admission_checks, a MultiKueueConfig and AdmissionCheck per check, over its workers)."""

    admission_check: pulumi.Output[str]
    """The AdmissionCheck's name (the first of admission_checks), for the ClusterQueues."""
    admission_checks: pulumi.Output[list[str]]
    """Every AdmissionCheck's name, in the order given."""

    def __init__(self, name: str, args: MultiKueueManagerArgs, opts: pulumi.ResourceOptions | None = None):
        _check(type(self).__name__, name, args, MultiKueueManagerArgs, opts, _manager_rules(name))
        super().__init__(type_token(type(self)), name, None, opts)
        data = {w["name"]: pulumi.Output.secret(pulumi.Output.from_input(w["kubeconfig"]).apply(encode_kubeconfig))
                for w in args["workers"]}
        checks = [(c["name"], c["workers"]) for c in args.get("admission_checks", [])]
        checks = checks or [(args.get("admission_check", name), list(data))]
        manifests = manager_manifests(checks[0][0], list(data), checks, data)
        self.objects: dict[tuple[str, str], pulumi.Resource] = _in_order(self, name, manifests, opts, after_all=True)
        self.admission_check = pulumi.Output.from_input(checks[0][0])
        self.admission_checks = pulumi.Output.from_input([c for c, _ in checks])
        self.register_outputs({"admissionCheck": self.admission_check, "admissionChecks": self.admission_checks})
