"""Every committed stack synthesizes, matches the committed JSON Schema, and the CLI writes
its files."""

from __future__ import annotations

import json
import jsonschema
import pytest
import yaml

from gke_ai_batch.config.schema import render
from conftest import ROOT, STACKS, synth_main, synth_stack

EXPECTED_STACKS = {"dev", "prod", "tpu-hotswap", "batch-autopilot", "tpu-multislice", "gpu-dws", "tpu-flex"}


def test_the_seed_stacks_exist():
    assert EXPECTED_STACKS <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_stack_synthesizes(stack):
    result = synth_stack(stack)
    assert result.error is None
    assert result.exit_code == 0, [v for v in result.violations if v["enforcement"] == "mandatory"]
    assert len(result.recording.resources) > 10


def test_committed_schema_matches_the_models():
    assert (ROOT / "schema" / "stack.schema.json").read_text() == render(), (
        "regenerate: python -m gke_ai_batch.config.schema > schema/stack.schema.json"
    )


@pytest.mark.parametrize("stack", STACKS)
def test_stack_file_validates_against_the_schema_and_references_it(stack):
    path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema/stack.schema.json\n")
    schema = json.loads((ROOT / "schema" / "stack.schema.json").read_text())
    errors = [f"{list(e.path)}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(text))]
    assert errors == []


def test_schema_catches_a_typo():
    schema = json.loads((ROOT / "schema" / "stack.schema.json").read_text())
    doc = {"config": {"gcp:project": "p", "gke-ai-batch:cluster": {"name": "c"}, "gke-ai-batch:nodepools": []}}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert any("gke-ai-batch:nodepools" in e.message for e in errors)


def test_cli_writes_files_and_summary(tmp_path):
    # In-process: renders by the CLI in processes of their own are test_runtime_only.py's,
    # test_determinism.py's and test_hostile_inputs.py's.
    proc = synth_main("tpu-multislice", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "tpu-multislice: 3 node pools, 3 TPU slices, 6 VMs at most, 24 TPU chips, 0 GPUs"
    )
    assert "nodepool-2" in proc.stdout
    resources = json.loads((tmp_path / "resources.json").read_text())
    assert set(resources[1]) >= {"urn", "type", "name", "parent", "dependencies", "inputs"}
    assert resources[0]["type"] == "pulumi:pulumi:Stack" and resources[0]["parent"] is None
    docs = list(yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()))
    assert {d["kind"] for d in docs} >= {"ResourceFlavor", "ClusterQueue", "LocalQueue", "JobSet", "PriorityClass"}
    assert not any(d["apiVersion"].startswith("kueue.x-k8s.io/v1beta1") for d in docs)
    assert (tmp_path / "policy.json").exists() and (tmp_path / "report.md").exists()


def test_manifests_are_only_kubernetes_objects_the_program_declares():
    from gke_ai_batch import synth
    result = synth_stack("dev")
    docs = synth.manifests(result.recording)
    assert all({"apiVersion", "kind", "metadata"} <= set(d) for d in docs)
    assert not [d for d in docs if d["kind"] in ("Release", "Provider")]


@pytest.mark.parametrize("stack", STACKS)
def test_kueue_holds_back_jobs_without_a_queue_in_every_team_namespace(stack):
    """No queue bypass (issue 11): on a cluster the stack creates, a Job that names no queue is
    still Kueue's in every team namespace, and only system namespaces are left alone (a Job GKE
    runs there must not wait for a queue). On an existing cluster, which other tenants may share,
    it is Kueue's own default (false) unless the stack file says otherwise (issue 29)."""
    result = synth_stack(stack)
    release = next(r for r in result.recording.resources if r.type == "kubernetes:helm.sh/v3:Release" and "kueue" in r.name)
    conf = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    cfg = result.plan.config
    stated = cfg.kueue.manage_jobs_without_queue_name
    assert conf["manageJobsWithoutQueueName"] is (not cfg.cluster.existing if stated is None else stated)
    (expression,) = conf["managedJobsNamespaceSelector"]["matchExpressions"]
    assert (expression["key"], expression["operator"]) == ("kubernetes.io/metadata.name", "NotIn")
    assert {"kube-system", "kueue-system", "jobset-system", "gmp-system"} <= set(expression["values"])
    teams = {t.namespace for t in result.plan.config.teams}
    assert teams and not teams & set(expression["values"])


def test_an_existing_clusters_team_role_needs_the_unqueued_jobs_setting_stated(tmp_path):
    # Unset means false on an existing cluster (other tenants' Jobs are left alone), so a team
    # whose Role creates Jobs is refused until the stack file decides; stated true, Kueue's
    # configuration says so.
    from conftest import synth_refused, synth_rendered

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.existing-cluster.yaml").read_text())["config"]
    grouped = {**config, "gke-ai-batch:teams": [{**config["gke-ai-batch:teams"][0], "group": "ml@acme.com"}]}
    synth_refused(tmp_path, grouped, "gke-ai-batch:teams[0].group",
                  "kueue.manageJobsWithoutQueueName is unset, which on an existing cluster means false")
    config.setdefault("gke-ai-batch:kueue", {})["manageJobsWithoutQueueName"] = True
    result = synth_rendered(tmp_path, config)
    release = next(r for r in result.recording.resources if r.type == "kubernetes:helm.sh/v3:Release" and "kueue" in r.name)
    assert "manageJobsWithoutQueueName: true" in release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
