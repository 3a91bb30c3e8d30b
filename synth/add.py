"""python -m synth.add NAME [--from STACK]

Adds a stack to the repository in one step, after which the test suite passes for it:

1. stacks/Pulumi.NAME.yaml: kept if it exists; otherwise a copy of stacks/Pulumi.STACK.yaml
   (--from, default dev), with its cluster renamed NAME where the copy would otherwise deploy
   the same cluster into the same project as the original;
2. policy/config/NAME.json, unless it exists: a copy of prod.json if the stack file says
   `gke-ai-batch:production: true`, else of dev.json (the policy pack holds a production stack
   to the production rules only when its config says so);
3. stacks/urns/NAME.txt: the stack's URN list (synth/urns.py).

The stack is rendered first, as `python -m synth NAME` would: if synth refuses it (exit 2) or a
mandatory policy fails (exit 3), the problems are printed and nothing is left behind, not even
the copied stack file. Commit the files it lists. To deploy the stack from CI as well, list it
in .github/deploy-stacks.yml."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from gke_ai_batch.domain import cli

from .diagnostics import EXIT_INVALID_CONFIG, EXIT_OK, EXIT_POLICY_VIOLATION

ROOT = Path(__file__).resolve().parent.parent
# The schema reference every stack file starts with (tests/test_stacks.py holds them to it).
SCHEMA_HEADER = "# yaml-language-server: $schema=../schema/stack.schema.json\n"
_PRODUCTION_KEY = "gke-ai-batch:production"


def policy_config(root: Path, stack: str) -> Path:
    from policy import levels

    return root / levels.CONFIG_DIR.relative_to(ROOT) / f"{stack}.json"


def urn_list_file(root: Path, stack: str) -> Path:
    from . import urns

    return root / urns.URN_DIR.relative_to(ROOT) / f"{stack}.txt"


def missing_registration(root: Path, stack: str) -> list[str]:
    """What the repository keeps for each stack that `stack` lacks, as paths under root."""
    return [str(p.relative_to(root)) for p in (urn_list_file(root, stack), policy_config(root, stack)) if not p.is_file()]


class Refused(Exception):
    def __init__(self, lines: list[str], code: int = EXIT_INVALID_CONFIG):
        self.lines, self.code = lines, code
        super().__init__("\n".join(lines))


def add(root: Path, name: str, source: str = "dev") -> list[str]:
    """Register stack `name` under `root`; the lines to print. Refused (nothing changed) if it
    cannot be rendered."""
    from . import StackFile, StackFileError, synthesize
    from .stackfile import stack_name_problem
    from .urns import urn_list

    problem = stack_name_problem(name)
    if problem:
        raise Refused([problem])
    stack_path = root / "stacks" / f"Pulumi.{name}.yaml"
    created: list[Path] = []
    said: list[str] = []
    try:
        if not stack_path.exists():
            try:
                origin = StackFile.locate(root, source, None)
            except StackFileError as exc:
                raise Refused([f"--from: {d.message}" for d in exc.diagnostics]) from None
            stack_path.write_text(origin.path.read_text(encoding="utf-8"), encoding="utf-8")
            created.append(stack_path)
            said.append(f"{_rel(root, stack_path)}: copied from {_rel(root, origin.path)}{_rename_clash(root, stack_path, name)}")
        text = stack_path.read_text(encoding="utf-8")
        if not text.startswith(SCHEMA_HEADER):
            raise Refused([f"{_rel(root, stack_path)}:1: add the first line {SCHEMA_HEADER.strip()!r} (editors then check the file)"])
        policy = policy_config(root, name)
        if not policy.exists():
            production = _is_production(stack_path)
            template = policy_config(root, "prod" if production else "dev")
            shutil.copyfile(template, policy)
            created.append(policy)
            said.append(f"{_rel(root, policy)}: copied from {_rel(root, template)} ({'a production' if production else 'not a production'} stack)")
        result = synthesize(root, StackFile.locate(root, name, None))
        if result.diagnostics:
            raise Refused([d.render() for d in result.diagnostics])
        if result.exit_code == EXIT_POLICY_VIOLATION:
            raise Refused(
                [f"policy mandatory: {v['policy']}: {v['message']}" for v in result.violations if v["enforcement"] == "mandatory"],
                EXIT_POLICY_VIOLATION,
            )
        urns = urn_list_file(root, name)
        urns.parent.mkdir(exist_ok=True)
        urns.write_text(urn_list(result))
        created.append(urns)
        said.append(f"{_rel(root, urns)}: {len(result.recording.resources)} URNs")
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        raise
    return said


def _rename_clash(root: Path, stack_path: Path, name: str) -> str:
    """A copy deploys the original's cluster into the original's project, which synth refuses
    (synth/crossstack.py): name the copy's cluster after the stack, where that is a GKE name."""
    from gke_ai_batch.config.base import check_gke_name

    from . import crossstack
    from .yamlread import YamlError, decode, load, read_bytes

    if not crossstack.collisions(stack_path, stack_path.parent):
        return ""
    try:
        check_gke_name(name)
        at = load(decode(read_bytes(stack_path))).positions.get(("config", "gke-ai-batch:cluster", "name"))
    except (ValueError, YamlError):
        return ""
    if at is None:
        return ""
    lines = stack_path.read_text(encoding="utf-8").splitlines(keepends=True)
    line = lines[at[0] - 1]
    renamed = re.sub(r"^(\s*name:\s*)(\"[^\"]*\"|'[^']*'|[^\s#]+)", lambda m: f"{m[1]}{name}", line, count=1)
    if renamed == line:
        return ""  # not a plain `name: value` line: synth names the clash, for the user to fix
    lines[at[0] - 1] = renamed
    stack_path.write_text("".join(lines), encoding="utf-8")
    return f", with the cluster named {name!r} (the original's would clash with it in GCP)"


def _is_production(stack_path: Path) -> bool:
    from .yamlread import YamlError, decode, load, read_bytes

    try:
        data = load(decode(read_bytes(stack_path))).data
    except YamlError:
        return False  # synth names the problem when it renders the file
    config = data.get("config") if isinstance(data, dict) else None
    return isinstance(config, dict) and config.get(_PRODUCTION_KEY) is True


def _rel(root: Path, path: Path) -> str:
    return str(path.relative_to(root))


def main(argv: list[str]) -> int:
    parser = cli.parser("python -m synth.add", __doc__)
    parser.add_argument("name", metavar="NAME", help="the new stack: stacks/Pulumi.NAME.yaml")
    parser.add_argument("--from", dest="source", default="dev", metavar="STACK", help="the stack to copy when stacks/Pulumi.NAME.yaml does not exist (default dev)")
    args = parser.parse_args(argv)
    try:
        said = add(ROOT, args.name, args.source)
    except Refused as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        print(f"synth.add: {args.name}: not added; nothing written", file=sys.stderr)
        return exc.code
    for line in said:
        print(f"wrote {line}")
    print("commit these files; to deploy the stack from CI too, list it in .github/deploy-stacks.yml")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
