"""Shared fixtures: run synth in-process on a stack file or on a config written on the fly."""

from __future__ import annotations

import functools
import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
# Stacks of several clusters (gke-ai-batch:fleet): tests of one cluster's wiring take the others;
# tests/test_fleet_*.py check a fleet's own.
FLEET_STACKS = [s for s in STACKS if "gke-ai-batch:fleet:" in (ROOT / "stacks" / f"Pulumi.{s}.yaml").read_text()]
SINGLE_CLUSTER_STACKS = [s for s in STACKS if s not in FLEET_STACKS]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# synth (pulumi and the program, ~1.5 s) is imported on first use, not here: the xdist controller
# and the pytest runs of tests/test_no_skips.py load this file and never synthesize anything.
if TYPE_CHECKING:
    from gke_ai_batch import synth
@functools.lru_cache(maxsize=None)
def synth_stack(stack: str) -> synth.Result:
    """Synthesize a committed stack once per test session."""
    from gke_ai_batch import synth
    return synth.synthesize(ROOT, synth.StackFile.locate(ROOT, stack, None))


@functools.lru_cache(maxsize=None)
def component_schema_text() -> str:
    """The component package's schema as gke_ai_batch.components.package writes it, inferred
    once per test session (~0.5 s each time); json.loads it for a copy of your own."""
    from gke_ai_batch.components.package import schema_text

    return schema_text()


def synth_config(tmp_path: Path, config: dict[str, Any], stack: str = "test") -> synth.Result:
    """Synthesize a stack file written from `config` (the stack file's `config:` mapping)."""
    path = tmp_path / f"Pulumi.{stack}.yaml"
    from gke_ai_batch import synth
    from gke_ai_batch.synth import yamlread

    path.write_text(yamlread.dump({"config": config}))
    return synth.synthesize(ROOT, synth.StackFile.locate(ROOT, None, path))


def synth_refused(tmp_path: Path, config: dict[str, Any], path: str, words: str) -> None:
    """synth refuses the stack (exit 2, nothing registered), naming `path` at a line of the
    stack file, with `words` in the message."""
    from support.diagnostics import assert_names

    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    assert result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


def synth_rendered(tmp_path: Path, config: dict[str, Any]) -> synth.Result:
    """synth renders the stack (exit 0)."""
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    return result


def synth_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m synth ARGS` in a fresh process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "synth", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def synth_main(*args: str) -> subprocess.CompletedProcess:
    """`python -m synth ARGS` run in this process (synth.__main__.main), answered as synth_cli
    answers: for a test where a process boundary proves nothing more than the exit code, the
    output and the files. A traceback is an exception here, so it still fails the test. Each
    kind of exit keeps a real process somewhere: exit 2 on a refused stack
    (test_config_errors.py), an unwritable stdout, concurrent and killed runs
    (test_hostile_inputs.py), renders (test_runtime_only.py, test_determinism.py)."""
    import contextlib
    import io

    from gke_ai_batch.synth.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
    return subprocess.CompletedProcess([sys.executable, "-m", "synth", *args], code, out.getvalue(), err.getvalue())


def by_name(result: synth.Result, type_: str, name: str) -> dict[str, Any]:
    """The recorded registration of one resource."""
    matches = [r for r in result.recording.resources if r.type == type_ and r.name == name]
    assert len(matches) == 1, f"{type_} {name}: {len(matches)} registrations"
    return matches[0].to_json()


def base_config(**overrides: Any) -> dict[str, Any]:
    """A minimal valid Standard stack; keyword arguments replace gke-ai-batch:<key> values."""
    config: dict[str, Any] = {
        "gcp:project": "test-project",
        "gcp:region": "us-central1",
        "gke-ai-batch:cluster": {"name": "test", "nodeLocations": ["us-central1-a"]},
    }
    for key, value in overrides.items():
        config[f"gke-ai-batch:{key}"] = value
    return config


def load_json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def shared_schemas() -> Path:
    """The upstream CRD schemas, vendored in the repository (schema/upstream/VENDORED.md)."""
    from support.manifests import SCHEMAS_DIR

    return SCHEMAS_DIR


def pytest_configure(config: pytest.Config) -> None:
    # The tests keep a big heap alive (the SDKs' modules, the session's renders, hypothesis'),
    # and CPython's default thresholds (700, 10, 10) walk all of it in a full collection every
    # few seconds of test time (~0.25 s each): ~12% of a worker's CPU. Collecting less often
    # frees the same cycles a little later, at the same peak memory (measured on the rendering
    # tests: 346 MB either way).
    gc.set_threshold(10_000, 50, 100)
    from support.fuzz_report import REPORT

    config.pluginmanager.register(REPORT, "stack-config-fuzz-report")


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collection loaded (the SDKs' modules and classes, the test modules) lives as long as
    # the process: kept out of the collector's reach, each full collection during the run, and
    # pytest's last one at the end (its check for unraisable exceptions), walks only what the
    # tests made since. Garbage the tests make is collected as before.
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # The interpreter's exit then skips its last garbage collections over everything the tests
    # left (recordings, hypothesis' and pulumi's objects): ~1.5 s per process, and the xdist
    # controller waits for each worker's exit. Nothing runs after this hook that would need them.
    gc.freeze()


# -- a skipped test fails the run ----------------------------------------------------------------
# Everything the suite needs is in the repository or in requirements-dev.txt, so a skip can only
# mean something is missing (a package, a vendored file) and its checks silently did not run.

_skipped: list[tuple[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter) -> None:
    if _skipped:
        terminalreporter.section(f"{len(_skipped)} skipped: a skipped test fails the suite (tests/conftest.py)", red=True)
        for nodeid, reason in _skipped:
            terminalreporter.write_line(f"SKIPPED {nodeid}: {reason}", red=True)
