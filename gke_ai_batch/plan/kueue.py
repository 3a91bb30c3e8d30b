"""Kueue and scheduling objects as plain manifests (camelCase dicts, current APIs only):
ClusterQueues, LocalQueues, team Namespaces, PriorityClasses, WorkloadPriorityClasses, the
ProvisioningRequest admission check, and the Helm values of both installs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from gke_ai_batch.config.batch import ClusterQueueConfig, KueueConfig, QueueFlavor, QuotaLimits, TeamConfig
from gke_ai_batch.config.stack import StackConfig
from gke_ai_batch.domain.naming import BUILTIN_NAMESPACES
from gke_ai_batch.domain import catalogue
from gke_ai_batch.domain import kueue_releases
from gke_ai_batch.domain import quantity
from gke_ai_batch.domain import versions
from gke_ai_batch.model.objects import (  # noqa: F401 (re-exported)
    NAMESPACE_NAME_LABEL,
    PROVISIONING_CONTROLLER,
    UNMANAGED_JOB_NAMESPACES,
)
from gke_ai_batch.model.podsecurity import AUDIT_LABEL, ENFORCE_LABEL, WARN_LABEL
from gke_ai_batch.model.requests import CPU, MEMORY
from gke_ai_batch.plan.flavors import FlavorPlan
from gke_ai_batch.plan.rbac import namespace_rbac_manifests, role_binding_manifest, role_manifest

KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_GROUP = KUEUE_API.split("/")[0]
PROVISIONING_CLASS = "queued-provisioning.gke.io"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
JOBSET_CHART = "oci://registry.k8s.io/jobset/charts/jobset"
KUEUE_NAMESPACE = "kueue-system"
JOBSET_NAMESPACE = "jobset-system"
NETWORK_POLICY_NAME = "same-namespace-only"


@dataclass(frozen=True)
class QueuePlan:
    name: str
    manifest: dict[str, Any]
    flavors: tuple[str, ...]
    cohort: str | None
    admission_checks: tuple[str, ...]
    quotas: dict[str, dict[str, Any]]  # flavor -> resource -> nominal quota
    config: ClusterQueueConfig | None = None  # the entry it was planned from (its component's args)


def plan_cluster_queues(cfg: StackConfig, flavors: list[FlavorPlan]) -> list[QueuePlan]:
    by_name = {f.name: f for f in flavors}
    plans = []
    for cq in cfg.cluster_queues:
        entries = cq.flavors or [_bare(f.name) for f in flavors]
        plans.append(
            cluster_queue_plan(
                cq,
                [(e, by_name[e.name]) for e in entries],
                namespace_selector(cfg, cq),
                provisioning_check=cfg.kueue.provisioning_admission_check,
            )
        )
    return plans


def cluster_queue_plan(
    cq: ClusterQueueConfig,
    flavors: list[tuple[QueueFlavor, FlavorPlan]],
    selector: dict[str, Any] | None,
    *,
    provisioning_check: str | None = None,
    admission_checks: tuple[str, ...] = (),
    idle: bool = False,
) -> QueuePlan:
    """One ClusterQueue: each (queue entry, flavor) in the queue's order, quotas defaulting to
    the flavor's capacity. Queued flavors admit through `provisioning_check` (the
    ProvisioningRequest AdmissionCheck); `admission_checks` apply to every flavor (a fleet
    manager's MultiKueue check). `idle`: no resource groups at all (idle_cluster_queue)."""
    by_name = {e.name: f for e, f in flavors}
    resources = {e.name: _flavor_resources(e, f) for e, f in flavors}
    # Within a group, flavors without accelerators go first: a CPU-only pod then takes a CPU
    # flavor, not the first accelerator flavor whose cpu quota it fits (Kueue's assigner
    # stops at the first flavor that fits), and an accelerator pod finds no quota for its
    # accelerator on the CPU flavor and moves on. Otherwise the stack's order stands: a flavor
    # not known to be CPU-only (a ComputeClass mixing CPU and GPU priorities, nodeLabels alone)
    # stays where the stack put it, since moving a fallback first makes it the one Kueue tries first.
    order = sorted((e.name for e, _ in flavors), key=lambda n: by_name[n].kind != "cpu")
    spec = _queue_spec(cq, selector, None if idle else _resource_groups(order, resources))
    queued = [e.name for e, f in flavors if f.queued]
    checks: list[dict[str, Any]] = [{"name": c} for c in admission_checks]
    if queued:
        # Only the queued flavors wait for a ProvisioningRequest; other flavors of the same
        # queue admit at once.
        checks.append({"name": provisioning_check, "onFlavors": queued})
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return QueuePlan(
        name=cq.name,
        manifest={"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": cq.name}, "spec": spec},
        flavors=tuple(e.name for e, _ in flavors),
        cohort=cq.cohort,
        admission_checks=(*admission_checks, *((provisioning_check,) if queued else ())),
        quotas={name: {r: q["nominalQuota"] for r, q in res.items()} for name, res in resources.items()},
        config=cq,
    )


