"""The package's layout is its architecture: each layer of gke_ai_batch imports only the layers
below it, and the domain imports nothing but the standard library (docs/how-it-works.md)."""

from __future__ import annotations

import ast
import functools
import shutil
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from support.files import python_files

# What each layer may import of the package, besides itself.
BELOW: dict[str, set[str]] = {
    "domain": set(),
    "model": {"domain"},
    "config": {"domain"},
    "plan": {"domain", "config", "model"},
    "components": {"domain", "config", "plan", "model"},
    # The policy rules run in the CrossGuard pack's virtualenv (pulumi-policy and pulumi only).
    "policy": {"domain", "model"},
    # The renderer runs everything; nothing in the package imports it.
    "synth": {"domain", "config", "plan", "model", "components", "policy"},
}


def _statements(path: Path, root: Path) -> tuple[tuple[str, list[str]], ...]:
    """Each import of a file, anywhere in it, as (module, names), relative imports resolved:
    `import a.b` is ("a.b", []), `from a import b, c` ("a", ["b", "c"])."""
    parts = path.relative_to(root).with_suffix("").parts
    return _parsed_statements(path.read_text(), parts[:-1])


# Keyed on the text, not the path: these tests read every module of the project, some several
# times and some from copies in tmp_path, and parsing them was most of this file's ~5 s.
@functools.lru_cache(maxsize=None)
def _parsed_statements(text: str, package: tuple[str, ...]) -> tuple[tuple[str, list[str]], ...]:
    package = list(package)
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.level or node.module):
            if node.level:
                module = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, [alias.name for alias in node.names]))
    return tuple(found)


def _imports(path: Path, root: Path) -> set[str]:
    """The absolute module names a file imports: each module, and module.name for each name
    imported from it (a submodule, or a name)."""
    return {n for module, names in _statements(path, root) for n in (module, *(f"{module}.{name}" for name in names))}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "gke_ai_batch" and len(parts) > 1 and parts[1] in BELOW else None


def wrong_imports(root: Path, layer: str) -> list[str]:
    return sorted(
        f"{path.relative_to(root)} imports {module}"
        for path in python_files(root / "gke_ai_batch" / layer)
        for module in _imports(path, root)
        if (other := _layer(module)) and other != layer and other not in BELOW[layer]
    )


def test_every_module_belongs_to_a_layer():
    package = ROOT / "gke_ai_batch"
    assert [p.name for p in package.glob("*.py")] == ["__init__.py"]
    assert {p.name for p in package.iterdir() if p.is_dir() and not p.name.startswith("__")} == set(BELOW)


@pytest.mark.parametrize("layer", sorted(BELOW))
def test_a_layer_imports_only_the_layers_below_it(layer):
    assert not wrong_imports(ROOT, layer), "\n".join(wrong_imports(ROOT, layer))


def test_the_domain_needs_only_the_standard_library():
    outside = sorted(
        f"{path.relative_to(ROOT)} imports {module}"
        for path in python_files(ROOT / "gke_ai_batch" / "domain")
        for module in _imports(path, ROOT)
        if module.split(".")[0] not in sys.stdlib_module_names and not module.startswith("gke_ai_batch.domain")
    )
    assert not outside, "\n".join(outside)


@pytest.mark.parametrize("line", ["from gke_ai_batch.config import base", "from ..plan import kueue", "from .. import components"])
def test_an_upward_import_is_found(tmp_path, line):
    probe = tmp_path / "gke_ai_batch" / "domain" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(f"{line}\n")
    assert wrong_imports(tmp_path, "domain") == [f"gke_ai_batch/domain/probe.py imports {m}" for m in sorted(
        m for m in _imports(probe, tmp_path) if _layer(m))]
    assert wrong_imports(tmp_path, "domain")


