"""`gke-ai-batch:workloads`: sample workloads, off unless listed.

Each targets either a node pool entry (Standard: shape, capacity and placement derive from
it) or a bare accelerator shape (Autopilot, where GKE makes the nodes)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Iterator, Literal, Union

from pydantic import Field, model_validator

from gke_ai_batch.domain import quantity
from gke_ai_batch.config.base import CLUSTER_NODES_MAX, SEVEN_DAYS, K8sName, Labels, Model, PinnedImage, Quantity, QueueName, RuleError, raise_all
from gke_ai_batch.config.checkpoints import CheckpointMount
from gke_ai_batch.config.pools import GpuSpec, TpuSpec
from gke_ai_batch.config.topology import WorkloadTopology


# Bounds checked with the field, so that nothing is sized from a huge number: Kubernetes caps an
# indexed Job's parallelism at 100,000 (maxParallelismForIndexedJob, and completionsSoftLimit
# for its completions, in k8s.io/kubernetes pkg/apis/batch/validation/validation.go); synth
# holds every Job to that, and counts to int32 like the API's fields.
JOB_PODS_MAX = 100_000
INT32_MAX = 2**31 - 1

class FailurePolicy(Model):
    max_restarts: int = Field(0, ge=0, le=INT32_MAX)
    restart_strategy: Literal["Recreate", "BlockingRecreate"] = "Recreate"


class WorkloadBase(Model):
    name: K8sName
    team: K8sName
    """The team's namespace; the workload joins the team's LocalQueue."""
    local_queue: QueueName | None = None
    """Only when the team has more than one LocalQueue."""
    pool: str | None = None
    """Node pool entry to run on (Standard)."""
    tpu: TpuSpec | None = None
    """TPU shape to run on (Autopilot)."""
    gpu: GpuSpec | None = None
    """GPU type and count per pod (Autopilot)."""
    image: PinnedImage
    """Container image with a version tag or a digest; untagged and :latest are refused (they
    move under a running job)."""
    container_name: K8sName | None = None
    """Defaults to the workload's name."""
    command: list[str] = []
    args: list[str] = []
    priority: K8sName | None = None
    """A priority of the stack: label kueue.x-k8s.io/priority-class and the pods' priorityClassName."""
    resources: dict[str, Quantity] = {}
    """Requests (= limits), e.g. cpu, memory, ephemeral-storage; the accelerator (google.com/tpu,
    nvidia.com/gpu) defaults to what one node of the target offers."""
    ports: list[int] = []
    privileged: bool = False
    """Needed only for TPUs on GKE before 1.28; the policy pack allows it on Standard TPU pools only."""
    labels: Labels = {}
    checkpoints: CheckpointMount | None = None
    """Mount the team's checkpoint bucket (gke-ai-batch:checkpoints) at mountPath; the pods run as the team's service account."""
    topology: WorkloadTopology | None = None
    """{required: LABEL} or {preferred: LABEL}: one domain of that level of the flavor's topology for all the pods (TAS);
    slice: {level: LABEL, size: N}: each N pods in one domain of that level."""

    # Keys that no longer exist, with why: the unknown-key error says this instead of a guess.
    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        # Kubernetes' TTL-after-finished controller deletes the finished Job
        # (kubernetes.io/docs/concepts/workloads/controllers/ttlafterfinished). Pulumi still
        # has it in its state: the next refresh drops it and the next `pulumi up` creates it
        # again, so the sample runs again on every deploy (the same lifecycle problem as
        # hashicorp/terraform-provider-kubernetes#2531).
        "ttlSecondsAfterFinished": (
            "Pulumi manages these workloads, and a Job that deletes itself after finishing is "
            "created again by the next `pulumi up` after a refresh, so it runs again on every "
            "deploy. Remove the key: a finished Job stays (its pods hold no accelerators); to "
            "run it again, rename the workload or `pulumi up --replace` its URN; to remove it, "
            "delete the workload from the stack"
        ),
    }

    @model_validator(mode="after")
    def _target(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        given = [k for k in ("pool", "tpu", "gpu") if getattr(self, k) is not None]
        if len(given) > 1:
            yield RuleError(given[1], f"give one of pool, tpu or gpu, not {' and '.join(given)}")
        for i, port in enumerate(self.ports):
            if not 1 <= port <= 65535:
                yield RuleError(("ports", i), f"{port} is not a port number")
        for name, amount in self.resources.items():
            if quantity.is_extended_resource(name) and not quantity.is_whole(amount):
                yield RuleError(
                    ("resources", name),
                    f"{name} is an extended resource, counted in whole units: the API server refuses "
                    f"{amount!r} (requests and limits of extended resources must be integers)",
                )


class JobSetWorkload(WorkloadBase):
    """A JobSet with one replicated job per TPU slice (multislice)."""

    kind: Literal["jobset"]
    slices: int = Field(1, ge=1, le=CLUSTER_NODES_MAX)
    """Replicas of the slice job: one per TPU slice."""
    failure_policy: FailurePolicy = FailurePolicy()
    exclusive_placement: bool = True
    """One slice job per node pool (annotation alpha.jobset.sigs.k8s.io/exclusive-topology)."""


class JobWorkload(WorkloadBase):
    """A Job in the team's queue; multi-host TPU Jobs get an indexed Job and a headless Service."""

    kind: Literal["job"]
    parallelism: int | None = Field(None, ge=1, le=JOB_PODS_MAX)
    """Defaults to the VMs of a TPU slice, else 1."""
    completions: int | None = Field(None, ge=1, le=JOB_PODS_MAX)
    indexed: bool | None = None
    """Defaults to true for multi-host TPU slices."""
    backoff_limit: int | None = Field(None, ge=0, le=INT32_MAX)
    restart_policy: Literal["Never", "OnFailure"] = "Never"
    max_run_duration_seconds: int | None = Field(None, ge=1, le=SEVEN_DAYS)
    """Queued capacity only: passed to the ProvisioningRequest Kueue creates."""


class ProvisioningRequestWorkload(WorkloadBase):
    """Seed 003's path without Kueue: a PodTemplate, a ProvisioningRequest for it, and a Job
    whose pods consume the provisioned nodes."""

    kind: Literal["provisioningRequest"]
    count: int = Field(1, ge=1, le=CLUSTER_NODES_MAX)
    """Pods (and so nodes' worth of capacity) to provision at once."""
    max_run_duration_seconds: int | None = Field(None, ge=1, le=SEVEN_DAYS)


Workload = Annotated[
    Union[JobSetWorkload, JobWorkload, ProvisioningRequestWorkload], Field(discriminator="kind")
]
WORKLOAD_KINDS = ("jobset", "job", "provisioningRequest")
