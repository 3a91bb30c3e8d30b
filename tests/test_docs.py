"""The README stays a front door and the docs stay true to the repository: the README is short
and readable, every relative link (and #anchor) lands, and every file or module a command or
path names exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [README, *PAGES]
README_MAX_LINES = 300
MAX_LINE = 160

# Folders of this repository that documentation names paths in.
TRACKED = ("stacks", "policy", "components", "synth", "tests", "bootstrap", "bench", "scripts", "schema", "docs", ".github", ".ci")
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./<>{}*…-]*)" % "|".join(re.escape(t) for t in TRACKED))
# A placeholder (stacks/Pulumi.<stack>.yaml, policy/config/STACK.json, a glob) names no one file.
PLACEHOLDER = re.compile(r"[<>{}*…]|STACK|\.venv")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
MODULE = re.compile(r"\bpython3? -m ([\w.]+)")
FENCE = re.compile(r"^\s*```")


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def split(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(prose lines, code-block lines), each with its line number."""
    prose, code, fenced = [], [], False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        (code if fenced else prose).append((number, line))
    return prose, code


def without_inline_code(line: str) -> str:
    return re.sub(r"`[^`]*`", "", line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading (github-slugger): inline markup dropped, lowercased,
    punctuation removed, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    for _, line in split(path)[0]:
        match = re.match(r"#{1,6} (.+?)\s*#*\s*$", line)
        if match:
            base = slug(match[1])
            count = seen.get(base, 0)
            seen[base] = count + 1
    return {base if i == 0 else f"{base}-{i}" for base, n in seen.items() for i in range(n)}


def test_readme_is_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"
    long = [(n, len(line)) for n, line in split(README)[0] if len(line) > MAX_LINE]
    assert not long, f"README.md lines over {MAX_LINE} characters outside code blocks: {long}"


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_docs_pages_keep_prose_lines_short(page):
    # Tables are exempt: a row is one line however much it says.
    long = [(n, len(line)) for n, line in split(page)[0] if len(line) > MAX_LINE and not line.lstrip().startswith("|")]
    assert not long, f"{rel(page)}: lines over {MAX_LINE} characters outside code blocks and tables: {long}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=rel)
def test_relative_links_land(document):
    broken = []
    for number, line in split(document)[0]:
        for target in LINK.findall(without_inline_code(line)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            goal = (document.parent / file).resolve() if file else document
            where = f"{rel(document)}:{number}: {target}"
            if not goal.exists():
                broken.append(f"{where}: no such file")
            elif anchor and (goal.suffix != ".md" or anchor not in anchors(goal)):
                broken.append(f"{where}: no heading with that anchor in {rel(goal)}")
    assert not broken, "\n".join(broken)


def _runnable(module: str) -> bool:
    top = module.partition(".")[0]
    if (ROOT / top).is_dir() or (ROOT / f"{top}.py").is_file():
        base = ROOT.joinpath(*module.split("."))
        return base.with_suffix(".py").is_file() or (base / "__main__.py").is_file()
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("document", DOCUMENTS, ids=rel)
def test_named_files_and_modules_exist(document):
    text = document.read_text()
    missing = []
    for module in sorted(set(MODULE.findall(text))):
        if not _runnable(module):
            missing.append(f"python -m {module}")
    for kind, pattern in (("bash", r"\bbash ([\w./-]+)"), ("pip -r", r"pip install [^\n]*?-r ([\w./-]+)")):
        missing += [f"{kind} {path}" for path in re.findall(pattern, text) if not (ROOT / path).exists()]
    for path in sorted(set(PATH.findall(text))):
        if not PLACEHOLDER.search(path) and not (ROOT / path.rstrip(".")).exists():
            missing.append(path)
    assert not missing, f"{rel(document)} names what does not exist: {missing}"


def test_every_file_a_render_writes_is_in_the_readme_synth_and_library_docs():
    # A stack's render (one cluster) and a program's write the same set; each page lists it.
    from conftest import synth_stack
    from gke_ai_batch.synth import output_files

    written = set(output_files(synth_stack("dev")))
    assert {"admission.json", "cost.json", "report.md"} <= written
    readme_table = {m for m in re.findall(r"^\| `([\w.]+)` \|", README.read_text(), re.M)}
    assert written <= readme_table, sorted(written - readme_table)
    for page in ("synth.md", "library.md"):
        text = (ROOT / "docs" / page).read_text()
        assert not [f for f in sorted(written) if f"`{f}`" not in text], page


@pytest.mark.parametrize("page", ["README.md", "docs/deploying.md"])
def test_the_first_deploy_says_what_a_fresh_machine_needs(page):
    # What a newcomer following the page literally lacked: kubectl, gcloud's own login (the auth
    # plugin does not read application-default credentials), the plugin on apt/yum installs of
    # gcloud (no component manager there), the admin bucket the bootstrap's state goes in, what
    # `pulumi stack init` asks for, and the console menu as it is now named.
    text = (ROOT / page).read_text()
    prerequisites = text[text.index("Prerequisites"):]
    assert "`kubectl`" in prerequisites[:1200]
    for words in ("gcloud auth login", "gcloud auth application-default login", "google-cloud-cli-gke-gcloud-auth-plugin",
                  "gcloud storage buckets create gs://<an-admin-bucket>", "passphrase", "cryptoKeyEncrypterDecrypter",
                  "Quotas & System Limits"):
        assert words in text, words
    assert "Quotas)" not in text
