"""A fleet registered under the recording engine synth uses (gke_ai_batch/components/fleet/deploy.py), before
`python -m synth` renders fleets: one cluster per worker and the manager, each under its own
naming scope, the MultiKueue chain in order and waiting for the workers, and the workers'
kubeconfigs secret from end to end."""

from __future__ import annotations

import copy
import functools
import json

from gke_ai_batch import synth
from gke_ai_batch.config.fleet import MANAGER_SCOPE
from conftest import ROOT, synth_config
from gke_ai_batch.synth import engine
from test_fleet_config import FLEET, STACK
from support import manifests as M

PROGRAM = """
import pulumi
from gke_ai_batch.config import load_from_pulumi
from gke_ai_batch.components.fleet.deploy import deploy_fleet
from gke_ai_batch.plan.fleet import build_fleet_plan

plan = build_fleet_plan(load_from_pulumi(source="fleet"), pulumi.Config("gcp").get("project"))
for name, value in deploy_fleet(plan).items():
    pulumi.export(name, value)
"""
SAMPLE = {"kind": "job", "name": "smoke-h100", "team": "llm", "pool": "h100-dws", "image": "perl:5.40",
          "command": ["nvidia-smi"], "priority": "low"}
CONFIG = {"gcp:project": "acme-ml-fleet",
          **{f"gke-ai-batch:{k}": v for k, v in {**STACK, "fleet": FLEET, "workloads": [SAMPLE]}.items()}}


@functools.lru_cache(maxsize=None)
def recording() -> engine.Recording:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "program.py"
        program.write_text(PROGRAM)
        values = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in copy.deepcopy(CONFIG).items()}
        return engine.run(
            program, project=synth.project_name(ROOT), stack="fleet", config=values, secret_keys=set(),
            outputs_for=synth.outputs_for("acme-ml-fleet"),
        )


def by_name(name: str, kind: str = "") -> engine.Registration:
    # A kind names the Kubernetes object, not the component of that kind and name holding it.
    [r] = [r for r in recording().resources if r.name == name and r.type.endswith(kind)
           and not (kind and r.type.startswith("gke-ai-batch:"))]
    return r


def test_every_cluster_has_its_own_scope_and_objects():
    rec = recording()
    assert len({r.urn for r in rec.resources}) == len(rec.resources)
    clusters = synth.manifests_by_cluster(rec)
    assert sorted(clusters) == sorted([MANAGER_SCOPE, "us-east4", "europe-west4", "us-east5"])
    kinds = {scope: sorted({m["kind"] for m in docs}) for scope, docs in clusters.items()}
    assert {"MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"} <= set(kinds[MANAGER_SCOPE])
    assert "ProvisioningRequestConfig" not in kinds[MANAGER_SCOPE]  # the manager provisions nothing
    for worker in ("us-east4", "europe-west4", "us-east5"):
        assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret"} <= set(kinds[worker])
        assert "MultiKueueCluster" not in kinds[worker]
    # Each cluster's objects are valid and refer to what that cluster has (a kubeconfig Secret
    # too: its data is masked key by key, each a valid base64 value).
    for scope, docs in clusters.items():
        assert M.problems(docs) == [], scope


def test_the_multikueue_chain_waits_for_the_workers():
    secret = by_name(f"{MANAGER_SCOPE}/kueue-system/multikueue-us-east4")
    token = by_name("us-east4/kueue-system/multikueue-sa", ":Secret")
    worker_kueue = [r for r in recording().resources if r.name == "us-east4/kueue" and r.type.startswith("kubernetes:helm")]
    assert token.urn in secret.dependencies and worker_kueue and worker_kueue[0].urn in secret.dependencies
    cluster = by_name(f"{MANAGER_SCOPE}/us-east4", ":MultiKueueCluster")
    config = by_name(f"{MANAGER_SCOPE}/dws-gpu", ":MultiKueueConfig")
    check = by_name(f"{MANAGER_SCOPE}/dws-gpu", ":AdmissionCheck")
    # Each after what it names, and the queues after the check.
    assert secret.urn in cluster.dependencies and cluster.urn in config.dependencies and config.urn in check.dependencies
    queue = by_name(f"{MANAGER_SCOPE}/gpu", ":ClusterQueue")
    assert check.urn in queue.dependencies
    assert queue.inputs["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-gpu"}]}


