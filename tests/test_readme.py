"""The README's generated parts stay true."""

from components.config.reference import END, START, render
from conftest import ROOT


def test_config_reference_is_current():
    readme = (ROOT / "README.md").read_text()
    current = readme[readme.index(START) : readme.index(END) + len(END)]
    assert current == render(), "regenerate the README's config reference: python -m components.config.reference"


def test_readme_names_both_set_up_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    setup = "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements-dev.txt && "
    assert setup + ".venv/bin/python -m synth dev" in readme
    assert setup + ".venv/bin/python -m pytest" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest" in ci and "requirements-dev.txt" in ci
