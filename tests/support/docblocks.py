"""Runs the code blocks of README.md and docs/*.md as a reader would (tests/test_doc_examples.py).

Sybil (requirements-dev.in) lexes the Markdown: fenced blocks by language, `<!-- skip: next
"why" -->` (sybil's own directive, here: an excerpt on purpose, with its reason) and
`<!-- invisible-code-block: python ... -->` (context a snippet assumes, run before it). One
directive of ours, `<!-- example: ... -->`, says how to run the block after it:

- `stack=NAME` (a YAML block): the shipped stack `stacks/Pulumi.NAME.yaml` the fragment is
  merged into (default `dev`); `at=KEY[ENTRY]`: the fragment's keys are that list entry's
  (`at=nodePools[tpu7x-train]`); `alternatives`: each repeated top-level key starts another
  fragment, checked on its own (a block that shows one key several ways).
- `files=DIR` (a `sh` or `console` block): DIR's contents are laid in the working folder first
  (`bad/Pulumi.dev.yaml`, the refused stack file an example shows).
- `excerpt-of=FILE` (a `python` block): its lines are lines of FILE, in order (the block quotes
  a program that runs elsewhere).

How each language runs:

- `python`: a Pulumi program (after the invisible blocks before it), run by synth's `--program`
  path (gke_ai_batch/synth/program.py: the recording engine, then the policy pack and the report); it must
  exit 0.
- `yaml`: a stack-file fragment (top-level `gke-ai-batch:` keys, or a whole file with `config:`),
  merged into a shipped stack and rendered by synth (the stack's rules, the admission model, the
  policy pack); it must exit 0. Merging sets the keys the fragment shows: a mapping's own keys,
  and a list's entries by `name`, each entry's keys.
- `json`: a policy pack config (`policy/config/<stack>.json`), read by gke_ai_batch/policy/levels.py.
- `sh`: each command runs; only commands that work offline are known (synth's CLI, in-process,
  in a folder laid out like the repository, `gke-ai-batch synth` as installed, with no checkout; the venv and lock-file installs this suite runs in,
  whose lock file must exist; `python -m pytest`, this suite); any other command needs the block
  marked as an excerpt.
- `console`: `$ COMMAND` lines run as in `sh`, and the lines after each are its output, compared
  line by line (stdout and stderr as a terminal shows them); a line `...` stands for any lines.
- `text` and `mermaid`: to read, never run (diagrams, a usage synopsis).

Any other language, or a block with none, is refused: a block is run, or marked, or says it is
text."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import SkipTest, mock

from sybil import Document, Example, Region
from sybil.parsers.markdown import CodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, RawFencedCodeBlockLexer

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TO_READ = {"text", "mermaid"}
# What a command needs of the repository to run as if from its root: synth reads stacks/ and
# policy/config/, runs __main__.py (Pulumi.yaml names the project), and --program examples/.
LAYOUT = ("stacks", "examples", "policy/config", "__main__.py", "Pulumi.yaml")
DEFAULT_STACK = "dev"
ELLIPSIS = "..."


@dataclass
class Page:
    """What one page's blocks did: the counts and the failures, each at its line."""

    path: Path
    scratch: Path
    ran: list[int] = field(default_factory=list)
    quoted: list[int] = field(default_factory=list)
    """Blocks checked as lines of the file they quote (`excerpt-of`), not run here."""
    excerpts: list[tuple[int, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    directive: tuple[int, dict[str, str]] | None = None
    preamble: list[str] = field(default_factory=list)
    programs: list[tuple[int, str]] | None = None
    """When a list: each Python program (its invisible blocks first) is kept here, with its line,
    rather than run (`python_programs`)."""

    def take(self, example: Example, allowed: set[str]) -> dict[str, str]:
        """The `<!-- example: -->` arguments for this block ({} if none), refusing any it cannot use."""
        if self.directive is None:
            return {}
        _, args = self.directive
        self.directive = None
        unknown = set(args) - allowed
        assert not unknown, f"`<!-- example: -->` arguments {sorted(unknown)} do not apply to a {language(example)} block"
        return args


def language(example: Example) -> str:
    return example.region.lexemes.get("arguments", "")


def _page(example: Example) -> Page:
    return example.namespace["page"]


# -- the directive ------------------------------------------------------------------------------


class ExampleDirective:
    """`<!-- example: key=value flag ... -->`: how to run the next code block."""

    def __init__(self) -> None:
        self.lexer = DirectiveInHTMLCommentLexer(directive="example")

    def __call__(self, document: Document):
        for region in self.lexer(document):
            args = {}
            for token in (region.lexemes.get("arguments") or "").split():
                key, _, value = token.partition("=")
                args[key] = value
            yield Region(region.start, region.end, args, self.evaluate)

    @staticmethod
    def evaluate(example: Example) -> None:
        page = _page(example)
        assert page.directive is None, f"`<!-- example: -->` at line {page.directive[0]} applies to no code block"
        page.directive = (example.line, example.parsed)


# -- python: programs under the recording engine ------------------------------------------------


def run_python(example: Example) -> None:
    page = _page(example)
    source = str(example.parsed)
    if "directive" in example.region.lexemes:  # <!-- invisible-code-block: python -->
        page.preamble.append(source)
        return
    args = page.take(example, {"excerpt-of"})
    preamble, page.preamble = page.preamble, []
    if "excerpt-of" in args:
        assert not preamble, "an excerpt runs where it is quoted from: it takes no invisible code block"
        _check_excerpt(source, ROOT / args["excerpt-of"])
        page.quoted.append(example.line)
        return
    program = "\n".join([*preamble, source])
    if page.programs is not None:
        page.programs.append((example.line, program))
        return
    run_program(program, page.scratch / f"program-{example.line}")


def _check_excerpt(source: str, file: Path) -> None:
    lines = iter(file.read_text().splitlines())
    for line in source.splitlines():
        if line.strip():
            assert any(line.rstrip() == have.rstrip() for have in lines), f"not a line of {file.relative_to(ROOT)} (or out of order): {line!r}"


def run_program(source: str, folder: Path) -> None:
    """`python -m synth --program FOLDER --config FOLDER/Pulumi.docs.yaml`, in this process."""
    from gke_ai_batch import synth
    from gke_ai_batch.synth.diagnostics import EXIT_OK
    from gke_ai_batch.synth.program import ProgramFailed, read_project, synthesize_program

    folder.mkdir(parents=True)
    (folder / "__main__.py").write_text(source)
    (folder / "Pulumi.yaml").write_text("name: docs-example\nruntime: python\n")
    (folder / "Pulumi.docs.yaml").write_text("config:\n  gcp:project: acme-ml\n")
    try:
        result = synthesize_program(read_project(folder), synth.StackFile.locate(ROOT, None, folder / "Pulumi.docs.yaml"))
    except ProgramFailed as exc:
        raise AssertionError(f"the program fails (exit 70): {exc}") from exc.error
    mandatory = [f"{v['policy']}: {v['message']}" for v in result.violations if v["enforcement"] == "mandatory"]
    assert result.exit_code == EXIT_OK, f"the program exits {result.exit_code}: {result.error or mandatory}"


# -- yaml: stack-file fragments, merged into a shipped stack -----------------------------------


def run_yaml(example: Example) -> None:
    from gke_ai_batch.synth import yamlread

    page = _page(example)
    args = page.take(example, {"stack", "at", "alternatives"})
    stack = args.get("stack") or DEFAULT_STACK
    parts = _alternatives(str(example.parsed)) if "alternatives" in args else [str(example.parsed)]
    for n, text in enumerate(parts):
        doc = yamlread.load(text)
        assert not doc.problems, f"not YAML as Pulumi reads it: {[p.message for p in doc.problems]}"
        fragment = doc.data
        assert isinstance(fragment, dict), "a stack-file fragment is a mapping"
        base = yamlread.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()).data
        if "config" in fragment:  # a whole stack file
            assert not args.get("at"), "a whole stack file is not merged `at` anything"
            config = fragment["config"]
        elif args.get("at"):
            config = _merge_at(base["config"], args["at"], fragment)
        else:
            not_keys = [k for k in fragment if ":" not in str(k)]
            assert not not_keys, f"{not_keys} are no stack-file keys (`namespace:key`): give `<!-- example: at=KEY[ENTRY] -->`"
            config = _merge(base["config"], fragment)
        _render(config, page.scratch / f"stack-{example.line}-{n}", f"merged into stacks/Pulumi.{stack}.yaml")


def _alternatives(text: str) -> list[str]:
    """The block cut where a top-level key repeats: each part one way of writing it."""
    parts: list[list[str]] = [[]]
    seen: set[str] = set()
    for line in text.splitlines(keepends=True):
        key = re.match(r"([^\s#][^:]*):", line)
        if key:
            if key[1] in seen:
                parts.append([])
                seen = set()
            seen.add(key[1])
        parts[-1].append(line)
    return ["".join(p) for p in parts]


def _merge_entry(base: Any, fragment: Any) -> Any:
    """An entry's keys set as the fragment shows them; a non-mapping replaces."""
    if isinstance(base, dict) and isinstance(fragment, dict) and fragment:
        return {**base, **fragment}
    return fragment


def _merge(config: dict, fragment: dict) -> dict:
    out = dict(config)
    for key, value in fragment.items():
        have = out.get(key)
        if isinstance(have, list) and isinstance(value, list) and all(isinstance(e, dict) and "name" in e for e in have + value):
            entries = list(have)
            names = [e["name"] for e in entries]
            for entry in value:
                if entry["name"] in names:
                    i = names.index(entry["name"])
                    entries[i] = _merge_entry(entries[i], entry)
                else:
                    entries.append(entry)
            out[key] = entries
        else:
            out[key] = _merge_entry(have, value)
    return out


def _merge_at(config: dict, at: str, fragment: dict) -> dict:
    match = re.fullmatch(r"([\w-]+)\[([\w.-]+)\]", at)
    assert match, f"at={at}: expected KEY[ENTRY], e.g. nodePools[v5p-train]"
    key = f"gke-ai-batch:{match[1]}"
    entries = config.get(key) or []
    names = [e.get("name") for e in entries]
    assert match[2] in names, f"at={at}: the stack's {key} has no entry {match[2]!r}; it has {names}"
    return _merge(config, {key: [{"name": match[2], **fragment}]})


def _render(config: dict, folder: Path, where: str) -> None:
    from gke_ai_batch import synth
    from gke_ai_batch.synth import yamlread

    folder.mkdir(parents=True)
    path = folder / "Pulumi.docs.yaml"
    path.write_text(yamlread.dump({"config": config}))
    result = synth.synthesize(ROOT, synth.StackFile.locate(ROOT, None, path))
    assert result.exit_code == 0, f"{where}, synth exits {result.exit_code}:\n{result.error or result.violations}"


# -- json: a policy pack config ------------------------------------------------------------------


def run_json(example: Example) -> None:
    from gke_ai_batch.policy import levels

    _page(example).take(example, set())
    problems = levels.problems_in(json.loads(str(example.parsed)))
    assert not problems, f"not a policy config the pack takes: {problems}"


# -- sh and console: commands that work offline ---------------------------------------------------

_RUNS: dict[tuple, tuple[int, str]] = {}
"""(argv, files) -> (exit code, output): a command two pages show runs once per process."""

_VENV_PYTHON = re.compile(r"(?:[\w./-]*/bin/)?python3?$")


def commands(text: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments dropped, `&&` split."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word == "&&":
                if command:
                    out.append(shlex.join(command))
                command = []
            else:
                command.append(word)
    return out


def run_command(command: str, scratch: Path, files: str | None) -> tuple[int, str]:
    """(exit code, what the terminal shows) of one command, or AssertionError if it is not one
    that runs offline here."""
    argv = shlex.split(command)
    if len(argv) >= 3 and _VENV_PYTHON.fullmatch(argv[0]) and argv[1] == "-m":
        module, rest = argv[2], argv[3:]
        if module == "venv" and len(rest) == 1:
            return 0, ""  # the environment this suite runs in
        if module == "pytest" and not rest:
            return 0, ""  # this suite
        if module == "synth":
            key = (tuple(rest), files)
            if key not in _RUNS:
                _RUNS[key] = _synth(rest, scratch, files)
            return _RUNS[key]
    if argv[:2] == ["gke-ai-batch", "synth"]:
        # The console script of the installed wheel: the same CLI with no checkout beside it.
        key = (("gke-ai-batch", *argv[2:]), files)
        if key not in _RUNS:
            _RUNS[key] = _synth(argv[2:], scratch, files, installed=True)
        return _RUNS[key]
    if re.fullmatch(r"[\w./-]*/bin/pip", argv[0]) and argv[1:4] == ["install", "--require-hashes", "-r"] and len(argv) == 5:
        # The lock files this suite was installed from (tests/test_lockfiles.py keeps them in step).
        assert (ROOT / argv[4]).is_file(), f"{command}: no {argv[4]}"
        return 0, ""
    raise AssertionError(f"`{command}` does not run offline here: mark the block `<!-- skip: next \"why\" -->`")


def _synth(args: list[str], scratch: Path, files: str | None, installed: bool = False) -> tuple[int, str]:
    """synth's CLI (synth.__main__.main) in this process, in a fresh copy of the repository's
    layout (its default output, build/, goes there), with stdout and stderr as one terminal.
    `installed`: as `gke-ai-batch synth` runs from the wheel, with no checkout (ROOT None)."""
    from gke_ai_batch.synth import __main__ as cli

    scratch.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=scratch))
    for part in LAYOUT:
        source = ROOT / part
        (root / part).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, root / part)
    if files:
        shutil.copytree(ROOT / files, root, dirs_exist_ok=True)
    terminal = io.StringIO()
    with contextlib.chdir(root), mock.patch.object(cli, "ROOT", None if installed else root), \
            contextlib.redirect_stdout(terminal), contextlib.redirect_stderr(terminal):
        try:
            code = cli.main(list(args), "gke-ai-batch synth" if installed else cli.PROG)
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, terminal.getvalue()


