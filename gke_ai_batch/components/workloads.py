"""Sample workloads: a JobSet, a Job (with its headless Service on multi-host TPU), or the
ProvisioningRequest path without Kueue. Each waits for both installs, its namespace, its
LocalQueue and its priority classes."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.plan import WorkloadPlan


class SampleWorkload(pulumi.ComponentResource):
    def __init__(
        self,
        resource_name: str,
        workload: WorkloadPlan,
        provider: k8s.Provider,
        depends_on: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
    ):
        super().__init__("gke-ai-batch:workloads:Workload", resource_name, None, opts)
        previous: list[pulumi.Resource] = []
        self.objects: list[pulumi.Resource] = []
        for manifest in workload.manifests:
            obj = k8s_objects.apply(
                manifest,
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[*depends_on, *previous]),
                scope=scope,
            )
            self.objects.append(obj)
            previous = [obj]
        self.register_outputs({"kind": workload.kind, "namespace": workload.namespace, "queue": workload.queue})
