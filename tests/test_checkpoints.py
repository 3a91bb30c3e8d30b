"""Checkpoint storage: a bucket per team namespace that only the team's Kubernetes service
account may use, the Cloud Storage FUSE and Managed Lustre CSI drivers, sample workloads that
mount the bucket, and the FUSE sidecar's requests in the admission model. Each rule has a
refusal (exit 2, the stack file's line and key path, the rule in the message) and a near miss
that renders."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from gke_ai_batch import synth
from conftest import ROOT, base_config, by_name, synth_config, synth_stack
from support.diagnostics import assert_names
from test_maintenance import refused, rendered

from gke_ai_batch.domain import gcsfuse, regions, versions
from gke_ai_batch.model.facts import allocatable

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
BUCKET_TYPE = "gcp:storage/bucket:Bucket"
MEMBER_TYPE = "gcp:storage/bucketIAMMember:BucketIAMMember"
POLICY_TYPE = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
CK = "gke-ai-batch:checkpoints"
NUMBER = "123456789012"
GPU_POOL = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}


def job(**overrides) -> dict:
    wl = {"kind": "job", "name": "train", "team": "team-a", "pool": "l4", "image": "python:3.12-slim",
          "resources": {"cpu": "2", "memory": "8Gi"}, "checkpoints": {}}
    wl.update(overrides)
    return wl


def config(checkpoints=None, workloads=None, pools=None, **cluster) -> dict:
    c = base_config(
        nodePools=copy.deepcopy(pools if pools is not None else [GPU_POOL]),
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        workloads=copy.deepcopy(workloads if workloads is not None else [job()]),
    )
    c["gke-ai-batch:cluster"].update(minMasterVersion="1.34", **cluster)
    if checkpoints is not None:
        c[CK] = copy.deepcopy(checkpoints)
    return c


BASE = {"projectNumber": NUMBER}
LONG_PREFIX = "p" * (gcsfuse.BUCKET_NAME_MAX - len("-team-a-ckpt") + 1)
OLD_MINOR = {"gke-ai-batch:catalogue": {"channels": {"REGULAR": {"minors": ["1.33"]}}}}

# (id, stack changes, key path, words)
REFUSALS = [
    ("project id for a number", lambda c: c[CK].update(projectNumber="acme-ml"), f"{CK}.projectNumber", "is not a project number"),
    ("soft delete below 7 days", lambda c: c[CK].update(softDeleteDays=6), f"{CK}.softDeleteDays", "0 (off) or 7 to 90 days, not 6"),
    ("soft delete above 90 days", lambda c: c[CK].update(softDeleteDays=91), f"{CK}.softDeleteDays", "0 (off) or 7 to 90 days, not 91"),
    ("bucket name of 64 characters", lambda c: c[CK].update(bucketPrefix=LONG_PREFIX), f"{CK}.bucketPrefix", "is 64 characters; Cloud Storage takes 3 to 63"),
    ("bucket name with google", lambda c: c[CK].update(bucketPrefix="acme-google"), f"{CK}.bucketPrefix", "contains 'google', which Cloud Storage reserves"),
    ("bucket name starting goog", lambda c: c[CK].update(bucketPrefix="googly"), f"{CK}.bucketPrefix", "starts with 'goog'"),
    ("fuseDriver on a cluster this program creates", lambda c: c[CK].update(fuseDriver=True), f"{CK}.fuseDriver", "only for an existing cluster"),
    ("lustre where Managed Lustre is not offered",
     lambda c: (c.update({"gcp:region": "us-west4"}), c["gke-ai-batch:cluster"].update(nodeLocations=["us-west4-a"]),
                c["gke-ai-batch:nodePools"][0].update(machineType="g2-standard-8"), c[CK].update(lustre=True)),
     f"{CK}.lustre", "Managed Lustre has no instances in us-west4"),
    ("lustre below its GKE version",
     lambda c: (c.update(OLD_MINOR), c["gke-ai-batch:cluster"].update(minMasterVersion="1.33"), c[CK].update(lustre=True)),
     f"{CK}.lustre", f"need GKE {versions.LUSTRE_CSI_MIN} or later"),
    ("a mount with no checkpoints key", lambda c: c.pop(CK), "gke-ai-batch:workloads[0].checkpoints", "add gke-ai-batch:checkpoints"),
    ("a relative mount path", lambda c: c["gke-ai-batch:workloads"][0]["checkpoints"].update(mountPath="ckpt"),
     "gke-ai-batch:workloads[0].checkpoints.mountPath", "is not an absolute path"),
    ("a mount in host-network pods",
     lambda c: (c["gke-ai-batch:nodePools"].append({"name": "v5e", "tpu": {"version": "v5e", "topology": "2x4"}}),
                c["gke-ai-batch:workloads"].__setitem__(0, {"kind": "jobset", "name": "ms", "team": "team-a", "pool": "v5e",
                                                             "image": "python:3.12-slim", "checkpoints": {}})),
     "gke-ai-batch:workloads[0].checkpoints", "its pods run on the host network"),
]


@pytest.mark.parametrize("change, path, words", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_checkpoint_rule_is_refused(tmp_path, change, path, words):
    cfg = config(BASE)
    change(cfg)
    refused(tmp_path, cfg, path, words)


NEAR_MISSES = [
    ("soft delete off", lambda c: c[CK].update(softDeleteDays=0)),
    ("soft delete 7 days", lambda c: c[CK].update(softDeleteDays=7)),
    ("soft delete 90 days", lambda c: c[CK].update(softDeleteDays=90)),
    ("bucket name of 63 characters", lambda c: c[CK].update(bucketPrefix=LONG_PREFIX[1:])),
    ("a default bucket name over 63 characters is cut and hashed",
     lambda c: (c["gke-ai-batch:cluster"].update(name="c" * 40), c.update({"gcp:project": "p" * 30}))),
    ("lustre in a Managed Lustre region at its version", lambda c: c[CK].update(lustre=True)),
    ("a mount path below /", lambda c: c["gke-ai-batch:workloads"][0]["checkpoints"].update(mountPath="/ckpt/run-1")),
    ("buckets and no mount", lambda c: c["gke-ai-batch:workloads"][0].pop("checkpoints")),
    # Pod Security's restricted level allows CSI ephemeral volumes (its volume-type list has csi).
    ("a mount in a restricted namespace", lambda c: c["gke-ai-batch:teams"][0].update(podSecurity="restricted")),
]


@pytest.mark.parametrize("change", [n[1] for n in NEAR_MISSES], ids=[n[0] for n in NEAR_MISSES])
def test_near_misses_render(tmp_path, change):
    cfg = config(BASE)
    change(cfg)
    rendered(tmp_path, cfg)


def test_long_default_bucket_names_stay_distinct_and_valid():
    from gke_ai_batch.config.checkpoints import CheckpointsConfig, bucket_name_problem

    ck = CheckpointsConfig.model_validate(BASE)
    names = {ck.bucket_name("p" * 30, "c" * 40, ns) for ns in ("team-a-long-namespace-1", "team-a-long-namespace-2")}
    assert len(names) == 2 and all(len(n) == gcsfuse.BUCKET_NAME_MAX and bucket_name_problem(n) is None for n in names)
    assert ck.bucket_name("acme", "ml", "team-a") == "acme-ml-team-a-ckpt"


def test_lustre_regions_include_the_shipped_prod_region():
    # prod enables the driver; its region must be one the table lists.
    assert "us-central1" in regions.LUSTRE_REGIONS and "us-west4" not in regions.LUSTRE_REGIONS


# -- existing clusters ---------------------------------------------------------------------------

def existing(**checkpoints) -> dict:
    cfg = config({**BASE, **checkpoints}, existing=True, version="1.35.7-gke.1222000",
                 endpoint="gke-0123abcd.us-central1.gke.goog",
                 nodeServiceAccount="ml-nodes@test-project.iam.gserviceaccount.com")
    del cfg["gke-ai-batch:cluster"]["minMasterVersion"]
    return cfg


def test_existing_cluster_must_declare_its_fuse_driver(tmp_path):
    refused(tmp_path, existing(), f"{CK}.fuseDriver", "declare fuseDriver: true")
    refused(tmp_path, existing(fuseDriver=False), f"{CK}.fuseDriver", "declare fuseDriver: true")


def existing_autopilot(**checkpoints) -> dict:
    cfg = existing(**checkpoints)
    cfg["gke-ai-batch:cluster"]["mode"] = "autopilot"
    cfg["gke-ai-batch:nodePools"] = []
    cfg["gke-ai-batch:flavors"] = [{"name": "default"}]
    cfg["gke-ai-batch:clusterQueues"] = [
        {"name": "cq", "flavors": [{"name": "default", "quotas": {"cpu": 10, "memory": "64Gi", "nvidia.com/gpu": 4}}]}
    ]
    wl = cfg["gke-ai-batch:workloads"][0]
    del wl["pool"]
    wl["gpu"] = {"type": "nvidia-l4", "count": 1}
    return cfg


def test_existing_autopilot_cluster_declared_without_its_fuse_driver_renders(tmp_path):
    # "enabled by default for Autopilot clusters" (GKE docs cloud-storage-fuse-csi-driver-setup).
    result = synth_config(tmp_path, existing_autopilot())
    assert result.recording is not None, result.error  # not refused (exit 2): rendered
    assert by_name(result, MEMBER_TYPE, "test-project-test-team-a-ckpt-object-user")


def test_existing_autopilot_cluster_whose_fuse_driver_is_declared_off_is_refused(tmp_path):
    refused(tmp_path, existing_autopilot(fuseDriver=False), f"{CK}.fuseDriver", "GKE turns it on in every Autopilot cluster")


def test_existing_cluster_cannot_get_lustre_here(tmp_path):
    refused(tmp_path, existing(fuseDriver=True, lustre=True), f"{CK}.lustre", "cannot enable the Managed Lustre CSI driver")


def test_existing_cluster_with_the_driver_declared_renders(tmp_path):
    result = rendered(tmp_path, existing(fuseDriver=True))
    assert not [r for r in result.recording.resources if r.type == CLUSTER_TYPE]
    assert by_name(result, MEMBER_TYPE, "test-project-test-team-a-ckpt-object-user")


def test_fleet_stacks_refuse_checkpoints(tmp_path):
    cfg = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text())["config"]
    cfg[CK] = dict(BASE)
    refused(tmp_path, cfg, CK, "a fleet stack does not create them yet")


# -- what renders ---------------------------------------------------------------------------------

def test_grant_is_the_team_service_account_alone():
    result = synth_stack("dev")
    resources = [r.to_json() for r in result.recording.resources]
    grants = [r for r in resources if "IAM" in r["type"] and r["type"].startswith("gcp:")]
    storage = [g for g in grants if "storage" in g["inputs"].get("role", "") or g["type"].startswith("gcp:storage/")]
    assert [g["type"] for g in storage] == [MEMBER_TYPE, POLICY_TYPE]
    grant = storage[0]["inputs"]
    # The bucket's whole policy is that grant (tests/test_identity_reach.py: what it keeps out).
    assert json.loads(storage[1]["inputs"]["policyData"]) == {"bindings": [{"role": grant["role"], "members": [grant["member"]]}]}
    assert storage[1]["inputs"]["bucket"] == grant["bucket"]
    assert grant == {
        "bucket": "acme-ml-dev-ml-dev-ml-research-ckpt",
        "role": "roles/storage.objectUser",
        "member": "principal://iam.googleapis.com/projects/418205336914/locations/global/workloadIdentityPools/"
                  "acme-ml-dev.svc.id.goog/subject/ns/ml-research/sa/checkpoints",
    }
    assert not any("allUsers" in str(g["inputs"]) or "allAuthenticatedUsers" in str(g["inputs"]) for g in grants)
    ksa = by_name(result, "kubernetes:core/v1:ServiceAccount", "ml-research/checkpoints")["inputs"]
    assert ksa["metadata"] == {"name": "checkpoints", "namespace": "ml-research"}


def test_bucket_is_private_regional_and_keeps_deleted_checkpoints():
    prod = synth_stack("prod")
    buckets = [r.to_json()["inputs"] for r in prod.recording.resources if r.type == BUCKET_TYPE]
    assert sorted(b["name"] for b in buckets) == [
        "acme-ml-prod-ml-prod-evals-ckpt", "acme-ml-prod-ml-prod-llm-training-ckpt", "acme-ml-prod-ml-prod-research-ckpt"]
    for b in buckets:
        assert b["location"] == "US-CENTRAL1"
        assert b["uniformBucketLevelAccess"] is True and b["publicAccessPrevention"] == "enforced"
        assert b["softDeletePolicy"] == {"retentionDurationSeconds": 14 * 86400}
        assert b["lifecycleRules"] == [{"action": {"type": "Delete"}, "condition": {"age": 90}}]
        assert b["forceDestroy"] is False
    protected = [r for r in prod.recording.resources if r.type == BUCKET_TYPE and r.to_json()["options"].get("protect")]
    assert len(protected) == 3


def test_drivers_on_the_cluster():
    dev = by_name(synth_stack("dev"), CLUSTER_TYPE, "cluster")["inputs"]
    assert dev["addonsConfig"] == {"gcsFuseCsiDriverConfig": {"enabled": True}}
    prod = by_name(synth_stack("prod"), CLUSTER_TYPE, "cluster")["inputs"]
    assert prod["addonsConfig"] == {"gcsFuseCsiDriverConfig": {"enabled": True}, "lustreCsiDriverConfig": {"enabled": True}}


def test_autopilot_has_the_fuse_driver_already(tmp_path):
    cfg = yaml.safe_load((ROOT / "stacks" / "Pulumi.batch-autopilot.yaml").read_text())["config"]
    cfg[CK] = dict(BASE)
    cfg["gke-ai-batch:workloads"][0]["checkpoints"] = {}
    result = rendered(tmp_path, cfg)
    assert "addonsConfig" not in by_name(result, CLUSTER_TYPE, "cluster")["inputs"]
    assert synth.manifests(result.recording)


def test_sample_mounts_the_bucket_as_its_service_account():
    job_ = next(m for m in synth.manifests(synth_stack("dev").recording) if m["kind"] == "Job" and m["metadata"]["name"] == "l4-checkpointed")
    template = job_["spec"]["template"]
    assert template["metadata"]["annotations"] == {gcsfuse.VOLUMES_ANNOTATION: "true"}
    pod = template["spec"]
    assert pod["serviceAccountName"] == "checkpoints"
    assert pod["volumes"] == [{"name": "checkpoints", "csi": {"driver": "gcsfuse.csi.storage.gke.io", "volumeAttributes": {
        "bucketName": "acme-ml-dev-ml-dev-ml-research-ckpt", "mountOptions": "implicit-dirs"}}}]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "checkpoints", "mountPath": "/checkpoints"}]


def test_report_has_a_checkpoint_storage_section():
    report = synth_stack("prod").extra_files["report.md"]
    assert "### Checkpoint storage" in report
    assert "`acme-ml-prod-ml-prod-llm-training-ckpt`" in report
    assert "`llm-training/checkpoints`" in report
    assert "Managed Lustre CSI driver: on" in report


# -- the FUSE sidecar in the admission model ------------------------------------------------------

NODE_CPU = allocatable("g2-standard-8", 1)["cpu"]
SIDECAR_CPU = 250  # GKE's default, gcsfuse.SIDECAR_DEFAULTS


def test_sidecar_default_is_the_one_the_model_counts():
    assert gcsfuse.sidecar_requests({gcsfuse.VOLUMES_ANNOTATION: "true"})["cpu"] == f"{SIDECAR_CPU}m"


def test_pod_that_fits_only_without_the_sidecar_is_refused(tmp_path):
    cfg = config(BASE, workloads=[job(resources={"cpu": f"{NODE_CPU - SIDECAR_CPU + 1}m"})])
    result = synth_config(tmp_path, cfg)
    assert result.exit_code == 2, result.error
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", "gke-ai-batch:workloads[0]", "gke-gcsfuse-sidecar")
    assert "cpu 250m" in result.error


def test_pod_that_fits_exactly_with_the_sidecar_renders(tmp_path):
    rendered(tmp_path, config(BASE, workloads=[job(resources={"cpu": f"{NODE_CPU - SIDECAR_CPU}m"})]))


def test_the_same_pod_without_a_mount_fits(tmp_path):
    cfg = config(BASE, workloads=[job(resources={"cpu": f"{NODE_CPU - SIDECAR_CPU + 1}m"})])
    cfg["gke-ai-batch:workloads"][0].pop("checkpoints")
    rendered(tmp_path, cfg)


def test_sidecar_requests_set_by_the_workload_are_counted(tmp_path):
    # A sidecar asked for no CPU leaves the node's whole allocatable to the workload.
    cfg = config(BASE, workloads=[job(resources={"cpu": f"{NODE_CPU}m"}, checkpoints={"sidecar": {"cpu": "0"}})])
    result = rendered(tmp_path, cfg)
    template = next(m for m in synth.manifests(result.recording) if m["kind"] == "Job")["spec"]["template"]
    assert template["metadata"]["annotations"] == {gcsfuse.VOLUMES_ANNOTATION: "true", "gke-gcsfuse/cpu-request": "0"}
    cfg = config(BASE, workloads=[job(resources={"cpu": f"{NODE_CPU - 500}m"}, checkpoints={"sidecar": {"cpu": "501m"}})])
    refused(tmp_path, cfg, "gke-ai-batch:workloads[0]", "cpu 501m")


@pytest.mark.parametrize("annotations, expected", [
    ({}, {}),
    ({gcsfuse.VOLUMES_ANNOTATION: "false"}, {}),
    ({gcsfuse.VOLUMES_ANNOTATION: "True"}, gcsfuse.SIDECAR_DEFAULTS),
    ({gcsfuse.VOLUMES_ANNOTATION: "true", "gke-gcsfuse/cpu-limit": "2"}, {**gcsfuse.SIDECAR_DEFAULTS, "cpu": "2"}),
    ({gcsfuse.VOLUMES_ANNOTATION: "true", "gke-gcsfuse/memory-limit": "0"}, gcsfuse.SIDECAR_DEFAULTS),
    ({gcsfuse.VOLUMES_ANNOTATION: "true", "gke-gcsfuse/ephemeral-storage-request": "0"},
     {k: v for k, v in gcsfuse.SIDECAR_DEFAULTS.items() if k != "ephemeral-storage"}),
])
def test_sidecar_requests_follow_the_webhook(annotations, expected):
    # populateResource in GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/config.go.
    assert gcsfuse.sidecar_requests(annotations) == expected


# -- the component from any program ---------------------------------------------------------------

PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components.storage import CheckpointBucket

p = k8s.Provider("ml-shared", kubeconfig="{}")
for ns in ("research", "evals"):
    CheckpointBucket(ns + "-ckpt", {"bucket": "acme-" + ns + "-ckpt", "location": "us-central1", "project": "acme-ml",
                                    "project_number": "123456789012", "namespace": ns, "delete_after_days": 30},
                     pulumi.ResourceOptions(provider=p))
"""


