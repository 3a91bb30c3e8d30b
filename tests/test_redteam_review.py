"""The PR review's diff (`python -m synth STACK --base DIR`, gke_ai_batch/synth/diff.py) against a hostile or
stale base folder: whatever the folder holds, the answer is a usage error about --base (exit 2)
naming the file and what is wrong with it, or a diff that says what it could not compare; never
an internal error (exit 70), never a hang."""

from __future__ import annotations

import json
import os

import pytest

from conftest import synth_stack

STACK = "tpu-multislice"


@pytest.fixture(scope="module")
def head():
    from gke_ai_batch import synth
    result = synth_stack(STACK)
    assert not result.diagnostics
    return synth.output_files(result)


def _base(tmp_path, head, **replace: str | None):
    """A base folder: the head's files with some replaced (None: left out)."""
    folder = tmp_path / "base"
    folder.mkdir()
    for name, text in {**head, **replace}.items():
        if text is not None:
            (folder / name).write_text(text, encoding="utf-8")
    return folder


def _diff(head, base):
    """What the CLI does with --base: diff.md and diff.json, or the usage error it prints."""
    from gke_ai_batch.synth.__main__ import _diff

    return _diff(STACK, dict(head), base, False)


def _refused(result, file: str, words: str):
    from gke_ai_batch.synth.diagnostics import Diagnostic

    assert isinstance(result, Diagnostic), "the base was accepted"
    assert result.rule == "usage" and result.path == "--base", result
    assert result.file.endswith(file) and words in result.message, result.render()


# Each file parses as JSON or YAML but is not shaped as synth writes it: before, each of these
# was an internal error (KeyError, TypeError, AttributeError: exit 70, "a bug in synth").
@pytest.mark.parametrize(
    "name, text, words",
    [
        ("resources.json", '[{"urn": 5}]', "resources.json[0].urn is not a string"),
        ("resources.json", '[{"type": "x"}]', "resources.json[0].urn is not a string"),
        ("resources.json", '[{"urn": "u", "type": "t", "name": "n", "inputs": []}]', "resources.json[0].inputs is not an object"),
        ("cost.json", '{"pools": [1, 2], "total": {}}', "cost.json.pools[0] is not an object"),
        ("cost.json", '{"pools": [], "total": "abc"}', "cost.json.total is not an object"),
        ("cost.json", '{"pools": [], "total": {"per30DaysMax": "lots"}}', "cost.json.total.per30DaysMax is not a number"),
        ("cost.json", '{"pools": [{"pool": "a", "per30DaysMax": []}], "total": {}}', "cost.json.pools[0].per30DaysMax is not a number"),
        ("admission.json", '{"workloads": [1], "queues": "x"}', "admission.json.workloads is not an object"),
        ("admission.json", '{"workloads": {}, "queues": {"q": 1}}', "admission.json.queues.q is not an object"),
        ("policy.json", '[1, "x"]', "policy.json[0] is not an object"),
        ("manifests.yaml", "kind: ClusterQueue\nmetadata: {name: q}\nspec: {resourceGroups: [{flavors: [{resources: [5]}]}]}\n",
         "manifests.yaml: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0] is not an object as synth writes it"),
        ("manifests.yaml", "kind: LocalQueue\nmetadata: {name: q}\nspec: []\n", "manifests.yaml: LocalQueue q: spec is not an object as synth writes it"),
    ],
)
def test_a_base_file_of_another_shape_is_a_usage_error(tmp_path, head, name, text, words):
    _refused(_diff(head, _base(tmp_path, head, **{name: text})), name, words)


def test_a_nan_cost_is_refused_not_a_change_that_never_goes_away(tmp_path, head):
    # json.loads reads NaN, which differs from itself: the render would never match its own copy.
    cost = head["cost.json"].replace('"per30DaysMax": ', '"per30DaysMax": NaN, "x": ', 1)
    _refused(_diff(head, _base(tmp_path, head, **{"cost.json": cost})), "cost.json", "NaN is not a JSON number")


def test_a_node_pool_whose_machine_type_is_no_string_is_read_as_no_tpu(tmp_path, head):
    # The recorded pool's facts (gke_ai_batch/model/facts.py, which the policy pack reads too)
    # looked a list up in a dict: TypeError, exit 70.
    resources = json.loads(head["resources.json"])
    pool = next(r for r in resources if r["type"] == "gcp:container/nodePool:NodePool")
    pool["inputs"]["nodeConfig"]["machineType"] = ["ct5lp-hightpu-4t"]
    result = _diff(head, _base(tmp_path, head, **{"resources.json": json.dumps(resources)}))
    assert isinstance(result, dict), result.render()
    assert "nodeConfig.machineType" in result["diff.md"]


