"""Stacks a pull request adds or removes: `python -m synth STACK --new` diffs a stack against
nothing, `--removed --base DIR` writes what a removed stack's base render had (its cost and
capacity), and the PR workflow's two synth steps pick the right one for each base state."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import ROOT


def _cli(capsys, *argv):
    from gke_ai_batch.synth.__main__ import main

    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def test_a_removed_stack_shows_its_base_cost_and_capacity_and_a_new_one_everything_added(tmp_path, capsys):
    assert _cli(capsys, "tpu-multislice", "--out", tmp_path / "base", "--quiet") == (0, "")
    cost = json.loads((tmp_path / "base" / "cost.json").read_text())["total"]["per30DaysMax"]

    # The base is the removed stack's own render on the base branch (another stack's is refused).
    assert _cli(capsys, "tpu-multislice", "--removed", "--base", tmp_path / "base", "--out", tmp_path / "gone", "--quiet") == (0, "")
    assert sorted(p.name for p in (tmp_path / "gone").iterdir() if not p.name.startswith(".")) == ["diff.json", "diff.md"]
    data = json.loads((tmp_path / "gone" / "diff.json").read_text())
    assert data["removedStack"] and data["cost"] == {**data["cost"], "before": cost, "after": None}
    assert data["capacity"]["vlp-24"] == {"before": {"pools": 3, "slices": 3, "vms": 6, "accelerators": 24}, "after": None}
    assert data["operations"] == []  # removing a stack file destroys nothing
    text = (tmp_path / "gone" / "diff.md").read_text()
    assert "**Removed stack:**" in text and f"${cost:,.2f}" in text and "| `vlp-24` | 3 | 6 | 24 |" in text

    assert _cli(capsys, "tpu-multislice", "--new", "--out", tmp_path / "new", "--quiet") == (0, "")
    data = json.loads((tmp_path / "new" / "diff.json").read_text())
    assert data["newStack"] and data["cost"]["before"] is None and data["cost"]["after"] == cost
    assert not data["resources"]["deleted"] and len(data["resources"]["added"]) > 10


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dev", "--new", "--removed"], "give one of --new and --removed"),
        (["dev", "--new", "--base", "x"], "--new diffs against nothing: leave out --base"),
        (["dev", "--removed"], "--removed takes one STACK name and --base"),
        (["dev", "prod", "--removed", "--base", "x"], "--removed takes one STACK name and --base"),
    ],
)
def test_new_and_removed_are_usage_errors_when_misused(capsys, argv, message):
    code, err = _cli(capsys, *argv)
    assert code == 2 and message in err


def test_a_removed_stack_whose_base_is_no_render_is_a_usage_error(tmp_path, capsys):
    code, err = _cli(capsys, "gone", "--removed", "--base", tmp_path / "none")
    assert code == 2 and f"{tmp_path / 'none'}: --base: is not a folder" in err


# -- the workflow's steps, run with bash against a stand-in python -----------------------------

FAKE_PYTHON = """#!/bin/sh
echo "$(basename "$PWD")|$*" >> "$LOG"
case "$*" in
  *"-m synth"*--removed*|*"-m synth"*--new*) ;;
  *"-m synth"*) mkdir -p "build/$STACK" ;;
esac
"""


def _steps() -> dict[str, str]:
    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "pull-request.yml").read_text())["jobs"]
    order = jobs["synth"]["steps"]
    return {s["id"]: s["run"] for s in order if s.get("id") in ("base", "synth")}


@pytest.mark.skipif(shutil.which("bash") is None, reason="the workflow's steps are bash")
@pytest.mark.parametrize(
    ("stack", "state", "head_call"),
    [
        ("keep", "rendered", '-m synth keep --base .base/build/keep'),
        ("fresh", "new", "-m synth fresh --new"),
        ("gone", "removed", "-m synth gone --removed --base .base/build/gone"),
    ],
)
def test_the_pr_workflow_diffs_kept_new_and_removed_stacks(tmp_path, stack, state, head_call):
    root = tmp_path / "head"
    (root / ".github" / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / ".github" / "scripts" / "stacks.py", root / ".github" / "scripts" / "stacks.py")
    for folder, names in ((root, ("keep", "fresh")), (root / ".base", ("keep", "gone"))):
        (folder / "stacks").mkdir(parents=True)
        for name in names:
            (folder / "stacks" / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "STACK": stack, "LOG": str(tmp_path / "log"), "GITHUB_OUTPUT": str(tmp_path / "out"),
           "RUNNER_TEMP": str(tmp_path)}
    steps = _steps()
    subprocess.run(["bash", "-e", "-c", steps["base"]], cwd=root / ".base", env=env, check=True, capture_output=True)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    assert outputs["state"] == state
    env["BASE_STATE"] = state
    subprocess.run(["bash", "-e", "-c", steps["synth"]], cwd=root, env=env, check=True, capture_output=True)
    calls = (tmp_path / "log").read_text().splitlines()
    # The base renders its own stack (a removed one too); the head renders or diffs as the state says.
    assert (f".base|-m synth {stack}" in calls) == (state != "new")
    assert f"head|{head_call}" in calls, calls
    assert (root / "build" / stack / "base-state").read_text() == state + "\n"
