"""The admission and placement model: can a workload ever run on this stack, and where.

Pure functions over the Kubernetes objects the program emits and the node pools GKE builds,
following Kueue v0.19's flavor assigner and kube-scheduler's filters (each module cites the
upstream code it follows). One entry for every judge (gke_ai_batch/model/recorded.py):
resources as a program registers them in, verdicts and problems out. A verdict is a frozen value:
a mode ordered as Kueue's FlavorAssignmentMode and its reasons as Findings (outcome.py). The stack program refuses
a stack whose sample workloads or queues could never run by feeding it its plan's objects
(gke_ai_batch/plan/admission.py); synth's report shows each verdict; the policy pack's
kueue-admissible runs it over recorded resources.

Standard library only, so that the CrossGuard pack can import it."""

from gke_ai_batch.model.assigner import Assignment, available, potential_available
from gke_ai_batch.model.model import QueueLimit, Verdict, demand, judge, queue_limits, queue_problems, simulate, workload_keys
from gke_ai_batch.model.objects import ClusterQueue, Flavor, NodeGroup, PodSet, Quota, Workload, World, workload_from_manifests
from gke_ai_batch.model.outcome import WAIT, Mode

__all__ = [
    "WAIT", "Assignment", "ClusterQueue", "Flavor", "Mode", "NodeGroup", "PodSet", "QueueLimit", "Quota", "Verdict", "Workload",
    "World", "available", "demand", "judge", "potential_available", "queue_limits", "queue_problems", "simulate",
    "workload_from_manifests", "workload_keys",
]
