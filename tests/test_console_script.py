"""The renderer as installed (issue 29): `gke-ai-batch synth ...`, the console script of the
wheel, renders a program from any folder with nothing but the package; what needs this
repository's checkout (its stacks, its stack program, its policy levels) says so, exit 2.
.ci/run runs the real thing: the wheel in a fresh venv, outside the checkout."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from conftest import ROOT
from gke_ai_batch.synth import __main__ as synth_main
from gke_ai_batch.synth import add, checkout, command, urns

EXAMPLE = ROOT / "examples" / "existing-cluster"


def test_pyproject_puts_the_command_on_path():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["gke-ai-batch"].partition(":")
    assert (module, function) == (command.__name__, "console")


def test_each_command_answers_its_own_help(capsys):
    assert command.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: gke-ai-batch COMMAND") and all(f"\n  {name} " in out for name in command.COMMANDS)
    for name in command.COMMANDS:
        with pytest.raises(SystemExit) as exc:
            command.main([name, "--help"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: gke-ai-batch {name} ")


def test_no_command_or_an_unknown_one_is_a_usage_error(capsys):
    assert command.main([]) == 2
    assert command.main(["render"]) == 2
    assert "no command 'render'" in capsys.readouterr().err


def test_the_checkout_is_found_beside_the_package_and_not_elsewhere(monkeypatch, tmp_path):
    assert checkout.root() == ROOT
    monkeypatch.setattr(checkout, "_BESIDE_PACKAGE", tmp_path)  # site-packages, say
    assert checkout.root() is None


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """synth as the wheel runs it: no checkout beside the package, in a folder of its own."""
    for module in (synth_main, add, urns):
        monkeypatch.setattr(module, "ROOT", None)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_installed_it_renders_a_program_from_any_folder(installed, capsys):
    program = installed / "existing-cluster"
    shutil.copytree(EXAMPLE, program, ignore=shutil.ignore_patterns("__pycache__"))
    code = command.main(["synth", "--program", "existing-cluster", "--config", "existing-cluster/Pulumi.dev.yaml", "--quiet"])
    assert code == 0, capsys.readouterr().err
    # The default output folder is under the working folder, not beside the package.
    assert (installed / "build" / "programs" / "existing-cluster" / "dev" / "resources.json").is_file()


@pytest.mark.parametrize("argv", [["dev"], ["--all"], ["--config", str(ROOT / "stacks" / "Pulumi.dev.yaml")]])
def test_installed_a_stack_render_says_it_needs_a_checkout(installed, capsys, argv):
    assert command.main(["synth", *argv]) == 2
    err = capsys.readouterr().err
    assert "needs a checkout of gke-ai-batch" in err and "--program DIR --config FILE" in err, err
    assert not list(installed.iterdir()), "nothing written"


@pytest.mark.parametrize("name", ["add", "urns"])
def test_installed_add_and_urns_say_they_need_a_checkout(installed, capsys, name):
    with pytest.raises(SystemExit) as exc:
        command.main([name, "east"])
    assert exc.value.code == 2 and "needs a checkout of gke-ai-batch" in capsys.readouterr().err
    assert not list(installed.iterdir()), "nothing written"