def test_component_side_by_side_grants_each_team_its_own_bucket(tmp_path):
    from support.programs import run_program

    recording = run_program(tmp_path, PROGRAM)
    by = {(r.type, r.name): r for r in recording.resources}
    for ns in ("research", "evals"):
        component = by[("gke-ai-batch:index:CheckpointBucket", f"{ns}-ckpt")]
        bucket = by[(BUCKET_TYPE, f"{ns}-ckpt-acme-{ns}-ckpt")]
        grant = by[(MEMBER_TYPE, f"{ns}-ckpt-acme-{ns}-ckpt-object-user")].inputs
        ksa = by[("kubernetes:core/v1:ServiceAccount", f"{ns}-ckpt-{ns}/checkpoints")]
        assert bucket.parent == component.urn and bucket.inputs["location"] == "US-CENTRAL1"
        assert bucket.inputs["lifecycleRules"] == [{"action": {"type": "Delete"}, "condition": {"age": 30}}]
        assert grant["member"].endswith(f"acme-ml.svc.id.goog/subject/ns/{ns}/sa/checkpoints")
        assert grant["bucket"] == f"acme-{ns}-ckpt" and grant["role"] == "roles/storage.objectUser"
        assert "ml-shared" in ksa.options["provider"] and "provider" not in bucket.options


