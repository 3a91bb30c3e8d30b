"""Same stack, same bytes; and identities (URNs) change only where the PR says so."""

from __future__ import annotations

import difflib
import os

import pytest

from conftest import ROOT, STACKS, synth_cli, synth_stack
from gke_ai_batch.synth import output_files
from gke_ai_batch.synth.urns import urn_file, urn_list

FILES = ("resources.json", "manifests.yaml", "policy.json", "report.md", "outputs.json", "cost.json", "admission.json")


# The biggest single-cluster stack, and the one whose DWS flavors and queues prod has not.
DETERMINISM_STACKS = ("prod", "gpu-dws")


def rendered_in_a_process(out, hash_seed: str) -> dict[tuple[str, str], bytes]:
    # One process renders both stacks (each into out/STACK): a process start costs more than a stack.
    proc = synth_cli(*DETERMINISM_STACKS, "--out", str(out), env={"PYTHONHASHSEED": hash_seed})
    assert proc.returncode == 0, proc.stderr
    return {(stack, name): (out / stack / name).read_bytes() for stack in DETERMINISM_STACKS for name in FILES}


def rendered_here() -> dict[tuple[str, str], bytes]:
    """The files of this process's own renders (the session's, which other tests read too)."""
    files = {stack: output_files(synth_stack(stack)) for stack in DETERMINISM_STACKS}
    return {(stack, name): files[stack][name].encode() for stack in DETERMINISM_STACKS for name in FILES}


def test_two_runs_write_identical_files(tmp_path):
    # Different hash seeds: set and dict iteration must not leak into the output. A fresh process
    # whose seed differs from this one's (PYTHONHASHSEED as pytest was started, else a random
    # seed) against this process's render: one synth start instead of two.
    here = os.environ.get("PYTHONHASHSEED", "random")
    other = str(int(here) + 1) if here.isdigit() else "1"
    first, second = rendered_here(), rendered_in_a_process(tmp_path, other)
    differ = [f"{stack}/{name}" for (stack, name) in first if first[stack, name] != second[stack, name]]
    assert not differ, f"these files differ between PYTHONHASHSEED={here} here and ={other} in a process: {differ}"


@pytest.mark.parametrize("stack", STACKS)
def test_urns_match_the_committed_list(stack):
    committed = urn_file(stack)
    assert committed.exists(), f"missing {committed.relative_to(ROOT)}: run python -m synth.add {stack}"
    want, got = committed.read_text(), urn_list(synth_stack(stack))
    diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "committed", "synth"))
    assert got == want, (
        f"resource identities changed (each - is deleted, each + created on `pulumi up`):\n{diff}\n"
        f"if intended, run: python -m synth.urns {stack}"
    )


def test_a_rename_shows_as_a_urn_change(tmp_path):
    import yaml

    from conftest import synth_config

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.tpu-multislice.yaml").read_text())["config"]
    config["gke-ai-batch:nodePools"][0]["name"] = "slices"
    config["gke-ai-batch:flavors"][0]["pools"] = ["slices"]
    for wl in config["gke-ai-batch:workloads"]:
        wl["pool"] = "slices"
    result = synth_config(tmp_path, config, stack="tpu-multislice")
    gone = set(urn_file("tpu-multislice").read_text().splitlines()) - set(urn_list(result).splitlines())
    assert any(u.endswith("gcp:container/nodePool:NodePool::nodepool-0") for u in gone)
