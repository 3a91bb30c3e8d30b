"""Markdown helpers: tables whose cells cannot break the table, and code spans."""

from __future__ import annotations

import re
from typing import Any, Iterable

DASH = "—"


def cell(value: Any) -> str:
    text = DASH if value is None or value == "" else str(value)
    # A pipe ends a cell and a newline ends the row, even inside a code span on GitHub.
    return text.replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")


def code(name: Any) -> str:
    """A code span of any text (a sample's command is free text): its fence is a backtick run
    longer than any inside, which a span's equal-length closing run cannot meet, padded with a
    space that the span strips (CommonMark 0.31.2, 6.1 Code spans: https://spec.commonmark.org/0.31.2/#code-spans)."""
    text = str(name)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def codes(names: Iterable[Any]) -> str:
    return ", ".join(code(n) for n in names) or DASH


def table(headers: list[str], rows: list[list[Any]], align: list[str] | None = None) -> list[str]:
    """GitHub table lines; align per column is "l" or "r"."""
    align = align or ["l"] * len(headers)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"
