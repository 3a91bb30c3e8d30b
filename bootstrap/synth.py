"""python -m bootstrap.synth STACK | --config FILE  [--out DIR] [--debug]

Runs the bootstrap program (bootstrap/__main__.py) for a stack (bootstrap/Pulumi.STACK.yaml)
under synth's recording engine and writes what it would create into build/bootstrap/STACK (or
--out): resources.json, outputs.json and iam.md (identity, role, resource, condition), all or none.

Exit codes, as python -m synth's: 0 rendered; 2 invalid config or usage (every problem listed as
file:line:column: key path: message; nothing written); 70 an internal error (one line, and
--debug for the traceback); 75 another run kept the output folder locked too long."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "bootstrap"
MOCK_PROJECT_NUMBER = "123456789012"
"""Stands in for the bootstrap project's number in the provider's full name (only the cloud knows it)."""


def outputs_for(type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """What the cloud would report back for the outputs the program reads."""
    if type_ == "gcp:serviceaccount/account:Account":
        email = f"{inputs['accountId']}@{inputs['project']}.iam.gserviceaccount.com"
        return {"email": email, "name": f"projects/{inputs['project']}/serviceAccounts/{email}"}
    if type_ == "gcp:projects/serviceIdentity:ServiceIdentity" and inputs.get("service") == "container.googleapis.com":
        # The GKE service agent of the stack's project; its number is the cloud's too.
        return {"email": f"service-{MOCK_PROJECT_NUMBER}@container-engine-robot.iam.gserviceaccount.com"}
    pool = f"projects/{MOCK_PROJECT_NUMBER}/locations/global/workloadIdentityPools"
    if type_ == "gcp:iam/workloadIdentityPool:WorkloadIdentityPool":
        return {"name": f"{pool}/{inputs['workloadIdentityPoolId']}"}
    if type_ == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
        return {"name": f"{pool}/{inputs['workloadIdentityPoolId']}/providers/{inputs['workloadIdentityPoolProviderId']}"}
    return {}


def render(stack_file) -> tuple[Any, list]:
    """(recording, []) or (None, diagnostics): the program run for one bootstrap stack file."""
    from gke_ai_batch.config import ConfigError
    from gke_ai_batch.synth import diagnostics, engine, stackfile

    from .model import NAMESPACE

    try:
        config = stackfile.read(stack_file)
    except stackfile.StackFileError as exc:
        return None, exc.diagnostics
    try:
        with engine.lean_runtime():
            recording = engine.run(
                HERE / "__main__.py",
                project=NAMESPACE,
                stack=stack_file.stack,
                config=config.values,
                secret_keys=config.secret_keys,
                outputs_for=outputs_for,
            )
    except ConfigError as exc:
        return None, diagnostics.from_problems(exc.findings, rule="config", file=stack_file.display(), positions=config.positions)
    return recording, []


def output_files(recording) -> dict[str, str]:
    from .grants import render_markdown

    return {
        "resources.json": json.dumps([r.to_json() for r in recording.resources], indent=2, sort_keys=True) + "\n",
        "outputs.json": json.dumps(recording.outputs, indent=2, sort_keys=True) + "\n",
        "iam.md": render_markdown(recording),
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bootstrap.synth",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("stack", nargs="?", metavar="STACK", help="reads bootstrap/Pulumi.STACK.yaml")
    p.add_argument("--config", type=Path, metavar="FILE", help="any bootstrap stack file named Pulumi.<stack>.yaml")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default build/bootstrap/STACK)")
    p.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    return p


def main(argv: list[str] | None = None) -> int:
    # Parsed first: --help and a usage error answer before synth (pulumi, pydantic) loads.
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    from gke_ai_batch.synth import output
    from gke_ai_batch.synth.diagnostics import EXIT_BUSY, EXIT_INTERNAL, EXIT_INVALID_CONFIG, EXIT_OK, Diagnostic
    from gke_ai_batch.synth.stackfile import StackFile, StackFileError

    if bool(args.stack) == bool(args.config):
        print("python -m bootstrap.synth: give one of: STACK, or --config FILE", file=sys.stderr)
        return EXIT_INVALID_CONFIG
    try:
        config_path = args.config or HERE / f"Pulumi.{args.stack}.yaml"
        if args.stack and not os.path.lexists(config_path):
            known = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in HERE.glob("Pulumi.*.yaml"))
            raise StackFileError([Diagnostic(f"no bootstrap stack {args.stack!r} (no bootstrap/Pulumi.{args.stack}.yaml); stacks: {', '.join(known) or 'none'}", "usage")])
        stack_file = StackFile.locate(ROOT, None, config_path)
        recording, problems = render(stack_file)
        if problems:
            for d in problems:
                print(d.render(), file=sys.stderr)
            print(f"bootstrap.synth: {stack_file.display()}: {len(problems)} problem{'s' if len(problems) > 1 else ''}; nothing written", file=sys.stderr)
            return EXIT_INVALID_CONFIG
        out = args.out if args.out is not None else ROOT / "build" / "bootstrap" / stack_file.stack
        target = output.check_target(out, ROOT)
        with output.locked(target):
            output.write(target, output_files(recording))
    except StackFileError as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        return EXIT_INVALID_CONFIG
    except output.OutputError as exc:
        print(exc.diagnostic.render(), file=sys.stderr)
        return EXIT_BUSY if exc.busy else EXIT_INVALID_CONFIG
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure ends in a message and an exit code
        if args.debug:
            traceback.print_exc()
        text = " ".join(str(exc).split())[:300]
        print(f"bootstrap.synth: internal error: {type(exc).__name__}: {text} (a bug, not in the config; run again with --debug)", file=sys.stderr)
        return EXIT_INTERNAL
    n = len(recording.resources) - 1
    print(f"{stack_file.stack}: {n} resources; wrote {out}")
    return EXIT_OK


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
