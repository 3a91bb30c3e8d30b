"""requirements.txt alone renders: nothing on the render path imports a package that only
requirements-dev.txt installs.

The README's runtime-only command (and `pulumi up`, which installs requirements.txt into .venv)
depends on it. Building a second virtualenv here would take a minute, so synth runs instead in a
subprocess of this one whose import system refuses every top-level module of a distribution the
dev lock has and the runtime lock has not: the lists come from the lock files and the installed
distributions' metadata, so a new test tool is refused without anyone listing it."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from test_lockfiles import DEV_LOCK, lock_entries

RUNTIME_LOCK = "requirements.txt"

# Runs in the subprocess: argv[1] the refused top-level names (comma-separated), argv[2] a JSON
# list of commands, each a module to run and its arguments, run one after the other as
# `python -m MODULE ARGS` runs it (one process: an interpreter start with the SDKs' imports costs
# more than a render). A refused import fails as a missing package would, and is also reported, so
# that one guarded by `except ImportError` still fails the test; so is a refused module found
# loaded at the end by another route. What site's .pth files loaded before the hook (setuptools'
# _distutils_hack) is interpreter start-up, not the render path. A command's exit status other
# than 0 ends the run with it.
HOOK = """
import json, runpy, sys
refused = set(sys.argv[1].split(","))
at_start = set(sys.modules)
tried = []

class RefuseDevOnly:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in refused:
            tried.append(name)
            raise ModuleNotFoundError(f"{name} is not in requirements.txt", name=name)
        return None

sys.meta_path.insert(0, RefuseDevOnly())
try:
    for module, *args in json.loads(sys.argv[2]):
        sys.argv = [module, *args]
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        except SystemExit as exit:
            if exit.code not in (0, None):
                raise
finally:
    loaded = sorted(m for m in set(sys.modules) - at_start if m.partition(".")[0] in refused)
    if tried or loaded:
        print(f"dev-only imports: tried {sorted(set(tried))}, loaded {loaded}", file=sys.stderr)
"""


def _top_level(distribution: str) -> set[str]:
    """The importable top-level names an installed distribution provides."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        # Locked for another platform (an environment marker); nothing of it can be imported here.
        return set()
    listed = dist.read_text("top_level.txt")
    if listed:
        return {name.strip() for name in listed.split() if name.strip().isidentifier()}
    names = set()
    for file in dist.files or ():
        first, *rest = Path(file).parts
        if first == ".." or first.endswith((".dist-info", ".data")):
            continue  # scripts, metadata
        if rest or first.endswith((".py", ".so", ".pyd")):  # a package, or a one-file module
            name = first.split(".")[0]
            if name.isidentifier() and name != "__pycache__":
                names.add(name)
    return names


def dev_only_modules() -> set[str]:
    runtime = set(lock_entries(RUNTIME_LOCK))
    dev_only = set(lock_entries(DEV_LOCK)) - runtime
    provided_at_runtime = set().union(*(_top_level(d) for d in runtime))
    return set().union(*(_top_level(d) for d in dev_only)) - provided_at_runtime


def test_dev_only_modules_are_derived_from_the_locks():
    # The hook is only as good as this set: it must hold the test tools and none of the runtime.
    refused = dev_only_modules()
    assert {"pytest", "jsonschema", "hypothesis", "pulumi_policy"} <= refused
    assert not refused & {"pulumi", "pulumi_gcp", "pulumi_kubernetes", "pydantic", "yaml"}


def test_renders_with_the_runtime_lock_alone(tmp_path):
    # One stack per path through the program: a fleet, Autopilot, an existing cluster, and prod
    # (every capacity type, the production checks); and the bootstrap program. `.ci/run` renders
    # all of them for real in a venv that has requirements.txt alone; this is the fast guard for a
    # local `pytest`.
    commands = {
        "synth": ["synth", "prod", "fleet-dws", "batch-autopilot", "existing-cluster", "--quiet"],
        "bootstrap": ["bootstrap.synth", "example"],
    }
    argv = [[*command, "--out", str(tmp_path / name)] for name, command in commands.items()]
    refused = ",".join(sorted(dev_only_modules()))
    run = subprocess.run(
        [sys.executable, "-c", HOOK, refused, json.dumps(argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and "dev-only imports" not in run.stderr, run.stderr[-3000:]
    for name in commands:
        assert any((tmp_path / name).rglob("resources.json")), f"{name} wrote no render"