def run_sh(example: Example) -> None:
    page = _page(example)
    files = page.take(example, {"files"}).get("files")
    for command in commands(str(example.parsed)):
        code, output = run_command(command, page.scratch, files)
        assert code == 0, f"`{command}` exits {code}:\n{output}"


def run_console(example: Example) -> None:
    page = _page(example)
    files = page.take(example, {"files"}).get("files")
    sessions: list[tuple[str, list[str]]] = []
    for line in str(example.parsed).splitlines():
        if line.startswith("$ "):
            sessions.append((line[2:], []))
        else:
            assert sessions, f"a console block starts with `$ COMMAND`, not {line!r}"
            sessions[-1][1].append(line)
    for command, shown in sessions:
        _, output = run_command(command, page.scratch, files)
        problem = _unlike(shown, output.splitlines())
        assert problem is None, f"`{command}` prints otherwise: {problem}\nit printed:\n{output}"


def _unlike(shown: list[str], printed: list[str]) -> str | None:
    """Why the printed lines are not the shown ones (a shown `...` stands for any lines), or None."""
    at = 0
    for i, line in enumerate(shown):
        if line.strip() == ELLIPSIS:
            rest = shown[i + 1:]
            if not rest:
                return None
            for start in range(at, len(printed) + 1):
                if _unlike(rest, printed[start:]) is None:
                    return None
            return f"nothing after line {at} matches {rest[0]!r}"
        if at >= len(printed):
            return f"the output ends before {line!r}"
        if printed[at].rstrip() != line.rstrip():
            return f"line {at + 1} is {printed[at]!r}, not {line!r}"
        at += 1
    return None if at == len(printed) else f"it prints more: {printed[at]!r}"


