"""python -m synth.add NAME [--from STACK]

Adds a stack to the repository in one step, after which the test suite passes for it:

1. stacks/Pulumi.NAME.yaml: kept if it exists; otherwise a copy of stacks/Pulumi.STACK.yaml
   (--from, default dev), with its cluster renamed NAME (lowercased, other characters as '-',
   as GKE names clusters) and each fleet worker's NAME-WORKER where the copy would otherwise
   deploy the same cluster into the same project as the original;
2. policy/config/NAME.json, unless it exists: a copy of prod.json if the stack file says
   `gke-ai-batch:production: true`, else of dev.json (the policy pack holds a production stack
   to the production rules only when its config says so);
3. stacks/urns/NAME.txt: the stack's URN list (gke_ai_batch/synth/urns.py).

The stack is rendered first, as `python -m synth NAME` would: if synth refuses it (exit 2) or a
mandatory policy fails (exit 3), the problems are printed and nothing is left behind, not even
the copied stack file. Commit the files it lists. To deploy the stack from CI as well, list it
in .github/deploy-stacks.yml."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from gke_ai_batch.domain import cli

from . import checkout
from .diagnostics import EXIT_INVALID_CONFIG, EXIT_OK, EXIT_POLICY_VIOLATION

# What a shell reports for a command ended by Ctrl-C (128 + SIGINT), as python -m synth exits.
EXIT_INTERRUPTED = 130

ROOT = checkout.root()
# The schema reference every stack file starts with (tests/test_stacks.py holds them to it).
SCHEMA_HEADER = "# yaml-language-server: $schema=../schema/stack.schema.json\n"
_PRODUCTION_KEY = "gke-ai-batch:production"


def policy_config(root: Path, stack: str) -> Path:
    from gke_ai_batch.policy import levels

    return root / levels.CONFIG_FOLDER / f"{stack}.json"


def urn_list_file(root: Path, stack: str) -> Path:
    from . import urns

    return root / urns.URN_FOLDER / f"{stack}.txt"


def missing_registration(root: Path, stack: str) -> list[str]:
    """What the repository keeps for each stack that `stack` lacks, as paths under root."""
    return [str(p.relative_to(root)) for p in (urn_list_file(root, stack), policy_config(root, stack)) if not p.is_file()]


class Refused(Exception):
    def __init__(self, lines: list[str], code: int = EXIT_INVALID_CONFIG):
        self.lines, self.code = lines, code
        super().__init__("\n".join(lines))


def add(root: Path, name: str, source: str = "dev", notes: list[str] | None = None) -> list[str]:
    """Register stack `name` under `root`; the files written, as lines to print. Refused (nothing
    changed) if it cannot be rendered, or a file cannot be read or written. `notes` gets what the
    user must still change in a copied stack file."""
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
        # lexists: a dangling symbolic link is a stack file too (synth refuses it as one);
        # writing the copy through it would create its target, wherever that is.
        if not os.path.lexists(stack_path):
            try:
                origin = StackFile.locate(root, source, None)
            except StackFileError as exc:
                raise Refused([f"--from: {d.message}" for d in exc.diagnostics]) from None
            _write(root, stack_path, _read(root, origin.path), created)
            said.append(f"{_rel(root, stack_path)}: copied from {_rel(root, origin.path)}{_rename_clash(root, stack_path, name)}")
            if notes is not None:
                notes += _still_the_originals(root, stack_path, origin)
        text = _text(stack_path)
        if text is not None and not text.startswith(SCHEMA_HEADER):
            raise Refused([f"{_rel(root, stack_path)}:1: add the first line {SCHEMA_HEADER.strip()!r} (editors then check the file)"])
        policy = policy_config(root, name)
        if not os.path.lexists(policy):
            production = _is_production(stack_path)
            template = policy_config(root, "prod" if production else "dev")
            _write(root, policy, _read(root, template), created)
            said.append(f"{_rel(root, policy)}: copied from {_rel(root, template)} ({'a production' if production else 'not a production'} stack)")
        result = synthesize(root, StackFile.locate(root, name, None))
        if result.diagnostics:
            lines = [d.render() for d in result.diagnostics]
            if stack_path in created:
                # The copy goes with the refusal, so the file the messages name is gone: say how
                # to keep one to fix.
                lines.append(
                    f"the copy of {_rel(root, origin.path)} is removed again: write {_rel(root, stack_path)} yourself "
                    f"(a copy with these fixed), then run `python -m synth.add {name}` again: a stack file you wrote is kept"
                )
            raise Refused(lines)
        if result.exit_code == EXIT_POLICY_VIOLATION:
            raise Refused(
                [f"policy mandatory: {v['policy']}: {v['message']}" for v in result.violations if v["enforcement"] == "mandatory"],
                EXIT_POLICY_VIOLATION,
            )
        urns = urn_list_file(root, name)
        _write(root, urns, urn_list(result), created, replace=True)
        assert result.recording is not None  # rendered: no diagnostics
        said.append(f"{_rel(root, urns)}: {len(result.recording.resources)} URNs")
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        raise
    return said


def _read(root: Path, path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused([f"{_rel(root, path)}: cannot be read: {getattr(exc, 'strerror', None) or exc}"]) from None


def _text(path: Path) -> str | None:
    """The stack file's text as synth decodes it (a BOM or UTF-16 is fine); None where synth
    cannot read it, which synth then says, at the file."""
    from .yamlread import YamlError, decode, read_bytes

    try:
        return decode(read_bytes(path)).replace("\r\n", "\n").replace("\r", "\n")
    except YamlError:
        return None


def _write(root: Path, path: Path, text: str, created: list[Path], replace: bool = False) -> None:
    """Write a new file (or, with `replace`, the URN list synth.add owns), refusing a folder
    synth.add may not write in rather than failing with a traceback."""
    try:
        path.parent.mkdir(exist_ok=True)
        with open(path, "w" if replace else "x", encoding="utf-8") as f:
            if path not in created:
                created.append(path)
            f.write(text)
    except OSError as exc:
        raise Refused([f"{_rel(root, path)}: cannot be written: {exc.strerror or exc}"]) from None


def _cluster_name(text: str) -> str | None:
    """A GKE cluster name made from a stack name ('East' -> 'east', 'ml.v2' -> 'ml-v2'), or None
    where nothing of it is left: any Pulumi stack name may name the stack, but cluster names
    are lowercase DNS labels of at most 40 characters (gke_ai_batch/config/base.py)."""
    from gke_ai_batch.config.base import GKE_NAME_MAX, check_gke_name

    name = re.sub(r"[^a-z0-9-]+", "-", text.lower())
    name = re.sub(r"^[^a-z]+", "", name)[:GKE_NAME_MAX].rstrip("-")
    try:
        return check_gke_name(name)
    except ValueError:
        return None


def _rename_clash(root: Path, stack_path: Path, name: str) -> str:
    """A copy deploys the original's clusters (its own, and a fleet's workers) into the
    original's projects, which synth refuses (gke_ai_batch/synth/crossstack.py): name the copy's cluster
    after the stack, and each clashing worker's `<stack>-<worker>`, where those are GKE names."""
    from . import crossstack
    from .yamlread import YamlError, decode, load, read_bytes

    clashes = {f.path for f in crossstack.collisions(stack_path, stack_path.parent)}
    base = _cluster_name(name)
    if not clashes or base is None:
        return ""
    try:
        positions = load(decode(read_bytes(stack_path))).positions
    except YamlError:
        return ""
    lines = stack_path.read_text(encoding="utf-8").splitlines(keepends=True)
    renamed: list[str] = []
    for cluster in crossstack.identities(stack_path):
        new = base if not cluster.scope else _cluster_name(f"{base}-{cluster.scope}")
        at = positions.get(("config", *cluster.at))
        if cluster.key not in clashes or new is None or at is None:
            continue
        line = lines[at[0] - 1]
        # Only a plain `name: value` line; anything else synth names, for the user to fix.
        edited = re.sub(r"^(\s*name:\s*)(\"[^\"]*\"|'[^']*'|[^\s#]+)", lambda m: f"{m[1]}{new}", line, count=1)
        if edited != line:
            lines[at[0] - 1] = edited
            renamed.append(new)
    if not renamed:
        return ""
    stack_path.write_text("".join(lines), encoding="utf-8")
    if len(renamed) == 1:
        return f", with the cluster named {renamed[0]!r} (the original's would clash with it in GCP)"
    return f", with the clusters named {', '.join(map(repr, renamed))} (the original's would clash with them in GCP)"


