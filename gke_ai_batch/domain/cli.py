"""How this repository's command-line modules answer `--help`: argparse, with the module's own
docstring as the text (its first paragraph as the description, the rest as the epilog)."""

from __future__ import annotations

import argparse


def parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    head, _, rest = (doc or "").strip().partition("\n\n")
    return argparse.ArgumentParser(
        prog=prog,
        description=head,
        epilog=rest or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,  # `--he` is not `--help`: modules run under an engine see its arguments
    )


def exit_with(code: int) -> None:
    """End a command's process, every file written. At exit the interpreter runs the cyclic
    collector over every object still alive as it tears the modules down: at 256 slices some
    240,000 objects (the SDK's classes, pydantic's schemas, the recording), more CPU than the
    whole render. Frozen objects are left out of those passes; memory goes back to the OS with
    the process either way, and atexit handlers still run. Only for a process's last step: a
    caller that goes on (a test) calls run() or main()."""
    import gc
    import sys

    gc.freeze()
    sys.exit(code)
