"""Running a Pulumi program written in a test under synth's recording engine."""

from __future__ import annotations

import textwrap
from pathlib import Path


def run_program(tmp_path: Path, source: str):
    """The recording of `source` (a program's __main__.py) run as stack lib/test, no config."""
    from synth import engine

    program = tmp_path / "__main__.py"
    program.write_text(textwrap.dedent(source))
    return engine.run(program, project="lib", stack="test", config={}, outputs_for=lambda t, n, i: {})
