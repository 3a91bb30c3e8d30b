"""A base render is input like any other (`python -m synth STACK --base DIR`, `--removed`): its
numbers and URNs are read by one reader each (gke_ai_batch/synth/diff.py `_values`, gke_ai_batch/synth/urns.py `parse`),
which refuse what synth never writes as a usage error about --base (exit 2) naming the file and
the key, and write nothing. Before, `1e400` passed as infinity into diff.json (`Infinity`, no
JSON) and diff.md ("$inf"), a 400-digit integer was exit 70 (exit 1 with a traceback under
--removed), and a URN `"x"` was exit 70."""

from __future__ import annotations

import json

import pytest

from conftest import synth_stack
from test_redteam_review import STACK, _base, _diff, _refused

HUGE = "9" * 400


@pytest.fixture(scope="module")
def head():
    from gke_ai_batch import synth
    result = synth_stack(STACK)
    assert not result.diagnostics
    return synth.output_files(result)


def _cost_total(head, literal: str) -> str:
    cost = json.loads(head["cost.json"])
    cost["total"]["per30DaysMax"] = "@"
    return json.dumps(cost).replace('"@"', literal)


def _first_pool(resources: list) -> dict:
    return next(r for r in resources if r["type"] == "gcp:container/nodePool:NodePool")


@pytest.mark.parametrize("literal", ["1e400", "-1e400", HUGE, "-" + HUGE, "9" * 5000])
def test_a_cost_no_double_holds_is_refused_naming_the_key(tmp_path, head, literal):
    result = _diff(head, _base(tmp_path, head, **{"cost.json": _cost_total(head, literal)}))
    _refused(result, "cost.json", "cost.json.total.per30DaysMax: ")
    assert "is out of range" in result.message and len(result.message) < 300, result.message


@pytest.mark.parametrize("literal, refused", [("-2458.44", True), ("-0.01", True), ("0", False), ("2458.44", False)])
def test_a_negative_cost_is_refused_and_zero_is_read(tmp_path, head, literal, refused):
    result = _diff(head, _base(tmp_path, head, **{"cost.json": _cost_total(head, literal)}))
    if refused:
        _refused(result, "cost.json", "cost.json.total.per30DaysMax: ")
        assert "below zero" in result.message, result.message
    else:
        assert isinstance(result, dict), result.render()


def test_a_number_out_of_range_is_refused_in_every_base_file(tmp_path, head):
    resources = json.loads(head["resources.json"])
    pool = _first_pool(resources)
    index = resources.index(pool)
    pool["inputs"]["autoscaling"] = {"totalMaxNodeCount": "@"}
    admission = json.loads(head["admission.json"])
    queue = next(iter(admission["queues"]))
    admission["queues"][queue]["x"] = {"most": "@"}
    cases = {
        "resources.json": (json.dumps(resources).replace('"@"', "1e400"),
                           f"resources.json[{index}].inputs.autoscaling.totalMaxNodeCount: 1e400"),
        "admission.json": (json.dumps(admission).replace('"@"', HUGE), f"admission.json.queues.{queue}.x.most: 9999"),
        "policy.json": ('[{"urn": "", "policy": "p", "enforcement": "advisory", "message": "m", "n": 1e999}]',
                        "policy.json[0].n: 1e999"),
        "manifests.yaml": ("kind: ClusterQueue\nmetadata: {name: q}\nspec: {resourceGroups: [{flavors: [{name: f, "
                           "resources: [{name: cpu, nominalQuota: .inf}]}]}]}\n",
                           "manifests.yaml: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: inf"),
    }
    for name, (text, words) in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        _refused(_diff(head, _base(folder, head, **{name: text})), name, words)


@pytest.mark.parametrize(
    "yaml_value, words",
    [
        ("2024-01-01", "is a YAML date"),  # json.dumps could not write it: exit 70 before
        ("!!binary aGk=", "is a YAML bytes"),
        ("{1: a}", "the key 1 is not a string"),
    ],
)
def test_yaml_values_json_cannot_hold_are_refused(tmp_path, head, yaml_value, words):
    text = f"kind: ClusterQueue\nmetadata: {{name: q}}\nspec: {{cohort: {yaml_value}}}\n"
    _refused(_diff(head, _base(tmp_path, head, **{"manifests.yaml": text})), "manifests.yaml",
             f"manifests.yaml: ClusterQueue q: spec.cohort")
    assert words in _diff(head, tmp_path / "base").message


