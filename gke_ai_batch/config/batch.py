"""The batch layer's keys: kueue, jobset, flavors, clusterQueues, teams, priorities."""

from __future__ import annotations

from typing import Any, Iterator, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gke_ai_batch.domain import kueue_releases

from gke_ai_batch.domain import quantity
from gke_ai_batch.domain import versions
from gke_ai_batch.config.base import (
    LABEL_VALUE_RULE,
    GroupEmail,
    PinnedImage,
    QUALIFIED_NAME_RULE,
    Duration,
    K8sName,
    Labels,
    Model,
    Quantity,
    QueueName,
    RuleError,
    is_label_value,
    is_qualified_name,
    raise_all,
)

# kubectl v1.36.2 by digest. Not looked up here (no registry access); the same tag@digest is
# pinned in several unrelated public repositories, among them miracum/vfps's Dockerfile
# (stress-test stage), and a wrong digest fails closed (the image does not pull). v1.36 is
# within kubectl's one-minor skew of the 1.35 to 1.37 control planes GKE's channels offer
# (gke_ai_batch/domain/versions.py); the probe only POSTs with dryRun, which older servers take alike.
PROBE_IMAGE = (
    "registry.k8s.io/kubectl:v1.36.2@sha256:b0d792e0d8dfb9bb1b922b78b23137e2a34bb6f9667640353a9d2aadd1fd7761"
)

# Kueue's integration framework names (Configuration v1beta2, integrations.frameworks), each
# with the first release that has it (gke_ai_batch/domain/kueue_releases.py).
KUEUE_FRAMEWORKS = tuple(kueue_releases.INTEGRATIONS)


def check_chart_version(value: str, what: str) -> str:
    """Chart versions are pinned to an exact release: 0.19.2, not ^0.19 or v0.19.2."""
    if not versions.CHART_VERSION_RX.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a pinned {what} chart version; write an exact release such as "
            "0.19.2 (no 'v', no ranges, no leading zeros)"
        )
    return value


def installed_problems(section: Model, what: str, install_only: tuple[str, ...]) -> Iterator[RuleError]:
    """`installed` says another party installed the release: a version to install beside it, or
    a key that only acts on this program's install (the webhook probe runs after it), would be
    silently ignored, so it is refused."""
    if getattr(section, "installed", None) is None:
        return
    for key in ("version", *install_only):
        if key in section.model_fields_set:
            camel = to_camel(key)
            yield RuleError(
                camel,
                f"{what} is installed already (installed: {section.installed}), so nothing installs it; remove {camel}",
            )


class FairSharing(Model):
    preemption_strategies: list[Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]] = [
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    ]


class WaitForPodsReady(Model):
    timeout: Duration = "30m"
    """How long an admitted workload may take to get all pods ready before Kueue evicts it."""
    block_admission: bool = False
    recovery_timeout: Duration | None = None


