"""What synth tells the user when something is wrong, and the exit codes it ends with.

One diagnostic per problem, in the form compilers and editors understand:

    stacks/Pulumi.dev.yaml:23:7: gke-ai-batch:nodePools[0].tpu.topology: '4x5' is not a v6e topology; ...

`file:line:column` is where the key is written (the nearest enclosing key when the problem is
a key that is missing); then the key path, then the message. `--json` gives the same fields
(file, line, column, path, rule, message, severity) as objects."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

EXIT_OK = 0
EXIT_INVALID_CONFIG = 2
"""Invalid stack config, or a usage error (bad arguments, an --out that may not be written)."""
EXIT_POLICY_VIOLATION = 3
"""A mandatory policy is violated (files are written, for review)."""
EXIT_BUSY = 75
"""Another synth holds the lock on the same --out for longer than the wait (sysexits EX_TEMPFAIL)."""
EXIT_INTERNAL = 70
"""A bug in synth, not in the input (sysexits EX_SOFTWARE): one line, and --debug for the traceback."""

# One trailing segment of a key path: .name, [3] or ["odd key"].
_LAST_SEGMENT = re.compile(r'(\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\])$')


MESSAGE_MAX = 500
"""Messages quote the values they refuse; a value of a megabyte is shown by its ends."""


def shorten(text: str, limit: int = MESSAGE_MAX) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 30) // 2
    return f"{text[:half]} …[{len(text) - 2 * half:,} characters]… {text[-half:]}"


@dataclass(frozen=True)
class Diagnostic:
    message: str
    rule: str
    path: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    severity: str = "error"

    def __post_init__(self):
        object.__setattr__(self, "message", shorten(self.message))
        if self.path is not None:
            object.__setattr__(self, "path", shorten(self.path, 200))

    def render(self) -> str:
        where = self.file or "synth"
        if self.file and self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        head = f"{where}: "
        if self.severity != "error":
            head += f"{self.severity}: "
        return f"{head}{self.path}: {self.message}" if self.path else f"{head}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def locate(path: str, positions: Mapping[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The position of `path`, or of its nearest enclosing key that the file spells out."""
    while path:
        if path in positions:
            return positions[path]
        trimmed = _LAST_SEGMENT.sub("", path)
        if trimmed == path:
            return None
        path = trimmed
    return None


def from_problems(
    problems: Iterable[tuple[str, str]],
    *,
    rule: str,
    file: str | None,
    positions: Mapping[str, tuple[int, int]],
) -> list[Diagnostic]:
    """(key path, message) pairs, as ConfigError holds them, placed in the file."""
    out = []
    for path, message in problems:
        # A key missing at the top level is placed at `config:`, where it would be added.
        at = locate(path, positions) or positions.get("config")
        out.append(Diagnostic(message, rule, path, file, *(at or (None, None))))
    return out


def render(diagnostics: Iterable[Diagnostic]) -> str:
    return "\n".join(d.render() for d in diagnostics)
