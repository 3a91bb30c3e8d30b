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


def _imports(path: Path, root: Path) -> set[str]:
    """The absolute module names a file imports (relative imports resolved)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                name = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
                found.add(name)
                found.update(f"{name}.{alias.name}" for alias in node.names)  # `from . import x`
            elif node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)  # a submodule, or a name
    return found


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
        names = _imports(path, root)
        targets = set()
        for name in names:
            # `from a.b import c` reads as a.b and a.b.c: c is a module or a name in a.b; a.b
            # itself counts only when some imported name is not a module of it.
            if any(n.startswith(name + ".") and n in files for n in names) and not any(
                n.startswith(name + ".") and n.rpartition(".")[0] == name and n not in files for n in names
            ):
                continue
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
