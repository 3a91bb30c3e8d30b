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

from gke_ai_batch.domain import cli

from . import checkout

URN_FOLDER = Path("stacks", "urns")
ROOT = checkout.root()
URN_DIR = (ROOT or Path.cwd()) / URN_FOLDER


def urn_list(result) -> str:
    # Sorted: the file changes when an identity appears or disappears, not when the program
    # registers the same resources in another order.
    return "".join(f"{urn}\n" for urn in sorted(r.urn for r in result.recording.resources))


def urn_file(stack: str) -> Path:
    return URN_DIR / f"{stack}.txt"


def main(argv: list[str], prog: str = "python -m synth.urns") -> int:
    parser = cli.parser(prog, __doc__)
    parser.add_argument("stacks", nargs="*", metavar="STACK", help="stacks/Pulumi.STACK.yaml (default: every stack)")
    stacks = parser.parse_args(argv).stacks
    if ROOT is None:
        parser.error(checkout.NEEDS_CHECKOUT)
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
        assert ROOT is not None and result.recording is not None  # a checkout; rendered
        urn_file(stack_file.stack).write_text(urn_list(result))
        print(f"{urn_file(stack_file.stack).relative_to(ROOT)}: {len(result.recording.resources)} URNs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