def _queue_spec(cq: ClusterQueueConfig, selector: dict[str, Any] | None, resource_groups: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["namespaceSelector"] = selector
    spec["queueingStrategy"] = cq.queueing_strategy
    if cq.cohort:
        spec["cohortName"] = cq.cohort
    if resource_groups is not None:
        spec["resourceGroups"] = resource_groups
    if cq.preemption is not None:
        spec["preemption"] = cq.preemption.model_dump(by_alias=True, exclude_unset=True)
    if cq.fair_sharing_weight is not None:
        spec["fairSharing"] = {"weight": cq.fair_sharing_weight}
    if cq.stop_policy is not None:
        spec["stopPolicy"] = cq.stop_policy
    return spec


def idle_cluster_queue(cfg: StackConfig, cq: ClusterQueueConfig) -> QueuePlan:
    """A fleet's queue on a worker that has none of its flavors: the same ClusterQueue (name,
    teams, cohort, policies) with no resource groups, so the worker mirrors the fleet's queues
    and a team's LocalQueue there points at a queue that exists. It admits nothing: Kueue's
    flavor assigner finds no flavor for any resource of a queue that covers none
    (pkg/scheduler/flavorassigner/flavorassigner.go:1069-1072, findFlavorForPodSets: "resource
    ... unavailable in ClusterQueue"), and it has no quota to lend a cohort. The manager does not
    dispatch that queue's jobs here (gke_ai_batch/plan/fleet.py dispatch_checks)."""
    return cluster_queue_plan(cq, [], namespace_selector(cfg, cq), idle=True)


def _bare(name: str) -> QueueFlavor:
    return QueueFlavor.model_validate({"name": name})


def _flavor_resources(entry, flavor: FlavorPlan) -> dict[str, dict[str, Any]]:
    """resource -> {nominalQuota, borrowingLimit?, lendingLimit?}; the accelerator defaults to
    what the flavor's pools provide."""
    out: dict[str, dict[str, Any]] = {}
    # cpu and memory follow the queue's share of the flavor's accelerators: a queue given half
    # the chips gets half the hosts' cpu and memory, one given none gets none, so queues that
    # split a flavor never count its hosts twice in their cohort.
    share = 1.0
    accel = flavor.accelerator_resource
    if accel in entry.quotas and flavor.capacity.get(accel):
        q = entry.quotas[accel]
        nominal = quantity.value(q.nominal if isinstance(q, QuotaLimits) else q) or 0
        share = min(1.0, nominal / flavor.capacity[accel])
    # Derived resources first (the accelerator, cpu, memory), each replaced where the stack
    # gives its quota; then resources only the stack names.
    for resource, amount in flavor.capacity.items():
        if resource in (CPU, MEMORY):
            amount = int(amount * share)
        out[resource] = {"nominalQuota": quota_quantity(resource, amount)}
    for resource, quota in entry.quotas.items():
        if isinstance(quota, QuotaLimits):
            item = {"nominalQuota": quota.nominal}
            if quota.borrowing_limit is not None:
                item["borrowingLimit"] = quota.borrowing_limit
            if quota.lending_limit is not None:
                item["lendingLimit"] = quota.lending_limit
        else:
            item = {"nominalQuota": quota}
        out[resource] = item
    return out


def quota_quantity(resource: str, amount: int) -> int | str:
    """A derived quota as a quantity a reviewer reads: cpu in cores (exact to the millicore),
    memory in Gi or Mi, rounded down so that the quota never promises more than the nodes hold."""
    if resource == CPU:
        cores, millis = divmod(amount, 1000)
        return cores if not millis else f"{cores}.{millis:03d}".rstrip("0")
    if resource == MEMORY:
        mib = amount // 2**20
        return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"
    return amount


def _resource_groups(order: list[str], resources: dict[str, dict[str, dict]]) -> list[dict[str, Any]]:
    """Kueue wants every resource in exactly one group and every flavor of a group to list the
    group's resources in the same order. Flavors whose resources overlap share a group; a
    resource a flavor does not offer gets quota 0 there."""
    groups: list[dict[str, Any]] = []  # {"flavors": [...], "resources": [...]}
    for name in order:
        mine = list(resources[name])
        joined = [g for g in groups if set(g["resources"]) & set(mine)]
        merged = {"flavors": [], "resources": []}
        for g in joined:
            merged["flavors"] += g["flavors"]
            merged["resources"] += [r for r in g["resources"] if r not in merged["resources"]]
            groups.remove(g)
        merged["flavors"].append(name)
        merged["resources"] += [r for r in mine if r not in merged["resources"]]
        groups.append(merged)
    groups.sort(key=lambda g: order.index(g["flavors"][0]))
    out = []
    for g in groups:
        flavors = sorted(g["flavors"], key=order.index)
        out.append(
            {
                "coveredResources": list(g["resources"]),
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {"name": r, **resources[f].get(r, {"nominalQuota": 0})} for r in g["resources"]
                        ],
                    }
                    for f in flavors
                ],
            }
        )
    return out


