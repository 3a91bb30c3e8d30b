"""The program enables the Google Cloud APIs each stack needs (gke_ai_batch/plan/apis.py), as
gcp.projects.Service resources that never turn an API off, once per project, and every Google
Cloud resource waits for its project's; the bootstrap enables what it calls and lets each
deployer enable (never disable) APIs in its stack's project."""

from __future__ import annotations

import copy

import pytest
from conftest import ROOT, STACKS, synth_config, synth_stack
from gke_ai_batch.synth import yamlread

from bootstrap.resources import SERVICE_ENABLER_PERMISSIONS
from gke_ai_batch.plan import apis as api
from test_bootstrap import example, example_config, render

SERVICE = "gcp:projects/service:Service"
CLUSTER = "gcp:container/cluster:Cluster"
ALWAYS = {api.CONTAINER, api.COMPUTE, api.RESOURCE_MANAGER, api.LOGGING, api.MONITORING}


def services(recording) -> dict[tuple[str, str], object]:
    """(project, API) -> its Service registration; a repeated pair would break the dict's count."""
    found = [r for r in recording.resources if r.type == SERVICE]
    by_key = {(r.inputs["project"], r.inputs["service"]): r for r in found}
    assert len(by_key) == len(found), "one Service per API and project"
    return by_key


@pytest.mark.parametrize(
    "stack, project, extra",
    [
        # The bootstrap's node service account: no IAM API needed; Cloud Storage for the checkpoint buckets.
        ("dev", "acme-ml-dev", {api.STORAGE}),
        ("prod", "acme-ml-prod", {api.KMS, api.BINARY_AUTHORIZATION, api.STORAGE}),  # secrets key, Binary Authorization
        ("gpu-dws", "acme-dws", {api.IAM}),  # the program creates the node service account
        ("batch-autopilot", "acme-batch", {api.IAM}),
    ],
)
def test_each_stack_enables_what_it_uses(stack, project, extra):
    found = services(synth_stack(stack).recording)
    assert set(found) == {(project, a) for a in ALWAYS | extra}
    assert {r.name for r in found.values()} >= {"api-container", "api-compute"}


@pytest.mark.parametrize("stack", STACKS)
def test_no_service_turns_an_api_off_or_blocks_teardown(stack):
    for r in services(synth_stack(stack).recording).values():
        assert r.inputs["disableOnDestroy"] is False and r.inputs["disableDependentServices"] is False
        assert not r.options.get("protect")


@pytest.mark.parametrize("stack", STACKS)
def test_every_cluster_waits_for_its_projects_apis(stack):
    recording = synth_stack(stack).recording
    found = services(recording)
    for cluster in (r for r in recording.resources if r.type == CLUSTER):
        mine = {r.urn for (project, _), r in found.items() if project == cluster.inputs["project"]}
        assert mine and mine <= set(cluster.dependencies), cluster.name


def test_the_tpu7x_workload_policy_and_the_node_account_wait_for_their_apis():
    prod = synth_stack("prod").recording
    compute = services(prod)[("acme-ml-prod", api.COMPUTE)].urn
    [policy] = [r for r in prod.resources if r.type == "gcp:compute/resourcePolicy:ResourcePolicy"]
    assert compute in policy.dependencies
    fleet = synth_stack("fleet-dws").recording
    iam = services(fleet)[("acme-ml-fleet", api.IAM)].urn
    accounts = [r for r in fleet.resources if r.type == "gcp:serviceaccount/account:Account"]
    assert len(accounts) == 5 and all(iam in a.dependencies for a in accounts)


def stack_config(stack: str) -> dict:
    return copy.deepcopy(yamlread.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()).data["config"])


def _fleet_with_a_worker_elsewhere() -> dict:
    config = stack_config("fleet-dws")
    config["gke-ai-batch:fleet"]["workers"][0]["project"] = "acme-ml-east"
    return config