class KueueConfig(Model):
    version: str = versions.KUEUE_CHART_VERSION
    """Chart version of oci://registry.k8s.io/kueue/charts/kueue (0.15.0 or later)."""
    integrations: list[Literal[KUEUE_FRAMEWORKS]] = ["batch/job", "jobset.x-k8s.io/jobset"]  # type: ignore[valid-type]
    """Every listed framework gets Kueue's fail-closed webhook; list only what you run."""
    fair_sharing: FairSharing | bool | None = None
    """true (or an object) turns on fair sharing between cluster queues of a cohort; needs a
    cohort of two or more cluster queues, or it does nothing (refused)."""
    wait_for_pods_ready: WaitForPodsReady | Literal[False] = WaitForPodsReady()
    """On by default since Kueue 0.19 (30m); false turns it off."""
    manage_jobs_without_queue_name: bool | None = None
    """Kueue also manages Jobs and JobSets that name no queue (outside the system namespaces of
    `managedJobsNamespaceSelector`): without it, anyone who may create a Job in a team namespace
    runs it outside every quota by leaving out the queue-name label. Such a Job then waits,
    suspended, until it names a queue. Unset: true on a cluster the stack creates; false, Kueue's
    own default, on an existing cluster (`cluster.existing`), whose other tenants' Jobs without a
    queue name it would otherwise suspend (StackConfig.manages_unqueued_jobs)."""
    webhook_gate: bool = True
    """Wait, after install, until Kueue's webhooks answer a server-side dry run (kueue#13036)."""
    probe_image: PinnedImage = PROBE_IMAGE
    """Image of the webhook probe (kubectl, no shell needed): a digest (image@sha256:...) is
    preferred and required by the policy pack in production; :latest and untagged are refused."""
    resource_metrics: bool | None = None
    """Kueue exports each cluster queue's quota and usage per flavor and resource
    (kueue_cluster_queue_nominal_quota, kueue_cluster_queue_resource_usage; the Configuration's
    metrics.enableClusterQueueResources). Default: on when gke-ai-batch:metrics collects Kueue's
    metrics, else off."""
    provisioning_admission_check: K8sName = "dws-prov"
    """Name of the AdmissionCheck for queued-provisioning flavors."""
    provisioning_request_config: K8sName = "dws-config"

    @field_validator("fair_sharing")
    @classmethod
    def _fair_sharing_bool(cls, v: Any) -> FairSharing | None:
        if v is True:
            return FairSharing()
        return None if v is False else v

    installed: str | None = None
    """Kueue runs on the cluster already (an existing cluster's), at this release (e.g. 0.19.2):
    nothing installs it or probes its webhooks, its objects are still created, and the other
    keys state how it is configured, for the checks to read (0.15.0 or later; with
    cluster.existing only; not with version)."""

    @field_validator("version", "installed")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        if v is None:
            return v
        check_chart_version(v, "Kueue")
        if kueue_releases.release(v) < kueue_releases.MIN_RELEASE:
            raise ValueError(
                f"Kueue {v} is too old: the project emits kueue.x-k8s.io/v1beta2, served from "
                f"{kueue_releases.text(kueue_releases.MIN_RELEASE)} on"
            )
        return v

    @model_validator(mode="after")
    def _installed(self):
        raise_all(installed_problems(self, "Kueue", ("webhook_gate", "probe_image")))
        return self

    @property
    def release(self) -> str:
        """The Kueue release the cluster runs: the one installed already, else the one installed here."""
        return self.installed or self.version

    @field_validator("integrations")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("frameworks are listed more than once")
        return v


class JobSetConfig(Model):
    version: str = versions.JOBSET_CHART_VERSION
    """Chart version of oci://registry.k8s.io/jobset/charts/jobset."""

    installed: str | None = None
    """JobSet runs on the cluster already (an existing cluster's), at this release (e.g. 0.12.0):
    nothing installs it (with cluster.existing only; not with version)."""

    @field_validator("version", "installed")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        return v if v is None else check_chart_version(v, "JobSet")

    @model_validator(mode="after")
    def _installed(self):
        raise_all(installed_problems(self, "JobSet", ()))
        return self


class Toleration(Model):
    key: str | None = None
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        # Toleration key: qualified name; value: label value (core/v1 validateTolerations, which
        # Kueue's ResourceFlavor webhook applies to spec.tolerations).
        if self.key and not is_qualified_name(self.key):
            yield RuleError("key", f"toleration key {self.key!r} is not a valid qualified name: {QUALIFIED_NAME_RULE}")
        if self.value and not is_label_value(self.value):
            yield RuleError("value", f"toleration value {self.value!r} is not valid: {LABEL_VALUE_RULE}")
        elif self.operator == "Exists" and self.value:
            yield RuleError("value", "operator Exists takes no value")
        if not self.key and self.operator != "Exists":
            yield RuleError("operator", "a toleration without a key must use operator Exists")


