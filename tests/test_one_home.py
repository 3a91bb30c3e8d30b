"""One home for every fact: the domain layer holds the catalogue, GKE's label vocabulary, the
version floors and the pod-template parser, and config, plan, model, policy and report read
them. A TPU generation added to the catalogue alone is accepted end to end; where two copies
of a fact disagreed, the behaviour the upstream source gives is pinned here."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT, base_config, synth_config
from support.diagnostics import assert_names
from support.files import python_files

NS = "gke-ai-batch"

# Adds a generation to gke_ai_batch/domain/catalogue.py's TPU_GENERATIONS, and nowhere else,
# before anything else is imported; then synthesizes the stack and prints what each layer made
# of it. A fresh process, so the generation never leaks into other tests.
_FAKE_GENERATION = r"""
import dataclasses, json, sys
from pathlib import Path
root, stack, low = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
sys.path.insert(0, str(root))
from gke_ai_batch.domain import catalogue
catalogue.TPU_GENERATIONS["v9z"] = dataclasses.replace(
    catalogue.TPU_GENERATIONS["v6e"], version="v9z", accelerator="tpu-v9z-slice",
    machine_types={"ct9z-standard-4t": 4}, default_machine_type="ct9z-standard-4t",
    single_chip_machine_type=None, shapes_2d=("2x2", "2x4", "4x4"),
    quota=catalogue.Quota("TPU v9z chips"), preemptible_quota=catalogue.Quota("Preemptible TPU v9z chips"),
    min_gke_version="1.35.0-gke.1000",
)
from gke_ai_batch import synth
from gke_ai_batch.policy import rules
from gke_ai_batch.model import facts

result = synth.synthesize(root, synth.StackFile.locate(root, None, stack))
resources = [rules.Resource(r.urn, r.type, r.name, r.inputs) for r in result.recording.resources]
pool = next(r for r in result.recording.resources if r.type == "gcp:container/nodePool:NodePool" and r.name == "slice-0")
refused = synth.synthesize(root, synth.StackFile.locate(root, None, low))
print(json.dumps({
    "exit": result.exit_code,
    "error": result.error,
    "pool": pool.inputs,
    "manifests": result.manifests_by_cluster[""],
    "policy_pools": [(p.labels, p.resource, p.per_node) for p in facts.stack_pools(resources)],
    "mandatory": [v for v in result.violations if v.get("level") == "mandatory"],
    "report": result.extra_files.get("report.md", ""),
    "refused_exit": refused.exit_code,
    "refused": refused.error,
}, default=str))
"""


def _stack(min_master: str) -> str:
    return f"""config:
  gcp:project: test-project
  gcp:region: us-central1
  {NS}:cluster: {{name: test, nodeLocations: [us-central1-a], minMasterVersion: "{min_master}"}}
  {NS}:catalogue: {{zones: {{us-central1-a: {{tpu: [v9z]}}}}}}
  {NS}:nodePools:
    - {{name: slice, tpu: {{version: v9z, topology: 4x4}}, zones: [us-central1-a]}}
  {NS}:clusterQueues: [{{name: cq}}]
  {NS}:teams: [{{namespace: team-a, localQueue: lq, clusterQueue: cq, podSecurity: privileged}}]
  {NS}:workloads: [{{kind: jobset, name: train, team: team-a, pool: slice, image: "i:1"}}]
"""


def test_a_tpu_generation_added_to_the_catalogue_alone_is_accepted_end_to_end(tmp_path):
    (tmp_path / "Pulumi.fake.yaml").write_text(_stack("1.35"))
    (tmp_path / "Pulumi.low.yaml").write_text(_stack("1.34"))
    proc = subprocess.run(
        [sys.executable, "-c", _FAKE_GENERATION, str(ROOT), str(tmp_path / "Pulumi.fake.yaml"), str(tmp_path / "Pulumi.low.yaml")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    # Config accepts it (the TPU version Literals and the zone override read the catalogue).
    assert out["exit"] == 0, out["error"]
    # The plan sizes it: the generation's machine type, 4 VMs of 4 chips for a 4x4 slice.
    assert out["pool"]["nodeConfig"]["machineType"] == "ct9z-standard-4t"
    assert out["pool"]["nodeCount"] == 4
    assert out["pool"]["placementPolicy"]["tpuTopology"] == "4x4"
    # Its flavor selects GKE's accelerator label with the generation's value.
    assert "cloud.google.com/gke-tpu-accelerator: tpu-v9z-slice" in out["manifests"]
    # The policy pack reads the recorded pool as this generation's slice.
    [(labels, resource, per_node)] = [p for p in out["policy_pools"] if p[1] is not None]
    assert labels["cloud.google.com/gke-tpu-accelerator"] == "tpu-v9z-slice"
    assert (resource, per_node) == ("google.com/tpu", 4)
    assert out["mandatory"] == []
    # The model admits the workload on it, and the report shows both.
    assert re.search(r"\| `train` \| `cq` \| `tpu-v9z-slice-4x4` \|.*admitted", out["report"]), out["report"]
    assert "TPU v9z chips" in out["report"]
    # Its version floor (catalogue.min_gke_version) is the one config checks.
    assert out["refused_exit"] == 2
    assert f"{NS}:nodePools[0].tpu.version" in out["refused"]
    assert "v9z pools need GKE 1.35.0-gke.1000 or later" in out["refused"]


# -- where copies disagreed ----------------------------------------------------------------------


def test_a_flavor_may_select_the_label_gke_puts_on_spot_nodes(tmp_path):
    """GKE labels every Spot node cloud.google.com/gke-spot=true (GKE docs concepts/spotvms);
    config's copy of a pool's labels lacked it and refused a flavor selecting it, while the
    admission model's copy had it."""
    config = base_config(
        nodePools=[{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "capacity": "spot", "maxNodes": 2}],
        flavors=[{"name": "spot-l4", "pools": ["l4"], "nodeLabels": {"cloud.google.com/gke-spot": "true"}}],
        clusterQueues=[{"name": "cq"}],
    )
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


