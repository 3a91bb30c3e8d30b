"""usage: gke-ai-batch COMMAND [ARGS]: the command an installed gke-ai-batch puts on PATH.

Commands:
  synth [ARGS]          render offline what a program would create, as `python -m synth` does in a
                        checkout (`gke-ai-batch synth --help`); installed, from any folder:
                        gke-ai-batch synth --program DIR --config DIR/Pulumi.STACK.yaml
  add NAME [--from S]   add a stack to a checkout of gke-ai-batch (`python -m synth.add`)
  urns [STACK ...]      rewrite a checkout's committed URN lists (`python -m synth.urns`)

Exit codes are the command's own (`gke-ai-batch synth --help` lists synth's); 2 for an unknown
command."""

from __future__ import annotations

import os
import sys

from gke_ai_batch.domain import cli

PROG = "gke-ai-batch"
COMMANDS = ("synth", "add", "urns")


def main(argv: list[str] | None = None) -> int:
    # Each command parses its own arguments (and answers its own --help) before it loads
    # pulumi or pydantic: nothing heavy is imported here.
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        try:
            print(__doc__, flush=True)
        except BrokenPipeError:  # `| head`: nothing more reaches the closed pipe, not even the flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    prog = f"{PROG} {name}"
    if name == "synth":
        from .__main__ import run

        return run(rest, prog)
    if name == "add":
        from .add import main as add

        return add(rest, prog)
    if name == "urns":
        from .urns import main as urns

        return urns(rest, prog)
    print(f"{PROG}: no command {name!r}; commands: {', '.join(COMMANDS)} ({PROG} --help)", file=sys.stderr)
    return 2


def console() -> None:
    """The console script's entry point (pyproject.toml [project.scripts])."""
    cli.exit_with(main())


if __name__ == "__main__":
    console()
