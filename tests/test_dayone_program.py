"""synth calls a program through a function, and renders any Pulumi program that uses the
library (`python -m synth --program DIR --config FILE`)."""

from __future__ import annotations

import json
import runpy

from conftest import ROOT, synth_stack


def test_the_stack_program_is_a_function_and_importing_it_registers_nothing():
    """Loaded as a module (not as __main__), __main__.py defines `program` and runs nothing:
    synth calls that function and reads what it returns, never the program's globals."""
    from gke_ai_batch.plan.program import ENTRY, ProgramResult

    namespace = runpy.run_path(str(ROOT / "__main__.py"), run_name="not_main")
    assert callable(namespace[ENTRY])
    assert not {"plan", "admission", "fleet_plan", "config"} & set(namespace)
    result = synth_stack("existing-cluster")
    program = result.recording.result
    assert isinstance(program, ProgramResult)
    assert (result.config, result.plan, result.admission, result.fleet) == (
        program.config, program.plan, program.admission, None)


def test_pulumi_runs_the_stack_program_as_a_script_and_it_registers_the_same():
    """`pulumi up` runs __main__.py as a script (run_name __main__, pulumi-language-python-exec):
    that path registers exactly what synth's call of `program()` does."""
    from gke_ai_batch import synth
    from gke_ai_batch.synth import engine, stackfile

    stack_file = synth.StackFile.locate(ROOT, "existing-cluster", None)
    config = stackfile.read(stack_file)
    with engine.lean_runtime():
        script = engine.run(
            ROOT / "__main__.py",
            project=synth.project_name(ROOT),
            stack="existing-cluster",
            config=config.values,
            secret_keys=config.secret_keys,
            outputs_for=synth.outputs_for(config.values["gcp:project"]),
        )
    called = synth_stack("existing-cluster").recording
    assert script.result is None
    assert [r.to_json() for r in script.resources] == [r.to_json() for r in called.resources]
    assert json.dumps(script.outputs, sort_keys=True) == json.dumps(called.outputs, sort_keys=True)


# --- python -m synth --program DIR --config FILE ----------------------------------------------

EXAMPLE = ROOT / "examples" / "existing-cluster"


def run(capsys, *argv) -> tuple[int, str, str]:
    from gke_ai_batch.synth.__main__ import main

    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def project(tmp_path, program: str, config: str = "config: {}\n", pulumi_yaml: str = "name: lib\nruntime: python\n"):
    """A Pulumi project folder with this __main__.py, and its stack file Pulumi.test.yaml."""
    root = tmp_path / "prog"
    root.mkdir()
    (root / "Pulumi.yaml").write_text(pulumi_yaml)
    (root / "__main__.py").write_text(program)
    (root / "Pulumi.test.yaml").write_text(config)
    return root


