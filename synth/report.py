"""report.md: the capacity and queue report a PR comment shows (stub: filled in by issue 4)."""

from __future__ import annotations

from typing import Any


def render(result, violations: list[dict[str, Any]]) -> str:
    return f"# {result.stack}\n"