def test_a_large_number_a_double_holds_is_read(tmp_path, head):
    # The engine records an integral double as an int: a program's 1e20 is written as 21 digits.
    resources = json.loads(head["resources.json"])
    _first_pool(resources)["inputs"]["nodeConfig"]["diskSizeGb"] = 10**20
    result = _diff(head, _base(tmp_path, head, **{"resources.json": json.dumps(resources)}))
    assert isinstance(result, dict), result.render()
    assert "`100000000000000000000`" in result["diff.md"]


@pytest.mark.parametrize("urn", ["x", "", "urn:pulumi:s::p::t", "urn:pulumi:::p::t::n", "urn:aws:s::p::t::n"])
def test_a_resource_whose_urn_is_no_pulumi_urn_is_refused(tmp_path, head, urn):
    resources = json.loads(head["resources.json"])
    resources[3]["urn"] = urn
    result = _diff(head, _base(tmp_path, head, **{"resources.json": json.dumps(resources)}))
    _refused(result, "resources.json", f"resources.json[3].urn: {urn!r} is not a Pulumi URN")


def test_the_removed_path_refuses_the_same_base_and_writes_nothing(tmp_path, head, capsys):
    from gke_ai_batch.synth.__main__ import main

    base = _base(tmp_path, head, **{"cost.json": _cost_total(head, HUGE)})
    out = tmp_path / "out"
    code = main([STACK, "--removed", "--base", str(base), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert f"{base / 'cost.json'}: --base: cost.json.total.per30DaysMax: " in err
    assert not out.exists()


def test_the_removed_path_ends_any_failure_in_one_line_and_exit_70(tmp_path, head, capsys, monkeypatch):
    from gke_ai_batch.synth import diff
    from gke_ai_batch.synth.__main__ import main

    def broken(*args, **kwargs):
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(diff, "markdown", broken)
    code = main([STACK, "--removed", "--base", str(_base(tmp_path, head)), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 70 and "Traceback" not in err and "internal error: OverflowError" in err, err
    assert not (tmp_path / "out").exists()


def test_one_parser_reads_a_urns_parts_as_pulumi_does():
    from gke_ai_batch.domain import urns

    u = urns.parse("urn:pulumi:prod::gke-ai-batch::gke-ai-batch:index:TpuSlices$gcp:container/nodePool:NodePool::a::b")
    assert (u.stack, u.project, u.name) == ("prod", "gke-ai-batch", "a::b")  # the name is the rest
    assert u.type == "gcp:container/nodePool:NodePool"
    assert str(u) == "urn:pulumi:prod::gke-ai-batch::gke-ai-batch:index:TpuSlices$gcp:container/nodePool:NodePool::a::b"
    assert urns.name_of("") == "" and urns.name_of(str(u)) == "a::b"
    with pytest.raises(urns.UrnError, match="is not a Pulumi URN"):
        urns.parse(["urn:pulumi:s::p::t::n"])


@pytest.mark.parametrize("depth, refused", [(150, False), (201, True), (900, True)])
def test_a_value_nested_past_the_manifests_depth_limit_is_refused_in_json_too(tmp_path, head, depth, refused):
    # The diff's readers recurse into values: at 900 levels, below json's own limit, they hit
    # Python's (exit 70 under a deeper call stack).
    resources = json.loads(head["resources.json"])
    resources[3]["inputs"]["x"] = json.loads('{"a": ' * depth + "1" + "}" * depth)
    result = _diff(head, _base(tmp_path, head, **{"resources.json": json.dumps(resources)}))
    if refused:
        _refused(result, "resources.json", "nested more than 200 levels deep")
    else:
        assert isinstance(result, dict), result.render()
        assert "`x" in result["diff.md"]