def test_component_args_are_checked_by_the_stack_rules():
    from gke_ai_batch.components.storage import CheckpointBucket
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        CheckpointBucket("c", {"bucket": "Google-ckpt", "location": "us-central1", "project": "acme-ml",
                               "project_number": "acme-ml", "namespace": "research", "soft_delete_days": 3, "x": 1})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("CheckpointBucket c: args.x: unknown arg; known: bucket, "), lines
    with pytest.raises(ArgsError) as caught:
        CheckpointBucket("c", {"bucket": "Google-ckpt", "location": "us-central1", "project": "acme-ml",
                               "project_number": "acme-ml", "namespace": "research", "soft_delete_days": 3})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("CheckpointBucket c: args.project_number: 'acme-ml' is not a project number"), lines
    assert lines[1].startswith("CheckpointBucket c: args.soft_delete_days: Cloud Storage keeps soft-deleted objects 0 (off) or 7 to 90"), lines
    assert lines[2].startswith("CheckpointBucket c: args.bucket: 'Google-ckpt' has a character Cloud Storage refuses"), lines
    assert len(lines) == 3


def test_every_workload_kind_mounts_schema_valid(tmp_path, shared_schemas):
    # A queued Job and the ProvisioningRequest path (a PodTemplate and the Job that consumes it).
    from support import manifests as M

    cfg = yaml.safe_load((ROOT / "stacks" / "Pulumi.gpu-dws.yaml").read_text())["config"]
    cfg[CK] = dict(BASE)
    for wl in cfg["gke-ai-batch:workloads"]:
        wl["checkpoints"] = {"sidecar": {"memory": "1Gi"}}
    result = rendered(tmp_path, cfg)
    docs = synth.manifests(result.recording)
    templates = [m["template"] if m["kind"] == "PodTemplate" else m["spec"]["template"]
                 for m in docs if m["kind"] in ("Job", "PodTemplate")]
    assert len(templates) == 3
    for t in templates:
        assert t["metadata"]["annotations"][gcsfuse.VOLUMES_ANNOTATION] == "true"
        assert t["metadata"]["annotations"]["gke-gcsfuse/memory-request"] == "1Gi"
        assert t["spec"]["volumes"][0]["csi"]["volumeAttributes"]["bucketName"] == "acme-dws-dws-cluster-default-ckpt"
    assert M.problems(docs, M.Validator(shared_schemas)) == []
