"""The synth command line's rough edges (issue "Day one"): adding a stack in one step, stack
file paths as arguments, usage errors that name what is wrong, the summary's counts, and
output folders synth may not write."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from gke_ai_batch import synth
from conftest import ROOT, base_config, synth_config
from gke_ai_batch.synth import add as add_cmd
from gke_ai_batch.synth import output
from gke_ai_batch.synth.__main__ import main
from test_hostile_inputs import snapshot


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of what rendering and registering a stack reads and writes: the program, the
    stacks with their URN lists, the policy configs and the schema."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, root / name)
    for folder in ("stacks", "policy/config", "schema"):
        shutil.copytree(ROOT / folder, root / folder)
    return root


# -- 1. python -m synth.add ---------------------------------------------------------------------


def test_add_registers_a_stack_that_passes_the_suites_per_stack_checks(tree, monkeypatch):
    import test_determinism
    import test_stacks
    import test_synth_policy
    from gke_ai_batch.policy import levels

    said = add_cmd.add(tree, "east")
    assert [line.split(":")[0] for line in said] == ["stacks/Pulumi.east.yaml", "policy/config/east.json", "stacks/urns/east.txt"]
    # dev's cluster in dev's project would clash with dev itself: the copy's is renamed.
    assert "\n    name: east\n" in (tree / "stacks" / "Pulumi.east.yaml").read_text()
    assert add_cmd.missing_registration(tree, "east") == []

    # The checks the suite applies to every stack, pointed at the copy.
    result = synth.synthesize(tree, synth.StackFile.locate(tree, "east", None))
    for module in (test_determinism, test_stacks, test_synth_policy):
        monkeypatch.setattr(module, "synth_stack", lambda stack: result, raising=False)
        monkeypatch.setattr(module, "ROOT", tree)
    monkeypatch.setattr(test_synth_policy, "STACKS", ["east"])
    monkeypatch.setattr(levels, "CONFIG_DIR", tree / "policy" / "config")
    monkeypatch.setattr(test_determinism, "urn_file", lambda stack: add_cmd.urn_list_file(tree, stack))
    test_determinism.test_urns_match_the_committed_list("east")
    test_stacks.test_stack_synthesizes("east")
    test_stacks.test_stack_file_validates_against_the_schema_and_references_it("east")
    test_synth_policy.test_every_stack_says_in_its_policy_config_whether_it_is_production()


def test_add_says_what_of_the_copy_still_names_the_originals_resources(tree, capsys):
    # Rendered, a copy of dev deploys into dev's project with dev's node account: every line
    # that still says so is listed, comments naming dev's bucket included.
    notes: list[str] = []
    add_cmd.add(tree, "east", notes=notes)
    lines = (tree / "stacks" / "Pulumi.east.yaml").read_text().splitlines()
    said = "\n".join(notes)
    assert notes[0] == "stacks/Pulumi.east.yaml: still names dev's own resources; change these before deploying it:"
    listed = {int(line.split(":")[1]) for line in notes[1:]}
    expected = {n for n, line in enumerate(lines, 1) if "acme-ml-dev" in line or "418205336914" in line}
    assert listed == expected and len(listed) >= 4, said
    assert "acme-ml-dev is dev's project: set this stack's own" in said
    assert "ml-dev-nodes@acme-ml-dev.iam.gserviceaccount.com is dev's node service account: add this stack to the bootstrap" in said
    # A stack file written by hand is the user's: nothing to say about it.
    (tree / "stacks" / "Pulumi.west.yaml").write_text((tree / "stacks" / "Pulumi.east.yaml").read_text().replace("name: east", "name: west"))
    kept: list[str] = []
    add_cmd.add(tree, "west", notes=kept)
    assert kept == []


def test_add_of_a_production_stack_copies_the_production_policy_config(tree):
    text = (tree / "stacks" / "Pulumi.prod.yaml").read_text()
    (tree / "stacks" / "Pulumi.prod.yaml").rename(tree / "stacks" / "Pulumi.live.yaml")
    (tree / "stacks" / "urns" / "prod.txt").unlink()
    add_cmd.add(tree, "live")
    assert (tree / "policy" / "config" / "live.json").read_text() == (ROOT / "policy" / "config" / "prod.json").read_text()
    assert (tree / "stacks" / "Pulumi.live.yaml").read_text() == text  # an existing stack file is kept as it is


def test_add_refuses_an_invalid_stack_and_leaves_nothing_behind(tree):
    before = snapshot(tree)
    # No GKE name can be made of it (no letter to start with): the copy clashes with dev.
    with pytest.raises(add_cmd.Refused) as refused:
        add_cmd.add(tree, "1-1")
    assert "both deploy to project 'acme-ml-dev'" in str(refused.value)
    assert snapshot(tree) == before

    (tree / "stacks" / "Pulumi.bad.yaml").write_text(add_cmd.SCHEMA_HEADER + "config:\n  gke-ai-batch:cluster: {name: 7}\n")
    before = snapshot(tree)
    with pytest.raises(add_cmd.Refused) as refused:
        add_cmd.add(tree, "bad")
    assert "stacks/Pulumi.bad.yaml" in str(refused.value) and refused.value.code == 2
    assert snapshot(tree) == before  # the user's own stack file is kept; nothing else is written


def test_an_unregistered_stack_renders_with_a_note_naming_the_command(tree, tmp_path, capsys, monkeypatch):
    text = (tree / "stacks" / "Pulumi.tpu-flex.yaml").read_text()
    (tree / "stacks" / "Pulumi.tpu-flex.yaml").unlink()
    (tree / "stacks" / "Pulumi.east.yaml").write_text(text)
    monkeypatch.setattr("gke_ai_batch.synth.__main__.ROOT", tree)
    code, out, err = run(capsys, "east", "--out", tmp_path / "out")
    assert code == 0 and (tmp_path / "out" / "manifests.yaml").is_file(), err
    (note,) = err.splitlines()
    assert "note: stack 'east' is not registered" in note and "run `python -m synth.add east`" in note


def test_a_stack_edited_without_its_urn_list_renders_with_a_warning(tree, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("gke_ai_batch.synth.__main__.ROOT", tree)
    code, out, err = run(capsys, "dev", "--out", tmp_path / "same")
    assert code == 0 and err == "", err  # the committed list matches: nothing to say
    urns = tree / "stacks" / "urns" / "dev.txt"
    listed = urns.read_text().splitlines()
    urns.write_text("".join(f"{u}\n" for u in listed[:-3]) + "urn:pulumi:dev::gke-ai-batch::x:y:Z::gone\n")
    code, out, err = run(capsys, "dev", "--out", tmp_path / "out")
    assert code == 0 and (tmp_path / "out" / "manifests.yaml").is_file(), err
    (warning,) = err.splitlines()
    assert f"warning: stacks/urns/dev.txt lists {len(listed) - 2} URNs, this render registers {len(listed)} (3 new, 1 gone)" in warning
    assert "run `python -m synth.urns dev`" in warning


def test_a_stack_file_outside_stacks_does_not_write_into_the_real_stacks_folder(tree, capsys, monkeypatch):
    monkeypatch.setattr("gke_ai_batch.synth.__main__.ROOT", tree)
    (tree / "scratch").mkdir()
    (tree / "scratch" / "Pulumi.dev.yaml").write_text((tree / "stacks" / "Pulumi.dev.yaml").read_text())
    code, out, err = run(capsys, "--config", tree / "scratch" / "Pulumi.dev.yaml")
    assert code == 0, err
    assert (tree / "build" / "configs" / "scratch" / "dev" / "manifests.yaml").is_file()
    assert not (tree / "build" / "dev").exists() and "wrote " in out and "configs/scratch/dev" in out
    # The stack's own file, however it is named, still renders into build/dev.
    code, out, err = run(capsys, "--config", tree / "stacks" / "Pulumi.dev.yaml")
    assert code == 0 and (tree / "build" / "dev" / "manifests.yaml").is_file(), err


# -- 2, 3, 4: naming the stack ------------------------------------------------------------------


def test_a_path_to_a_stack_file_is_read_as_config(tmp_path, capsys, monkeypatch):
    from gke_ai_batch.synth.stackfile import stack_argument

    monkeypatch.chdir(ROOT)
    assert stack_argument(ROOT, "stacks/Pulumi.dev.yaml") == ("dev", Path("stacks/Pulumi.dev.yaml"))
    assert stack_argument(ROOT, "Pulumi.dev.yaml") == ("dev", ROOT / "stacks" / "Pulumi.dev.yaml")
    assert stack_argument(ROOT, "dev") == ("dev", None)
    code, out, err = run(capsys, "stacks/Pulumi.tpu-flex.yaml", "--out", tmp_path / "out")
    assert code == 0 and out.startswith("tpu-flex: ") and (tmp_path / "out" / "report.md").is_file(), err


def test_a_missing_config_file_is_said_to_be_missing(tmp_path, capsys):
    for argv in (["--config", tmp_path / "nofile.yaml"], [tmp_path / "nofile.yaml"], ["--config", tmp_path / "Pulumi.x.yaml"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "no such stack file" in err and "named Pulumi" not in err, err


def test_a_misspelt_stack_gets_a_suggestion(tree, capsys):
    (tree / "stacks" / "Pulumi.east.yaml").write_text("")
    with pytest.raises(synth.StackFileError, match="did you mean 'east'"):
        synth.StackFile.locate(tree, "eats", None)
    code, _, err = run(capsys, "dve")
    assert code == 2 and "(did you mean 'dev'?)" in err


# -- 5, 14: --out -------------------------------------------------------------------------------


def test_a_bad_out_is_a_usage_error_about_out(capsys):
    before = snapshot(ROOT / "stacks")
    code, _, err = run(capsys, "dev", "--out", ROOT / "stacks")
    assert code == 2
    assert "--out: is not a folder synth wrote" in err
    assert "problem" not in err and err.splitlines()[-1] == "synth: dev: nothing written"
    assert snapshot(ROOT / "stacks") == before


def test_a_read_only_out_or_parent_is_refused_and_left_as_it_was(tmp_path, capsys):
    out = tmp_path / "parent" / "out"
    out.parent.mkdir()
    output.write(out, {"report.md": "previous\n"})
    os.chmod(out, 0o555)  # as root too: the folder's mode says it must not change
    before = snapshot(tmp_path)
    with pytest.raises(output.OutputError, match="is read-only"):
        output.check_target(out, ROOT)
    code, _, err = run(capsys, "dev", "--out", out)
    assert code == 2 and "--out: is read-only" in err, err
    os.chmod(out, 0o755)
    os.chmod(out.parent, 0o555)
    for target in (out, out.parent / "new", out.parent / "new" / "deeper"):
        with pytest.raises(output.OutputError, match="cannot be written: .* is read-only"):
            output.check_target(target, ROOT)
    os.chmod(out.parent, 0o755)
    assert snapshot(tmp_path) == before


def test_replacing_an_output_with_a_read_only_subfolder_leaves_no_old_folder(tmp_path):
    out = tmp_path / "out"
    output.write(out, {"report.md": "previous\n", "manifests/a.yaml": "a\n"})
    os.chmod(out / "manifests", stat.S_IRUSR | stat.S_IXUSR)
    output.write(out, {"report.md": "new\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "report.md").read_text() == "new\n"


# -- 7: the summary -----------------------------------------------------------------------------


def test_the_summary_counts_in_words_and_names_gpus_as_gpus():
    from gke_ai_batch.synth.summary import summary

    pool = SimpleNamespace(
        name="l4", tpu=None, kind="gpu", nodes=2, floor=0, autoscaled=True, capacity="flexStart", machine_type="g2-standard-8", chips=2
    )
    plan = SimpleNamespace(pools=[pool], slices=1, vms=1, tpu_chips=1, gpus=1)
    head, columns, row = summary("east", plan).splitlines()
    assert head == "east: 1 node pool, 1 TPU slice, 1 VM at most, 1 TPU chip, 1 GPU"
    assert "chips" not in columns.split() and row.endswith(" 0-2        2 GPUs")
    # An autoscaled pool with a floor shows it, as the report does (it said 0-2 whatever minNodes).
    pool.floor = 1
    assert summary("east", plan).splitlines()[2].endswith(" 1-2        2 GPUs")


# -- 8: durations in the user's unit ------------------------------------------------------------


@pytest.mark.parametrize(
    "written, words",
    [
        ("200h", "200h exceeds GKE's limit of 168h (7 days)"),
        ("10081m", "10081m exceeds GKE's limit of 10080m (7 days)"),
        (604801, "604801s exceeds GKE's limit of 604800s (7 days)"),
        # Go's form (several units): the limit in the smallest unit written; what Go reads but
        # no count of whole seconds is, and a quoted number, each with its own reason.
        ("169h30m", "169h30m exceeds GKE's limit of 10080m (7 days)"),
        ("604801", "'604801' is not a duration: write seconds as a number (604801, unquoted) or with a unit ('604801s')"),
        ("1500ms", "'1500ms' is not a whole number of seconds"),
        ("1.5h", "as Go writes durations (e.g. '24h', '1h30m'"),
    ],
)
def test_a_duration_over_its_limit_is_refused_in_the_unit_it_was_written_in(tmp_path, written, words):
    from support.diagnostics import assert_names
    from test_config_errors import pools, valid

    config = valid()
    pools(config)[1].update(maxRunDuration=written)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", "gke-ai-batch:nodePools[1].maxRunDuration", words)
    assert "720000s" not in result.error


def test_a_duration_beyond_go_is_refused_in_the_unit_it_was_written_in(tmp_path):
    from support.diagnostics import assert_names

    config = base_config(kueue={"waitForPodsReady": {"timeout": "999999999999999d"}})
    result = synth_config(tmp_path, config)
    assert_names(
        result.error,
        tmp_path / "Pulumi.test.yaml",
        "gke-ai-batch:kueue.waitForPodsReady.timeout",
        "999999999999999d is beyond Go's time.Duration (106751d, about 292 years)",
    )


# -- 15: masked secrets keep their shape --------------------------------------------------------


def test_a_masked_secret_keeps_its_keys_and_a_kubernetes_secret_stays_valid():
    from gke_ai_batch.synth import engine

    secret = {engine._SIG_KEY: engine._SECRET_SIG, "value": {"kubeconfig": "YXBpVmVyc2lvbg==", "list": ["a", 1]}}
    assert engine.plain({"data": secret}) == {"data": {"kubeconfig": "[secret]", "list": ["[secret]", "[secret]"]}}
    assert engine.plain({"stringData": {**secret, "value": "token"}}) == {"stringData": "[secret]"}
    inputs = engine._secret_data_masked("kubernetes:core/v1:Secret", {"data": {"kubeconfig": "[secret]"}})
    assert inputs == {"data": {"kubeconfig": engine.SECRET_DATA_MASK}}
    assert engine.is_masked(inputs["data"]) and not engine.is_masked({"kubeconfig": "YXBpVmVyc2lvbg=="})