def namespace_selector(cfg: StackConfig, cq: ClusterQueueConfig) -> dict[str, Any] | None:
    if cq.namespace_selector is not None:
        return cq.namespace_selector.model_dump(by_alias=True, exclude_defaults=True)
    namespaces = sorted({t.namespace for t in cfg.teams if t.cluster_queue == cq.name})
    if not namespaces:
        return None  # Kueue reads a missing selector as "no namespace": nobody can submit
    return {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": namespaces}]}


def pod_security_version(cfg: StackConfig) -> str:
    """The Pod Security Standards version the namespaces enforce: the cluster's minor when the
    stack pins one (minMasterVersion), else `latest`. Pinned, a GKE minor upgrade cannot make
    admission stricter than what synth checked (the standards only gain checks across
    versions; an older version label stays valid: "<VERSION> must be a valid Kubernetes minor
    version, or latest", https://kubernetes.io/docs/concepts/security/pod-security-admission/
    #pod-security-admission-labels-for-namespaces). Unpinned, the cluster's minor is GKE's
    choice and moves with the channel, so a pin would be a guess."""
    version = cfg.cluster.min_master_version
    if version is None:
        return "latest"
    major, minor = versions.minor_of(version)
    return f"v{major}.{minor}"


def pod_security_labels(level: str, version: str) -> dict[str, str]:
    """enforce at the team's level; a privileged namespace still warns (kubectl) and audits
    (the audit log) at baseline, so what needs the host is visible."""
    labels = {ENFORCE_LABEL: level, f"{ENFORCE_LABEL}-version": version}
    if level == "privileged":
        for label in (WARN_LABEL, AUDIT_LABEL):
            labels[label] = "baseline"
            labels[f"{label}-version"] = version
    return labels


def team_namespaces(teams: list[TeamConfig], version: str) -> dict[str, dict[str, Any]]:
    """Every team namespace as a Namespace manifest with its labels, in the teams' order (the
    teams of one namespace agree on its level: gke_ai_batch/config/stack.py)."""
    out: dict[str, dict[str, Any]] = {}
    for team in teams:
        ns = out.setdefault(
            team.namespace, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team.namespace}}
        )
        labels = ns["metadata"].setdefault("labels", {})
        labels.update(team.labels)
        labels.update(pod_security_labels(team.pod_security, version))
    for name, ns in out.items():
        if name in BUILTIN_NAMESPACES:
            ns["metadata"]["annotations"] = dict(PATCH_FORCE)
    return out