# The program's top-level folders, and which of them each may import (docs/architecture.md).
TOP: dict[str, set[str]] = {
    "gke_ai_batch": set(),
    # The CrossGuard pack's folder serves gke_ai_batch.policy's rules; synth/ holds the commands
    # `python -m synth` and `python -m synth.add` of a checkout, calling gke_ai_batch.synth.
    "policy": {"gke_ai_batch.policy", "gke_ai_batch.domain"},
    "synth": {"gke_ai_batch.synth"},
    "bootstrap": {"gke_ai_batch"},
}


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project modules it imports, anywhere in the file (a function-level import
    ties two modules as much as a top-level one)."""
    files = {_module(p, root): p for top in TOP for p in python_files(root / top)}
    graph = {}
    for module, path in files.items():
        targets = set()
        for base, names in _statements(path, root):
            # Statement by statement: `from a import b` ties to the module a.b when b is one,
            # else to a itself (b is a name its __init__ defines), so a package's __init__ is
            # in the graph as any module is.
            for name in [f"{base}.{n}" if f"{base}.{n}" in files else base for n in names] or [base]:
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_others():
    found = cycles(import_graph(ROOT))
    assert not found, found


def test_an_import_cycle_is_found(tmp_path):
    for name, imports in (("a", "from gke_ai_batch.domain import b"), ("b", "def f():\n    from gke_ai_batch.domain import a\n")):
        path = tmp_path / "gke_ai_batch" / "domain" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(imports + "\n")
    assert cycles(import_graph(tmp_path)) == [["gke_ai_batch.domain.a", "gke_ai_batch.domain.b"]]


def test_an_import_cycle_through_a_package_init_is_found(tmp_path):
    # The shape synth's report had: the package imports its module, which imports the package
    # back for its helpers, beside imports of sibling modules that must not hide it.
    report = tmp_path / "gke_ai_batch" / "synth" / "report"
    report.mkdir(parents=True)
    (report / "__init__.py").write_text("from . import fleet, md\n\ndef _helper():\n    pass\n")
    (report / "md.py").write_text("X = 1\n")
    (report / "fleet.py").write_text("from .. import report as base\nfrom . import md\nfrom .md import X\n")
    assert cycles(import_graph(tmp_path)) == [["gke_ai_batch.synth.report", "gke_ai_batch.synth.report.fleet"]]
    (report / "fleet.py").write_text("from . import md\nfrom .md import X\n")
    import_graph.cache_clear()
    assert cycles(import_graph(tmp_path)) == []


@pytest.mark.parametrize("top", sorted(TOP))
def test_a_top_level_folder_imports_only_what_it_may(top):
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph(ROOT).items()
        if module.split(".")[0] == top
        for target in targets
        if target.split(".")[0] != top and not any(target == a or target.startswith(a + ".") for a in TOP[top])
    )
    assert not wrong, "\n".join(wrong)


def test_a_virtualenv_in_a_source_folder_is_not_scanned(tmp_path):
    # README step 7 creates policy/.venv; its site-packages are not the policy pack's modules.
    for top in TOP:
        shutil.copytree(ROOT / top, tmp_path / top, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    bad = "import synth\nimport policy.rules\nfrom gke_ai_batch.components import cluster\n"
    for venv in (tmp_path / "policy" / ".venv", tmp_path / "gke_ai_batch" / "domain" / "env"):
        (venv / "lib" / "python3.11" / "site-packages" / "pkg").mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (venv / "lib" / "python3.11" / "site-packages" / "pkg" / "__init__.py").write_text(bad)
    graph = import_graph(tmp_path)
    assert graph.keys() == import_graph(ROOT).keys() and not any("venv" in m or ".env" in m for m in graph)
    assert not cycles(graph)
    assert not [m for m, targets in graph.items() if m.startswith("policy") and "synth" in targets]
    assert not wrong_imports(tmp_path, "domain")
    # Without the skip, the scan would read them (the test can fail).
    assert any(".venv" in p.parts for p in (tmp_path / "policy").rglob("*.py"))


# Private names of another package imported on purpose, each with its reason. Inside the project
# there is none: what two modules share is public in one of them.
PRIVATE_IMPORTS: dict[tuple[str, str], str] = {
    # The recording engine drives the Pulumi SDK's own runtime (pinned with pulumi in
    # requirements.txt; tests/test_pulumi_internals.py checks each internal it uses).
    ("gke_ai_batch/synth/engine.py", "pulumi._types"): "the SDK's type metadata, memoized for speed",
    ("gke_ai_batch/synth/engine.py", "pulumi.runtime.sync_await._sync_await"): "runs the program's event loop as the SDK does",
    ("gke_ai_batch/synth/leanrpc.py", "pulumi._types"): "the SDK's type metadata, read lazily",
    ("gke_ai_batch/synth/leanrpc.py", "pulumi.output._OutputData"): "the SDK's resolved-output record",
    # A raw Kubernetes object registers with the provider version the SDK's own classes pass.
    ("gke_ai_batch/components/k8s.py", "pulumi_kubernetes._utilities"): "the provider plugin version",
}


def private_imports(root: Path) -> dict[tuple[str, str], str]:
    """Each `from X import _name` of a module X other than the file itself, as (file, X._name)."""
    found = {}
    for path in python_files(root / "gke_ai_batch"):
        for module, names in _statements(path, root):
            for name in names:
                if name.startswith("_") and not name.startswith("__") and module != _module(path, root):
                    found[(str(path.relative_to(root)), f"{module}.{name}")] = ""
    return found


def test_no_module_imports_another_modules_private_names():
    found = private_imports(ROOT)
    assert sorted(found.keys() - PRIVATE_IMPORTS.keys()) == []
    assert sorted(PRIVATE_IMPORTS.keys() - found.keys()) == [], "an exception no longer needed: remove it"


@pytest.mark.parametrize("line, name", [
    ("from ..config.base import _helper", "gke_ai_batch.config.base._helper"),
    ("from . import _helper", "gke_ai_batch.components._helper"),
    ("def f():\n    from gke_ai_batch.plan import _x as y", "gke_ai_batch.plan._x"),
])
def test_a_private_import_is_found(tmp_path, line, name):
    probe = tmp_path / "gke_ai_batch" / "components" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(f"{line}\n")
    assert list(private_imports(tmp_path)) == [("gke_ai_batch/components/probe.py", name)]
