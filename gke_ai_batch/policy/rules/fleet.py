"""Fleet rules: a MultiKueue manager and its workers in one stack (gke_ai_batch/components/fleet/). The
manager's queues admit through MultiKueue alone; its AdmissionChecks, MultiKueueConfigs,
MultiKueueClusters and kubeconfig Secrets name one another; every worker has every team
namespace and LocalQueue of the manager; the workers are in distinct regions; and no
kubeconfig with a credential is anywhere but in a Secret's data.

A fleet's objects are told apart by the cluster their provider reaches (base.clusters_in), and a
MultiKueueCluster by the cluster its kubeconfig reaches (_reaches): in the fleet stack the
clusters' labels are its naming scopes, the manager's "manager", a worker's its name, which is
also its MultiKueueCluster's name (gke_ai_batch/components/fleet/deploy.py); in a library
program, whatever the clusters and workers are called. Rules here judge nothing on a stack with
no MultiKueueCluster."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from gke_ai_batch.model.objects import NAMESPACE_NAME_LABEL, PROVISIONING_CONTROLLER, selector_matches
from gke_ai_batch.domain import multikueue_worker as multikueue_worker
from gke_ai_batch.model.multikueue import MULTIKUEUE_CONTROLLER, cluster_queue_problems
from gke_ai_batch.domain.multikueue_worker import NAMESPACE as KUEUE_NAMESPACE, kubeconfig_secret_name
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.domain.regions import region_of

from .base import (
    ADMISSION_CHECK,
    CLUSTER,
    CLUSTER_QUEUE,
    EMPTY,
    LOCAL_QUEUE,
    MULTIKUEUE_CLUSTER,
    MULTIKUEUE_CONFIG,
    UNKNOWN,
    Resource,
    as_dict,
    as_list,
    by_cluster,
    clusters_in,
    dig,
    k8s_name,
    k8s_namespace,
    of_type,
)

SECRET = "kubernetes:core/v1:Secret"
NAMESPACES = ("kubernetes:core/v1:Namespace", "kubernetes:core/v1:NamespacePatch")
# kueue.MultiKueueConfigSecretKey: the key of the Secret Kueue reads the kubeconfig from.
KUBECONFIG_KEY = "kubeconfig"


def _workers(resources: Sequence[Resource]) -> dict[str, list[Resource]]:
    """worker name -> the MultiKueueClusters that name it (one, in a sound fleet)."""
    out: dict[str, list[Resource]] = {}
    for mkc in of_type(resources, MULTIKUEUE_CLUSTER):
        name = dig(mkc.props, "metadata", "name")
        if isinstance(name, str):
            out.setdefault(name, []).append(mkc)
    return out


def _reaches(resources: Sequence[Resource], cluster_of: Callable[[Resource], str]) -> dict[str, str]:
    """worker name -> the label of the cluster its MultiKueueCluster reaches, where the stack
    shows one: a cluster of that label (the fleet stack names a worker's objects and its
    MultiKueueCluster alike), else the one cluster, not the MultiKueueCluster's own, that its
    kubeconfig Secret is made from (MultiKueueManager's Secret waits for the worker's token
    Secret and GKE Cluster: its dependencies, which CrossGuard hands a policy too)."""
    labels = {cluster_of(r) for r in resources if r.type.startswith("kubernetes:")}
    by_urn = {r.urn: r for r in resources}
    secrets = {(cluster_of(s), k8s_namespace(s.props), k8s_name(s)): s for s in of_type(resources, SECRET)}
    out: dict[str, str] = {}
    for name, mkcs in _workers(resources).items():
        for mkc in mkcs:
            here = cluster_of(mkc)
            if name in labels and name != here:
                out[name] = name
                break
            location = dig(mkc.props, "spec", "clusterSource", "kubeConfig", "location")
            secret = secrets.get((here, KUEUE_NAMESPACE, location))
            made_of = {cluster_of(by_urn[d]) for d in (secret.dependencies if secret else ()) if d in by_urn} - {here, ""}
            if len(made_of) == 1:
                out[name] = made_of.pop()
                break
    return out


def _by_cluster(resources: Sequence[Resource], *types: str) -> dict[str, list[Resource]]:
    # Over all the resources: an object's cluster is its provider's, which `types` leaves out.
    return {scope: of_type(mine, *types) for scope, mine in by_cluster(resources).items()}


def serves(queue: Resource) -> bool:
    """A ClusterQueue with resource groups: one that can admit anything. A fleet's worker keeps
    the queues it has no flavors of idle, with none (gke_ai_batch/plan/kueue.py
    idle_cluster_queue). Unknown before deploy counts as serving."""
    groups = dig(queue.props, "spec", "resourceGroups")
    return groups == UNKNOWN or bool(as_list(groups))


def dispatch_config(mine: Sequence[Resource]) -> Callable[[Resource], tuple[bool, Resource | None]]:
    """For one cluster's resources: queue -> (admits through a MultiKueue check, the
    MultiKueueConfig that check names, or None when it names none of the cluster's)."""
    checks = {k8s_name(ac): as_dict(dig(ac.props, "spec", "parameters")).get("name")
              for ac in of_type(mine, ADMISSION_CHECK) if dig(ac.props, "spec", "controllerName") == MULTIKUEUE_CONTROLLER}
    configs = {k8s_name(c): c for c in of_type(mine, MULTIKUEUE_CONFIG)}

    def of(queue: Resource) -> tuple[bool, Resource | None]:
        for rule in as_list(dig(queue.props, "spec", "admissionChecksStrategy", "admissionChecks")):
            name = as_dict(rule).get("name")
            if name in checks:
                return True, configs.get(checks[name])
        return False, None

    return of