class FlavorConfig(Model):
    name: K8sName
    """ResourceFlavor name that cluster queues refer to."""
    pools: list[str] = []
    """Node pool entries whose nodes this flavor stands for; labels, tolerations and default
    quotas derive from them."""
    node_labels: Labels | None = None
    """Explicit labels (Autopilot, or a subset of the pools' labels)."""
    tolerations: list[Toleration] | None = None
    queued_provisioning: bool = False
    """For flavors without pools (Autopilot or auto-provisioned nodes): admit through the
    ProvisioningRequest admission check, as queued pools do."""
    compute_class: K8sName | None = None
    """A custom ComputeClass of the stack (computeClasses): the flavor stands for the nodes GKE
    creates for it, in the class's priority order (no pools, no nodeLabels)."""
    topology_name: K8sName | None = None
    """A topology of gke-ai-batch:topologies: Kueue places the flavor's pods by its levels (TAS)."""

    @field_validator("pools")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("pools are listed more than once")
        return v


class QuotaLimits(Model):
    nominal: Quantity
    borrowing_limit: Quantity | None = None
    """How much more than nominal this queue may borrow from its cohort."""
    lending_limit: Quantity | None = None
    """How much of nominal the cohort may borrow."""


class QueueFlavor(Model):
    name: str
    """A flavor of the stack (declared or derived)."""
    quotas: dict[str, Quantity | QuotaLimits] = {}
    """Per resource (google.com/tpu, nvidia.com/gpu, cpu, memory, ...): a quantity or
    {nominal, borrowingLimit, lendingLimit}. Accelerators default to what the flavor's pools
    provide."""

    @field_validator("quotas")
    @classmethod
    def _resource_names(cls, v: dict) -> dict:
        # Resource names become coveredResources, which Kueue's webhook requires to be
        # qualified names (v0.19.2 pkg/webhooks/common.go validateResourceName: IsLabelKey).
        raise_all(
            RuleError(name, f"resource name {name!r} is not a valid qualified name: {QUALIFIED_NAME_RULE}")
            for name in v
            if not is_qualified_name(name)
        )
        return v


class BorrowWithinCohort(Model):
    policy: Literal["Never", "LowerPriority"] = "Never"
    max_priority_threshold: int | None = None


class Preemption(Model):
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    borrow_within_cohort: BorrowWithinCohort | None = None

    @model_validator(mode="after")
    def _borrow(self):
        bwc = self.borrow_within_cohort
        if bwc and bwc.policy != "Never" and self.reclaim_within_cohort == "Never":
            raise RuleError(
                ("borrowWithinCohort", "policy"),
                "borrowWithinCohort needs reclaimWithinCohort other than Never (Kueue rejects it)",
            )
        return self


