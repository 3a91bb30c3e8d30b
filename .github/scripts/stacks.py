"""Stack lists and PR-comment text for the GitHub workflows.

    python .github/scripts/stacks.py list [--base BASE_CHECKOUT]
        stacks=["dev", ...]: every stacks/Pulumi.<stack>.yaml (the pull-request matrix), with
        --base also those only the base branch's checkout has (the synth job marks them removed),
        and previews=[...]: the head's stacks with a preview identity in $GCP_IDENTITIES (the JSON
        of the repository variable; unset or invalid means none).
    python .github/scripts/stacks.py deploy-plan
        preproduction=[...] and production=[...]: the stacks .github/deploy-stacks.yml deploys on
        push to main, in that order; listed stacks without a stack file are skipped with a warning.
    python .github/scripts/stacks.py comment STACK EXIT_CODE STDERR_FILE [--base-state STATE]
        Writes build/STACK/comment.md: a status line for synth's exit code and synth's stderr when
        it failed, and build/STACK/base-state (rendered, new, removed or failed). pr_comment.py
        puts these first, then diff.md, then report.md folded: together the PR comment.

Outputs go to $GITHUB_OUTPUT when it is set (inside Actions), else to stdout. `list` and `comment`
need only the standard library (they run before any dependency is installed); `deploy-plan`
needs PyYAML.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_LIST = ROOT / ".github" / "deploy-stacks.yml"
WAVES = ("preproduction", "production")

# Pulumi's own rule for stack names, anchored; it also keeps a name from a fork's file name safe to
# use as an artifact name, a concurrency group and a comment marker.
STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")

# GitHub rejects comment bodies over 65,536 characters.
COMMENT_LIMIT = 60_000

# The stack against the base branch's render; pr_comment.py words each (BASE_STATES there).
BASE_STATES = ("rendered", "new", "removed", "failed")

EXIT_STATUS = {
    0: "✅ synth `{stack}`: ok",
    2: "❌ synth `{stack}`: invalid stack config (nothing was rendered)",
    3: "❌ synth `{stack}`: a mandatory policy is violated",
    70: "❌ synth `{stack}`: internal error (a bug in synth, not in the stack; nothing was rendered)",
    75: "❌ synth `{stack}`: another synth held the output folder's lock (nothing was rendered)",
}


def existing_stacks(root: Path = ROOT) -> list[str]:
    names = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (root / "stacks").glob("Pulumi.*.yaml"))
    bad = [n for n in names if not STACK_NAME.match(n)]
    if bad:
        raise SystemExit(f"stack file names that are not valid stack names: {bad}")
    return names


def preview_stacks(stacks: list[str], identities: str | None) -> list[str]:
    """The stacks that GCP_IDENTITIES gives a preview service account (in `stacks` order).

    A stack without one (say, added by the pull request itself) gets synth only: its preview
    expression would be empty, and no other identity may stand in for it.
    """
    try:
        known = json.loads(identities or "{}").get("stacks") or {}
    except (ValueError, AttributeError):
        return []
    if not isinstance(known, dict):
        return []
    return [s for s in stacks if isinstance(known.get(s), dict) and isinstance(known[s].get("preview"), str) and known[s]["preview"]]


def read_deploy_list(path: Path = DEPLOY_LIST) -> dict[str, list[str]]:
    """The deploy list as written, validated: known waves only, valid names, no stack twice."""
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: expected a mapping of waves to stack lists")
    unknown = sorted(set(data) - set(WAVES))
    if unknown:
        raise ValueError(f"{path.name}: unknown waves {unknown}; known: {list(WAVES)}")
    waves: dict[str, list[str]] = {}
    seen: set[str] = set()
    for wave in WAVES:
        stacks = data.get(wave) or []
        if not isinstance(stacks, list) or not all(isinstance(s, str) for s in stacks):
            raise ValueError(f"{path.name}: {wave} must be a list of stack names")
        for stack in stacks:
            if not STACK_NAME.match(stack):
                raise ValueError(f"{path.name}: {wave}: {stack!r} is not a valid stack name")
            if stack in seen:
                raise ValueError(f"{path.name}: {stack} is listed more than once")
            seen.add(stack)
        waves[wave] = list(stacks)
    return waves


def deploy_plan(root: Path = ROOT, path: Path = DEPLOY_LIST) -> tuple[dict[str, list[str]], list[str]]:
    """(waves restricted to stacks that have a stack file, warnings for the ones skipped)."""
    have = set(existing_stacks(root))
    plan: dict[str, list[str]] = {}
    warnings: list[str] = []
    for wave, stacks in read_deploy_list(path).items():
        plan[wave] = [s for s in stacks if s in have]
        for s in stacks:
            if s not in have:
                warnings.append(f"{path.name}: {wave}: stacks/Pulumi.{s}.yaml does not exist; {s} is not deployed")
    return plan, warnings


def comment_body(stack: str, exit_code: int, stderr: str, base_state: str = "rendered") -> str:
    """The lead of the PR comment; pr_comment.py adds the diff and the folded report after it."""
    if base_state == "removed":
        return ""  # nothing was rendered; pr_comment.py says the stack is removed
    status = EXIT_STATUS.get(exit_code, "❌ synth `{stack}`: failed with exit code " + str(exit_code))
    parts = [status.format(stack=stack), ""]
    if exit_code != 0 and stderr.strip():
        # A fence longer than any backtick run in stderr, so nothing in it can end the block. No
        # HTML: pr-comment.yml posts the file through pr_comment.py, which escapes all of it.
        text = stderr.strip()
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
        parts += ["synth stderr:", "", fence + "text", text, fence, ""]
    body = "\n".join(parts)
    if len(body) > COMMENT_LIMIT:
        body = body[:COMMENT_LIMIT] + "\n\n… (truncated: the full report is in the synth artifact)\n"
    return body


def _emit(pairs: dict[str, object]) -> None:
    lines = "".join(f"{k}={json.dumps(v, separators=(',', ':'))}\n" for k, v in pairs.items())
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(lines)
    else:
        sys.stdout.write(lines)


def parser() -> argparse.ArgumentParser:
    doc = __doc__.split("\n\n")
    p = argparse.ArgumentParser(
        prog="stacks.py",
        description=doc[0],
        epilog="\n\n".join(doc[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    lister = sub.add_parser("list", help="every stacks/Pulumi.<stack>.yaml (the pull-request matrix)")
    lister.add_argument("--base", type=Path, metavar="BASE_CHECKOUT", help="the base branch's checkout: its stacks too")
    sub.add_parser("deploy-plan", help="the stacks .github/deploy-stacks.yml deploys on push to main, by wave")
    comment = sub.add_parser("comment", help="write build/STACK/comment.md, the whole text of the PR comment")
    comment.add_argument("stack", metavar="STACK")
    comment.add_argument("code", metavar="EXIT_CODE", type=int, help="synth's exit code")
    comment.add_argument("stderr_file", metavar="STDERR_FILE", type=Path, help="synth's stderr, saved")
    comment.add_argument("--base-state", choices=BASE_STATES, default="rendered", help="the stack against the base branch")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.command == "list":
        stacks = existing_stacks()
        every = sorted(set(stacks) | set(existing_stacks(args.base) if args.base else ()))
        _emit({"stacks": every, "previews": preview_stacks(stacks, os.environ.get("GCP_IDENTITIES"))})
        return 0
    if args.command == "deploy-plan":
        plan, warnings = deploy_plan()
        for w in warnings:
            print(f"::warning::{w}")
        _emit(plan)
        return 0
    # comment
    stack, code, stderr_file = args.stack, args.code, args.stderr_file
    if not STACK_NAME.match(stack):
        raise SystemExit(f"not a stack name: {stack!r}")
    out = ROOT / "build" / stack
    out.mkdir(parents=True, exist_ok=True)
    stderr = stderr_file.read_text(errors="replace") if stderr_file.exists() else ""
    (out / "comment.md").write_text(comment_body(stack, code, stderr, args.base_state))
    (out / "base-state").write_text(args.base_state + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
