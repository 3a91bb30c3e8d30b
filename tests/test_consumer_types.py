"""A consumer's type checker on the documented programs (issue 29): examples/ and every Python
program of docs/library.md, checked by pyright in basic mode against the package as a consumer
has it (installed in site-packages, typed by its py.typed), report no error.

One pyright process over a generated folder (~6 s of CPU). The checker is basedpyright
(requirements-dev.in says why), whose basic mode is pyright's."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import ROOT
from support import docblocks

PYRIGHT = Path(sys.executable).parent / "basedpyright"
PROGRAMS = {"examples-existing-cluster.py": ROOT / "examples" / "existing-cluster" / "__main__.py"}
# A mistake a consumer makes, which the check must see: were the package's TypedDicts unread
# (an import resolved to Unknown), every program would pass unchecked.
CANARY = '''from gke_ai_batch import TpuSlices
TpuSlices("v6e", {"cluster": {"name": "c", "location": "us-east5", "project": "p"}, "version": "v6e", "topology": 44})
'''


def _installed_like_a_consumer(site: Path) -> None:
    """site-packages holding the package (a link to the checkout's) and, through a .pth, this
    venv's dependencies: pyright resolves `gke_ai_batch` as an installed library, as it would
    from a wheel, not as local source."""
    site.mkdir(parents=True)
    (site / "gke_ai_batch").symlink_to(ROOT / "gke_ai_batch", target_is_directory=True)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")


def test_examples_and_library_programs_type_check(tmp_path):
    programs = tmp_path / "programs"
    programs.mkdir()
    for name, source in PROGRAMS.items():
        (programs / name).write_text(source.read_text())
    for line, source in docblocks.python_programs(ROOT / "docs" / "library.md"):
        (programs / f"library-md-{line}.py").write_text(source)
    (programs / "canary.py").write_text(CANARY)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    _installed_like_a_consumer(tmp_path / "venv" / "lib" / f"python{version}" / "site-packages")
    (tmp_path / "venv" / "pyvenv.cfg").write_text(f"version = {version}\n")
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "include": ["programs"], "typeCheckingMode": "basic", "pythonVersion": "3.11",  # requires-python's floor
        "venvPath": str(tmp_path), "venv": "venv"}))

    run = subprocess.run([str(PYRIGHT), "--outputjson", "--project", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(run.stdout)
    errors, canary = [], []
    for d in report["generalDiagnostics"]:
        if d["severity"] != "error":
            continue
        file, at = Path(d["file"]), d["range"]["start"]["line"]
        line = file.read_text().splitlines()[at]
        if file.name == "canary.py":
            canary.append(d["message"])
        else:
            errors.append(f"{file.name}:{at + 1}: {d['message']} ({d.get('rule')})\n    {line.strip()}")

    assert report["summary"]["filesAnalyzed"] == len(PROGRAMS) + len(list(programs.glob("library-md-*.py"))) + 1
    assert len(list(programs.glob("library-md-*.py"))) >= 5, "docs/library.md's programs were not found"
    assert any("TpuSlicesArgs" in m and '"Literal[44]" is not assignable to "str"' in m for m in canary), f"pyright did not read the package's types: {canary}"
    assert not errors, "pyright (basic) errors a consumer would see:\n" + "\n".join(errors)
