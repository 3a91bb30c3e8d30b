"""The configuration reference (docs/configuration.md), generated from the models so it cannot drift:

    python -m gke_ai_batch.config.reference   # prints the Markdown between the page's markers
    python -m gke_ai_batch.config.reference --write   # rewrites docs/configuration.md between them
"""

from __future__ import annotations

import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from gke_ai_batch.config import NAMESPACE
from gke_ai_batch.config.stack import StackConfig

START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
REGENERATE = "python -m gke_ai_batch.config.reference --write"


def _type_name(annotation: Any) -> str:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(f"`{v}`" if not isinstance(v, bool) else f"`{str(v).lower()}`" for v in typing.get_args(annotation))
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(_type_name(a) for a in members)
    if origin is list:
        return f"list of {_type_name(typing.get_args(annotation)[0])}"
    if origin is dict:
        k, v = typing.get_args(annotation)
        return f"map {_type_name(k)} → {_type_name(v)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return {int: "integer", str: "string", bool: "boolean", float: "number"}.get(annotation, str(annotation))


def _default(field) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is PydanticUndefined or value is None:
        return ""
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value in ([], {}):
        return ""
    return f"`{value}`"


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in seen:
                seen.append(annotation)
                for f in annotation.model_fields.values():
                    visit(f.annotation)
            return
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(root)
    return seen


def current(page: str) -> str:
    """The block between the markers of `page`, markers included."""
    return page[page.index(START) : page.index(END) + len(END)]


def render() -> str:
    lines = [START, ""]
    for model in _models(StackConfig):
        title = "Stack keys" if model is StackConfig else model.__name__
        lines.append(f"#### {title}")
        if model.__doc__ and model is not StackConfig:
            lines.append("")
            lines.append(textwrap.fill(" ".join(model.__doc__.split()), 96, break_long_words=False, break_on_hyphens=False))
        lines += ["", "| key | type | default | notes |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():
            key = field.alias or name
            if model is StackConfig:
                key = f"{NAMESPACE}:{key}"
            notes = " ".join((field.description or "").split()).replace("|", "\\|")
            lines.append(f"| `{key}` | {_type_name(field.annotation)} | {_default(field)} | {notes} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


if __name__ == "__main__":
    from gke_ai_batch.domain import cli

    parser = cli.parser("python -m gke_ai_batch.config.reference", __doc__)
    parser.add_argument("--write", action="store_true", help=f"rewrite {PAGE.relative_to(PAGE.parents[1])} between its markers")
    if parser.parse_args().write:
        page = PAGE.read_text()
        PAGE.write_text(page.replace(current(page), render()))
    else:
        print(render())