def namespace_manifests(cfg: StackConfig) -> list[dict[str, Any]]:
    """The team namespaces the program creates: all but those every cluster has."""
    namespaces = team_namespaces(cfg.teams, pod_security_version(cfg))
    return [ns for name, ns in namespaces.items() if name not in BUILTIN_NAMESPACES]


# pulumi-kubernetes Patch resources apply with server-side apply under a field manager of
# their own; a label some other manager set (a hand-run `kubectl label`) is a conflict that
# fails `pulumi up` unless the patch forces it. The stack is the source of truth for a team
# namespace's level, so it forces. Deleting the patch (or the stack) undoes it: the labels it
# owns are removed ("Deleting a Patch resource will undo the patched changes to the Kubernetes
# resource, but the resource will not be deleted",
# https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/).
PATCH_FORCE = {"pulumi.com/patchForce": "true"}


def namespace_patches(cfg: StackConfig) -> list[dict[str, Any]]:
    """The Pod Security labels of team namespaces that exist in every cluster (default): a
    partial Namespace, applied as a NamespacePatch rather than created."""
    namespaces = team_namespaces(cfg.teams, pod_security_version(cfg))
    return [ns for name, ns in namespaces.items() if name in BUILTIN_NAMESPACES]


def network_policy_manifests(teams: list[TeamConfig]) -> list[dict[str, Any]]:
    """Per team namespace with networkPolicy on: isolate every pod for ingress, then allow
    ingress from pods of the same namespace (JobSet pods reach each other through their
    headless Service; a Job's indexed pods through <name>-hosts). What stays allowed without a
    rule: the kubelet's probes, since "traffic to and from the node where a Pod is running is
    always allowed" (https://kubernetes.io/docs/concepts/services-networking/network-policies/);
    and pods on the host network, which a NetworkPolicy does not select (multi-host TPU pods).
    Egress is not restricted. Enforcement needs a network policy provider: GKE Dataplane V2
    (https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2) or Calico."""
    out: dict[str, dict[str, Any]] = {}
    for team in teams:
        if team.network_policy and team.namespace not in out:
            out[team.namespace] = {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": NETWORK_POLICY_NAME, "namespace": team.namespace},
                "spec": {
                    "podSelector": {},
                    "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"podSelector": {}}]}],
                },
            }
    return list(out.values())


def local_queue_manifest(namespace: str, name: str, cluster_queue: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }


@dataclass(frozen=True)
class TeamSpec:
    """One team namespace as its Team component takes it (gke_ai_batch/components/queues.py):
    the Namespace (patched if every cluster has it), its NetworkPolicy, its LocalQueues in the
    entries' order, and the Role and RoleBinding of its Google Groups."""

    namespace: str
    namespace_manifest: dict[str, Any]
    network_policies: tuple[dict[str, Any], ...]
    local_queues: tuple[dict[str, Any], ...]
    rbac: tuple[dict[str, Any], ...]


def team_spec(teams: list[TeamConfig], version: str, groups: list[str]) -> TeamSpec:
    """The teams entries of one namespace (validated: they agree on its settings) and the
    Google Groups bound in it, planned."""
    ns = teams[0].namespace
    groups = list(dict.fromkeys(groups))
    return TeamSpec(
        namespace=ns,
        namespace_manifest=team_namespaces(teams, version)[ns],
        network_policies=tuple(network_policy_manifests(teams)),
        local_queues=tuple(local_queue_manifest(ns, t.local_queue, t.cluster_queue) for t in teams),
        rbac=tuple(namespace_rbac_manifests(ns, groups)) if groups else (),
    )


def team_specs(teams: list[TeamConfig], version: str) -> list[TeamSpec]:
    """A TeamSpec per team namespace, in the order the teams first name each."""
    by_namespace: dict[str, list[TeamConfig]] = {}
    for team in teams:
        by_namespace.setdefault(team.namespace, []).append(team)
    return [team_spec(mine, version, [t.group for t in mine if t.group is not None]) for mine in by_namespace.values()]