def test_the_existing_cluster_example_renders_with_its_pools_kueue_and_queue(tmp_path, capsys):
    from gke_ai_batch.config.batch import KueueConfig
    from gke_ai_batch.plan.kueue import KUEUE_CHART

    out = tmp_path / "out"
    code, stdout, err = run(capsys, "--program", EXAMPLE, "--config", EXAMPLE / "Pulumi.dev.yaml", "--out", out)
    assert code == 0, err
    assert f"wrote {out}" in stdout and "3 node pools" in stdout
    # docs/synth.md shows this line as the example's output.
    assert f"\n{stdout.splitlines()[0]}\n" in (ROOT / "docs" / "synth.md").read_text()
    resources = json.loads((out / "resources.json").read_text())
    types = [r["type"] for r in resources]
    assert "gcp:container/cluster:Cluster" not in types
    pools = {r["name"]: r["inputs"] for r in resources if r["type"] == "gcp:container/nodePool:NodePool"}
    assert sorted(pools) == ["h100-dws", "v6e-0", "v6e-1"]
    assert {p["cluster"] for p in pools.values()} == {"ml-shared"}
    assert pools["h100-dws"]["queuedProvisioning"] == {"enabled": True}
    releases = {r["inputs"]["name"]: r["inputs"] for r in resources if r["type"] == "kubernetes:helm.sh/v3:Release"}
    assert (releases["kueue"]["chart"], releases["kueue"]["version"]) == (KUEUE_CHART, KueueConfig().version)
    assert "jobset" in releases
    # The typed components, with the webhook readiness gate's probe.
    assert {"gke-ai-batch:index:KueueInstall", "gke-ai-batch:index:ClusterQueue", "gke-ai-batch:index:Team"} <= set(types)
    assert "kubernetes:core/v1:Pod" in types
    manifests = (out / "manifests.yaml").read_text()
    assert "kind: ClusterQueue" in manifests and "kind: LocalQueue" in manifests
    assert json.loads((out / "policy.json").read_text()) == []
    report = (out / "report.md").read_text()
    assert report.startswith("## `dev`: program `examples/existing-cluster`")
    assert "an existing cluster (the program creates none)" in report
    assert "| `h100-dws` | queued | a3-highgpu-8g |" in report
    assert "| `tpu-v6e-slice-4x4-spot` | `v6e-0`, `v6e-1` | spot | 32 TPU chips | google.com/tpu 32 |" in report
    assert "| `research` | `research` | `research` |" in report
    # The admission model's verdict on the program's sample, read off what it registered.
    assert "| `train-v6e` | `research` | `tpu-v6e-slice-4x4-spot` | none | `v6e-0`, `v6e-1` | ✅ admitted |" in report
    assert json.loads((out / "cost.json").read_text())["total"]["per30DaysMax"] > 0


def test_the_report_shows_the_models_verdicts_when_the_recording_gives_them(tmp_path, monkeypatch):
    """One seam: whatever admission_from_recording returns is what the report's admission
    sections show (the same renderer as a stack's); None says why there is nothing."""
    from gke_ai_batch import synth
    from gke_ai_batch.synth import program as program_mod

    stack = synth_stack("existing-cluster")
    monkeypatch.setattr(program_mod, "admission_from_recording", lambda recording: stack.admission)
    project_ = program_mod.read_project(EXAMPLE)
    result = program_mod.synthesize_program(project_, synth.StackFile.locate(ROOT, None, EXAMPLE / "Pulumi.dev.yaml"))
    report = result.extra_files["report.md"]
    section = report.split("### Admission: can each sample run, and where", 1)[1].split("###", 1)[0]
    assert "`v6e-smoke`" in section and "Not computed" not in section


def test_usage_errors_of_program_are_messages(tmp_path, capsys):
    code, _, err = run(capsys, "--program", EXAMPLE)
    assert code == 2 and "--program needs --config FILE" in err
    code, _, err = run(capsys, "--program", EXAMPLE, "dev", "--config", EXAMPLE / "Pulumi.dev.yaml")
    assert code == 2 and "not STACK names or --all" in err
    code, _, err = run(capsys, "--program", tmp_path / "nope", "--config", EXAMPLE / "Pulumi.dev.yaml", "--out", tmp_path / "o")
    assert code == 2 and "--program: no such folder: --program takes a Pulumi project folder" in err
    root = project(tmp_path, "", pulumi_yaml="name: bad name\nruntime: nodejs\nmain: src\n")
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o")
    assert code == 2
    assert "Pulumi.yaml:1:1: name: 'bad name': project names are limited to 100 characters" in err
    assert "Pulumi.yaml:2:1: runtime: 'nodejs': synth runs Python programs only" in err
    assert "Pulumi.yaml:3:1: main: 'src' is no file or folder of the project" in err
    assert not (tmp_path / "o").exists()


ARGS_ERROR = """
from gke_ai_batch.components.nodepools import TpuSlices

ref = {"name": "c", "location": "us-east5", "project": "p", "node_locations": ["us-east5-b"]}
TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x5"})
"""


