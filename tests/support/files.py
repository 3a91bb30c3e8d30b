"""The project's own source files, for the tests that scan them: never what a virtualenv, a cache
or an output folder holds below the same folders (README step 7 creates policy/.venv, whose
site-packages would otherwise be read as the policy pack's modules)."""

from __future__ import annotations

import os
from pathlib import Path

# Caches and outputs by name; a virtualenv by name (.venv, venv) or by its pyvenv.cfg, whatever
# it is called (python -m venv writes one into every environment it creates).
SKIP = {".git", ".venv", "venv", "build", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache", ".mypy_cache"}


def is_skipped(folder: Path) -> bool:
    return folder.name in SKIP or (folder / "pyvenv.cfg").exists()


def walk(root: Path):
    """Every file below `root`, sorted, outside skipped folders."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not is_skipped(Path(dirpath, d)))
        for name in sorted(filenames):
            yield Path(dirpath, name)


def python_files(root: Path) -> list[Path]:
    return [p for p in walk(root) if p.suffix == ".py"]