class LabelSelectorRequirement(Model):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = []

    @model_validator(mode="after")
    def _values(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        # metav1 ValidateLabelSelectorRequirement: key a qualified name, values label values
        # (Kueue's ClusterQueue webhook runs it on spec.namespaceSelector).
        if not is_qualified_name(self.key):
            yield RuleError("key", f"selector key {self.key!r} is not a valid qualified name: {QUALIFIED_NAME_RULE}")
        if self.operator in ("In", "NotIn") and not self.values:
            yield RuleError("values", f"operator {self.operator} needs values")
        elif self.operator in ("Exists", "DoesNotExist") and self.values:
            yield RuleError("values", f"operator {self.operator} takes no values")
        else:  # values that must go are not also checked one by one
            for i, value in enumerate(self.values):
                if not is_label_value(value):
                    yield RuleError(("values", i), f"selector value {value!r} is not valid: {LABEL_VALUE_RULE}")


class LabelSelector(Model):
    match_labels: Labels = {}
    match_expressions: list[LabelSelectorRequirement] = []


class ClusterQueueConfig(Model):
    name: K8sName
    cohort: K8sName | None = None
    """Queues of one cohort borrow each other's unused quota (spec.cohortName)."""
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    namespace_selector: LabelSelector | None = None
    """Defaults to the namespaces of the teams that use this queue; {} admits every namespace."""
    flavors: list[QueueFlavor | K8sName] = []
    """In order of preference; a bare name takes the flavor's derived quotas. Empty: every
    flavor of the stack."""
    preemption: Preemption | None = None
    """Kueue's preemption policy, as in ClusterQueue spec.preemption."""
    fair_sharing_weight: Quantity | None = None
    """spec.fairSharing.weight, used when kueue.fairSharing is on."""
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] | None = None

    @field_validator("fair_sharing_weight")
    @classmethod
    def _weight(cls, v):
        # Kueue v0.19.2 pkg/webhooks/common.go validateFairSharing: "When not 0, weight must be
        # > 10e-9" (a smaller weight collapses to 0 in its arithmetic).
        if v is not None and 0 < (quantity.value(v) or 0) <= 1e-9:
            raise ValueError(f"fairSharingWeight {v!r} is too small: Kueue wants 0 or more than 1n (10e-9)")
        return v

    @field_validator("flavors")
    @classmethod
    def _shorthand(cls, v: list) -> list[QueueFlavor]:
        # "- tpu-v6e-slice-4x4" is short for "- name: tpu-v6e-slice-4x4".
        return [QueueFlavor.model_validate({"name": f}) if isinstance(f, str) else f for f in v]

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        names = [f.name for f in self.flavors]
        for i, name in enumerate(names):
            if name in names[:i]:
                yield RuleError(("flavors", i, "name"), f"flavor {name!r} is listed twice")
        if self.cohort is None:
            for i, flavor in enumerate(self.flavors):
                for res, q in flavor.quotas.items():
                    if isinstance(q, QuotaLimits) and (q.borrowing_limit is not None or q.lending_limit is not None):
                        yield RuleError(
                            ("flavors", i, "quotas", res),
                            "borrowingLimit and lendingLimit need a cohort to borrow from or lend to",
                        )


class TeamConfig(Model):
    namespace: K8sName
    """Created unless it is default; kube-*, gke-* and gmp-* namespaces belong to Kubernetes and GKE."""
    local_queue: QueueName
    """LocalQueue in that namespace; workloads name it in kueue.x-k8s.io/queue-name."""
    cluster_queue: K8sName
    labels: Labels = {}
    """Extra labels on the Namespace."""
    group: GroupEmail | None = None
    """Google Group of the team (e.g. ml-research@acme.com): bound in the namespace to a Role
    that creates Jobs and JobSets and reads pods, logs and its queue, but creates no Pods and
    writes no quota. Needs cluster.securityGroup."""
    pod_security: Literal["restricted", "baseline", "privileged"] = "baseline"
    """The namespace's Pod Security Standards level (label pod-security.kubernetes.io/enforce).
    restricted: the program hardens its sample pods to match, and their images must run as a
    non-root user. privileged: for multi-host TPU pods on Standard, which use the host network;
    warn and audit stay at baseline. Teams sharing a namespace must agree."""
    network_policy: bool = True
    """A NetworkPolicy that denies ingress to the namespace's pods except from pods of the same
    namespace (needs network policy enforcement: GKE Dataplane V2). Teams sharing a namespace
    must agree."""


class PriorityConfig(Model):
    name: K8sName
    """Becomes a PriorityClass and a Kueue WorkloadPriorityClass of the same name and value; not
    starting with system- (reserved by Kubernetes)."""
    value: int = Field(ge=-2_147_483_648, le=1_000_000_000)
    """PriorityClass value; above 1,000,000,000 is reserved for system classes."""
    description: str = ""

    @field_validator("name")
    @classmethod
    def _not_system(cls, v: str) -> str:
        # "a PriorityClass name ... cannot be prefixed with system-": reserved for the built-in
        # system-cluster-critical and system-node-critical classes
        # (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/#priorityclass).
        if v.startswith("system-"):
            raise ValueError(f"{v!r}: PriorityClass names starting with 'system-' are reserved by Kubernetes")
        return v

    @field_validator("description")
    @classmethod
    def _len(cls, v: str) -> str:
        if len(v) > 2048:
            raise ValueError("at most 2048 characters (WorkloadPriorityClass limit)")
        return v
