"""Reading synth's diagnostics back: `file:line:column: key path: message`, one per line."""

from __future__ import annotations

import re

LINE = re.compile(
    r"^(?P<file>[^:]+)(?::(?P<line>[0-9]+)(?::(?P<column>[0-9]+))?)?: "
    r'(?P<path>(?:[^\s"]|"(?:[^"\\]|\\.)*")+): (?P<message>.+)$'
)


def parse(error: str) -> list[dict]:
    out = []
    for text in error.splitlines():
        m = LINE.match(text)
        assert m, f"not a diagnostic line: {text!r}\n{error}"
        out.append(m.groupdict())
    return out


def paths(error: str) -> list[str]:
    return [d["path"] for d in parse(error)]


def assert_names(error: str, file, path: str, words: str) -> None:
    """`error` has a line for `path` in `file`, placed at a line and column, saying `words`."""
    found = [d for d in parse(error) if d["path"] == path]
    assert found, f"no diagnostic for {path}:\n{error}"
    assert all(d["file"] == str(file) for d in parse(error)), error
    assert any(words in d["message"] for d in found), error
    assert all(d["line"] for d in found), f"{path} is not placed at a line:\n{error}"
