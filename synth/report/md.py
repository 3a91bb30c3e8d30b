"""Markdown helpers: tables whose cells cannot break the table, and code spans."""

from __future__ import annotations

from typing import Any, Iterable

DASH = "—"


def cell(value: Any) -> str:
    text = DASH if value is None or value == "" else str(value)
    # A pipe ends a cell and a newline ends the row, even inside a code span on GitHub.
    return text.replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")


def code(name: Any) -> str:
    text = str(name)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
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
