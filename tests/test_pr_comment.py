""".github/scripts/pr_comment.py: the synth artifacts of a (possibly forked) pull request become
inert comment text. Each test is an attack on the comment that pr-comment.yml posts with a token
that can write: ping people, forge the per-stack marker, inject HTML, load remote images, or
overflow the comment."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / ".github" / "scripts" / "pr_comment.py"
_spec = importlib.util.spec_from_file_location("gha_pr_comment_script", SCRIPT)
pc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pc)

_spec = importlib.util.spec_from_file_location("gha_stacks_script_for_comments", ROOT / ".github" / "scripts" / "stacks.py")
stacks_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stacks_script)

ZWSP = "\u200b"
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")  # what GitHub would treat as a mention


def outside_code(md: str) -> str:
    """The text of md that GitHub renders as Markdown: fenced blocks and code spans removed."""
    out, fence = [], None
    for line in md.split("\n"):
        if fence:
            if line.strip() == fence:
                fence = None
            continue
        m = re.match(r"^(`{3,})", line)
        if m:
            fence = m.group(1)
            continue
        out.append(re.sub(r"(?<!\\)(`+)(?!`).*?(?<!`)\1(?!`)", "", line))
    return "\n".join(out)


# --- mentions and references --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["@alice please look", "cc @acme/platform-team", "(@bob)", "x@y", "**@carol**", "[@dave](https://x)"],
)
def test_mentions_ping_nobody(text: str):
    out = pc.sanitize(text)
    assert not MENTION.search(out.replace("@" + ZWSP, "")) and "@" + ZWSP in out
    assert not MENTION.search(out), out


def test_entity_encoded_mentions_stay_text():
    # &#64; renders as @ after Markdown; with & escaped it renders as the literal "&#64;".
    out = pc.sanitize("&#64;alice &commat;bob &#x40;carol")
    assert "&#64;" not in out.replace("&amp;#", "") and out.count("&amp;") == 3


def test_issue_references_are_broken():
    out = pc.sanitize("fixes #12 and other/repo#34, but # heading and #tag stay")
    assert "#12" not in out and "#34" not in out and f"#{ZWSP}12" in out
    assert "#tag" in out


# What GitHub reads as a reference to an issue, pull request or discussion, outside code.
REFERENCE = re.compile(r"(?<![\w`])(#\d|GH-\d)|github\.com/[^/\s]+/[^/\s]+/(issues|pulls?|discussions)/\d", re.IGNORECASE)


@pytest.mark.parametrize(
    "text",
    [
        "fixes GH-123",
        "gh-7 and Gh-8",
        "see https://github.com/other/repo/issues/1",
        "https://github.com/other/repo/pull/2/files, and http://www.github.com/o/r/pulls/3.",
        "| cell | https://GitHub.com/o/r/discussions/4 |",
        "[text](https://github.com/o/r/issues/5)",
        "github.com/o/r/issues/6#issuecomment-1",
        "<https://github.com/o/r/issues/7>",
    ],
)
def test_short_and_full_references_create_no_cross_reference(text: str):
    # GH-123 and full URLs post "mentioned this" on other issues as #123 does.
    out = pc.sanitize(text)
    assert not REFERENCE.search(outside_code(out)), out
    assert not MENTION.search(outside_code(out))


def test_a_url_to_code_stays_a_link_and_a_reference_url_stays_readable():
    url = "https://github.com/kubernetes-sigs/kueue/blob/v0.14.1/pkg/x.go#L12"
    assert pc.sanitize(f"source: {url}") == f"source: {url}\n"
    assert pc.sanitize("see https://github.com/o/r/issues/1.") == "see `https://github.com/o/r/issues/1`.\n"


# --- HTML and the marker ------------------------------------------------------------------------


MARKER = "<!-- gke-ai-batch:synth:prod -->"


@pytest.mark.parametrize(
    "text",
    [
        MARKER,
        MARKER + "\nfake report",
        "report\n" + MARKER,
        "<details><summary>x</summary>\n<!-- hidden -->\n</details>",
        "<img src=https://evil.example/p.png>",
        "<picture><source srcset=https://evil.example/a></picture>",
        "<a href='javascript:alert(1)'>x</a>",
        "<https://evil.example/autolink>",
        "<br>\n`<img src=https://evil.example/x>`",  # an HTML block would make the next line raw
        "  <br> starts a line",
        "| a | `<img src=https://evil.example/x | y>` |",  # table pipes split code spans
        "a ` b\n`<img src=https://evil.example/x>`",  # a span opened on an earlier line
        "\\`<img src=https://evil.example/x>`",  # an escaped backtick opens no span
        "<scr\x00ipt>",
    ],
)
def test_no_raw_html_outside_code(text: str):
    out = pc.sanitize(text)
    rendered = outside_code(out)
    # The only tag left is <br> inside a line (the report's table cells use it).
    tags = re.findall(r"<[A-Za-z!/?]", rendered.replace("<br>", ""))
    assert not tags, out
    for line in rendered.split("\n"):
        assert not line.lstrip().startswith("<"), out
    # Whatever this script calls code, no tag inside it can escape: code holds no raw `<` unless it
    # is a whole span on one line (checked against the same rules GitHub applies).
    assert "<!--" not in rendered


@pytest.mark.parametrize(
    "text, expected",
    [
        # GFM splits a table row on `|` before it looks for code spans, so this is no span for
        # GitHub: each cell would hold an unmatched backtick and raw HTML. It must be escaped.
        ("| `<img src=x | y>` |", "| \\`&lt;img src=x | y>\\` |"),
        # `\|` is a pipe inside a cell: the span is kept.
        ("| `a \\| <b>` |", "| `a \\| <b>` |"),
        # A backtick without a closer on its line could pair with one on the next line (a span can
        # cross lines within a paragraph), turning that line's "span" into raw HTML: escaped.
        ("a ` b\n`<img src=x>`", "a \\` b\n`<img src=x>`"),
        # A fence inside a list item is not one this script re-fences: its backticks are escaped.
        ("- ```\n<img src=x>", "- \\`\\`\\`\n&lt;img src=x>"),
    ],
)
def test_code_spans_are_code_for_github_too(text: str, expected: str):
    assert pc.sanitize(text) == expected + "\n"


def test_marker_forgery_is_visible_text_and_cannot_match():
    out = pc.sanitize(MARKER + "\n" + MARKER)
    assert "&lt;!-- gke-ai-batch:synth:prod -->" in out
    # pr-comment.yml finds its comment by `body.startsWith(marker)` and writes its own marker first.
    body = "<!-- gke-ai-batch:synth:dev -->\n" + out
    assert not body.startswith(MARKER)
    assert body.count("<!--") == 1


def test_report_html_that_is_kept():
    out = pc.sanitize("| pool | zones |\n|---|---|\n| `tpu-<i>` | a<br>b |\n")
    assert "`tpu-<i>`" in out and "a<br>b" in out


# --- images and remote content ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "![pixel](https://evil.example/p.png)",
        "![pixel][p]\n\n[p]: https://evil.example/p.png",
        "[![badge](https://evil.example/b.svg)](https://x)",
        "\\![x](https://evil.example/p.png)",
    ],
)
def test_no_images(text: str):
    out = outside_code(pc.sanitize(text))
    assert not re.search(r"(?<!\\)!\[", out), out


def test_fence_info_strings_that_embed_viewers_become_text():
    out = pc.sanitize("```geojson\n{}\n```\n```mermaid\ngraph TD; a-->b\n```")
    assert "```text\n{}\n```" in out and "```mermaid\ngraph TD; a-->b\n```" in out


# --- fenced code --------------------------------------------------------------------------------


def test_code_cannot_close_its_fence_early():
    text = "```\nok\n~~~\n````\n<img src=https://evil.example/x>\n"  # the ```` closes the original
    out = pc.sanitize(text)
    assert "&lt;img" in out or "<img" not in outside_code(out)
    hostile = "````text\n```\n<img src=x>\n```\n````"
    out = pc.sanitize(hostile)
    # Re-fenced with more backticks than any run inside, so the inner ``` stay content.
    assert out.startswith("````text\n```\n<img src=x>\n```\n````") and "<img" not in outside_code(out)


def test_unclosed_fence_is_closed():
    out = pc.sanitize("```\n<img src=x>")
    assert out.rstrip().endswith("```") and "<img" not in outside_code(out)


# --- size and encoding --------------------------------------------------------------------------


def test_oversized_input_is_capped_and_says_so():
    out = pc.sanitize("&" * 200_000)  # every character escapes to five
    assert len(out) <= pc.MAX_CHARS + 200 and out.rstrip().endswith(pc.TRUNCATED)


def test_cap_inside_a_code_block_closes_the_block():
    out = pc.sanitize("```\n" + "x\n" * 100_000)
    lines = out.rstrip().split("\n")
    assert lines[-1] == pc.TRUNCATED and lines[-3] == "```" and len(out) <= pc.MAX_CHARS + 200


def test_non_utf8_and_control_characters():
    raw = b"ok \xff\xfe bad \x1b[31mred\x1b[0m \xe2\x80\xae evil \x00 end\r\nnext"
    out = pc.sanitize(raw)
    assert "\ufffd" in out and "\x1b" not in out and "\u202e" not in out and "\x00" not in out
    assert "\r" not in out and "next" in out


def test_read_reports_caps_artifacts_and_files(tmp_path: Path):
    for i in range(pc.MAX_ARTIFACTS + 5):
        d = tmp_path / f"synth-s{i:02d}"
        d.mkdir()
        (d / "comment.md").write_text("@alice")
    (tmp_path / "synth-big").mkdir()
    (tmp_path / "synth-big" / "comment.md").write_bytes(b"a" * 10_000_000)
    (tmp_path / "synth-bad name").mkdir()
    (tmp_path / "synth-bad name" / "comment.md").write_text("x")
    (tmp_path / "other").mkdir()
    (tmp_path / "synth-link").symlink_to(tmp_path / "synth-s00")
    (tmp_path / "synth-nofile").mkdir()
    reports, warnings = pc.read_reports(tmp_path)
    assert len(reports) == pc.MAX_ARTIFACTS
    assert "big" in {r["stack"] for r in reports} or any("more than" in w for w in warnings)
    assert "link" not in {r["stack"] for r in reports}
    assert all(r["text"] == f"@{ZWSP}alice\n" or len(r["text"]) <= pc.MAX_CHARS + 200 for r in reports)
    assert any("bad name" in w for w in warnings) and any("'other'" in w for w in warnings)


def test_big_file_is_truncated(tmp_path: Path):
    (tmp_path / "synth-big").mkdir()
    (tmp_path / "synth-big" / "comment.md").write_bytes(("é" * 1_000_000).encode())
    (report,), _ = pc.read_reports(tmp_path)
    assert report["stack"] == "big" and report["text"].rstrip().endswith(pc.TRUNCATED)
    assert len(report["text"]) <= pc.MAX_CHARS + 200


def test_command_line(tmp_path: Path):
    (tmp_path / "r" / "synth-dev").mkdir(parents=True)
    (tmp_path / "r" / "synth-dev" / "comment.md").write_text("hi @bob <b>")
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "r"), str(tmp_path / "out.json")],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == [{"stack": "dev", "text": f"hi @{ZWSP}bob &lt;b>\n"}]


# --- the real report survives -------------------------------------------------------------------


def test_a_real_synth_comment_keeps_its_structure():
    report = (
        "# dev\n\n| pool | shape |\n|---|---|\n| `tpu-<i>` | 2x2<br>v5e |\n\n"
        "```mermaid\ngraph LR\n  a[pool] --> b[queue]\n```\n"
    )
    body = stacks_script.comment_body("dev", 3, "error: `x` < 1 @ line 2\n```")
    out = pc.compose(body, None, report, "rendered")
    assert out.startswith("❌ synth `dev`: a mandatory policy is violated\n")
    assert "| `tpu-<i>` | 2x2<br>v5e |" in out and "```mermaid\ngraph LR" in out
    # stderr stays verbatim inside its fence (mentions in code do not ping).
    assert "error: `x` < 1 @ line 2\n```\n````" in out


def test_reads_no_more_of_a_file_than_the_cap_can_use(tmp_path: Path, monkeypatch):
    (tmp_path / "synth-big").mkdir()
    (tmp_path / "synth-big" / "comment.md").write_bytes(b"a" * 5_000_000)
    asked: list[int] = []
    real_open = Path.open

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def read(self, n: int = -1) -> bytes:
            asked.append(n)
            return self.fh.read(n)

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: Spy(real_open(self, *a, **k)))
    pc.read_reports(tmp_path)
    assert asked and all(0 < n <= 4 * pc.MAX_CHARS + 4 for n in asked), asked


# --- the diff against the base branch leads, the report is folded --------------------------------

LEAD = "✅ synth `dev`: ok\n"
DIFF = "## Diff against the base branch\n\n- added: `tpu-v6e-2` (+64 chips)\n"
REPORT = "# dev\n\n| pool | shape |\n|---|---|\n| `tpu-<i>` | 2x2<br>v5e |\n"


def artifact(root: Path, stack: str, **files: str) -> None:
    d = root / f"synth-{stack}"
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name.replace("_", "-").replace("-md", ".md")).write_text(text)


def test_diff_first_then_the_report_folded(tmp_path: Path):
    artifact(tmp_path, "dev", comment_md=LEAD, diff_md=DIFF, report_md=REPORT, base_state="rendered\n")
    ((report,), _) = pc.read_reports(tmp_path)
    text = report["text"]
    status, diff, fold, table, close = (
        text.index(LEAD.strip()), text.index("+64 chips"), text.index(pc.FOLD_OPEN),
        text.index("| `tpu-<i>` | 2x2<br>v5e |"), text.index(pc.FOLD_CLOSE),
    )
    assert status < diff < fold < table < close, text
    assert text.count("<details>") == 1 and text.count("</details>") == 1 and text.rstrip().endswith(pc.FOLD_CLOSE)
    assert "New in this pull request" not in text and "could not be rendered" not in text


def test_the_report_cannot_close_or_open_the_fold():
    out = pc.compose(LEAD, "</details>\n<details open>", "</details>\n\n@alice\n```\nunclosed", "rendered")
    assert out.count("<details>") == 1 and out.count("</details>") == 1
    assert "&lt;/details>" in out and "&lt;details open>" in out and f"@{ZWSP}alice" in out
    # The report's unclosed fence is closed before the fold is.
    assert out.rstrip().endswith("unclosed\n```\n\n" + pc.FOLD_CLOSE)


@pytest.mark.parametrize(
    "state, files, says, has_fold",
    [
        ("new", {"comment_md": LEAD, "report_md": REPORT}, "New in this pull request", True),
        ("removed", {"comment_md": ""}, "Removed in this pull request", False),
        ("failed", {"comment_md": LEAD, "report_md": REPORT}, "base branch could not be rendered", True),
    ],
)
def test_stacks_new_removed_and_base_not_rendered_are_marked_first(tmp_path: Path, state, files, says, has_fold):
    artifact(tmp_path, "dev", base_state=state + "\n", **files)
    ((report,), warnings) = pc.read_reports(tmp_path)
    assert not warnings and report["text"].startswith(pc.BASE_STATES[state]), report["text"]
    assert says in report["text"] and (pc.FOLD_OPEN in report["text"]) is has_fold


def test_an_unknown_base_state_says_nothing(tmp_path: Path):
    artifact(tmp_path, "dev", comment_md=LEAD, base_state="**pwned** <img src=x>" * 100)
    ((report,), _) = pc.read_reports(tmp_path)
    assert report["text"] == LEAD


def test_a_huge_diff_and_report_stay_under_githubs_limit():
    out = pc.compose(LEAD, "d\n" * 20_000, "r\n" * 50_000, "rendered")
    assert len(out) <= pc.MAX_CHARS + 200
    # The diff (40,000 characters) is whole; the report is cut inside its fold, which still closes.
    assert out.count("d\n") == 20_000 and pc.TRUNCATED in out and out.rstrip().endswith(pc.FOLD_CLOSE)
    out = pc.compose(LEAD, "&\n" * 100_000, "r\n" * 50_000, "rendered")
    assert len(out) <= pc.MAX_CHARS + 200 and pc.FOLD_OPEN not in out and pc.TRUNCATED in out


def test_stacks_comment_writes_the_lead_and_the_base_state(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(stacks_script, "ROOT", tmp_path)
    (tmp_path / "err.txt").write_text("boom")
    assert stacks_script.main(["comment", "dev", "2", str(tmp_path / "err.txt"), "--base-state", "new"]) == 0
    out = tmp_path / "build" / "dev"
    assert (out / "base-state").read_text() == "new\n"
    assert (out / "comment.md").read_text().startswith("❌ synth `dev`: invalid stack config")
    assert stacks_script.main(["comment", "old", "0", str(tmp_path / "none"), "--base-state", "removed"]) == 0
    assert (tmp_path / "build" / "old" / "comment.md").read_text() == ""
    with pytest.raises(SystemExit):
        stacks_script.main(["comment", "dev", "0", str(tmp_path / "err.txt"), "--base-state", "whatever"])
