"""Red team of the long-run features used together (issue 23's maintenance, topology-aware
scheduling, ComputeClasses, reservations, metrics and checkpoints), from a stack file and
through the library's components: what GKE, Kueue or the API server would refuse is refused
first at its key path, and nothing crashes."""

from __future__ import annotations

import copy

import pytest

from conftest import base_config, by_name
from test_maintenance import refused, rendered

from gke_ai_batch.config.errors import ArgsError

CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
L4 = {"gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8"}
H100 = {"gpu": {"type": "nvidia-h100-mega-80gb", "count": 8}, "machineType": "a3-megagpu-8g"}
P = "gke-ai-batch:computeClasses[0].priorities[0]"


def class_config(*priorities: dict, location: str = "us-central1-a") -> dict:
    c = base_config(
        computeClasses=[{"name": "fallback", "priorities": copy.deepcopy(list(priorities))}],
        flavors=[{"name": "fallback", "computeClass": "fallback"}],
        clusterQueues=[{"name": "cq", "flavors": [{"name": "fallback", "quotas": {"cpu": 1000, "memory": "8000Gi", "nvidia.com/gpu": 64, "google.com/tpu": 64}}]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
    )
    c["gke-ai-batch:cluster"].update(minMasterVersion="1.34", nodeLocations=[location])
    return c


# -- a ComputeClass that falls back to a reservation ----------------------------------------------

def test_a_class_priority_on_a_reservation_sub_block_renders_the_crds_sub_block(tmp_path):
    # Was a TypeError inside the plan (exit 70): its reservation pattern knew no sub-blocks.
    result = rendered(tmp_path, class_config(
        {**H100, "capacity": "reservation", "reservation": "projects/acme-capacity/reservations/r/reservationBlocks/b/reservationSubBlocks/s",
         "localSSDCount": 16},  # an A3 Mega's attached Local SSDs, which a reservation's VMs have too
        location="us-central1-c",
    ))
    spec = by_name(result, CLASS_TYPE, "fallback")["inputs"]["spec"]
    assert spec["priorities"][0]["storage"] == {"localSSDCount": 16}
    assert spec["priorities"][0]["reservations"] == {
        "affinity": "Specific",
        "specific": [{"name": "r", "project": "acme-capacity",
                      "reservationBlock": {"name": "b", "reservationSubBlock": {"name": "s"}}}],
    }


# (id, priority, key path, words): a node pool with the same reservation is refused alike
# (gke_ai_batch/config/reservations.py).
CLASS_RESERVATION_REFUSALS = [
    ("a block of a GPU whose reservations have none", {**L4, "capacity": "reservation", "reservation": "r/reservationBlocks/b"},
     f"{P}.reservation", "nvidia-l4 reservations have no blocks to target"),
    ("a block of a TPU whose reservations have none",
     {"tpu": {"version": "v5e", "topology": "2x4"}, "capacity": "reservation", "reservation": "r/reservationBlocks/b"},
     f"{P}.reservation", "TPU v5e reservations have no blocks to target"),
    ("a CPU reservation's block", {"machineType": "n2-standard-8", "capacity": "reservation", "reservation": "r/reservationBlocks/b"},
     f"{P}.reservation", "reservations have no blocks to target"),
    ("a sub-block smaller than the slice",
     {"tpu": {"version": "tpu7x", "topology": "4x4x8"}, "capacity": "reservation", "reservation": "r/reservationBlocks/b/reservationSubBlocks/s"},
     f"{P}.reservation", "a tpu7x sub-block holds 16"),
]


@pytest.mark.parametrize("priority, path, words", [r[1:] for r in CLASS_RESERVATION_REFUSALS],
                         ids=[r[0] for r in CLASS_RESERVATION_REFUSALS])
def test_a_class_priority_cannot_consume_a_reservation_part_a_pool_could_not(tmp_path, priority, path, words):
    location = "us-central1-c" if "tpu7x" in str(priority) else "us-central1-a"
    refused(tmp_path, class_config(priority, location=location), path, words)


def test_a_block_of_an_accelerator_with_blocks_renders(tmp_path):
    rendered(tmp_path, class_config({**H100, "capacity": "reservation", "reservation": "r/reservationBlocks/b", "localSSDCount": 16},
                                    location="us-central1-c"))


def test_the_component_refuses_a_reservation_block_as_a_stack_does():
    from gke_ai_batch.components.computeclasses import ComputeClasses

    l4 = {"gpu": {"type": "nvidia-l4", "count": 1}, "machine_type": "g2-standard-8"}
    with pytest.raises(ArgsError) as caught:
        ComputeClasses("cc", {"classes": [{"name": "x", "priorities": [
            {**l4, "capacity": "reservation", "reservation": "r/reservationBlocks/b"}]}]})
    assert str(caught.value).startswith(
        "ComputeClasses cc: args.classes[0].priorities[0].reservation: nvidia-l4 reservations have no blocks to target"
    ), str(caught.value)


# -- a checkpoint mount ---------------------------------------------------------------------------

def mount_config(mount_path: str) -> dict:
    c = base_config(
        nodePools=[{"name": "l4", **L4, "maxNodes": 2}],
        flavors=[{"name": "l4", "pools": ["l4"]}],
        clusterQueues=[{"name": "cq", "flavors": ["l4"]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        checkpoints={"projectNumber": "123456789012"},
        workloads=[{"kind": "job", "name": "train", "team": "team-a", "pool": "l4", "image": "python:3.12-slim",
                    "resources": {"cpu": "2", "memory": "8Gi"}, "checkpoints": {"mountPath": mount_path}}],
    )
    c["gke-ai-batch:cluster"].update(minMasterVersion="1.34")
    return c


@pytest.mark.parametrize("mount_path", ["/", "/.", "//", "/./"])
def test_a_mount_path_that_renders_as_the_root_is_refused(tmp_path, mount_path):
    # '/.' and '//' passed the rule against '/' and rendered as '/' and '//'.
    refused(tmp_path, mount_config(mount_path), "gke-ai-batch:workloads[0].checkpoints.mountPath", "is not an absolute path below /")


def test_a_mount_path_renders_normalized(tmp_path):
    result = rendered(tmp_path, mount_config("//ckpt/./run-1/"))
    job = by_name(result, "kubernetes:batch/v1:Job", "team-a/train")["inputs"]
    mounts = job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert {"mountPath": "/ckpt/run-1", "name": "checkpoints"} in mounts


# -- CheckpointBucket through the library -------------------------------------------------------

BUCKET = {"bucket": "acme-team-a-ckpt", "location": "us-central1", "project": "acme-ml",
          "project_number": "123456789012", "namespace": "team-a"}


def bucket_refusal(args: dict) -> str:
    from gke_ai_batch.components.storage import CheckpointBucket

    with pytest.raises(ArgsError) as caught:
        CheckpointBucket("ckpt", {**BUCKET, **args})
    assert [f.rule for f in caught.value.findings] == ["args"] * len(caught.value.findings)
    return str(caught.value)


@pytest.mark.parametrize("args, expected", [
    # Was a TypeError from sorting the arg names.
    ({5: 1}, "CheckpointBucket ckpt: args[5]: unknown arg; known: bucket, delete_after_days, location, namespace"),
    ({"location": "mars-1"}, "CheckpointBucket ckpt: args.location: 'mars-1' is not a region such as us-central1"),
    ({"location": "us-central1-a"}, "CheckpointBucket ckpt: args.location: 'us-central1-a' is not a region"),
    ({"project": "Acme ML"}, "CheckpointBucket ckpt: args.project: 'Acme ML' is not a Google Cloud project id"),
    ({"bucket": 5}, "CheckpointBucket ckpt: args.bucket: must be a string, not int"),
    ({"location": 5}, "CheckpointBucket ckpt: args.location: must be a string, not int"),
])
def test_the_bucket_component_refuses_bad_args_at_their_paths(args, expected):
    assert bucket_refusal(args).startswith(expected)


def test_the_bucket_component_takes_whole_numbers_as_floats():
    # A YAML or TypeScript program's numbers reach the component as floats, as they do every
    # other component (args.whole_numbers).
    from gke_ai_batch.components.storage import _checked

    plan = _checked("ckpt", {**BUCKET, "soft_delete_days": 14.0, "delete_after_days": 90.0})
    assert (plan.soft_delete_days, plan.delete_after_days) == (14, 90)
    assert bucket_refusal({"soft_delete_days": 14.5}).startswith("CheckpointBucket ckpt: args.soft_delete_days: Input should be a valid integer")


# -- Metrics through the library -------------------------------------------------------------

@pytest.mark.parametrize("project, expected", [
    ("Acme ML", "Metrics m: args.project: 'Acme ML' is not a Google Cloud project id"),
    (5, "Metrics m: args.project: must be a string or an Output, not int"),
])
def test_the_metrics_component_refuses_a_project_that_is_not_one(project, expected):
    from gke_ai_batch.components.metrics import Metrics

    with pytest.raises(ArgsError) as caught:
        Metrics("m", {"cluster_name": "ml", "project": project})
    assert str(caught.value).startswith(expected)


# -- topology-aware scheduling on nodes that do not exist yet ---------------------------------------

TAS_LEVELS = ["cloud.google.com/gke-nodepool", "kubernetes.io/hostname"]


def tas_config(pool: dict, *, checkpoints: bool = True, flavors: list | None = None, queue_flavors: list | None = None) -> dict:
    workload = {"kind": "job", "name": "train", "team": "team-a", "pool": pool["name"], "image": "python:3.12-slim",
                "parallelism": 2, "completions": 2, "resources": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": 1},
                "topology": {"required": "kubernetes.io/hostname"}}
    c = base_config(
        nodePools=[pool],
        topologies=[{"name": "t", "levels": TAS_LEVELS}],
        flavors=flavors or [{"name": "tas", "pools": [pool["name"]], "topologyName": "t"}],
        clusterQueues=[{"name": "cq", "flavors": queue_flavors or ["tas"]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        workloads=[workload],
    )
    if checkpoints:
        c["gke-ai-batch:checkpoints"] = {"projectNumber": "123456789012"}
        workload["checkpoints"] = {}
    c["gke-ai-batch:cluster"].update(minMasterVersion="1.34")
    return c


FLEX_L4 = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 2}, "machineType": "g2-standard-24", "maxNodes": 2,
           "capacity": "flexStart", "maxRunDuration": "24h"}
STAYING_L4 = {k: v for k, v in FLEX_L4.items() if k != "maxRunDuration"} | {"capacity": "spot", "minNodes": 1}
NO_NODES = "exist only once a pending pod asks the autoscaler for them, and Kueue's TAS places a pod set only on nodes that exist"


def test_a_topology_request_on_a_flex_start_pool_is_never_admitted(tmp_path):
    # The brief's case: a checkpoint mount, a topology domain and a flex-start pool at once.
    # Kueue's TAS counts only nodes that exist; a flex-start pool has none until a pod is
    # pending, and Kueue creates no pod before it admits the workload.
    refused(tmp_path, tas_config(FLEX_L4), "gke-ai-batch:workloads[0]", f"ResourceFlavor tas's nodes (l4) {NO_NODES}")


def test_a_topology_request_on_a_compute_class_is_never_admitted(tmp_path):
    c = tas_config(STAYING_L4, checkpoints=False,
                   flavors=[{"name": "tas", "computeClass": "fallback", "topologyName": "t"}])
    c["gke-ai-batch:computeClasses"] = [{"name": "fallback", "priorities": [{"gpu": {"type": "nvidia-l4", "count": 2}, "machineType": "g2-standard-24"}]}]
    c["gke-ai-batch:clusterQueues"][0]["flavors"] = [{"name": "tas", "quotas": {"cpu": 100, "memory": "400Gi", "nvidia.com/gpu": 8}}]
    del c["gke-ai-batch:workloads"][0]["pool"]
    refused(tmp_path, c, "gke-ai-batch:workloads[0]", "ResourceFlavor tas's nodes (ComputeClass fallback[0])")


def test_a_topology_request_on_nodes_that_stay_renders(tmp_path):
    rendered(tmp_path, tas_config(STAYING_L4))


def test_a_topology_request_on_nodes_another_flavor_brings_up_waits(tmp_path):
    flavors = [{"name": "tas", "pools": ["l4"], "topologyName": "t"},
               {"name": "plain", "nodeLabels": {"cloud.google.com/gke-nodepool": "l4"}}]
    result = rendered(tmp_path, tas_config(FLEX_L4, flavors=flavors, queue_flavors=["tas"]) | {
        "gke-ai-batch:clusterQueues": [{"name": "cq", "flavors": ["tas"]}, {"name": "other", "flavors": [
        {"name": "plain", "quotas": {"cpu": 48, "memory": "192Gi", "nvidia.com/gpu": 4}}]}]})
    assert any("that other workloads keep up (ResourceFlavor plain)" in w.message for v in result.admission.verdicts for w in v.waits)


def test_an_implied_topology_request_on_a_flex_start_pool_is_never_admitted(tmp_path):
    # No request, but every flavor of the queue has a topology: Kueue reads it as TAS too.
    c = tas_config(FLEX_L4, checkpoints=False)
    del c["gke-ai-batch:workloads"][0]["topology"]
    refused(tmp_path, c, "gke-ai-batch:workloads[0]", f"ResourceFlavor tas's nodes (l4) {NO_NODES}")


def test_a_required_domain_the_fuse_sidecar_overfills_says_who_leaves_it_pending(tmp_path):
    # Two pods of 11.5 CPUs fit one g2-standard-24 (23.37 allocatable); with each pod's 250m
    # sidecar they do not. Kueue sizes the domain without the sidecar and may admit the pod
    # set; kube-scheduler is what leaves a pod pending.
    c = tas_config(STAYING_L4)
    c["gke-ai-batch:workloads"][0]["resources"]["cpu"] = "11.5"
    refused(tmp_path, c, "gke-ai-batch:workloads[0]",
            "holds 1: counting the gke-gcsfuse-sidecar GKE adds to each pod, which Kueue does not see")
    del c["gke-ai-batch:workloads"][0]["checkpoints"]
    rendered(tmp_path, c)


# -- a reservation in another region --------------------------------------------------------------

def test_a_reservation_outside_the_clusters_region_is_refused_at_its_zone(tmp_path):
    # It advised "set zones: [europe-west4-a]", a zone the pool cannot have.
    c = base_config(
        nodePools=[{"name": "v5p", "tpu": {"version": "v5p", "topology": "2x2x2"}, "capacity": "reservation",
                    "reservation": {"name": "r", "zone": "europe-west4-a"}, "zones": ["us-central1-a"]}],
        flavors=[{"name": "f", "pools": ["v5p"]}],
        clusterQueues=[{"name": "cq", "flavors": ["f"]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
    )
    c["gke-ai-batch:cluster"].update(minMasterVersion="1.34")
    refused(tmp_path, c, "gke-ai-batch:nodePools[0].reservation.zone",
            "the reservation is in europe-west4-a, outside the cluster's region us-central1")


def test_the_pool_component_refuses_a_reservation_outside_the_clusters_region():
    from gke_ai_batch.components.nodepools import TpuSlices

    ref = {"name": "ml", "location": "us-central1", "project": "acme-ml", "node_locations": ["us-central1-a"]}
    with pytest.raises(ArgsError) as caught:
        TpuSlices("v5p", {"cluster": ref, "version": "v5p", "topology": "2x2x2", "capacity": "reservation",
                          "reservation_spec": {"name": "r", "zone": "europe-west4-a"}})
    assert "args.reservation_spec.zone: the reservation is in europe-west4-a, outside the cluster's region" in str(caught.value)


# -- checkpoint buckets: names and accounts ---------------------------------------------------------

def test_the_default_service_account_is_not_the_buckets(tmp_path):
    c = mount_config("/checkpoints")
    c["gke-ai-batch:checkpoints"]["serviceAccount"] = "default"
    refused(tmp_path, c, "gke-ai-batch:checkpoints.serviceAccount", "is the account every pod of the namespace runs as")
    with pytest.raises(ArgsError, match=r"args.service_account: 'default' is the account every pod"):
        from gke_ai_batch.components.storage import CheckpointBucket

        CheckpointBucket("ckpt", {**BUCKET, "service_account": "default"})


def test_a_reserved_misspelling_is_named_in_the_refusal(tmp_path):
    c = mount_config("/checkpoints")
    c["gke-ai-batch:checkpoints"]["bucketPrefix"] = "acme-g00gle"
    refused(tmp_path, c, "gke-ai-batch:checkpoints.bucketPrefix", "contains 'g00gle', which Cloud Storage reserves")
