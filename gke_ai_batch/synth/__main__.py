"""python -m synth STACK [STACK ...] | --all | --config FILE | --program DIR --config FILE  [--out DIR] [--base DIR | --new] [--json] [--quiet] [--debug]
   python -m synth STACK --removed --base DIR [--out DIR]

Runs the program (__main__.py) for a stack under the recording engine and writes what it
would create into build/STACK (or --out): resources.json, manifests.yaml, outputs.json,
policy.json, cost.json, admission.json and report.md (and, for a program of several clusters, manifests/CLUSTER.yaml),
all or none. With --program DIR, runs that Pulumi Python program instead (any program using the
library; DIR holds its Pulumi.yaml) with the stack config of --config FILE, into
build/programs/PROJECT/STACK (or --out). With --base DIR (the same stack rendered from the base branch), diff.md and
diff.json too: what changes against that render (docs/synth.md); with --new, against nothing (a
stack the base branch lacks); with --removed, only those two, of a stack the change removes.

Exit codes: 0 rendered; 2 invalid stack config or usage (every problem listed as
file:line:column: key path: message; nothing written; for --program also the library's
ArgsError and ConfigError the program raised); 3 a mandatory policy violated (files
written, violations on stderr); 70 an internal error (a bug in synth, or a --program that
raised anything else: one line, and --debug for the traceback); 75 another synth kept the output folder locked too long. With several
stacks, the exit code is the most serious of theirs."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from gke_ai_batch.domain import cli, urns

from . import checkout
from .diagnostics import (
    EXIT_BUSY,
    EXIT_INTERNAL,
    EXIT_INVALID_CONFIG,
    EXIT_OK,
    EXIT_POLICY_VIOLATION,
    Diagnostic,
)

# The checkout synth runs from; None when installed, where only --program renders (checkout.py).
ROOT = checkout.root()
PROG = "python -m synth"
# The most serious first: what --all reports when stacks end differently.
_SEVERITY = [EXIT_INTERNAL, EXIT_BUSY, EXIT_INVALID_CONFIG, EXIT_POLICY_VIOLATION, EXIT_OK]


@dataclass
class Outcome:
    stack: str
    exit_code: int = EXIT_OK
    file: str | None = None
    out: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    violations: list[dict] = field(default_factory=list)
    summary: str = ""

    def to_json(self) -> dict:
        return {
            "stack": self.stack,
            "file": self.file,
            "out": self.out,
            "exitCode": self.exit_code,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "violations": self.violations,
        }


def version() -> str:
    import importlib.metadata

    from gke_ai_batch.config.batch import JobSetConfig, KueueConfig

    pulumi_version = importlib.metadata.version("pulumi")
    return (
        f"gke-ai-batch synth (Kueue {KueueConfig().version}, JobSet {JobSetConfig().version}, "
        f"Pulumi SDK {pulumi_version}, Python {sys.version.split()[0]})"
    )


class _Parser(argparse.ArgumentParser):
    json_errors = False

    def error(self, message: str):
        if self.json_errors:  # --json: a usage error is the one JSON document too
            outcome = Outcome("", EXIT_INVALID_CONFIG, diagnostics=[Diagnostic(message, "usage")])
            sys.exit(_finish(argparse.Namespace(json=True), [outcome]))
        super().error(message)


def _home() -> Path:
    """Where default outputs go and the folder synth never replaces: the checkout, or the
    working folder of an installed synth."""
    return ROOT if ROOT is not None else Path.cwd()


def parser(prog: str = PROG) -> _Parser:
    p = _Parser(
        prog=prog,
        description=(__doc__ or "").split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "stacks",
        nargs="*",
        metavar="STACK",
        help="stack name(s): reads stacks/Pulumi.STACK.yaml; or path(s) to a stack file, as --config",
    )
    p.add_argument("--all", action="store_true", help="every stack in stacks/")
    p.add_argument("--config", type=Path, metavar="FILE", help="any stack file named Pulumi.<stack>.yaml")
    p.add_argument(
        "--program",
        type=Path,
        metavar="DIR",
        help="a Pulumi Python program's folder (its Pulumi.yaml names the project and main) to run instead of this "
        "project's stack program, with the stack config of --config FILE",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default build/STACK); with several stacks, the folder that holds one per stack",
    )
    p.add_argument(
        "--base",
        type=Path,
        metavar="DIR",
        help="a folder synth wrote for the same stack from the base branch: also write diff.md and diff.json; "
        "with several stacks, the folder that holds one per stack (a stack it lacks is shown as new)",
    )
    p.add_argument(
        "--new",
        action="store_true",
        help="the base branch has no such stack: also write diff.md and diff.json against nothing (everything is added)",
    )
    p.add_argument(
        "--removed",
        action="store_true",
        help="STACK is removed by the change (no stack file to render): write only diff.md and diff.json, "
        "what the --base render had (its cost and capacity), to --out (default build/STACK)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (diagnostics, violations) on stdout instead of text")
    p.add_argument("--quiet", action="store_true", help="print only problems")
    p.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    p.add_argument("--version", action="store_true", help="print the versions synth renders for, and exit")
    return p


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = parser(prog)
    p.json_errors = "--json" in argv
    args = p.parse_args(argv)
    args.prog = prog
    if args.version:
        print(version())
        return EXIT_OK
    if args.new or args.removed:
        problem = _base_mode_problem(args)
        if problem is not None:
            return _finish(args, [Outcome("", EXIT_INVALID_CONFIG, diagnostics=[problem])])
    if args.removed:
        outcome = _guarded(args.stacks[0], args.debug, lambda: _removed(args.stacks[0], args.out, args.base))
        if not args.json:
            _print_outcome(outcome, args.quiet)
        return _finish(args, [outcome])
    targets = _targets(args)
    if isinstance(targets, Diagnostic):
        return _finish(args, [Outcome("", EXIT_INVALID_CONFIG, diagnostics=[targets])])
    several = len(targets) > 1 or args.all
    outcomes = []
    for stack, config in targets:
        out = None
        if args.out is not None:
            out = args.out / stack if several else args.out
        base = None
        if args.base is not None:
            base = (args.base / stack, True) if several else (args.base, False)
        elif args.new:
            base = (None, True)
        outcomes.append(_run_one(stack, config, out, args.debug, base, args.program))
        if not args.json:
            _print_outcome(outcomes[-1], args.quiet)
    return _finish(args, outcomes)


def _base_mode_problem(args) -> Diagnostic | None:
    """--new and --removed each describe one stack against the base branch."""
    if args.new and args.removed:
        return Diagnostic("give one of --new and --removed", "usage", path="--new")
    if args.new and args.base is not None:
        return Diagnostic("--new diffs against nothing: leave out --base", "usage", path="--new")
    if args.removed and (args.base is None or len(args.stacks) != 1 or args.all or args.config):
        return Diagnostic("--removed takes one STACK name and --base, the folder synth wrote for it on the base branch",
                          "usage", path="--removed")
    return None


def _removed(stack: str, out: Path | None, base: Path) -> Outcome:
    """diff.md and diff.json of a stack the change removes: its base render against nothing."""
    from . import diff, output
    from .stackfile import stack_name_problem

    outcome = Outcome(stack)
    problem = stack_name_problem(stack)
    if problem is not None:
        outcome.diagnostics, outcome.exit_code = [Diagnostic(problem, "usage", path="STACK")], EXIT_INVALID_CONFIG
        return outcome
    given = out is not None
    out = out if given else _home() / "build" / stack
    outcome.out = str(out)
    try:
        files = diff.files(stack, diff.base_render(base, stack), diff.Render.empty(), removed=True)
    except diff.DiffError as exc:
        outcome.diagnostics = [Diagnostic(str(exc), "usage", file=str(exc.path), path="--base")]
        outcome.exit_code = EXIT_INVALID_CONFIG
        return outcome
    try:
        target = output.check_target(out, _home())
        with output.locked(target):
            output.check_target(out, _home())
            output.write(target, files)
    except output.OutputError as exc:
        diagnostic = replace(exc.diagnostic, path="--out") if given else exc.diagnostic
        outcome.diagnostics, outcome.exit_code = [diagnostic], EXIT_BUSY if exc.busy else EXIT_INVALID_CONFIG
        return outcome
    outcome.summary = f"{stack}: removed by the change; diff.md shows what its base render had"
    return outcome


def _targets(args) -> list[tuple[str, Path | None]] | Diagnostic:
    if args.program is not None:
        if args.stacks or args.all:
            return Diagnostic("--program renders one program with --config FILE, not STACK names or --all", "usage")
        if not args.config:
            return Diagnostic("--program needs --config FILE: the program's stack config (a Pulumi.<stack>.yaml)", "usage")
    chosen = sum(bool(x) for x in (args.stacks, args.all, args.config))
    if chosen != 1:
        return Diagnostic("give one of: STACK names, --all, or --config FILE", "usage")
    if ROOT is None and args.program is None:
        return Diagnostic(f"{'--all' if args.all else '--config FILE' if args.config else 'a STACK name'} {checkout.NEEDS_CHECKOUT}", "usage")
    if args.all:
        from .stackfile import existing_stacks

        names = existing_stacks(_home() / "stacks")
        if not names:
            return Diagnostic("no stacks in stacks/", "usage")
        return [(name, None) for name in names]
    from .stackfile import stack_argument, stack_of

    if args.config:
        return [(stack_of(args.config) or args.config.name, args.config)]
    targets = [stack_argument(_home(), arg) for arg in args.stacks]
    if len({stack for stack, _ in targets}) != len(targets):
        return Diagnostic("a stack is named twice", "usage")
    return targets


def _run_one(stack: str, config: Path | None, out: Path | None, debug: bool, base=None, program: Path | None = None) -> Outcome:
    from .program import ProgramFailed

    outcome = Outcome(stack)
    try:
        _render(outcome, stack, config, out, base, program)
    except KeyboardInterrupt:
        raise
    except ProgramFailed as exc:  # the program's own error, not synth's: said so, one line
        if debug:
            exc.print_traceback()
        outcome.diagnostics, outcome.exit_code = [exc.diagnostic()], EXIT_INTERNAL
    except BaseException as exc:  # noqa: BLE001 - every failure ends in a message and an exit code
        if isinstance(exc, SystemExit):
            raise
        _internal(outcome, exc, debug)
    return outcome


def _guarded(stack: str, debug: bool, run) -> Outcome:
    """`run()`'s outcome, or exit 70 with one line where it fails (as _run_one's)."""
    try:
        return run()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - every failure ends in a message and an exit code
        outcome = Outcome(stack)
        _internal(outcome, exc, debug)
        return outcome


def _internal(outcome: Outcome, exc: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc)
    message = f"internal error: {type(exc).__name__}: {_one_line(exc)}"
    if not debug:
        message += " (a bug in synth, not in the stack; run again with --debug for the traceback and report it)"
    outcome.diagnostics = [Diagnostic(message, "internal", file=outcome.file)]
    outcome.exit_code = EXIT_INTERNAL


def _render(outcome: Outcome, stack: str, config: Path | None, out: Path | None, base=None, program: Path | None = None) -> None:
    from . import StackFile, StackFileError, output, output_files, synthesize
    from .program import read_project, synthesize_program

    problems, project = [], None
    try:
        stack_file = StackFile.locate(_home(), None if config else stack, config)
    except StackFileError as exc:
        problems += exc.diagnostics
    if program is not None:
        try:
            project = read_project(program)
        except StackFileError as exc:
            problems += exc.diagnostics
    if problems:  # the stack file's and the program's, all at once
        outcome.diagnostics, outcome.exit_code = problems, EXIT_INVALID_CONFIG
        return
    outcome.stack, outcome.file = stack_file.stack, stack_file.display()
    given = out is not None
    if not given:
        # A program's default is apart from the stacks' build/STACK: its stack may share a name
        # with one of them; so is a stack file outside stacks/ (--config scratch/Pulumi.dev.yaml
        # must not replace the real dev's render): build/configs/<its folder's name>/STACK.
        if project is not None:
            out = _home() / "build" / "programs" / project.name / stack_file.stack
        elif _is_registered_path(stack_file):
            out = _home() / "build" / stack_file.stack
        else:
            out = _home() / "build" / "configs" / (os.path.basename(os.path.dirname(os.path.realpath(stack_file.path))) or "root") / stack_file.stack

    def refused(exc: output.OutputError) -> Diagnostic:
        # A usage error about --out, not a problem of the stack file.
        return replace(exc.diagnostic, path="--out") if given else exc.diagnostic

    outcome.out = str(out)
    try:
        target = output.check_target(out, _home())
        if os.path.realpath(target) == os.path.dirname(os.path.realpath(stack_file.path)):
            raise output.OutputError("holds the stack file itself", out)
    except output.OutputError as exc:
        outcome.diagnostics, outcome.exit_code = [refused(exc)], EXIT_INVALID_CONFIG
        return
    result = synthesize(_home(), stack_file) if project is None else synthesize_program(project, stack_file)
    outcome.violations = result.violations
    if result.diagnostics:
        outcome.diagnostics, outcome.exit_code = result.diagnostics, result.exit_code
        return
    files = output_files(result)
    if base is not None:
        diff = _diff(stack_file.stack, files, *base)
        if isinstance(diff, Diagnostic):
            outcome.diagnostics, outcome.exit_code = [diff], EXIT_INVALID_CONFIG
            return
        files.update(diff)
    try:
        with output.locked(target):
            output.check_target(out, _home())  # again, under the lock: another run may have changed it
            output.write(target, files)
    except output.OutputError as exc:
        outcome.diagnostics = [refused(exc)]
        outcome.exit_code = EXIT_BUSY if exc.busy else EXIT_INVALID_CONFIG
        return
    outcome.summary = result.summary
    outcome.exit_code = result.exit_code
    note = _unregistered(stack_file, result) if project is None else None
    if note:
        outcome.diagnostics = [note]


def _diff(stack: str, files: dict[str, str], base: Path | None, may_be_new: bool) -> dict[str, str] | Diagnostic:
    """diff.md and diff.json against the base render, read before anything is written (so --base
    may be the output folder itself). With several stacks, one the base lacks is new in the change."""
    from . import diff

    try:
        head = diff.Render.from_files(files)
        if base is None or (may_be_new and not os.path.lexists(base)):
            return diff.files(stack, diff.Render.empty(), head, new=True)
        return diff.files(stack, diff.base_render(base, stack), head)
    except diff.DiffError as exc:
        return Diagnostic(str(exc), "usage", file=str(exc.path), path="--base")


def _is_registered_path(stack_file) -> bool:
    """Whether the stack file is stacks/Pulumi.<stack>.yaml itself, however it was named."""
    if ROOT is None:
        return False
    return os.path.realpath(stack_file.path) == os.path.realpath(_home() / "stacks" / f"Pulumi.{stack_file.stack}.yaml")


def _unregistered(stack_file, result) -> Diagnostic | None:
    """A note for a stack of stacks/ that lacks what the repository keeps for each stack (its
    URN list and policy config: gke_ai_batch/synth/add.py), which the tests and the PR workflow expect, or
    whose URN list no longer matches what it renders (tests/test_determinism.py fails on it)."""
    from .add import missing_registration, urn_list_file
    from .urns import urn_list

    if not _is_registered_path(stack_file):
        return None
    missing = missing_registration(_home(), stack_file.stack)
    if missing:
        return Diagnostic(
            f"stack {stack_file.stack!r} is not registered (no {', no '.join(missing)}): "
            f"run `python -m synth.add {stack_file.stack}` and commit what it writes",
            "registration",
            file=stack_file.display(),
            severity="note",
        )
    try:
        listed = set(urn_list_file(_home(), stack_file.stack).read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return None  # missing_registration saw it; one unreadable now is the test's to report
    rendered = set(urn_list(result).splitlines())
    if listed == rendered:
        return None
    added, gone = len(rendered - listed), len(listed - rendered)
    return Diagnostic(
        f"stacks/urns/{stack_file.stack}.txt lists {len(listed)} URNs, this render registers {len(rendered)} "
        f"({added} new, {gone} gone): after editing a stack, run `python -m synth.urns {stack_file.stack}` "
        "and commit the list (the test suite fails until they match; a gone URN is a resource Pulumi deletes)",
        "registration",
        file=stack_file.display(),
        severity="warning",
    )


def _print_outcome(outcome: Outcome, quiet: bool) -> None:
    if outcome.summary and not quiet:
        print(outcome.summary)
    for v in outcome.violations:
        mandatory = v["enforcement"] == "mandatory"
        if quiet and not mandatory:
            continue
        line = f"policy {v['enforcement']}: {v['policy']}: {urns.name_of(v['urn'])}: {v['message']}"
        print(line, file=sys.stderr if mandatory else sys.stdout)
    for d in outcome.diagnostics:
        print(d.render(), file=sys.stderr)
    if outcome.exit_code == EXIT_INVALID_CONFIG and outcome.diagnostics and outcome.file:
        in_file = [d for d in outcome.diagnostics if d.file == outcome.file]
        if in_file:
            from .report.md import plural

            print(f"synth: {outcome.file}: {plural(len(in_file), 'problem')}; nothing written", file=sys.stderr)
        else:  # the output folder was refused: the stack file is fine
            print(f"synth: {outcome.stack}: nothing written", file=sys.stderr)
    elif outcome.exit_code in (EXIT_OK, EXIT_POLICY_VIOLATION) and outcome.out and not quiet:
        from .stackfile import display_path

        # Relative to the working folder when under it, as the stack file is shown.
        print(f"wrote {display_path(Path(outcome.out))}")


def _finish(args, outcomes: list[Outcome]) -> int:
    code = min((o.exit_code for o in outcomes), key=_SEVERITY.index) if outcomes else EXIT_OK
    if args.json:
        print(json.dumps({"exitCode": code, "stacks": [o.to_json() for o in outcomes]}, indent=2, sort_keys=True))
    elif outcomes and not outcomes[0].stack and outcomes[0].diagnostics:
        for d in outcomes[0].diagnostics:
            print(f"{getattr(args, 'prog', PROG)}: {d.message}", file=sys.stderr)
    return code


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("…" if len(text) > 300 else "")


def _output_failed(exc: OSError, prog: str) -> int:
    """stdout closed early (`| head`) or full: the files are written as the exit code would
    have said, but what synth had to tell could not be, so the run is a usage error."""
    import os

    try:  # nothing more reaches the closed stream, not even Python's flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    try:
        print(f"{prog}: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
    except OSError:
        pass
    return EXIT_INVALID_CONFIG


def run(argv: list[str] | None = None, prog: str = PROG) -> int:
    """main() as a command runs it: Ctrl-C is exit 130, a closed stdout a usage error."""
    try:
        return main(argv, prog)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # only printing can raise here: every render failure is an Outcome
        return _output_failed(exc, prog)


def command() -> None:
    """The process of `python -m synth` (and of this module): run(), then exit through
    cli.exit_with, which spares the interpreter's last collection."""
    cli.exit_with(run())


if __name__ == "__main__":
    command()
