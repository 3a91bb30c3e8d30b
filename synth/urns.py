"""The committed URN list of each stack (stacks/urns/<stack>.txt).

A URN is a resource's identity to Pulumi: a change that alters one (a renamed pool entry, a
team moved to another namespace, a component renamed) deletes and recreates the resource.
Keeping the list in the repository puts every such change in the PR diff.

    python -m synth.urns            # rewrite the lists of every stack
    python -m synth.urns dev prod   # or of some

Every URN synth reads or builds goes through `parse` and `make` here: a URN of a base render
is input like any other, and one that is not a Pulumi URN is refused, not split blindly.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from gke_ai_batch.domain import cli

# pulumi/pulumi sdk/go/common/resource/urn/urn.go (v3): urn:pulumi:STACK::PROJECT::TYPE::NAME,
# TYPE the qualified type (parent types first, joined by `$`), NAME everything after the third
# `::` (a name may itself hold `::`); IsValid asks for the prefix and at least three `::`.
PREFIX = "urn:pulumi:"
DELIMITER = "::"
TYPE_DELIMITER = "$"
SHAPE = "urn:pulumi:STACK::PROJECT::TYPE::NAME"


class UrnError(ValueError):
    """Text that is not a Pulumi URN."""


@dataclass(frozen=True)
class Urn:
    stack: str
    project: str
    qualified_type: str  # parent types first: `a:b:C$d:e:F`
    name: str

    @property
    def type(self) -> str:
        """The resource's own type: the qualified type's last part (urn.go Type)."""
        return self.qualified_type.rsplit(TYPE_DELIMITER, 1)[-1]

    def __str__(self) -> str:
        return make(self.stack, self.project, self.qualified_type, self.name)


def parse(text: object) -> Urn:
    """A Pulumi URN's parts; UrnError for anything else (no prefix, fewer than three `::`, an
    empty stack, project or type: Pulumi never builds one)."""
    if not isinstance(text, str) or not text.startswith(PREFIX):
        raise UrnError(f"{_shown(text)} is not a Pulumi URN ({SHAPE})")
    parts = text[len(PREFIX) :].split(DELIMITER, 3)
    if len(parts) != 4 or not all(parts[:3]):
        raise UrnError(f"{_shown(text)} is not a Pulumi URN ({SHAPE})")
    return Urn(*parts)


def make(stack: str, project: str, qualified_type: str, name: str) -> str:
    return PREFIX + DELIMITER.join((stack, project, qualified_type, name))


def name_of(text: str) -> str:
    """A URN's resource name, or the text itself where it is no URN (a stack-level finding)."""
    try:
        return parse(text).name
    except UrnError:
        return text


def provider_urn(reference: str) -> str:
    """The provider's URN in a provider reference `<urn>::<id>` (pulumi/pulumi
    pkg/resource/deploy/providers/reference.go ParseReference: the id follows the last `::`)."""
    return reference.rsplit(DELIMITER, 1)[0]


def _shown(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= 80 else shown[:77] + "…"

ROOT = Path(__file__).resolve().parent.parent
URN_DIR = ROOT / "stacks" / "urns"


def urn_list(result) -> str:
    # Sorted: the file changes when an identity appears or disappears, not when the program
    # registers the same resources in another order.
    return "".join(f"{urn}\n" for urn in sorted(r.urn for r in result.recording.resources))


def urn_file(stack: str) -> Path:
    return URN_DIR / f"{stack}.txt"


def main(argv: list[str]) -> int:
    parser = cli.parser("python -m synth.urns", __doc__)
    parser.add_argument("stacks", nargs="*", metavar="STACK", help="stacks/Pulumi.STACK.yaml (default: every stack)")
    stacks = parser.parse_args(argv).stacks
    from . import StackFile, StackFileError, synthesize  # after --help: they load pulumi and pydantic

    stacks = stacks or sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    try:
        stack_files = [StackFile.locate(ROOT, stack, None) for stack in stacks]
    except StackFileError as exc:
        parser.error("; ".join(d.message for d in exc.diagnostics))
    URN_DIR.mkdir(exist_ok=True)
    for stack_file in stack_files:
        result = synthesize(ROOT, stack_file)
        if result.error:
            print(result.error, file=sys.stderr)
            return 2
        urn_file(stack_file.stack).write_text(urn_list(result))
        print(f"{urn_file(stack_file.stack).relative_to(ROOT)}: {len(result.recording.resources)} URNs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