def test_a_library_error_in_the_program_is_exit_2_at_its_line_and_arg_path(tmp_path, capsys):
    root = project(tmp_path, ARGS_ERROR)
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o")
    assert code == 2, err
    assert "prog/__main__.py:5: TpuSlices v6e: args.topology: '4x5' is not a v6e topology" in err
    assert "Traceback" not in err and not (tmp_path / "o").exists()


def test_any_other_failure_of_the_program_is_exit_70_in_one_line(tmp_path, capsys):
    root = project(tmp_path, "import sys\nprint('from the program')\nraise RuntimeError('boom\\n  twice')\n")
    code, out, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o")
    assert code == 70
    assert "prog/__main__.py:3: the program failed: RuntimeError: boom twice (run again with --debug" in err
    assert "Traceback" not in err and out == "" and "from the program" in err
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--debug", "--out", tmp_path / "o")
    assert code == 70 and "Traceback" in err and "raise RuntimeError" in err
    # A program that exits ends its render, not synth.
    (root / "__main__.py").write_text("import sys\nsys.exit(4)\n")
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--json", "--out", tmp_path / "o")
    assert code == 70


SEES = """
import os, sys
import pulumi

pulumi.export("argv", sys.argv[1:])
pulumi.export("cwd", os.path.basename(os.getcwd()))
pulumi.export("token", pulumi.Config().require_secret("token"))
pulumi.export("plain", pulumi.Config("gke-ai-batch").require("key"))
print("noise")
"""


def test_the_program_runs_as_the_language_host_runs_it_with_secrets_masked(tmp_path, capsys):
    config = "config:\n  lib:token:\n    secure: AAABAHtoken\n  gke-ai-batch:key: {secure: AAABAHkey}\n"
    root = project(tmp_path, SEES, config)
    code, out, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o", "--json")
    assert code == 0, err
    assert json.loads(out)["exitCode"] == 0  # the program's print did not reach stdout
    outputs = json.loads((tmp_path / "o" / "outputs.json").read_text())
    assert outputs == {"argv": [], "cwd": "prog", "token": "[secret]", "plain": "[secret]"}
    assert "AAABAH" not in "".join(p.read_text() for p in (tmp_path / "o").iterdir() if p.is_file())


def test_the_librarys_config_error_in_a_program_is_placed_in_the_stack_file(tmp_path, capsys):
    """A program may load this project's stack config keys itself: their problems point into FILE."""
    program = "from gke_ai_batch.config import load_from_pulumi\nload_from_pulumi(source='x', project='p')\n"
    config = "config:\n  gke-ai-batch:cluster: {name: c}\n  gke-ai-batch:nodePools:\n    - {name: a, tpu: {version: v6e, topology: 4x5}}\n"
    root = project(tmp_path, program, config)
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o")
    assert code == 2, err
    assert "prog/Pulumi.test.yaml:4:" in err and "gke-ai-batch:nodePools[0].tpu.topology: '4x5' is not a v6e topology" in err


def test_a_project_file_of_the_wrong_shape_is_told_at_each_key(tmp_path, capsys):
    root = project(tmp_path, "", pulumi_yaml="name: 123\nruntime: {options: {}}\n")
    (root / "__main__.py").unlink()
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o")
    assert code == 2
    assert "Pulumi.yaml:1:1: name: must be a non-empty string, not 123" in err
    assert "Pulumi.yaml:2:1: runtime.name: required: the runtime's name" in err
    assert "has no __main__.py to run" in err
    (root / "Pulumi.yaml").unlink()
    (root / "Pulumi.yaml").mkdir()
    code, _, err = run(capsys, "--program", root, "--config", root / "Pulumi.test.yaml", "--out", tmp_path / "o")
    assert code == 2 and "Pulumi.yaml: not a regular file" in err and "Traceback" not in err
