"""The committed URN list of each stack (stacks/urns/<stack>.txt).

A URN is a resource's identity to Pulumi: a change that alters one (a renamed pool entry, a
team moved to another namespace, a component renamed) deletes and recreates the resource.
Keeping the list in the repository puts every such change in the PR diff.

    python -m synth.urns            # rewrite the lists of every stack
    python -m synth.urns dev prod   # or of some
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import StackFile, synthesize

ROOT = Path(__file__).resolve().parent.parent
URN_DIR = ROOT / "stacks" / "urns"


def urn_list(result) -> str:
    # Sorted: the file changes when an identity appears or disappears, not when the program
    # registers the same resources in another order.
    return "".join(f"{urn}\n" for urn in sorted(r.urn for r in result.recording.resources))


def urn_file(stack: str) -> Path:
    return URN_DIR / f"{stack}.txt"


def main(argv: list[str]) -> int:
    stacks = argv or sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    URN_DIR.mkdir(exist_ok=True)
    for stack in stacks:
        result = synthesize(ROOT, StackFile.locate(ROOT, stack, None))
        if result.error:
            print(result.error, file=sys.stderr)
            return 2
        urn_file(stack).write_text(urn_list(result))
        print(f"{urn_file(stack).relative_to(ROOT)}: {len(result.recording.resources)} URNs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
