"""report.md for a fleet: where the capacity is (each worker's, the manager's quotas their sum),
the MultiKueue settings in force, which workers mirror each manager queue, the manager's access
to each worker, and the per-plan sections telling the truth about a manager that runs nothing.

synth refuses fleets until they deploy (__main__.py); here synth runs a program whose
`program()` returns the fleet plan as __main__.py's will, on the sample fleet of tests/test_fleet_config.py."""

from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import pytest

from gke_ai_batch import synth
from gke_ai_batch.config import load
from gke_ai_batch.plan.fleet import build_fleet_plan
from conftest import ROOT, synth_stack
from gke_ai_batch.synth import engine, report, yamlread
from test_fleet_config import FLEET, STACK
from test_fleet_deploy import CONFIG
from test_report import cells, mermaid, row, section

PROGRAM = """
import pulumi
from gke_ai_batch.config import load_from_pulumi
from gke_ai_batch.components.fleet.deploy import deploy_fleet
from gke_ai_batch.plan.admission import Admission
from gke_ai_batch.plan.fleet import build_fleet_plan
from gke_ai_batch.plan.program import ProgramResult


def program():
    config = load_from_pulumi(source="fleet")
    fleet_plan = build_fleet_plan(config, pulumi.Config("gcp").get("project"))
    for name, value in deploy_fleet(fleet_plan).items():
        pulumi.export(name, value)
    return ProgramResult(config, fleet_plan.manager, Admission(fleet_plan.manager), fleet_plan)
"""
GPU, TPU = "nvidia-h100-80gb-queued", "tpu-v6e-slice-2x4-flex"


