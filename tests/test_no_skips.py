"""A skipped test fails the run (tests/conftest.py): everything the suite needs is in the
repository or in requirements-dev.txt, so a skip means some check silently did not run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT


# The suite runs under pytest-xdist (pyproject.toml), where the tests run in worker processes and
# the controller alone decides the exit status and prints the summary; and in one process.
# Only the plugins the check involves are loaded: hypothesis' plugin imports hypothesis (~1 s
# of each of the three processes).
@pytest.mark.parametrize("mode", [["-p", "xdist.plugin", "-n", "1"], ["-p", "no:xdist"]], ids=["xdist", "one process"])
def test_a_skip_fails_the_run_and_is_named(tmp_path, mode):
    (tmp_path / "test_demo.py").write_text(
        "import pytest\n"
        "def test_runs(): pass\n"
        "def test_left_out(): pytest.skip('no frobnicator')\n"
    )
    run = subprocess.run(
        # The suite's conftest loaded as a plugin, over a file outside the suite.
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", *mode, "-v", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)]), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert ("[gw0]" in run.stdout) is ("-n" in mode), run.stdout  # the run it names, with or without xdist
    assert "1 skipped: a skipped test fails the suite" in run.stdout
    assert "test_demo.py::test_left_out: no frobnicator" in run.stdout
