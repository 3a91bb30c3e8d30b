"""Every runnable module answers --help: exit 0, usage on stdout, nothing on stderr, nothing
written. The modules are found by scanning the repository, so a new one cannot be forgotten."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gke_ai_batch.domain import cli
from conftest import ROOT
from support.files import walk

def _has_main_guard(path: Path) -> bool:
    """A module-level `if __name__ == "__main__":` (either operand order)."""
    text = path.read_text()
    if "__main__" not in text:  # no guard without the literal: the parse below is the scan's cost
        return False
    for node in ast.parse(text, str(path)).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.comparators) == 1:
            sides = [node.test.left, node.test.comparators[0]]
            names = {s.id for s in sides if isinstance(s, ast.Name)}
            values = {s.value for s in sides if isinstance(s, ast.Constant)}
            if isinstance(node.test.ops[0], ast.Eq) and names == {"__name__"} and values == {"__main__"}:
                return True
    return False


def entry_points(root: Path = ROOT) -> list[Path]:
    return [p for p in walk(root) if p.suffix == ".py" and (p.name == "__main__.py" or _has_main_guard(p))]


def command(path: Path, root: Path = ROOT) -> list[str]:
    """`python -m dotted.name` for a module in a (namespace) package, as the modules document
    themselves; the file itself for the rest (the program's __main__.py, .github/scripts)."""
    rel = path.relative_to(root)
    parts = rel.with_suffix("").parts
    if parts[-1] == "__main__":
        parts = parts[:-1]
    if len(rel.parts) > 1 and all(part.isidentifier() for part in parts):
        return [sys.executable, "-m", ".".join(parts)]
    return [sys.executable, str(rel)]


# What a module's --help may load: the SDKs and pydantic take ~0.3-1.5 s to import, and --help (or
# a usage error) is parsed before them. The config's own modules answer from inside their package,
# whose ConfigError is a pulumi.RunError and whose schema is pydantic's.
_HEAVY = {"pulumi", "pulumi_gcp", "pulumi_kubernetes", "pulumi_policy", "pydantic", "hypothesis"}
_NEEDS_THE_CONFIG = {"gke_ai_batch/config/reference.py", "gke_ai_batch/config/schema.py"}


def _imported(importtime: str) -> set[str]:
    """The top-level packages `-X importtime` reports as imported."""
    return {
        line.split("|")[-1].strip().split(".")[0]
        for line in importtime.splitlines()
        if line.startswith("import time:") and not line.rstrip().endswith("package")
    }


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in walk(root) if p.is_file()}


def test_every_entry_point_answers_help():
    found = entry_points()
    rel = {str(p.relative_to(ROOT)) for p in found}
    # The scan itself works: it finds the ones this test was written with.
    assert {"__main__.py", "synth/urns.py", "policy/__main__.py", ".github/scripts/stacks.py"} <= rel, rel
    before = _snapshot(ROOT)
    # The library importable as if installed: the programs of examples/ are its consumers.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    # All at once: they are independent. -X importtime lists what each loaded, on stderr.
    procs = {
        p: subprocess.Popen(
            [command(p)[0], "-X", "importtime", *command(p)[1:], "--help"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for p in found
    }
    problems = []
    for path, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            problems.append(f"{path.relative_to(ROOT)}: still running after 120 s (serving instead of answering?)")
            continue
        imported = _imported(err)
        err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("import time:"))
        if proc.returncode != 0 or "usage" not in out.lower() or err:
            problems.append(f"{' '.join(command(path)[1:])} --help: exit {proc.returncode}\nstdout: {out[:500]}\nstderr: {err[-1500:]}")
        elif str(path.relative_to(ROOT)) not in _NEEDS_THE_CONFIG and imported & _HEAVY:
            problems.append(f"{' '.join(command(path)[1:])} --help loads {', '.join(sorted(imported & _HEAVY))}: parse argv first")
    assert not problems, "\n\n".join(problems)
    assert _snapshot(ROOT) == before, "--help wrote files"


@pytest.mark.parametrize(
    "argv",
    [
        # pulumi-language-python-exec hands the program [PROGRAM, *ARGS]; ARGS is empty unless Pulumi.yaml sets some.
        ["__main__.py"],
        # The policy analyzer (python -m pulumi.policy ENGINE PROGRAM [flags]) leaves its own argv in place.
        ["pulumi/policy/__main__.py", "127.0.0.1:51234", "/repo/policy", "--logtostderr", "-v", "9", "--tracing", "f"],
        # synth run by pytest or by its own CLI.
        ["pytest", "-q", "-ra", "-k", "help", "--hypothesis-show-statistics"],
    ],
)
def test_the_program_and_the_pack_ignore_an_engines_arguments(argv):
    """__main__.py and policy/__main__.py read only -h/--help: whatever else runs them keeps its argv."""
    args, rest = cli.parser("x", "doc").parse_known_args(argv[1:])
    assert rest == argv[1:]


def test_the_scan_finds_guards_and_main_files(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__main__.py").write_text("print(1)\n")
    (tmp_path / "pkg" / "tool.py").write_text('def f():\n    pass\n\n\nif "__main__" == __name__:\n    f()\n')
    (tmp_path / "pkg" / "lib.py").write_text('X = "__main__"\n')
    (tmp_path / "script.py").write_text('if __name__ == "__main__":\n    pass\n')
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "run.py").write_text('if __name__ == "__main__":\n    pass\n')
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text('if __name__ == "__main__":\n    pass\n')
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("")
    (tmp_path / "env" / "y.py").write_text('if __name__ == "__main__":\n    pass\n')
    found = entry_points(tmp_path)
    assert [str(p.relative_to(tmp_path)) for p in found] == ["script.py", ".github/run.py", "pkg/__main__.py", "pkg/tool.py"]
    commands = [command(p, tmp_path)[1:] for p in found]
    assert commands == [["script.py"], [".github/run.py"], ["-m", "pkg"], ["-m", "pkg.tool"]]
