"""Run a Pulumi program written on the fly under synth's recording engine."""

from __future__ import annotations

import textwrap
from pathlib import Path


def run_program(tmp_path: Path, source: str):
    """The recording of `source` as a program's __main__.py, with what the cloud reports back
    (a cluster's endpoints, an account's email, a token) as synth has it for project acme-ml."""
    from gke_ai_batch import synth
    from gke_ai_batch.synth import engine

    program = tmp_path / "__main__.py"
    program.write_text(textwrap.dedent(source))
    return engine.run(program, project="lib", stack="test", config={}, outputs_for=synth.outputs_for("acme-ml"))


def render_program(tmp_path: Path, source: str, **names):
    """(synth's Result, its output files) for `source` rendered as `synth --program` renders a
    folder of it, each of `names` a global the source reads (set before it)."""
    from gke_ai_batch.synth import output_files
    from gke_ai_batch.synth.program import read_project, synthesize_program
    from gke_ai_batch.synth.stackfile import StackFile

    from conftest import ROOT

    (tmp_path / "Pulumi.yaml").write_text("name: lib\nruntime: python\n")
    given = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    (tmp_path / "__main__.py").write_text(given + textwrap.dedent(source))
    stack = tmp_path / "Pulumi.test.yaml"
    stack.write_text("config:\n  gcp:project: acme-ml\n")
    result = synthesize_program(read_project(tmp_path), StackFile.locate(ROOT, None, stack))
    assert result.recording is not None, result.error
    return result, output_files(result)
