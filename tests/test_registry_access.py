"""The node service account may pull each private Artifact Registry image the stack runs:
roles/artifactregistry.reader on exactly that repository, in both cluster modes."""

from __future__ import annotations

import pytest

from gke_ai_batch.config import load
from gke_ai_batch.plan.cluster import RegistryGrant, registry_grants, registry_repository
from conftest import base_config, by_name, synth_config, synth_stack

MEMBER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"


@pytest.mark.parametrize(
    "image, grant",
    [
        ("us-docker.pkg.dev/acme-ml-hotswap/maxtext/maxtext-runner:latest", RegistryGrant("acme-ml-hotswap", "us", "maxtext")),
        ("europe-west4-docker.pkg.dev/shared-images/train/jax/runner@sha256:" + "0" * 64, RegistryGrant("shared-images", "europe-west4", "train")),
        ("us-central1-docker.pkg.dev/example.com/proj/repo/img:1", RegistryGrant("example.com:proj", "us-central1", "repo")),
        # Google's public images, other registries, and paths naming no image need nothing.
        ("us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:latest", None),
        ("registry.k8s.io/kubectl:v1.33.0", None),
        ("gcr.io/k8s-staging-perf-tests/sleep:latest", None),
        ("python:3.8", None),
        ("us-docker.pkg.dev/acme/only-a-repo:latest", None),
    ],
)
def test_repository_of_an_image(image, grant):
    assert registry_repository(image) == grant


def test_one_grant_per_repository_across_workloads_and_the_probe():
    def job(name, image):
        return {"kind": "job", "name": name, "team": "t", "image": image, "resources": {"cpu": 1}}

    cfg = load(
        {
            "cluster": {"name": "c", "nodeLocations": ["us-central1-b"]},
            "nodePools": [{"name": "cpu", "machineType": "n2-standard-4", "maxNodes": 1}],
            "flavors": [{"name": "f", "pools": ["cpu"]}],
            "clusterQueues": [{"name": "q", "flavors": [{"name": "f", "quotas": {"cpu": 4}}]}],
            "teams": [{"namespace": "t", "localQueue": "lq", "clusterQueue": "q"}],
            "kueue": {"probeImage": "us-central1-docker.pkg.dev/other-proj/mirror/kubectl:v1.33.0"},
            "workloads": [
                job("a", "us-docker.pkg.dev/acme/train/a:1"),
                job("b", "us-docker.pkg.dev/acme/train/b:2"),  # same repository: one grant
                job("c", "us-docker.pkg.dev/acme/serve/c:1"),
                job("d", "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:jax0.8.1-rev1"),
            ],
        },
        region="us-central1",
    )
    assert registry_grants(cfg) == [
        RegistryGrant("acme", "us", "serve"),
        RegistryGrant("acme", "us", "train"),
        RegistryGrant("other-proj", "us-central1", "mirror"),
    ]


def test_hotswap_nodes_may_pull_its_private_image():
    result = synth_stack("tpu-hotswap")
    (grant,) = [r for r in result.recording.resources if r.type == MEMBER]
    account = by_name(result, "gcp:serviceaccount/account:Account", "nodes")
    cluster = by_name(result, "gke-ai-batch:index:GkeCluster", "tpu-hotswap")
    assert grant.inputs == {
        "project": "acme-ml-hotswap",
        "location": "us",
        "repository": "maxtext",
        "role": "roles/artifactregistry.reader",
        "member": "serviceAccount:tpu-hotswap-nodes@acme-ml-hotswap.iam.gserviceaccount.com",
    }
    assert grant.name == "nodes-reader/us/acme-ml-hotswap/maxtext"
    assert grant.parent == cluster["urn"]
    assert account["urn"] in grant.dependencies
    # The JobSets' pods pull only after the grant exists.
    for r in result.recording.resources:
        if r.type == JOBSET:
            assert grant.urn in r.dependencies, r.name


@pytest.mark.parametrize("stack", ["dev", "tpu-flex", "batch-autopilot", "tpu-multislice", "gpu-dws"])
def test_public_images_need_no_grant(stack):
    assert not [r for r in synth_stack(stack).recording.resources if r.type == MEMBER]


def test_autopilot_nodes_use_the_granted_account(tmp_path):
    config = base_config(
        flavors=[{"name": "f"}],
        clusterQueues=[{"name": "q", "flavors": [{"name": "f", "quotas": {"cpu": 4}}]}],
        teams=[{"namespace": "t", "localQueue": "lq", "clusterQueue": "q"}],
        workloads=[{"kind": "job", "name": "a", "team": "t", "image": "us-docker.pkg.dev/acme/train/a:1"}],
    )
    config["gke-ai-batch:cluster"] = {"name": "ap", "mode": "autopilot"}
    result = synth_config(tmp_path, config)
    assert result.error is None, result.error
    (grant,) = [r for r in result.recording.resources if r.type == MEMBER]
    cluster = by_name(result, "gcp:container/cluster:Cluster", "cluster")["inputs"]
    node_account = cluster["clusterAutoscaling"]["autoProvisioningDefaults"]["serviceAccount"]
    assert grant.inputs["member"] == f"serviceAccount:{node_account}"
    assert (grant.inputs["project"], grant.inputs["repository"]) == ("acme", "train")