def multikueue_only(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """A ClusterQueue that admits through a MultiKueue AdmissionCheck admits through it alone.
    Kueue keeps such a queue inactive next to another MultiKueue check, with the check limited to
    some flavors, or next to a ProvisioningRequest check (cluster_queue_problems, after
    pkg/cache/scheduler/clusterqueue.go:325-348 and 417-446 at Kueue v0.19.2). Any other check
    is refused too: the manager runs nothing, so a check there gates work it cannot see; checks
    belong on the workers' own queues (gke_ai_batch/plan/fleet.py gives the manager's queues the
    MultiKueue check alone)."""
    checks = {c: [ac.props for ac in acs] for c, acs in _by_cluster(resources, ADMISSION_CHECK).items()}
    cluster_of = clusters_in(resources)
    managers = {cluster_of(m) for m in of_type(resources, MULTIKUEUE_CLUSTER)}
    for q in of_type(resources, CLUSTER_QUEUE):
        here = checks.get(cluster_of(q), [])
        controllers = {dig(ac, "metadata", "name"): dig(ac, "spec", "controllerName") for ac in here}
        named = [
            as_dict(rule).get("name") for rule in as_list(dig(q.props, "spec", "admissionChecksStrategy", "admissionChecks"))
        ]
        if not any(controllers.get(n) == MULTIKUEUE_CONTROLLER for n in named if isinstance(n, str)):
            if cluster_of(q) in managers and UNKNOWN not in named:
                yield q.urn, (
                    f"ClusterQueue {k8s_name(q)} is on a MultiKueue manager but admits without a MultiKueue check: the "
                    "manager would admit its jobs and run them itself, where no node pool is"
                )
            continue
        problems = cluster_queue_problems(q.props, here)
        for name in named:
            if not isinstance(name, str) or name not in controllers:
                continue  # unknown before deploy, or missing: cluster_queue_problems says so
            controller = controllers[name]
            # Kueue's own reasons (a second MultiKueue check, a ProvisioningRequest one) are reported above.
            if controller not in (MULTIKUEUE_CONTROLLER, PROVISIONING_CONTROLLER):
                problems.append(Finding(
                    "fleet-multikueue-only",
                    f"AdmissionCheck {name} ({controller}) beside MultiKueue: the manager runs nothing, so checks "
                    "belong on the workers' queues",
                    subject=("ClusterQueue", "", str(k8s_name(q))),
                ))
        for problem in problems:
            yield q.urn, f"{problem.render()}; a ClusterQueue that uses a MultiKueue AdmissionCheck uses no other check"


def names_agree(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """Each MultiKueue object names one that exists on its own cluster, the way Kueue v0.19.2
    resolves it (paths under pkg/controller/admissionchecks/multikueue/):
    * a MultiKueue AdmissionCheck's parameters name a MultiKueueConfig (kind and group
      included), else the check is inactive, reason BadConfig (admissioncheck.go:70-74);
    * each cluster a MultiKueueConfig lists is a MultiKueueCluster, else it is one of the
      "Missing clusters" and never gets work (admissioncheck.go:75-105);
    * a MultiKueueCluster's kubeConfig Secret is in Kueue's own namespace and has the key
      `kubeconfig` (getKubeConfigFromSecret, multikueuecluster.go:1063-1079), else the cluster
      is inactive;
    * a MultiKueueCluster is a worker of this stack: a cluster whose objects (Kueue, its queues,
      the manager's access) the stack declares under the same name. Anything else is a cluster
      the stack cannot vouch for."""
    workers = _workers(resources)
    cluster_of = clusters_in(resources)
    reaches = _reaches(resources, cluster_of)
    configs = {(cluster_of(c), k8s_name(c)) for c in of_type(resources, MULTIKUEUE_CONFIG)}
    clusters = {(cluster_of(c), k8s_name(c)) for c in of_type(resources, MULTIKUEUE_CLUSTER)}
    secrets = {(cluster_of(s), k8s_namespace(s.props), k8s_name(s)): s for s in of_type(resources, SECRET)}
    for ac in of_type(resources, ADMISSION_CHECK):
        if dig(ac.props, "spec", "controllerName") != MULTIKUEUE_CONTROLLER:
            continue
        params = as_dict(dig(ac.props, "spec", "parameters"))
        ref = (params.get("apiGroup"), params.get("kind"), params.get("name"))
        if UNKNOWN in ref:
            continue
        if ref[:2] != ("kueue.x-k8s.io", "MultiKueueConfig") or (cluster_of(ac), ref[2]) not in configs:
            yield ac.urn, (
                f"AdmissionCheck {k8s_name(ac)}: its parameters ({'/'.join(map(str, ref))}) name no MultiKueueConfig "
                "on its cluster; Kueue keeps the check inactive (BadConfig) and its queues admit nothing"
            )
    for cfg in of_type(resources, MULTIKUEUE_CONFIG):
        for name in as_list(dig(cfg.props, "spec", "clusters")):
            if isinstance(name, str) and name != UNKNOWN and (cluster_of(cfg), name) not in clusters:
                yield cfg.urn, (
                    f"MultiKueueConfig {k8s_name(cfg)} lists cluster {name}, which is no MultiKueueCluster on its "
                    "cluster; Kueue counts it among the missing clusters and dispatches nothing there"
                )
    for name, mkcs in workers.items():
        for mkc in mkcs:
            if reaches.get(name) in (None, cluster_of(mkc)):
                yield mkc.urn, (
                    f"MultiKueueCluster {name} is no worker of this stack (no cluster's objects are declared under "
                    "that name): the stack cannot show that it has the fleet's queues, or that the manager may reach it"
                )
            source = as_dict(dig(mkc.props, "spec", "clusterSource"))
            kube = as_dict(source.get("kubeConfig"))
            if not kube:
                continue  # clusterProfileRef (or unknown): no Secret to agree with
            location, kind = kube.get("location"), kube.get("locationType", "Secret")
            if UNKNOWN in (location, kind):
                continue
            if kind != "Secret":
                yield mkc.urn, (
                    f"MultiKueueCluster {name}: its kubeconfig is a {kind} location, a file on the manager's pods "
                    "the stack does not manage; keep it in a Secret (locationType Secret)"
                )
                continue
            if location != kubeconfig_secret_name(name):
                yield mkc.urn, (
                    f"MultiKueueCluster {name}: its kubeconfig Secret is {location}, not {kubeconfig_secret_name(name)}: "
                    "each worker's kubeconfig is in the Secret named after it, or one cluster's connection uses "
                    "another's credentials"
                )
            secret = secrets.get((cluster_of(mkc), KUEUE_NAMESPACE, location))
            if secret is None:
                yield mkc.urn, (
                    f"MultiKueueCluster {name}: its kubeconfig Secret {KUEUE_NAMESPACE}/{location} is not declared on its "
                    "cluster (Kueue reads it from its own namespace); the cluster stays inactive"
                )
                continue
            keys = [as_dict(secret.props.get(field)) for field in ("data", "stringData")]
            # A value masked whole ("[secret]") hides its keys: the key check is for what is in view.
            if any(keys) and not any(KUBECONFIG_KEY in k for k in keys):
                yield secret.urn, (
                    f"Secret {KUEUE_NAMESPACE}/{location} has no key {KUBECONFIG_KEY!r}, which Kueue reads for "
                    f"MultiKueueCluster {name}; the cluster stays inactive"
                )


def teams_everywhere(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """Every worker has every team namespace and LocalQueue of the manager, the LocalQueue
    pointing at the same ClusterQueue, which exists there. MultiKueue creates its copy of a
    workload on a worker with the manager's namespace and spec, queue name included
    (cloneForCreate, pkg/controller/admissionchecks/multikueue/workload.go:1348-1356): without
    the namespace the copy is refused, without the queue it is never admitted."""
    workers = _workers(resources)
    if not workers:
        return
    cluster_of = clusters_in(resources)
    reaches = _reaches(resources, cluster_of)
    managers = {cluster_of(mkc) for mkcs in workers.values() for mkc in mkcs}
    namespaces = {c: {k8s_name(n) for n in ns} for c, ns in _by_cluster(resources, *NAMESPACES).items()}
    queues = {c: {k8s_name(q) for q in qs} for c, qs in _by_cluster(resources, CLUSTER_QUEUE).items()}
    local = _by_cluster(resources, LOCAL_QUEUE)
    local_of = {c: {(k8s_namespace(q.props), k8s_name(q)): dig(q.props, "spec", "clusterQueue") for q in qs}
                for c, qs in local.items()}
    for manager in sorted(managers):
        for worker in workers:
            on = reaches.get(worker, worker)
            for ns in of_type(resources, *NAMESPACES):
                if cluster_of(ns) == manager and k8s_name(ns) not in namespaces.get(on, set()):
                    yield ns.urn, (
                        f"namespace {k8s_name(ns)} is not on worker {worker}: MultiKueue creates the copy of each "
                        "workload in its own namespace there"
                    )
            for lq in local.get(manager, []):
                key = (k8s_namespace(lq.props), k8s_name(lq))
                cq = dig(lq.props, "spec", "clusterQueue")
                there = local_of.get(on, {})
                if key not in there:
                    yield lq.urn, (
                        f"LocalQueue {key[0]}/{key[1]} is not on worker {worker}: the copy of a workload keeps its "
                        "queue name, and no queue there admits it"
                    )
                elif UNKNOWN not in (cq, there[key]) and there[key] != cq:
                    yield lq.urn, (
                        f"LocalQueue {key[0]}/{key[1]} points at ClusterQueue {cq} on the manager and at {there[key]} "
                        f"on worker {worker}: a team's queue is the same on every cluster"
                    )
                elif isinstance(cq, str) and cq != UNKNOWN and cq not in queues.get(on, set()):
                    yield lq.urn, (
                        f"ClusterQueue {cq}, which LocalQueue {key[0]}/{key[1]} points at, is not on worker {worker}"
                    )


def worker_regions(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """No two workers in one region of one project: a fleet spreads its workers where capacity
    differs, and two in one region only count that region's capacity twice (the program's own
    check: gke_ai_batch/config/fleet.py _placement_problems)."""
    cluster_of = clusters_in(resources)
    worker_of = {on: name for name, on in _reaches(resources, cluster_of).items()}
    seen: dict[tuple[Any, str], str] = {}
    for cluster in of_type(resources, CLUSTER):
        scope = worker_of.get(cluster_of(cluster))
        location = cluster.props.get("location")
        if scope is None or not isinstance(location, str) or location == UNKNOWN:
            continue
        project = cluster.props.get("project")
        if project == UNKNOWN:
            continue
        where = (project, region_of(location))
        if where in seen:
            yield cluster.urn, (
                f"worker {scope} is in {where[1]}{' of project ' + str(project) if project else ''}, as worker "
                f"{seen[where]} is: a fleet's workers are in distinct regions (or projects)"
            )
        seen.setdefault(where, scope)


# A kubeconfig (YAML or JSON) and the fields of one that carry a credential
# (k8s.io/client-go/tools/clientcmd/api/v1 AuthInfo: token, client-key-data, password, and the
# legacy auth-provider's tokens).
_KUBECONFIG = re.compile(r"""(?:^|[\s{,])["']?kind["']?\s*:\s*["']?Config["']?\s*(?:$|[,}\n])""", re.MULTILINE)
_CREDENTIAL = re.compile(
    r"""["']?(token|client-key-data|client-key|password|id-token|refresh-token|access-token)["']?\s*:\s*["']?[^\s"',{}]"""
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")


def credential_kubeconfig(value: str) -> bool:
    """A kubeconfig with a credential in it, as text or base64 of text."""
    if _KUBECONFIG.search(value) and _CREDENTIAL.search(value):
        return True
    if _BASE64.fullmatch(value.strip()):
        try:
            text = base64.b64decode(value.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return False
        return credential_kubeconfig(text)
    return False


def _strings(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, (*path, k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _strings(v, (*path, i))


def kubeconfig_secret(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """No kubeconfig that carries a credential is anywhere but in a Kubernetes Secret's `data`
    or `stringData`, which the pulumi-kubernetes SDK makes Pulumi secrets whatever the program
    passes (pulumi_kubernetes/core/v1/Secret.py: Output.secret on both, and
    additional_secret_outputs), so they are encrypted in state and masked in previews. Anywhere
    else (a ConfigMap, an annotation, a Helm value, an environment variable) the token is in
    clear in state and in every preview. A value synth records as a Pulumi secret is masked
    ("[secret]") and passes; CrossGuard shows policies secrets in clear and cannot tell them
    apart (pulumi-policy#241), so under `pulumi preview` a credential kubeconfig outside a
    Secret's data fails even where the program made it a secret."""
    for r in resources:
        for path, value in _strings(r.props, ()):
            if r.type == SECRET and path[:1] in (("data",), ("stringData",)):
                continue
            if credential_kubeconfig(value):
                where = ".".join(map(str, path)) or "(value)"
                yield r.urn, (
                    f"{r.name}: {where} holds a kubeconfig with a credential outside a Secret's data: it is in clear "
                    "in state and previews; put it in a Secret's data (a Pulumi secret)"
                )


ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/*:RoleBinding"


def dispatch_targets(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str, str]]:
    """Every worker a manager queue dispatches to (its MultiKueue check's MultiKueueConfig) can
    take that queue's jobs: the worker's ClusterQueue of that name has resource groups (an idle
    one admits nothing, and under the Incremental dispatcher takes a round's slot), its
    namespaceSelector admits each team namespace whose LocalQueue points at the queue, and the
    manager's ServiceAccount is bound to its write role in that namespace (creating the copy
    is its first call there: workload.go:819)."""
    cluster_of = clusters_in(resources)
    managers = {cluster_of(m) for m in of_type(resources, MULTIKUEUE_CLUSTER)}
    if not managers:
        return
    reaches = _reaches(resources, cluster_of)
    parts = _by_cluster(resources, CLUSTER_QUEUE, LOCAL_QUEUE, ADMISSION_CHECK, MULTIKUEUE_CONFIG, ROLE_BINDING,
                        *NAMESPACES)
    for manager in sorted(managers):
        mine = parts.get(manager, [])
        config_of = dispatch_config(mine)
        for q in of_type(mine, CLUSTER_QUEUE):
            _, cfg = config_of(q)
            if cfg is None:
                continue  # no MultiKueue check (fleet-multikueue-only) or no config (fleet-multikueue-names)
            teams = sorted({k8s_namespace(lq.props) for lq in of_type(mine, LOCAL_QUEUE)
                            if dig(lq.props, "spec", "clusterQueue") == k8s_name(q)})
            for worker in as_list(dig(cfg.props, "spec", "clusters")):
                if not isinstance(worker, str) or worker == UNKNOWN:
                    continue
                for reason in _cannot_take(parts.get(reaches.get(worker, worker), []), k8s_name(q), teams):
                    yield cfg.urn, f"MultiKueueConfig {k8s_name(cfg)} sends queue {k8s_name(q)}'s jobs to worker {worker}, {reason}"


def _cannot_take(worker: Sequence[Resource], queue: str, teams: list[str]) -> Iterator[str]:
    cq = next((q for q in of_type(worker, CLUSTER_QUEUE) if k8s_name(q) == queue), None)
    if cq is None or not serves(cq):
        yield (f"whose ClusterQueue {queue} is {'missing' if cq is None else 'idle (no resource groups)'}: "
               "every copy sent there waits forever")
        return
    selector = dig(cq.props, "spec", "namespaceSelector")
    labels = {k8s_name(n): {**as_dict(dig(n.props, "metadata", "labels")), NAMESPACE_NAME_LABEL: k8s_name(n)}
              for n in of_type(worker, *NAMESPACES)}
    bound = {k8s_namespace(b.props) for b in of_type(worker, ROLE_BINDING) if _binds_manager(b.props)}
    for ns in teams:
        if selector != UNKNOWN and not _unknown_in(selector) and not selector_matches(
                selector, labels.get(ns, {NAMESPACE_NAME_LABEL: ns})):
            yield f"whose ClusterQueue {queue} does not select namespace {ns}: its copies there are never admitted"
        if ns not in bound:
            yield (f"where the manager's ServiceAccount has no RoleBinding to {multikueue_worker.WRITE_ROLE} in "
                   f"namespace {ns}: creating the copy is refused (Forbidden)")


def _binds_manager(props: Mapping[str, Any]) -> bool:
    ref = as_dict(props.get("roleRef"))
    subject = {"kind": "ServiceAccount", "name": multikueue_worker.SERVICE_ACCOUNT, "namespace": KUEUE_NAMESPACE}
    return (ref.get("kind") == "ClusterRole" and ref.get("name") == multikueue_worker.WRITE_ROLE
            and any({k: as_dict(s).get(k) for k in subject} == subject for s in as_list(props.get("subjects"))))


def _unknown_in(value: Any) -> bool:
    return any(v == UNKNOWN for _, v in _strings(value, ()))