def priority_manifests(name: str, value: int, description: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same priority twice: for kube-scheduler (pod preemption, e.g. hotswap) and for Kueue
    (admission order and queue preemption)."""
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": False,
    }
    wpc = {"apiVersion": KUEUE_API, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}
    if description:
        pc["description"] = description
        wpc["description"] = description
    return pc, wpc


def provisioning_manifests(cfg: StackConfig, flavors: list[FlavorPlan], queues: list[QueuePlan]) -> list[dict[str, Any]]:
    """One ProvisioningRequestConfig and one AdmissionCheck, when some queue uses a queued flavor."""
    queued = provisioned_flavors(flavors, queues)
    if not queued:
        return []
    return provisioning_check_manifests(
        cfg.kueue.provisioning_admission_check, cfg.kueue.provisioning_request_config, queued
    )


def provisioned_flavors(flavors: list[FlavorPlan], queues: list[QueuePlan]) -> list[FlavorPlan]:
    """The queued flavors some queue admits through the ProvisioningRequest check."""
    used = {f for q in queues if q.admission_checks for f in q.flavors}
    return [f for f in flavors if f.queued and f.name in used]


def provisioning_check_manifests(check: str, config_name: str, queued: list[FlavorPlan]) -> list[dict[str, Any]]:
    """The ProvisioningRequestConfig (GKE's queued-provisioning class, managing the queued
    flavors' accelerators) and the AdmissionCheck that names it."""
    managed = sorted({f.accelerator_resource for f in queued if f.accelerator_resource}) or [catalogue.GPU_RESOURCE]
    return [
        {
            "apiVersion": KUEUE_API,
            "kind": "ProvisioningRequestConfig",
            "metadata": {"name": config_name},
            "spec": {"provisioningClassName": PROVISIONING_CLASS, "managedResources": managed},
        },
        admission_check_manifest(check, PROVISIONING_CONTROLLER, "ProvisioningRequestConfig", config_name),
    ]


def go_duration(seconds: int) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def kueue_manager_config(k: KueueConfig, multi_kueue: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole Configuration: the chart takes it as one string and does not merge it with its
    default, so the defaults that matter (probes, metrics, leader election) are restated."""
    conf: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        # Unset is Kueue's own default, false (KueueInstall's default); the stack program
        # passes its resolved value (StackConfig.manages_unqueued_jobs).
        "manageJobsWithoutQueueName": bool(k.manage_jobs_without_queue_name),
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": list(UNMANAGED_JOB_NAMESPACES)}
            ]
        },
        "integrations": {"frameworks": list(k.integrations)},
    }
    if k.resource_metrics:
        # Off by default in Kueue (v0.19.2 apis/config/v1beta2/configuration_types.go:182-185).
        conf["metrics"]["enableClusterQueueResources"] = True
    if k.wait_for_pods_ready:
        wfpr: dict[str, Any] = {"timeout": go_duration(k.wait_for_pods_ready.timeout)}
        wfpr["blockAdmission"] = k.wait_for_pods_ready.block_admission
        if k.wait_for_pods_ready.recovery_timeout is not None:
            wfpr["recoveryTimeout"] = go_duration(k.wait_for_pods_ready.recovery_timeout)
        conf["waitForPodsReady"] = wfpr
    if k.fair_sharing is not None:
        conf["fairSharing"] = {"preemptionStrategies": list(k.fair_sharing.preemption_strategies)}
    if multi_kueue is not None:  # a fleet's manager (gke_ai_batch/plan/fleet.py)
        conf["multiKueue"] = multi_kueue
    return conf


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _yaml(data: dict[str, Any]) -> str:
    """yaml.safe_dump's text, keys in the order given, through libyaml's emitter when PyYAML has
    it: ~5x faster, and every render writes these; tests/test_speed_suite.py checks that the
    text is the pure-Python emitter's for every committed stack."""
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False)


def kueue_values(kueue: KueueConfig, multi_kueue: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chart's values for `kueue`'s settings; `multi_kueue`: a fleet manager's block
    (gke_ai_batch/plan/installs.py adds it)."""
    values: dict[str, Any] = {
        "managerConfig": {
            "controllerManagerConfigYaml": _yaml(kueue_manager_config(kueue, multi_kueue))
        }
    }
    gate = "DisableWaitForPodsReady"
    if kueue.wait_for_pods_ready is False and kueue_releases.has(kueue.version, kueue_releases.FEATURE_GATES[gate]):
        # Kueue 0.19 turns waitForPodsReady on even when the Configuration omits it (#11855); the
        # gate came with that change, and before it an omitted waitForPodsReady is off already.
        values["controllerManager"] = {"featureGates": [{"name": gate, "enabled": True}]}
    return values


def webhook_probe_manifests(probe_image: str) -> list[dict[str, Any]]:
    """A Pod that server-side dry-runs a Workload and a JobSet until Kueue's and JobSet's
    webhooks answer. A ready Deployment still leaves seconds to a minute in which creates fail
    with 'connection refused' or 502 (kueue#13036, #12008); a retried dry run is what Kueue's
    own CI adopted (#12016). Kueue objects and workloads wait for this Pod.

    A Pod, not a Job: Kueue's Job webhook covers every namespace and fails closed, so a probe
    Job could not be created while the webhook is down; the Pod webhook skips Kueue's own
    namespace. The kubectl image has no shell: the kubelet's restart backoff is the retry loop,
    and pulumi-kubernetes counts a Succeeded Pod as done (pulumi-kubernetes#106).

    Its rights are a Role in kueue-system, nothing cluster-wide: it dry-runs a Workload there
    rather than a cluster-scoped ResourceFlavor. Kueue's Workload webhooks (mworkload.kb.io,
    vworkload.kb.io) have no namespaceSelector, unlike its job webhooks, so they answer for
    kueue-system too (v0.19.2 charts/kueue/templates/webhook/manifests.yaml); and they are
    served by the same webhook server as the ResourceFlavor one."""
    name = "webhook-probe"
    ns = KUEUE_NAMESPACE
    pod_template = {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "probe", "image": probe_image}]}
    }
    # Valid for Kueue v0.19.2's ValidateWorkload on create (pkg/webhooks/workload_webhook.go):
    # one podSet, no minCount, no reserved "pods" resource, no status. No queueName: a dry run
    # persists nothing, so no queue needs to exist.
    probe_workload = {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"podSets": [{"name": "main", "count": 1, "template": pod_template}]},
    }
    probe_jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicatedJobs": [{"name": "probe", "template": {"spec": {"template": pod_template}}}]},
    }
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "gke-ai-batch"}
    role = f"gke-ai-batch-{name}"
    # A server-side dry run is authorized as the create it stands for.
    rules = [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["create"]},
    ]
    subject = {"kind": "ServiceAccount", "name": name, "namespace": ns}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns, "labels": labels}},
        role_manifest(ns, role, rules, labels),
        role_binding_manifest(ns, role, role, [subject], labels),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "data": {
                "workload.yaml": _yaml(probe_workload),
                "jobset.yaml": _yaml(probe_jobset),
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {
                "serviceAccountName": name,
                "restartPolicy": "OnFailure",
                "activeDeadlineSeconds": 900,
                "containers": [
                    {
                        "name": "dry-run",
                        "image": probe_image,
                        "args": ["create", "--dry-run=server", "-f", "/probe/"],
                        "env": [{"name": "HOME", "value": "/tmp"}],
                        "volumeMounts": [
                            {"name": "probe", "mountPath": "/probe", "readOnly": True},
                            {"name": "tmp", "mountPath": "/tmp"},
                        ],
                        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True,
                            "runAsUser": 65532,
                            "capabilities": {"drop": ["ALL"]},
                        },
                    }
                ],
                "volumes": [{"name": "probe", "configMap": {"name": name}}, {"name": "tmp", "emptyDir": {}}],
            },
        },
    ]


def admission_check_manifest(name: str, controller: str, parameters_kind: str, parameters_name: str) -> dict[str, Any]:
    """An AdmissionCheck whose controller reads its parameters from a Kueue object. Kueue marks
    the check BadConfig unless the reference names Kueue's group and the object's kind
    (refValidForGK, pkg/util/admissioncheck/admissioncheck.go:110-126)."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {
            "controllerName": controller,
            "parameters": {"apiGroup": KUEUE_GROUP, "kind": parameters_kind, "name": parameters_name},
        },
    }
