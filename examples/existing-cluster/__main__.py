"""Two v6e slices, an H100 pool through the Dynamic Workload Scheduler, Kueue, one ClusterQueue
and one team on a GKE cluster this program does not create (docs/library.md). Offline:
python -m synth --program examples/existing-cluster --config examples/existing-cluster/Pulumi.dev.yaml"""

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.apiextensions import CustomResource

from gke_ai_batch.components.nodepools import GpuPool, TpuSlices
from gke_ai_batch.config.batch import KueueConfig
from gke_ai_batch.domain import cli
from gke_ai_batch.model.objects import NAMESPACE_NAME_LABEL
from gke_ai_batch.plan.kueue import KUEUE_API, KUEUE_CHART, KUEUE_NAMESPACE, PROVISIONING_CLASS, PROVISIONING_CONTROLLER
from gke_ai_batch.plan.kueue import local_queue_manifest, pod_security_labels, quota_quantity

cli.parser("__main__.py", __doc__).parse_known_args()  # --help; under Pulumi the program has no arguments
config = pulumi.Config()
cluster, team = config.require_object("cluster"), config.require("team")
tpu = TpuSlices("v6e", {"cluster": cluster, "version": "v6e", "topology": "4x4", "slices": 2, "capacity": "spot",
                        "zones": ["us-east5-b"]})
gpu = GpuPool("h100-dws", {"cluster": cluster, "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "max_nodes": 4,
                           "machine_type": "a3-highgpu-8g", "capacity": "queued", "zones": ["us-east5-a"]})

on_cluster = pulumi.ResourceOptions(provider=k8s.Provider("ml-shared", context=config.require("kubeContext")))
kueue = k8s.helm.v3.Release("kueue", name="kueue", chart=KUEUE_CHART, version=KueueConfig().version,
                            namespace=KUEUE_NAMESPACE, create_namespace=True, opts=on_cluster)
after_kueue = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[kueue]))


def kueue_object(manifest, after=()):
    meta = manifest["metadata"]
    return CustomResource("/".join(filter(None, [meta.get("namespace"), meta["name"]])), api_version=KUEUE_API,
                          kind=manifest["kind"], metadata=meta, spec=manifest["spec"],
                          opts=pulumi.ResourceOptions.merge(after_kueue, pulumi.ResourceOptions(depends_on=list(after))))


flavors = [tpu.flavor, gpu.flavor]
covered = list(dict.fromkeys(r for f in flavors for r in f.capacity))
for f in flavors:
    kueue_object(f.manifest())
check = {"name": "dws", "kind": "ProvisioningRequestConfig", "apiGroup": KUEUE_API.split("/")[0]}
kueue_object({"kind": check["kind"], "metadata": {"name": "dws"},
              "spec": {"provisioningClassName": PROVISIONING_CLASS, "managedResources": [gpu.flavor.accelerator_resource]}})
kueue_object({"kind": "AdmissionCheck", "metadata": {"name": "dws"},
              "spec": {"controllerName": PROVISIONING_CONTROLLER, "parameters": check}})
kueue_object({"kind": "ClusterQueue", "metadata": {"name": team}, "spec": {
    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: team}},
    "admissionChecksStrategy": {"admissionChecks": [{"name": "dws", "onFlavors": [gpu.flavor.name]}]},
    "resourceGroups": [{"coveredResources": covered, "flavors": [
        {"name": f.name, "resources": [{"name": r, "nominalQuota": quota_quantity(r, f.capacity.get(r, 0))} for r in covered]}
        for f in flavors]}]}})
# Multi-host TPU pods use the host network, which only the privileged Pod Security level admits.
namespace = k8s.core.v1.Namespace(team, metadata={"name": team, "labels": pod_security_labels("privileged", "latest")},
                                  opts=on_cluster)
kueue_object(local_queue_manifest(team, team, team), after=[namespace])
pulumi.export("nodePools", pulumi.Output.all(tpu.pool_names, gpu.pool_names))
pulumi.export("flavors", [f.name for f in flavors])
