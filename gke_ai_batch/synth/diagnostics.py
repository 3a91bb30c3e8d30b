"""What synth tells the user when something is wrong, and the exit codes it ends with.

One diagnostic per problem, in the form compilers and editors understand:

    stacks/Pulumi.dev.yaml:23:7: gke-ai-batch:nodePools[0].tpu.topology: '4x5' is not a v6e topology; ...

`file:line:column` is where the key is written (the nearest enclosing key when the problem is
a key that is missing); then the key path, then the message. `--json` gives the same fields
(file, line, column, path, rule, message, severity) as objects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from gke_ai_batch.domain.findings import ERROR, Finding

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


@dataclass(frozen=True, init=False)
class Diagnostic(Finding):
    """A Finding placed in a file: where it is written (file, line, column), for the user and
    for editors. Built as it always was, `Diagnostic(message, rule, path, file, line, column,
    severity)`: `path` is where the file or the command line has it (a key path, `--out`), so it
    has no subject; nor a URN, as nothing is recorded yet."""

    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __init__(
        self,
        message: str,
        rule: str,
        path: str | None = None,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        severity: str = ERROR,
        subject: None = None,  # dataclasses.replace passes every field back in
        urn: None = None,
    ):
        init = object.__setattr__  # frozen
        init(self, "message", shorten(message))
        init(self, "rule", rule)
        init(self, "path", shorten(path, 200) if path is not None else None)
        init(self, "file", file)
        init(self, "line", line)
        init(self, "column", column)
        init(self, "severity", severity)
        init(self, "subject", subject)
        init(self, "urn", urn)

    def render(self) -> str:
        where = self.file or "synth"
        if self.file and self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        head = f"{where}: "
        if self.severity != ERROR:
            head += f"{self.severity}: "
        return f"{head}{self.path}: {self.message}" if self.path else f"{head}{self.message}"

    def to_json(self) -> dict[str, Any]:
        """The fields `--json` has always given, in its order."""
        return {
            "message": self.message,
            "rule": self.rule,
            "path": self.path,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
        }


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
    problems: Iterable[Finding],
    *,
    rule: str,
    file: str | None,
    positions: Mapping[str, tuple[int, int]],
) -> list[Diagnostic]:
    """Findings, as ConfigError holds them, placed in the file.
    Each diagnostic's rule is `rule`, the check that refused the file ("config"), as `--json`
    has always named it, and its path where the finding is (its object's, when no key is known)."""
    out = []
    for finding in problems:
        path = finding.where
        # A key missing at the top level is placed at `config:`, where it would be added.
        at = locate(path, positions) or positions.get("config")
        line, column = at or (None, None)
        out.append(Diagnostic(finding.message, rule, path, file, line, column))
    return out


def render(diagnostics: Iterable[Diagnostic]) -> str:
    return "\n".join(d.render() for d in diagnostics)