# What a copy keeps of its original that names the original's own things in GCP, and what to do
# about each (docs/stacks.md, "Adding a stack").
_ORIGINALS = (
    (("gcp:project",), "{source}'s project: set this stack's own"),
    (("gke-ai-batch:cluster", "nodeServiceAccount"),
     "{source}'s node service account: add this stack to the bootstrap (docs/bootstrap.md) and name the account it creates"),
    (("gke-ai-batch:checkpoints", "projectNumber"), "{source}'s project number: this stack's project's"),
    (("gke-ai-batch:cluster", "name"), "{source}'s cluster name"),
)


def _still_the_originals(root: Path, stack_path: Path, origin) -> list[str]:
    """Each line of the copy, comments included, that still names the original's project, node
    account, project number or cluster: synth renders the copy as it is, but deployed it would
    use, or claim, the original's."""
    from .yamlread import YamlError, decode, load, read_bytes

    try:
        config = load(decode(read_bytes(origin.path))).data.get("config") or {}
    except (YamlError, AttributeError):
        return []
    values: dict[str, str] = {}
    for path, why in _ORIGINALS:
        value = config
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and len(value) > 2:
            values.setdefault(value, why.format(source=origin.stack))
    found = []
    for n, line in enumerate(stack_path.read_text(encoding="utf-8").splitlines(), 1):
        # Longest first, each once: the project inside the node account's email is that email,
        # and a bucket name in a comment (<project>-<cluster>-...) is the project's.
        taken: list[range] = []
        for value in sorted(values, key=len, reverse=True):
            for m in re.finditer(rf"(?<![\w.]){re.escape(value)}(?![\w.])", line):
                if not any(m.start() in r or m.end() - 1 in r for r in taken):
                    taken.append(range(m.start(), m.end()))
                    found.append(f"  {_rel(root, stack_path)}:{n}: {value} is {values[value]}")
                    break
    if not found:
        return []
    return [f"{_rel(root, stack_path)}: still names {origin.stack}'s own resources; change these before deploying it:", *found]


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


def main(argv: list[str], prog: str = "python -m synth.add") -> int:
    parser = cli.parser(prog, __doc__)
    parser.add_argument("name", metavar="NAME", help="the new stack: stacks/Pulumi.NAME.yaml")
    parser.add_argument("--from", dest="source", default="dev", metavar="STACK", help="the stack to copy when stacks/Pulumi.NAME.yaml does not exist (default dev)")
    args = parser.parse_args(argv)
    if ROOT is None:
        parser.error(checkout.NEEDS_CHECKOUT)
    notes: list[str] = []
    try:
        said = add(ROOT, args.name, args.source, notes=notes)
    except Refused as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        print(f"synth.add: {args.name}: not added; nothing written", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        # add() has removed what it wrote; say so rather than leave a traceback to read.
        print(f"synth.add: {args.name}: interrupted; nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    for line in said:
        print(f"wrote {line}")
    for line in notes:
        print(line)
    print("commit these files; to deploy the stack from CI too, list it in .github/deploy-stacks.yml")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
