"""The package's layout is its architecture: each layer of gke_ai_batch imports only the layers
below it, and the domain imports nothing but the standard library (docs/how-it-works.md)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from conftest import ROOT

# What each layer may import of the package, besides itself.
BELOW: dict[str, set[str]] = {
    "domain": set(),
    "model": {"domain"},
    "config": {"domain"},
    "plan": {"domain", "config", "model"},
    "components": {"domain", "config", "plan", "model"},
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
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "gke_ai_batch" and len(parts) > 1 and parts[1] in BELOW else None


def wrong_imports(root: Path, layer: str) -> list[str]:
    return sorted(
        f"{path.relative_to(root)} imports {module}"
        for path in sorted((root / "gke_ai_batch" / layer).rglob("*.py"))
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
        for path in sorted((ROOT / "gke_ai_batch" / "domain").rglob("*.py"))
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
