"""What a consumer of the installed package finds at its top: every public component and its
typed args by name, loaded on first use, declared to type checkers, with each component's own
help text."""

from __future__ import annotations

import ast
import pydoc
import subprocess
import sys
import tomllib

import gke_ai_batch
from gke_ai_batch import components
from gke_ai_batch.components.package import COMPONENTS
from conftest import ROOT


def _type_checking_imports() -> dict[str, tuple[str, ...]]:
    tree = ast.parse((ROOT / "gke_ai_batch" / "components" / "__init__.py").read_text())
    guard = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    found = {}
    for node in guard.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        # `X as X`: the explicit re-export form type checkers honour in a py.typed package.
        assert all(a.asname == a.name for a in node.names), node.module
        found[node.module] = tuple(a.name for a in node.names)
    return found


def test_type_checkers_and_the_runtime_see_the_same_names():
    assert _type_checking_imports() == components._HOMES
    assert components.__all__ == [name for names in components._HOMES.values() for name in names]
    assert len(components.__all__) == len(set(components.__all__))


def test_all_is_a_literal_list_mypy_can_read():
    # mypy resolves `from gke_ai_batch.components import *` (the top package's names for type
    # checkers) only through a literal __all__; a computed one leaves `gab.TpuSlices` untyped.
    tree = ast.parse((ROOT / "gke_ai_batch" / "components" / "__init__.py").read_text())
    (value,) = [n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__"]
    assert isinstance(value, ast.List) and all(isinstance(e, ast.Constant) for e in value.elts)


def test_every_component_and_its_args_are_exported_from_the_top():
    for cls in COMPONENTS:
        assert getattr(gke_ai_batch, cls.__name__) is cls
        args = cls.__init__.__annotations__["args"]
        assert getattr(gke_ai_batch, args.__name__) is args, cls.__name__
    assert gke_ai_batch.ArgsError.__module__ == "gke_ai_batch.config.errors"
    assert set(components.__all__) <= set(dir(gke_ai_batch))
    namespace: dict = {}
    exec("from gke_ai_batch import *", namespace)
    assert {c.__name__ for c in COMPONENTS} <= set(namespace)


def test_an_unknown_name_is_an_attribute_error():
    for module in (gke_ai_batch, components):
        try:
            module.NoSuchComponent  # type: ignore[attr-defined]
        except AttributeError as exc:
            assert "NoSuchComponent" in str(exc)
        else:
            raise AssertionError(module.__name__)


def test_importing_the_package_loads_no_sdk():
    # The policy pack imports gke_ai_batch.domain and .model in a venv without pydantic; the
    # top-level names must not drag the components in.
    code = ("import sys, gke_ai_batch, gke_ai_batch.components, gke_ai_batch.domain.catalogue; "
            "dir(gke_ai_batch); print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pydantic')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_wheel_carries_py_typed():
    assert (ROOT / "gke_ai_batch" / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["gke_ai_batch"]


def test_help_shows_each_components_own_summary():
    for cls in COMPONENTS:
        text = pydoc.render_doc(cls.__init__, renderer=pydoc.plaintext)
        assert f"Create a {cls.__name__}." in text and "package_ref" not in text, cls.__name__
        assert cls.__init__.__annotations__["args"].__name__ in text