def test_a_removed_stacks_base_must_be_that_stacks_render(tmp_path, head, capsys):
    from gke_ai_batch.synth.__main__ import main

    base = _base(tmp_path, head)
    code = main(["gone", "--removed", "--base", str(base), "--out", str(tmp_path / "gone"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "is a render of stack 'tpu-multislice', not 'gone'" in err, err
    assert not (tmp_path / "gone").exists()


def test_json_nested_past_the_parsers_depth_is_a_usage_error(tmp_path, head):
    # json.loads raises RecursionError, which is no ValueError.
    _refused(_diff(head, _base(tmp_path, head, **{"cost.json": "[" * 100_000})), "cost.json", "is not JSON")


def test_yaml_nested_past_the_parsers_depth_is_a_usage_error(tmp_path, head):
    _refused(_diff(head, _base(tmp_path, head, **{"manifests.yaml": "[" * 100_000})), "manifests.yaml", "is not YAML")


def test_a_huge_base_file_is_refused_before_it_is_read(tmp_path, head):
    base = _base(tmp_path, head)
    with open(base / "resources.json", "r+b") as f:  # sparse: no disk, and nothing is read
        f.truncate(2**40)
    _refused(_diff(head, base), "resources.json", "is larger than")


def test_a_fifo_in_the_base_folder_is_refused_not_waited_on(tmp_path, head):
    base = _base(tmp_path, head, **{"policy.json": None})
    os.mkfifo(base / "policy.json")
    _refused(_diff(head, base), "policy.json", "is not a regular file")


def test_a_render_of_another_stack_is_no_base(tmp_path, head):
    from gke_ai_batch import synth
    other = synth.output_files(synth_stack("tpu-flex"))
    base = tmp_path / "other"
    base.mkdir()
    for name, text in other.items():
        (base / name).write_text(text)
    _refused(_diff(head, base), "resources.json", "is a render of stack 'tpu-flex', not 'tpu-multislice'")


def test_a_base_rendered_before_cost_json_is_diffed_without_cost_and_says_so(tmp_path, head):
    # A base branch whose synth predates cost.json renders fine: refusing its render would turn
    # every PR against it red for the base's age, not the change.
    result = _diff(head, _base(tmp_path, head, **{"cost.json": None, "admission.json": None}))
    assert isinstance(result, dict), result.render()
    data = json.loads(result["diff.json"])
    assert data["cost"] == {"before": None, "after": data["cost"]["after"], "pools": {}, "compared": False}
    assert data["empty"] is True
    assert result["diff.md"].splitlines()[2:] == [
        "No changes: the render matches the base render.",
        "Cost and admission verdicts are not compared: the base render has no `cost.json` or `admission.json` "
        "(written since this diff).",
    ]


def test_a_base_rendered_before_cost_json_still_shows_the_other_changes(tmp_path, head):
    resources = json.loads(head["resources.json"])
    base = _base(tmp_path, head, **{"cost.json": None, "resources.json": json.dumps(resources[:-1])})
    text = _diff(head, base)["diff.md"]
    assert "1 added" in text
    assert "Cost is not compared: the base render has no `cost.json` (written since this diff)." in text
    assert "$" not in text.split("### What")[0]


def test_the_cli_says_a_corrupt_base_in_one_line_with_exit_2(tmp_path, head, capsys):
    from gke_ai_batch.synth.__main__ import main

    base = _base(tmp_path, head, **{"cost.json": '{"pools": "none", "total": {}}'})
    code = main([STACK, "--out", str(tmp_path / "head"), "--base", str(base), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert f"{base / 'cost.json'}: --base: cost.json.pools is not a list as synth writes it" in err


@pytest.mark.parametrize(
    "text, span",
    [
        ("plain", "`plain`"),
        ("a`b", "`` a`b ``"),
        # A double backtick run in a sample's command closed the old double fence early, and the
        # rest of the cell (and the row) spilled out as Markdown.
        ('["bash", "-c", "echo ``x`` | tee"]', '``` ["bash", "-c", "echo ``x`` | tee"] ```'),
        ("```", "```` ``` ````"),
    ],
)
def test_a_code_span_is_fenced_longer_than_any_backtick_run_inside(text, span):
    from gke_ai_batch.synth.report.md import code

    assert code(text) == span


def test_a_changed_command_with_backticks_and_pipes_stays_one_table_cell():
    from gke_ai_batch.synth import diff
    from gke_ai_batch.synth.report.md import cell

    value = diff._value(["bash", "-c", "echo ``x`` | tee <b>"])
    assert value.startswith("``` ") and value.endswith(" ```")
    assert cell(value).count("|") == cell(value).count("\\|") == 1


def _pr_comment_script():
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("gha_pr_comment_redteam", ROOT / ".github" / "scripts" / "pr_comment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("char", ["x", "→", "中", "😀"])
def test_a_huge_comment_fits_githubs_limit_in_code_points_and_in_bytes(char):
    # GitHub's error says "maximum is 65536 characters"; measured, a comment body is refused past
    # 65,536 code points (dead-claudia/github-limits#13) and past 262,144 UTF-8 bytes
    # (infracost/infracost#2119): an emoji-dense diff must stay under both.
    pc = _pr_comment_script()
    lines = (char * 70 + " | `a``b` <b>x</b>\n") * 5000
    text = pc.compose(lines, lines, lines, "new")
    assert len(text) <= 65_536 and len(text.encode("utf-8")) <= 262_144
    assert pc.TRUNCATED in text