def test_a_flavor_selecting_a_label_the_pool_lacks_is_still_refused(tmp_path):
    config = base_config(
        nodePools=[{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}],
        flavors=[{"name": "l4", "pools": ["l4"], "nodeLabels": {"cloud.google.com/gke-spot": "true"}}],
        clusterQueues=[{"name": "cq"}],
    )
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2
    assert_names(
        result.error, tmp_path / "Pulumi.test.yaml", f'{NS}:flavors[0].nodeLabels["cloud.google.com/gke-spot"]',
        "nodes do not carry cloud.google.com/gke-spot=true",
    )


# Helm chart versions are SemVer 2 and a given version is found by exact string first
# (helm/helm pkg/repo/index.go IndexFile.Get): config and the policy pack now read one rule.
@pytest.mark.parametrize(
    "version, pinned",
    [
        ("0.19.2", True),
        ("0.20.0-rc.1", True),  # a pre-release is one exact release (config refused it)
        ("0.19.2+build.5", True),
        ("0.019.2", False),  # leading zero: not SemVer, no chart has it (config accepted it)
        ("v0.19.2", False),
        ("^0.19", False),
        ("0.19", False),
    ],
)
def test_config_and_the_policy_pack_agree_on_a_pinned_chart_version(tmp_path, version, pinned):
    from gke_ai_batch.policy import rules

    from gke_ai_batch.policy.rules.base import Resource

    config = base_config(jobset={"version": version})
    result = synth_config(tmp_path, config)
    release = Resource("urn:r", "kubernetes:helm.sh/v3:Release", "jobset", {"chart": "oci://x/jobset", "version": version})
    found = list(rules.by_name("helm-chart-pinned").check(release.type, release.props, {}))
    if pinned:
        assert result.exit_code == 0, result.error
        assert found == []
    else:
        assert result.exit_code == 2
        assert_names(result.error, tmp_path / "Pulumi.test.yaml", f"{NS}:jobset.version", "is not a pinned JobSet chart version")
        assert len(found) == 1


def test_a_cluster_in_an_ai_zone_is_zonal_to_the_policy_pack():
    """us-central1-ai1a is a zone (Compute Engine "About AI zones"); the pack's own zone pattern
    lacked AI zones and counted three zones for a cluster there, as for a regional one."""
    from gke_ai_batch.model import facts
    from gke_ai_batch.policy.rules.base import Resource

    cluster = Resource("urn:c", "gcp:container/cluster:Cluster", "c", {"location": "us-central1-ai1a"})
    assert facts.cluster_facts([cluster]).zones == 1
    regional = Resource("urn:c", "gcp:container/cluster:Cluster", "c", {"location": "us-central1"})
    assert facts.cluster_facts([regional]).zones == 3


# -- nothing retyped -------------------------------------------------------------------------------

# Facts whose home is gke_ai_batch/domain/: their literal text appears in no other code.
_FACTS = (
    '"cloud.google.com/gke-spot"',
    '"cloud.google.com/gke-flex-start"',
    '"cloud.google.com/gke-queued"',
    '"cloud.google.com/gke-accelerator"',
    '"cloud.google.com/gke-tpu-accelerator"',
    '"cloud.google.com/gke-tpu-topology"',
    '"cloud.google.com/gke-nodepool"',
    '"google.com/tpu"',
    '"nvidia.com/gpu"',
    '"1.34.0-gke.2201000"',
    '"1.33.0-gke.1712000"',
    "DEFAULT_ZONES_PER_REGION = ",
    "DEFAULT_REGIONAL_ZONES",
    '"RAPID", "REGULAR"',
    '"onDemand", "spot"',
    '"v4"',
    '"v5e"',
    '"v5p"',
    '"v6e"',
    '"tpu7x"',
)


def test_no_fact_of_the_domain_is_retyped_outside_it():
    code = [
        p for d in ("gke_ai_batch", "policy", "synth", "bootstrap") for p in python_files(ROOT / d)
        if "domain" not in p.relative_to(ROOT).parts
    ] + [ROOT / "__main__.py"]
    found = [
        f"{p.relative_to(ROOT)}: {fact}"
        for p in code
        for fact in _FACTS
        if fact in p.read_text()
    ]
    assert found == []


@pytest.mark.parametrize("stack", ["tpu-flex", "gpu-dws", "tpu-multislice"])
def test_config_and_the_policy_pack_read_the_same_node_labels(stack):
    """A pool's node labels are merged once (naming.carried_labels): from the stack's pool entry
    for config and the admission model, from the recorded pool for the policy pack."""
    from conftest import synth_stack
    from gke_ai_batch.domain import naming
    from gke_ai_batch.policy import rules
    from gke_ai_batch.model import facts

    result = synth_stack(stack)
    resources = [rules.Resource(r.urn, r.type, r.name, r.inputs) for r in result.recording.resources]
    recorded = {p.name: p.labels for p in facts.stack_pools(resources)}
    entries = {e.name: e for e in result.plan.config.node_pools}
    assert result.plan.pools
    for pool in result.plan.pools:
        assert naming.node_labels(entries[pool.entry], pool.name) == recorded[pool.name]