# -- the page ----------------------------------------------------------------------------------

SKIP = SkipParser()
PARSERS = (
    SKIP,
    ExampleDirective(),
    CodeBlockParser("python", run_python),
    CodeBlockParser("yaml", run_yaml),
    CodeBlockParser("json", run_json),
    CodeBlockParser("sh", run_sh),
    CodeBlockParser("console", run_console),
)
ANY_FENCE = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE))


def python_programs(path: Path) -> list[tuple[int, str]]:
    """(line, source) of each Python program of the page as `run_page` would run it: its invisible
    blocks first; an excerpt of a file and a block marked as one are left out (the file is checked
    as itself). Other blocks are not run: only their `<!-- example: -->` arguments are taken."""
    page = Page(path, Path(), programs=[])
    unrun = (CodeBlockParser(name, _take_only) for name in ("yaml", "json", "sh", "console"))
    document = Document.parse(str(path), SKIP, ExampleDirective(), CodeBlockParser("python", run_python), *unrun)
    document.namespace["page"] = page
    for example in document.examples():
        with contextlib.suppress(SkipTest):
            example.evaluate()
    return page.programs or []


def _take_only(example: Example) -> None:
    _page(example).take(example, {"stack", "at", "alternatives", "files"})


def _literal(reason: str | None) -> bool:
    try:
        value = ast.literal_eval(reason or "")
    except (ValueError, SyntaxError):
        return False
    return isinstance(value, str) and bool(value.strip())


