"""The README's commands and the docs' generated parts stay true."""

from gke_ai_batch.config.reference import PAGE, REGENERATE, current, render
from conftest import ROOT


def test_config_reference_is_current():
    assert PAGE == ROOT / "docs" / "configuration.md"
    assert current(PAGE.read_text()) == render(), f"regenerate the configuration reference: {REGENERATE}"


def test_readme_names_both_set_up_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    setup = "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements-dev.txt && "
    assert setup + ".venv/bin/python -m synth dev" in readme
    assert setup + ".venv/bin/python -m pytest" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest" in ci and "requirements-dev.txt" in ci


def test_readme_names_the_runtime_only_render():
    # What `pulumi up` installs (requirements.txt) is enough to render; test_runtime_only.py
    # proves it, this keeps the README saying so.
    readme = (ROOT / "README.md").read_text()
    runtime = "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements.txt && "
    assert runtime + ".venv/bin/python -m synth dev" in readme
