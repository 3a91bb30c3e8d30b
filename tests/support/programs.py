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