def test_no_kubeconfig_or_token_in_clear():
    text = json.dumps([r.to_json() for r in recording().resources]) + json.dumps(recording().outputs)
    for clear in ("mock-token", "bW9jay10b2tlbg", "users:", "certificate-authority-data"):
        assert clear not in text, clear
    from gke_ai_batch.synth.engine import SECRET_DATA_MASK

    # Masked key by key: still a Secret with the key Kueue reads.
    assert by_name(f"{MANAGER_SCOPE}/kueue-system/multikueue-europe-west4").inputs["data"] == {"kubeconfig": SECRET_DATA_MASK}


def test_synth_renders_a_fleet_and_names_a_workers_mistake_at_its_key(tmp_path):
    values = copy.deepcopy(CONFIG)
    result = synth_config(tmp_path, values)
    assert result.exit_code == 0, result.error
    files = synth.output_files(result)
    assert sorted(k for k in files if k.startswith("manifests/")) == [
        f"manifests/{s}.yaml" for s in sorted([MANAGER_SCOPE, "europe-west4", "us-east4", "us-east5"])]
    values["gke-ai-batch:fleet"]["workers"][0]["nodePools"][0]["zones"] = ["europe-west4-a"]
    result = synth_config(tmp_path, values)
    assert result.exit_code == 2 and "fleet.workers[0].nodePools[0].zones" in str(result.error)

def test_samples_are_submitted_on_the_manager_only():
    jobs = [r for r in recording().resources if r.type == "kubernetes:batch/v1:Job"]
    assert [r.name for r in jobs] == [f"{MANAGER_SCOPE}/llm/smoke-h100"]
    [job] = jobs
    local_queue = by_name(f"{MANAGER_SCOPE}/llm/gpu", ":LocalQueue")
    assert local_queue.urn in job.dependencies
    # Kueue's webhook sets spec.managedBy on the manager; the program leaves it to Kueue.
    assert "managedBy" not in job.inputs["spec"]


def test_a_broken_fleet_stack_lists_every_mistake_and_leaves_the_last_output(tmp_path):
    from conftest import synth_main, synth_stack
    from gke_ai_batch.synth import write_outputs, yamlread
    from test_hostile_inputs import snapshot

    # In-process: the CLI's exit 2 on a refused stack, in a process of its own, is
    # test_config_errors.py's; here what matters is what it says and leaves.
    out = tmp_path / "out"
    write_outputs(synth_stack("fleet-dws"), out)
    before = snapshot(out)
    assert any(name.startswith("manifests/") for name in before)
    config = yamlread.load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text()).data["config"]
    workers = config["gke-ai-batch:fleet"]["workers"]
    workers[0]["nodePools"][0]["zones"] = ["europe-west4-a"]  # another worker's region
    workers[1]["cluster"]["masterAuthorizedNetworks"] = []  # the manager could not get in
    workers[2]["name"] = workers[3]["name"]  # two workers, one name
    bad = tmp_path / "Pulumi.fleet-bad.yaml"
    bad.write_text(yamlread.dump({"config": config}))
    proc = synth_main("--config", str(bad), "--out", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    for where in ("fleet.workers[0].nodePools[0].zones[0]", "fleet.workers[1].cluster.masterAuthorizedNetworks",
                  "fleet.workers[3].name"):
        assert f"gke-ai-batch:{where}" in proc.stderr, proc.stderr
    assert f"{bad}:" in proc.stderr  # file:line:column
    assert snapshot(out) == before
