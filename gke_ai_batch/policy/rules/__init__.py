"""The pack's rules as plain functions, run by the CrossGuard pack (policy/__main__.py) during
`pulumi preview` and by synth (gke_ai_batch/synth/policy.py) over its recording, so that a PR preview and
an offline render judge a stack alike.

A resource rule is `check(type_, props, config) -> Iterable[str]` over one resource's
properties as the engine receives them (camelCase); a stack rule is
`check(resources, config) -> Iterable[(urn | None, message)]` over every resource. `config` is
the rule's per-stack settings (policy/config/<stack>.json). Nothing here imports Pulumi or
pydantic: the pack runs in its own small virtualenv."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gke_ai_batch.domain.findings import ADVISORY, MANDATORY, Finding

from . import cost, fleet, gke, kueue, namespaces, objects, rbac, workloads
from .base import (
    CLUSTER,
    EMPTY,
    HELM_RELEASES,
    NODE_POOL,
    UNKNOWN,
    WORKLOADS,
    Resource,
    Rule,
    by_cluster,
    per_cluster,
)

__all__ = ["RULES", "UNKNOWN", "Resource", "Rule", "by_name", "findings", "run"]


def _flag(name: str, description: str) -> dict[str, dict[str, Any]]:
    """A per-stack boolean setting (policy/config/<stack>.json), off unless the stack sets it."""
    return {name: {"type": "boolean", "default": False, "description": description}}


RULES: tuple[Rule, ...] = (
    # -- GKE ------------------------------------------------------------------------------------
    Rule(
        "gke-workload-identity",
        "Workload Identity is on: the cluster has a workload pool (Autopilot always does) and no node pool "
        "exposes node credentials through GCE_METADATA.",
        MANDATORY,
        gke.workload_identity,
        types=(CLUSTER, NODE_POOL),
    ),
    Rule(
        "gke-shielded-nodes",
        "Nodes are shielded VMs with secure boot: enableShieldedNodes on Standard clusters, and "
        "shieldedInstanceConfig.enableSecureBoot on every node pool, a kept default pool and "
        "auto-provisioning defaults.",
        MANDATORY,
        gke.shielded_nodes,
        types=(CLUSTER, NODE_POOL),
    ),
    Rule(
        "gke-node-service-account",
        "Nodes run as a dedicated service account, never the Compute Engine default one: every node pool, "
        "the cluster's nodeConfig (Standard) and auto-provisioning defaults (Autopilot, node "
        "auto-provisioning) name a serviceAccount not ending in -compute@developer.gserviceaccount.com.",
        MANDATORY,
        gke.node_service_account,
        types=(CLUSTER, NODE_POOL),
    ),
    Rule(
        "gke-release-channel",
        "The cluster is enrolled in a release channel (RAPID, REGULAR, STABLE or EXTENDED).",
        MANDATORY,
        gke.release_channel,
        types=(CLUSTER,),
    ),
    Rule(
        "gke-deletion-protection",
        "Production stacks keep the cluster's deletion protection on. Whether a stack is production is "
        "this policy's `production` setting in policy/config/<stack>.json.",
        ADVISORY,
        gke.deletion_protection,
        types=(CLUSTER,),
        config_schema=_flag("production", "This stack is production: its cluster must have deletion protection."),
    ),
    Rule(
        "gke-private-nodes",
        "Nodes have no public IP addresses (privateClusterConfig.enablePrivateNodes).",
        ADVISORY,
        gke.private_nodes,
        types=(CLUSTER,),
    ),
    Rule(
        "gke-control-plane-not-public",
        "The control plane's public IP endpoint is never open to the internet: IP endpoints are disabled, only the "
        "private one is on, or authorized networks limit the public one (without 0.0.0.0/0 or Google Cloud's "
        "public addresses).",
        MANDATORY,
        gke.control_plane_not_public,
        types=(CLUSTER,),
    ),
    Rule(
        "gke-dns-endpoint",
        "Production clusters serve the IAM-authorized DNS endpoint (controlPlaneEndpointsConfig.dnsEndpointConfig."
        "allowExternalTraffic), through which people and the program reach the control plane.",
        ADVISORY,
        gke.dns_endpoint,
        types=(CLUSTER,),
        config_schema=_flag("production", "This stack is production: its cluster must serve the DNS endpoint."),
    ),
    Rule(
        "gke-dataplane-v2",
        "Production Standard clusters run GKE Dataplane V2 (datapathProvider ADVANCED_DATAPATH); Autopilot always does.",
        ADVISORY,
        gke.dataplane_v2,
        types=(CLUSTER,),
        config_schema=_flag("production", "This stack is production: its Standard cluster must run Dataplane V2."),
    ),
    Rule(
        "gke-secrets-encryption",
        "Where the stack requires it (this policy's `required` setting), Secrets are encrypted at the application "
        "layer with a Cloud KMS key (databaseEncryption ENCRYPTED with a keyName).",
        ADVISORY,
        gke.secrets_encryption,
        types=(CLUSTER,),
        config_schema=_flag("required", "This stack requires application-layer secrets encryption."),
    ),
    Rule(
        "gke-binary-authorization",
        "Where the stack requires it (this policy's `required` setting), Binary Authorization enforces the "
        "project's policy (binaryAuthorization.evaluationMode PROJECT_SINGLETON_POLICY_ENFORCE).",
        ADVISORY,
        gke.binary_authorization,
        types=(CLUSTER,),
        config_schema=_flag("required", "This stack requires Binary Authorization."),
    ),
    Rule(
        "gke-protect-stateful",
        "Production stacks protect every cluster, node pool (the system pool too) and service account (the "
        "`protect` resource option), so that `pulumi up` never deletes or replaces one unreviewed.",
        ADVISORY,
        gke.protect_stateful,
        stack=True,
        config_schema=_flag(
            "production", "This stack is production: its clusters, node pools and service accounts must be protected."
        ),
    ),
    Rule(
        "gke-unique-node-pools",
        "No two node pools of one cluster share a name (GKE refuses the second: ALREADY_EXISTS), whichever "
        "components registered them.",
        MANDATORY,
        gke.unique_node_pools,
        stack=True,
    ),
    Rule(
        "k8s-unique-objects",
        "No two resources apply one Kubernetes object (kind, namespace and name) to one cluster: the API server "
        "refuses the second (AlreadyExists), whichever components registered them.",
        MANDATORY,
        objects.unique_objects,
        stack=True,
    ),
    # -- accelerator pools ----------------------------------------------------------------------
    Rule(
        "pool-flex-queued-from-zero",
        "Flex-start and queued-provisioning pools autoscale from 0 (minimum 0, initialNodeCount 0, no fixed "
        "nodeCount), with auto-repair off and reservation affinity NO_RESERVATION.",
        MANDATORY,
        gke.flex_queued_from_zero,
        types=(NODE_POOL,),
    ),
    Rule(
        "pool-tpu-multihost-slice",
        "A multi-host TPU pool (a catalogue TPU machine type whose placement topology spans more than one VM) "
        "is exactly one slice: COMPACT placement with the slice topology (tpu7x: a workload policy "
        "name and an empty type), one zone, and a node count or per-zone autoscaling maximum equal to the "
        "slice's VMs (total limits leave a per-zone maximum of 0, which GKE rejects for a slice).",
        MANDATORY,
        gke.tpu_multihost_slice,
        types=(NODE_POOL,),
    ),
    Rule(
        "queue-interruptible-only",
        "A ClusterQueue that admits work at the stack's highest WorkloadPriorityClass value (work no other "
        "workload outranks, so Kueue never preempts it) has at least one flavor that is not spot, flex-start "
        "or queued capacity. A flavor's capacity is its gke-ai-batch/capacity (or GKE spot/flex-start/queued) "
        "node label, else that of the node pools it selects; flavors the stack cannot place are given the "
        "benefit of the doubt.",
        ADVISORY,
        kueue.interruptible_only,
        stack=True,
    ),
    # -- Kueue ----------------------------------------------------------------------------------
    Rule(
        "helm-chart-pinned",
        "Helm releases (Kueue, JobSet) pin an exact chart version: a SemVer release, not empty, no range.",
        MANDATORY,
        kueue.helm_chart_pinned,
        types=HELM_RELEASES,
    ),
    Rule(
        "kueue-flavors-exist",
        "Every flavor a ClusterQueue names is a ResourceFlavor of the stack.",
        MANDATORY,
        per_cluster(kueue.flavors_exist),
        stack=True,
    ),
    Rule(
        "kueue-admissible",
        "Every Job, JobSet and ProvisioningRequest can run: Kueue would admit it (its LocalQueue and ClusterQueue "
        "exist, the queue selects its namespace, is not stopped and covers its requests within quota) and "
        "kube-scheduler place its pods on some node pool of the cluster; and every ClusterQueue is one Kueue accepts, "
        "whose flavors select nodes some pool has and whose namespaceSelector admits its teams. The admission model "
        "the stack program refuses a stack with (docs/how-it-works.md), run over what the program registered, "
        "one cluster at a time. A cluster the program does not create is taken as Standard with only the node pools "
        "it registers, unless this policy's settings declare it otherwise; a cluster whose objects hold a value known only "
        "after deploy is not judged.",
        MANDATORY,
        per_cluster(kueue.admissible),
        stack=True,
        config_schema={
            "autopilot": {"type": "boolean", "default": False,
                          "description": "The cluster the program deploys onto, and does not create, is Autopilot."},
            "autoProvisioning": {"type": "boolean", "default": False,
                                 "description": "That cluster has node auto-provisioning (GKE may create pools)."},
        },
    ),
    Rule(
        "kueue-quota-within-capacity",
        "A ClusterQueue's nominal google.com/tpu and nvidia.com/gpu quota per flavor does not exceed the "
        "accelerators of the node pools whose node labels match the flavor's nodeLabels, at their ceiling "
        "(not checked on Autopilot or with node auto-provisioning).",
        ADVISORY,
        kueue.quota_within_capacity,
        stack=True,
    ),
    Rule(
        "fleet-multikueue-only",
        "A ClusterQueue that admits through a MultiKueue AdmissionCheck (controllerName kueue.x-k8s.io/multikueue) "
        "uses no other check: Kueue deactivates it next to a second MultiKueue check, a ProvisioningRequest check, "
        "or with the MultiKueue check limited to some flavors, and a fleet's checks belong on its workers' queues.",
        MANDATORY,
        fleet.multikueue_only,
        stack=True,
    ),
    Rule(
        "fleet-multikueue-names",
        "A fleet's MultiKueue objects name one another on the manager: each MultiKueue AdmissionCheck's parameters "
        "a MultiKueueConfig, each cluster a MultiKueueConfig lists a MultiKueueCluster, each MultiKueueCluster a "
        "kubeconfig Secret in kueue-system with the key `kubeconfig`, and a worker cluster of the stack by its name.",
        MANDATORY,
        fleet.names_agree,
        stack=True,
    ),
    Rule(
        "fleet-dispatch-targets",
        "Every worker a manager queue's MultiKueueConfig lists can take that queue's jobs: its ClusterQueue of that "
        "name has resource groups, selects every team namespace of the queue, and the manager's ServiceAccount is "
        "bound to its write role in each.",
        MANDATORY,
        fleet.dispatch_targets,
        stack=True,
    ),
    Rule(
        "fleet-teams-everywhere",
        "Every worker of a fleet has every team namespace and LocalQueue of the manager, each LocalQueue pointing at "
        "the same ClusterQueue, which the worker has: MultiKueue copies a workload into the same namespace and queue.",
        MANDATORY,
        fleet.teams_everywhere,
        stack=True,
    ),
    Rule(
        "fleet-worker-regions",
        "A fleet's workers are in distinct regions (or projects): two in one region of one project count one "
        "region's capacity twice.",
        MANDATORY,
        fleet.worker_regions,
        stack=True,
    ),
    Rule(
        "fleet-kubeconfig-secret",
        "No kubeconfig carrying a credential (token, client key, password) appears anywhere but in a Kubernetes "
        "Secret's data or stringData, which pulumi-kubernetes keeps as Pulumi secrets.",
        MANDATORY,
        fleet.kubeconfig_secret,
        stack=True,
    ),
    # -- team namespaces ------------------------------------------------------------------------
    Rule(
        "namespace-pod-security",
        "Every team namespace (one with a LocalQueue) has a Namespace or NamespacePatch labelled "
        "pod-security.kubernetes.io/enforce with a Pod Security level; on production stacks (this policy's "
        "`production` setting) a privileged namespace also warns and audits at baseline.",
        MANDATORY,
        per_cluster(namespaces.pod_security),
        stack=True,
        config_schema={
            "production": {
                "type": "boolean",
                "default": False,
                "description": "This stack is production: privileged namespaces must warn and audit at baseline.",
            }
        },
    ),
    Rule(
        "namespace-network-policy",
        "On production stacks (this policy's `production` setting), every team namespace (one with a LocalQueue) "
        "has a NetworkPolicy selecting all its pods for Ingress, so that other namespaces' pods cannot reach them.",
        ADVISORY,
        per_cluster(namespaces.network_policy),
        stack=True,
        config_schema={
            "production": {
                "type": "boolean",
                "default": False,
                "description": "This stack is production: its team namespaces must isolate ingress.",
            }
        },
    ),
    # -- workloads ------------------------------------------------------------------------------
    Rule(
        "workload-queue-label",
        "Every Job and JobSet carries a kueue.x-k8s.io/queue-name label. Exempt: a Job whose pods consume a "
        "ProvisioningRequest (GKE's path without Kueue). Pods, such as the Kueue webhook probe, are not workloads.",
        MANDATORY,
        workloads.workload_queue_label,
        types=WORKLOADS,
    ),
    Rule(
        "workload-known-queue",
        "A workload's queue-name label names a LocalQueue the stack creates in the workload's namespace.",
        MANDATORY,
        per_cluster(workloads.workload_known_queue),
        stack=True,
    ),
    Rule(
        "workload-known-priority",
        "A workload's kueue.x-k8s.io/priority-class label names a WorkloadPriorityClass of the stack, and its "
        "pods' priorityClassName a PriorityClass of the stack. Workloads without a priority are allowed (0).",
        MANDATORY,
        per_cluster(workloads.workload_known_priority),
        stack=True,
    ),
    Rule(
        "workload-privileged-tpu-only",
        "Node access (privileged containers, hostPID, hostIPC, hostPath volumes, capabilities beyond the Pod "
        "Security baseline set) only in pods that select TPU nodes (cloud.google.com/gke-tpu-accelerator), and "
        "privileged never on Autopilot. Every pod template counts: Jobs, JobSets, Pods, PodTemplates, Deployments, "
        "StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers and CronJobs, all container lists.",
        MANDATORY,
        workloads.workload_privileged_tpu_only,
        stack=True,
    ),
    Rule(
        "image-pinned",
        "Every container image (containers, initContainers, ephemeralContainers) of a Job, JobSet, Pod, "
        "PodTemplate, Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController or CronJob names one "
        "build: a tag other than latest, or a digest (untagged means latest). With requireDigest (production stacks), every image is pinned by "
        "sha256 digest.",
        MANDATORY,
        workloads.image_pinned,
        types=workloads.POD_TYPES,
        config_schema={
            "requireDigest": {
                "type": "boolean",
                "default": False,
                "description": "Every image must carry a digest (image@sha256:...), not only a tag.",
            }
        },
    ),
    # -- RBAC -----------------------------------------------------------------------------------
    Rule(
        "rbac-no-queue-bypass",
        "No Role or ClusterRole the stack binds (other than cluster-admin) grants what bypasses Kueue or grants "
        "more: creating Pods, ReplicationControllers or ProvisioningRequests, writing Deployments, ReplicaSets, "
        "StatefulSets, DaemonSets or CronJobs, any write on kueue.x-k8s.io (Workloads and their status too; only "
        "creating Workloads where the stack has no LocalQueue, as the webhook probe's dry run does, is allowed), "
        "RBAC writes, escalate or bind, impersonation or service-account tokens. A roleRef the stack does not "
        "create is a violation unless it is a built-in whose rights are known (admin and edit fail; view, "
        "system:basic-user, system:auth-delegator, system:discovery, system:public-info-viewer and "
        "system:monitoring pass); system:controller:* roles and aggregated ClusterRoles always fail.",
        MANDATORY,
        rbac.no_queue_bypass,
        stack=True,
    ),
    Rule(
        "probe-namespaced-rbac",
        "ServiceAccounts the stack creates (the Kueue webhook probe's) are bound to namespaced Roles only: no "
        "ClusterRoleBinding names them.",
        MANDATORY,
        rbac.probe_namespaced_rbac,
        stack=True,
    ),
    # -- cost -----------------------------------------------------------------------------------
    Rule(
        "stack-budget",
        "The list price per 30 days of what can create nodes (node pools, ComputeClasses at their dearest "
        "priority, Autopilot quotas), at its maximum size, stays within the stack's budget (gke-ai-batch:budget, "
        "with gke-ai-batch:prices: the program records both on the stack's outputs, where this policy reads "
        "them); with anything unpriced the verdict is unknown, never within, and the finding names it. "
        "Reservations, disks, network and the cluster fee are not priced (docs/cost.md).",
        ADVISORY,
        cost.budget,
        stack=True,
    ),
)

_BY_NAME = {rule.name: rule for rule in RULES}


def by_name(name: str) -> Rule:
    return _BY_NAME[name]


def findings(
    rule: Rule, resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY, level: str | None = None
) -> Iterator[Finding]:
    """Every violation of one rule across a stack's resources, as a Finding: rule = the policy's
    name, severity = its enforcement level (`level`, the stack's; the pack's default if None),
    urn = the resource it blames (None: the stack as a whole). The rule functions yield what
    they find as (urn, message), or the message alone for a resource rule: a function does not
    know the name and level it runs under, which the Rule holds once and this binds."""
    severity = level or rule.enforcement
    if rule.stack:
        named: dict[str, str] | None = None
        for urn, message in rule.check(resources, config):
            if urn is not None:
                named = _clusters_named(resources) if named is None else named
                message = f"cluster {named[urn]}: {message}" if urn in named else message
            yield Finding(rule.name, message, severity, urn=urn)
        return
    for r in resources:
        if rule.applies_to(r.type):
            for message in rule.check(r.type, r.props, config):
                yield Finding(rule.name, message, severity, urn=r.urn)


def run(
    rule: Rule, resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY
) -> Iterator[tuple[str | None, str]]:
    """(urn, message) for every violation of one rule: a read-only view of `findings`."""
    for f in findings(rule, resources, config):
        yield f.urn, f.message


def _clusters_named(resources: Sequence[Resource]) -> dict[str, str]:
    """urn -> the cluster a stack rule's finding on it names, in a program of several clusters:
    the label of the cluster its provider reaches, where the resource's own name does not start
    with it (a library program's objects are named as the program likes, so "research/h100" does
    not say which cluster's queue refused it; the fleet stack's "<worker>/..." names do)."""
    parts = by_cluster(resources)
    if len([label for label in parts if label]) < 2:
        return {}
    return {r.urn: label for label, mine in parts.items() if label for r in mine
            if not r.name.startswith(f"{label}/")}
