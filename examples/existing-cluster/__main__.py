"""Two v6e slices, an H100 pool through the Dynamic Workload Scheduler, Kueue, one ClusterQueue,
one team and a sample JobSet on a GKE cluster this program does not create (docs/library.md).
Offline: python -m synth --program examples/existing-cluster --config examples/existing-cluster/Pulumi.dev.yaml"""

from gke_ai_batch.domain import cli

# --help, answered before the components and the cloud SDKs load (~1 s); under Pulumi the program has no arguments.
cli.parser("__main__.py", __doc__).parse_known_args()

import pulumi  # noqa: E402
import pulumi_kubernetes as k8s  # noqa: E402

from gke_ai_batch.components.batch import JobSetInstall, KueueInstall  # noqa: E402
from gke_ai_batch.components.nodepools import GpuPool, TpuSlices  # noqa: E402
from gke_ai_batch.components.queues import ClusterQueue, ProvisioningCheck, ResourceFlavor, Team  # noqa: E402
config = pulumi.Config()
cluster, team = config.require_object("cluster"), config.require("team")
tpu = TpuSlices("v6e", {"cluster": cluster, "version": "v6e", "topology": "4x4", "slices": 2, "capacity": "spot",
                        "zones": ["us-east5-b"]})
gpu = GpuPool("h100-dws", {"cluster": cluster, "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "max_nodes": 4,
                           "machine_type": "a3-highgpu-8g", "capacity": "queued", "zones": ["us-east5-a"]})

on_cluster = pulumi.ResourceOptions(provider=k8s.Provider("ml-shared", context=config.require("kubeContext")))
jobset = JobSetInstall("jobset", {}, opts=on_cluster)
kueue = KueueInstall("kueue", {}, opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[jobset])))
after_kueue = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[kueue]))
flavors = [ResourceFlavor(f["name"], f, opts=after_kueue) for f in (tpu.flavor, gpu.flavor)]
dws = ProvisioningCheck("dws", {"flavors": [gpu.flavor], "admission_check": "dws", "request_config": "dws"}, opts=after_kueue)
queue = ClusterQueue(team, {"flavors": [tpu.flavor, gpu.flavor], "provisioning_check": "dws",
                            "namespace_selector": {"match_labels": {"kubernetes.io/metadata.name": team}}},
                     opts=pulumi.ResourceOptions.merge(after_kueue, pulumi.ResourceOptions(depends_on=[*flavors, dws])))
# Multi-host TPU pods use the host network, which only the privileged Pod Security level admits.
members = Team(team, {"namespace": team, "local_queues": [{"name": team, "cluster_queue": team}], "pod_security": "privileged"},
               opts=pulumi.ResourceOptions.merge(after_kueue, pulumi.ResourceOptions(depends_on=[queue])))

# A sample: one 4x4 slice's four hosts, four chips each, admitted by the team's queue.
tpu_node = {k: v for k, v in tpu.flavor.get("node_labels", {}).items() if k.startswith("cloud.google.com/gke-tpu")}
pod = {"nodeSelector": tpu_node, "restartPolicy": "Never", "containers": [{
    "name": "train", "image": "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:jax0.8.1-rev1", "command": ["python3", "train.py"],
    "resources": {"requests": {"google.com/tpu": "4"}, "limits": {"google.com/tpu": "4"}}}]}
k8s.apiextensions.CustomResource(f"{team}/train-v6e", api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet",
    metadata={"name": "train-v6e", "namespace": team, "labels": {"kueue.x-k8s.io/queue-name": team}},
    spec={"replicatedJobs": [{"name": "slice", "replicas": 1, "template": {"spec": {
        "parallelism": 4, "completions": 4, "backoffLimit": 0, "template": {"spec": pod}}}}]},
    opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[members, kueue, jobset])))
pulumi.export("nodePools", pulumi.Output.all(tpu.pool_names, gpu.pool_names))
pulumi.export("flavors", [f["name"] for f in (tpu.flavor, gpu.flavor)])
