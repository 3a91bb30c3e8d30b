"""python -m synth STACK | --config FILE [--out DIR]

Runs the program (__main__.py) for a stack under the recording engine and writes what it
would create: resources.json, manifests.yaml, and a summary on stdout. Exit codes: 0 success,
2 invalid stack config (one message on stderr, nothing written), 3 a mandatory policy violated
(files written, violations on stderr)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import EXIT_INVALID_CONFIG, StackFile, synthesize, write_outputs

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synth", description=__doc__.split("\n\n")[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("stack", nargs="?", help="stack name: reads stacks/Pulumi.STACK.yaml")
    target.add_argument("--config", type=Path, help="any stack file named Pulumi.<stack>.yaml")
    parser.add_argument("--out", type=Path, help="output folder (default build/STACK)")
    args = parser.parse_args(argv)

    try:
        stack_file = StackFile.locate(ROOT, args.stack, args.config)
    except (FileNotFoundError, ValueError) as exc:
        print(f"synth: {exc}", file=sys.stderr)
        return EXIT_INVALID_CONFIG

    result = synthesize(ROOT, stack_file)
    if result.error is not None:
        print(result.error, file=sys.stderr)
        return EXIT_INVALID_CONFIG
    out = args.out or ROOT / "build" / stack_file.stack
    write_outputs(result, out)
    print(result.summary)
    for v in result.violations:
        stream = sys.stderr if v["enforcement"] == "mandatory" else sys.stdout
        print(f"policy {v['enforcement']}: {v['policy']}: {v['urn'].split('::')[-1]}: {v['message']}", file=stream)
    print(f"wrote {out}")
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
