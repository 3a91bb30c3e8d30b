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