@functools.lru_cache(maxsize=None)
def fleet_result() -> synth.Result:
    """synth.synthesize on a project whose program renders the fleet."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        (root / "__main__.py").write_text(PROGRAM)
        path = root / "Pulumi.fleet.yaml"
        path.write_text(yamlread.dump({"config": copy.deepcopy(CONFIG)}))
        return synth.synthesize(root, synth.StackFile.locate(root, None, path))


def text() -> str:
    return fleet_result().extra_files["report.md"]


def rerender(fleet: dict | None = None, recording: engine.Recording | None = None) -> str:
    """The report of the same recording with another fleet plan or recording."""
    base = fleet_result()
    plan = build_fleet_plan(load({**copy.deepcopy(STACK), "fleet": fleet or copy.deepcopy(FLEET)}), "acme-ml-fleet")
    result = dataclasses.replace(base, recording=recording or base.recording, plan=plan.manager, fleet=plan)
    return report.render(result, [])


def test_synth_carries_the_fleet_plan_to_the_report_and_single_stacks_have_none():
    result = fleet_result()
    assert result.fleet is result.recording.result.fleet and result.plan is result.fleet.manager
    assert text() == report.render(result, result.violations)
    assert synth_stack("dev").fleet is None and "### Fleet" not in synth_stack("dev").extra_files["report.md"]


def test_the_clusters_table_names_every_cluster_its_role_and_place():
    fleet = section(text(), "Fleet")
    assert cells(row(fleet, "`ml-manager`"))[1:5] == [
        "manager (scope `manager`)", "`acme-ml-fleet`", "`us-central1` (nodes in `us-central1-a`)", "Standard"]
    assert cells(row(fleet, "`ml-manager`"))[5] == "`system` (system, CPU)"
    east4 = cells(row(fleet, "`ml-us-east4`"))
    assert east4[1] == "worker `us-east4`" and east4[3].startswith("`us-east4`") and "`h100-dws` (queued)" in east4[5]
    assert "`v6e-flex` (flexStart, 1 slice)" in cells(row(fleet, "`ml-us-east5`"))[5]


def test_capacity_is_per_worker_and_the_manager_quota_is_their_sum():
    fleet = section(text(), "Fleet")
    rows = [cells(line) for line in fleet.splitlines() if line.startswith(f"| `{GPU}` ")]
    by_cluster = {r[1]: r for r in rows}
    assert set(by_cluster) == {"worker `us-east4`", "worker `europe-west4`", "**manager** (sum of 2 workers)"}
    for worker in ("worker `us-east4`", "worker `europe-west4`"):
        assert by_cluster[worker][2].startswith("queued") and by_cluster[worker][5:] == ["32 GPUs", "32 nvidia.com/gpu"]
    assert by_cluster["**manager** (sum of 2 workers)"][4:] == ["0..8", "64 GPUs", "64 nvidia.com/gpu"]
    [tpu_worker] = [cells(line) for line in fleet.splitlines() if line.startswith(f"| `{TPU}` | worker")]
    assert tpu_worker[1:3] == ["worker `us-east5`", "flexStart"] and tpu_worker[5] == "8 TPU chips"
    assert "quotas are its workers' quotas added up" in fleet
    title = text().splitlines()[4]
    assert "64 GPUs" in title and "8 TPU chips" in title and "manager runs none of it" in title


def test_each_manager_queue_names_the_workers_that_serve_it_and_those_that_keep_it_idle():
    queue = cells(row(section(text(), "Fleet"), "`gpu`"))
    assert queue[1] == f"64 nvidia.com/gpu of `{GPU}`" and queue[2] == "`dws-gpu`"
    assert queue[3].startswith(f"`us-east4`: 32 nvidia.com/gpu of `{GPU}` (checks `dws-prov` on")
    assert "`europe-west4`: 32" in queue[3] and "us-east5" not in queue[3]
    assert queue[4] == "`us-east5`"
    tpu = cells(row(section(text(), "Fleet"), "`tpu`"))
    assert tpu[3:] == [f"`us-east5`: 8 google.com/tpu of `{TPU}`", "`us-east4`, `europe-west4`"]


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({}, ["`kueue.x-k8s.io/multikueue-dispatcher-all-at-once` (AllAtOnce", "`1m`", "`multikueue`", "`15m`"]),
        (
            {"dispatcher": "Incremental", "incrementalStepSize": 2, "gcInterval": "2m", "origin": "eu-manager",
             "workerLostTimeout": "1h"},
            ["`kueue.x-k8s.io/multikueue-dispatcher-incremental` (Incremental: offers each workload to 2 more",
             "`2m`", "`eu-manager`", "`1h`"],
        ),
    ],
)
def test_the_multikueue_settings_in_force_come_from_the_managers_configuration(settings, expected):
    fleet = {**copy.deepcopy(FLEET), "multiKueue": settings}
    body = section(rerender(fleet), "Fleet")
    values = [cells(row(body, key))[1] for key in ("dispatcher", "gcInterval", "origin", "workerLostTimeout")]
    assert [v.startswith(e) for v, e in zip(values, expected)] == [True] * 4, values
    assert "AdmissionCheck `dws-gpu` → MultiKueueConfig `dws-gpu` → MultiKueueClusters `us-east4`, `europe-west4`" in body


def test_each_worker_line_names_the_managers_access_and_a_secret_kubeconfig():
    lines = [line for line in section(text(), "Fleet").splitlines() if line.startswith("- `")]
    assert [line.split("`")[1] for line in lines] == ["us-east4", "europe-west4", "us-east5"]
    for line in lines:
        assert "ServiceAccount `kueue-system/multikueue-sa`: reads cluster-wide through ClusterRoleBinding `multikueue-sa-read`" in line
        assert "writes through ClusterRole `multikueue-sa-write` bound only in `" in line
        assert "on the manager, a Pulumi secret" in line
    # A kubeconfig recorded in clear (or missing) is called out, not vouched for.
    recording = fleet_result().recording
    clear = [dataclasses.replace(r, inputs={**r.inputs, "data": {"kubeconfig": "Y2xlYXI="}})
             if r.name == "manager/kueue-system/multikueue-us-east4" else r for r in recording.resources
             if r.name != "manager/kueue-system/multikueue-us-east5"]
    body = section(rerender(recording=dataclasses.replace(recording, resources=clear)), "Fleet")
    assert "⚠️ its kubeconfig Secret `kueue-system/multikueue-us-east4` on the manager is **not** a Pulumi secret" in body
    assert "**no kubeconfig Secret `multikueue-us-east5` on the manager**" in body


def test_the_largest_workload_is_a_workers_not_the_managers_summed_quota():
    body = section(text(), "Largest workload per cluster queue")
    gpu = [cells(line) for line in body.splitlines() if line.startswith("| `gpu` ")]
    assert [r[1] for r in gpu] == ["`us-east4`", "`europe-west4`"]
    assert all(r[2].startswith(f"`{GPU}`: 32 nvidia.com/gpu") for r in gpu)
    assert "64 nvidia.com/gpu" not in body


def test_per_plan_sections_do_not_describe_the_manager_as_holding_capacity():
    report_text = text()
    assert "### Capacity per flavor" not in report_text  # the Fleet section's capacity table replaces it
    assert "auto-provisioned" not in report_text  # the manager provisions nothing
    assert "`dws-gpu` on every flavor" in row(section(report_text, "Cluster queues"), "`gpu`")
    flow = mermaid(report_text)
    assert 'W0["worker us-east4 (us-east4)"]' in flow and "W0 --> F0" in flow and "W2 --> F1" in flow
    replace = section(report_text, "Changes that force replacement")
    assert "| `fleet.workers[2].nodePools[].tpu.topology`, `tpu.version`, `tpu.machineType` | `v6e-flex` (2x4" in replace
    assert "renaming a worker **replaces** its cluster" in replace


def test_node_pool_protection_is_read_per_cluster():
    # Every cluster has a pool named `system`: protecting one worker's must not show on the others.
    recording = fleet_result().recording
    protected = [dataclasses.replace(r, options={**r.options, "protect": True}) if r.name == "us-east4/system" else r
                 for r in recording.resources]
    pools = section(rerender(recording=dataclasses.replace(recording, resources=protected)), "Node pools")
    by_cluster = {block.split("**")[0]: row(block, "`system`") for block in pools.split("\n\n**")[1:]}
    assert [cells(r)[-1] for r in by_cluster.values()] == ["no", "yes", "no", "no"], by_cluster


def test_where_each_sample_can_land_is_answered_per_worker():
    body = section(text(), "Admission: can each sample run, and where")
    assert cells(row(body, "`smoke-h100`")) == ["`smoke-h100`", "can land", "can land", "—"]
