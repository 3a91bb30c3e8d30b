"""One limit on alias expansion for every YAML synth reads from outside: stack files, a program's
Pulumi.yaml, a base render's manifests.yaml and the YAML a program hands pulumi_kubernetes
(gke_ai_batch/synth/yamlread.py AliasBudget, go-yaml's rule). A "billion laughs" of a few hundred bytes hung
synth on a base and ran a program's ConfigFile out of memory; each is now refused at once, with
the file named."""

from __future__ import annotations

import textwrap
import time

import pytest

from gke_ai_batch.synth import diff, yamlread
from gke_ai_batch.synth.stackfile import StackFile

from conftest import ROOT


def laughs(levels: int, fanout: int = 10, indent: str = "") -> str:
    """Anchor a0 a list of `fanout` strings, each a(i) a list of `fanout` aliases of a(i-1):
    fanout**levels strings once expanded."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * fanout)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fanout)}]" for i in range(1, levels)]
    return textwrap.indent("\n".join(lines), indent) + "\n"


def expanded(levels: int, fanout: int = 10) -> tuple[int, int]:
    """(decodeCount, aliasCount) go-yaml reaches decoding laughs(levels, fanout) whole
    (gopkg.in/yaml.v2 v2.4.0 decode.go: every node, the document and each alias node included)."""
    size, decoded, aliased = 1 + fanout, 2 + 2 + fanout, 0  # document, top mapping, key a0, a0
    for _ in range(1, levels):
        decoded += 1 + 1 + fanout  # key, list, its alias nodes
        decoded += fanout * size
        aliased += fanout * size
        size = 1 + fanout * (1 + size)
    return decoded, aliased


def go_yaml_refuses(levels: int, fanout: int = 10) -> bool:
    decoded, aliased = expanded(levels, fanout)
    return aliased > 100 and decoded > 1000 and aliased / decoded > yamlread.allowed_alias_ratio(decoded)


def test_the_budget_is_go_yamls_ratio_rule():
    # allowedAliasRatio: 99% up to 400,000 decodes, 10% from 4,000,000, linear between.
    assert [round(yamlread.allowed_alias_ratio(n), 3) for n in (1, 400_000, 2_200_000, 4_000_000, 10**12)] == [
        0.99, 0.99, 0.545, 0.1, 0.1]
    # Three levels of ten (1,000 strings, 92% aliases) pass, four (10,000) do not; as go-yaml.
    assert [go_yaml_refuses(n) for n in (3, 4)] == [False, True]
    assert yamlread.load_all(laughs(3))[0]["a2"][9][9][9] == "lol"
    with pytest.raises(yamlread.YamlError, match="document contains excessive aliasing"):
        yamlread.load_all(laughs(4))


def test_a_billion_laughs_costs_a_few_additions_and_a_self_holding_anchor_is_refused():
    start = time.perf_counter()
    for levels in (9, 40):  # 10**9 and 10**40 strings
        with pytest.raises(yamlread.YamlError) as refused:
            yamlread.load_all(laughs(levels))
        assert (refused.value.problems[0].line, refused.value.problems[0].rule) == (4, "yaml.alias")
    assert time.perf_counter() - start < 0.5
    # PyYAML builds a structure that holds itself (nothing can walk it); go-yaml refuses it.
    with pytest.raises(yamlread.YamlError, match="anchor 'x' value contains itself"):
        yamlread.load_all("a: &x {b: [*x]}\n")
    # Each document has its own count, as go-yaml's Decoder makes a decoder per document.
    assert len(yamlread.load_all("---\n" + laughs(3) + "---\n" + laughs(3))) == 2


def test_a_stack_file_is_refused_by_the_same_rule(tmp_path):
    path = tmp_path / "Pulumi.laughs.yaml"
    path.write_text("config:\n" + laughs(4, indent="  "))
    with pytest.raises(yamlread.YamlError) as refused:
        yamlread.load(path.read_text())
    [problem] = refused.value.problems
    assert problem.rule == "yaml.alias" and "excessive aliasing" in problem.message
    # Below the limit, a stack file's aliases are read (the node budget, 200,000, is apart).
    assert yamlread.load("config:\n" + laughs(3, indent="  ")).data["config"]["a2"][9][9][9] == "lol"


def test_a_programs_pulumi_yaml_is_refused_by_the_same_rule(tmp_path):
    from gke_ai_batch.synth.program import read_project
    from gke_ai_batch.synth.stackfile import StackFileError

    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n" + laughs(6))
    (tmp_path / "__main__.py").write_text("")
    with pytest.raises(StackFileError) as refused:
        read_project(tmp_path)
    [d] = refused.value.diagnostics
    assert d.file.endswith("Pulumi.yaml") and d.line == 6 and "excessive aliasing" in d.message


def test_a_base_manifests_yaml_is_refused_with_the_file_named(tmp_path):
    # 22 KB expanding to 10**9 entries hung synth --base (no limit on base files).
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n" + laughs(9, indent="  ") + "#" * 22_000 + "\n"
    start = time.perf_counter()
    with pytest.raises(diff.DiffError) as refused:
        diff.Render.from_files({"manifests.yaml": text}, tmp_path)
    assert time.perf_counter() - start < 0.5
    assert refused.value.path == tmp_path / "manifests.yaml"
    assert str(refused.value).startswith("is refused: line 8: document contains excessive aliasing")


PROGRAM = """
import pulumi_kubernetes as k8s

k8s.yaml.ConfigFile("bomb", file="manifests/bomb.yaml")
"""


def _program(tmp_path, main: str):
    from gke_ai_batch.synth.program import read_project, synthesize_program

    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(main)
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text("config:\n  gcp:project: acme-ml\n")
    return synthesize_program(read_project(tmp_path), StackFile.locate(ROOT, None, stack))


def test_a_programs_yaml_config_file_is_refused_with_the_file_named(tmp_path):
    # 1 KB expanding to 10**7 strings ran synth out of memory or time (the provider's
    # kubernetes:yaml:decode, answered by synth, read it with PyYAML unbounded).
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "bomb.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n" + laughs(7, indent="  "))
    start = time.perf_counter()
    result = _program(tmp_path, PROGRAM)
    assert time.perf_counter() - start < 10
    [d] = result.diagnostics
    assert result.exit_code == 2 and d.rule == "yaml.alias", d.render()
    assert d.file.endswith("manifests/bomb.yaml") and d.line == 8, d.render()
    assert "excessive aliasing" in d.message


def test_a_yaml_string_the_program_builds_is_refused_at_the_program(tmp_path):
    deep = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: " + "[" * 300 + "]" * 300 + "\n"
    result = _program(tmp_path, f"import pulumi_kubernetes as k8s\n\nk8s.yaml.ConfigGroup('g', yaml=[{deep!r}])\n")
    [d] = result.diagnostics
    assert result.exit_code == 2 and d.rule == "yaml.depth" and "nested more than 200 levels deep" in d.message
    assert d.file == str(tmp_path) or d.file.endswith(tmp_path.name), d.render()


def test_a_programs_yaml_file_that_is_not_yaml_is_refused_at_its_line(tmp_path):
    # It was "the program failed: ParserError" (exit 70), as if the program had a bug.
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "bomb.yaml").write_text("apiVersion: v1\nkind: ConfigMap\ndata: [a, b\n")
    result = _program(tmp_path, PROGRAM)
    [d] = result.diagnostics
    assert result.exit_code == 2 and d.rule == "yaml.syntax" and d.file.endswith("manifests/bomb.yaml"), d.render()
    assert d.line == 4 and d.message.startswith("invalid YAML: ")