def test_a_fleet_enables_once_per_project(tmp_path):
    # Five clusters: four in the stack's project share one Service per API; the worker moved to
    # its own project gets its own, named for the project, and waits for those.
    recording = synth_config(tmp_path, _fleet_with_a_worker_elsewhere(), stack="fleet-dws").recording
    found = services(recording)
    assert {p for p, _ in found} == {"acme-ml-fleet", "acme-ml-east"}
    assert found[("acme-ml-east", api.CONTAINER)].name == "acme-ml-east/api-container"
    assert found[("acme-ml-fleet", api.CONTAINER)].name == "api-container"
    [east] = [r for r in recording.resources if r.type == CLUSTER and r.inputs["project"] == "acme-ml-east"]
    assert found[("acme-ml-east", api.CONTAINER)].urn in east.dependencies
    assert found[("acme-ml-fleet", api.CONTAINER)].urn not in east.dependencies


def test_a_secrets_key_in_another_project_enables_no_kms_here(tmp_path):
    config = stack_config("prod")
    config["gke-ai-batch:cluster"]["databaseEncryption"]["keyName"] = (
        "projects/acme-kms/locations/us-central1/keyRings/gke/cryptoKeys/ml-prod-secrets"
    )
    found = services(synth_config(tmp_path, config, stack="prod").recording)
    assert not any(a == api.KMS for _, a in found)


def test_the_bootstrap_enables_what_it_calls():
    found = services(example())
    bootstrap = {a for p, a in found if p == "acme-ml-ci"}
    assert bootstrap == {api.IAM, api.IAM_CREDENTIALS, api.STS, api.STORAGE, api.RESOURCE_MANAGER, api.SERVICE_USAGE, api.KMS}
    assert {a for p, a in found if p == "acme-ml-dev"} == {api.IAM, api.RESOURCE_MANAGER, api.SERVICE_USAGE}
    # prod's secrets key: GKE's service agent exists only once the GKE API is on.
    assert api.CONTAINER in {a for p, a in found if p == "acme-ml-prod"}
    [agent] = [r for r in example().resources if r.type == "gcp:projects/serviceIdentity:ServiceIdentity"]
    assert found[("acme-ml-prod", api.CONTAINER)].urn in agent.dependencies
    [bucket] = [r for r in example().resources if r.type == "gcp:storage/bucket:Bucket"]
    assert found[("acme-ml-ci", api.STORAGE)].urn in bucket.dependencies


def test_two_stacks_in_one_project_share_its_services(tmp_path):
    config = example_config()
    config["gke-ai-batch-bootstrap:stacks"][1]["project"] = "acme-ml-dev"
    recording, problems = render(tmp_path, config)
    assert not problems
    assert {p for p, _ in services(recording)} == {"acme-ml-ci", "acme-ml-dev"}


def test_each_deployer_may_enable_apis_but_never_disable_one():
    rec = example()
    roles = [r for r in rec.resources if r.type == "gcp:projects/iAMCustomRole:IAMCustomRole" and r.name.endswith("/services")]
    assert {r.inputs["project"] for r in roles} == {"acme-ml-dev", "acme-ml-prod"}
    for role in roles:
        assert "serviceusage.services.enable" in role.inputs["permissions"]
        assert not any("disable" in p for p in role.inputs["permissions"])
    assert not any("disable" in p for p in SERVICE_ENABLER_PERMISSIONS)


def test_the_docs_table_lists_exactly_the_apis_the_program_may_enable():
    """docs/deploying.md's table is what a user enables by hand if they must: it names every API
    gke_ai_batch/plan/apis.py may enable on a cluster's project, and no other."""
    import re

    from gke_ai_batch.plan import apis
    from conftest import ROOT

    text = (ROOT / "docs" / "deploying.md").read_text()
    block = text.split("<!-- apis -->")[1]
    table = block.split("\n\n")[1]
    assert set(re.findall(r"`([a-z]+\.googleapis\.com)`", table)) == set(apis.WHY)