def run_page(path: Path, scratch: Path) -> Page:
    """Every block of the page run, or counted as an excerpt (its reason), or a failure."""
    page = Page(path, scratch)
    document = Document.parse(str(path), *PARSERS)
    document.namespace["page"] = page
    claimed = set()
    unmarked = False  # a skip without a reason lets sybil pass the next block unrun
    for example in document.examples():
        claimed.add(example.start)
        if isinstance(example.parsed, tuple) and example.region.evaluator is SKIP.skipper:
            # sybil evaluates a reason as Python; a marked excerpt gives one as a string literal.
            action, reason = example.parsed
            if action != "next" or not _literal(reason):
                page.failures.append(f"{example.line}: an excerpt is marked `<!-- skip: next \"why\" -->`, with its reason")
                unmarked = True
        try:
            example.evaluate()
        except SkipTest as exc:
            page.excerpts.append((example.line, str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - every block's failure is told, each at its line
            page.failures.append(f"{example.line}: {type(exc).__name__}: {exc}")
            continue
        if example.region.evaluator in (run_python, run_yaml, run_json, run_sh, run_console) \
                and "directive" not in example.region.lexemes and example.line not in page.quoted:
            if not unmarked:
                page.ran.append(example.line)
            unmarked = False
    if page.directive is not None:
        page.failures.append(f"{page.directive[0]}: `<!-- example: -->` applies to no code block")
    if page.preamble:
        page.failures.append("an invisible code block precedes no python block")
    for region in ANY_FENCE(document):
        info = region.lexemes["info"].strip()
        line = document.text.count("\n", 0, region.start) + 1
        if region.start not in claimed and info not in TO_READ:
            page.failures.append(f"{line}: a ```{info} block is neither run nor marked: use python, yaml, json, sh or "
                                 f"console (run), `<!-- skip: next \"why\" -->` before it, or text/mermaid (to read)")
    return page
