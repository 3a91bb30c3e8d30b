"""The one shape of a finding, whichever layer finds it: a config rule broken at a key path, a
component arg refused, an object the admission model says could never run, a policy violated
by a recorded resource, or synth's diagnostic placed in a file (gke_ai_batch/synth/diagnostics.py subclasses
it with file, line and column).

- `rule`: the rule's id: "config", "args", the model's ("quota", "placement", "queue", ...) or
  the policy's name ("gke-private-nodes");
- `severity`: "error" (refused: synth exits 2, `pulumi up` stops), a policy's enforcement level
  ("mandatory", "advisory"), or a lesser note;
- `subject`: the object it is about, as (kind, namespace, name), namespace "" for cluster-scoped
  objects; None when the finding is placed at a key instead;
- `path`: where: below `subject` when that is set (its field, "flavors[1]"), else a key path of
  the input (a stack file's "gke-ai-batch:nodePools[2].tpu", a component's "args.topology");
- `urn`: the recorded resource it blames, or None.

Standard library only: every layer, the policy pack's small venv too, builds and reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Subject = tuple[str, str, str]
"""(kind, namespace, name) of the object a finding is about; namespace "" for cluster-scoped ones."""

ERROR = "error"
"""Refused: synth exits 2 and `pulumi up` stops before registering anything."""
MANDATORY, ADVISORY = "mandatory", "advisory"
"""CrossGuard's enforcement levels of a policy finding (pulumi_policy.EnforcementLevel)."""

CONFIG = "config"
"""The rule id of a stack-config problem at a key path."""


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    severity: str = ERROR
    subject: Subject | None = None
    path: str | None = None
    urn: str | None = None

    @classmethod
    def at(cls, path: str, message: str, rule: str = CONFIG) -> Finding:
        """The error of `rule` at a key path: a stack key's ("gke-ai-batch:nodePools[2].tpu", rule
        "config"), a component arg's ("args.topology", rule "args"), a file's key."""
        return cls(rule, message, path=path)

    @property
    def where(self) -> str:
        """Where it is, as a person reads it: the object and its field ('ClusterQueue
        research.flavors[1]', 'JobSet team-a/train'), else the key path, else the URN; "" if none."""
        if self.subject is not None:
            kind, namespace, name = self.subject
            return f"{kind} {namespace + '/' if namespace else ''}{name}" + (f".{self.path}" if self.path else "")
        return self.path or self.urn or ""

    def render(self) -> str:
        """One line: `where: message`, the severity first when it is not an error."""
        head = "" if self.severity == ERROR else f"{self.severity}: "
        return f"{head}{self.where}: {self.message}" if self.where else f"{head}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "subject": list(self.subject) if self.subject is not None else None,
            "path": self.path,
            "urn": self.urn,
            "message": self.message,
        }

