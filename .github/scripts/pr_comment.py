"""Turns the synth-* artifacts of a pull-request run into inert comment text.

    python3 .github/scripts/pr_comment.py REPORTS_DIR OUT_JSON

Reads REPORTS_DIR/synth-<stack>/ for at most MAX_ARTIFACTS stacks and writes OUT_JSON, a list of
{"stack": ..., "text": ...}, sorted by stack, that pr-comment.yml posts one comment each. Each
comment is, in this order: what the stack is against the base branch (base-state: new in the pull
request, removed by it, or a base that could not be rendered), the status line and any stderr
(comment.md), the diff against the base render (diff.md), and the full report (report.md) folded
in a <details> block that this script writes itself.

The artifacts are untrusted: a fork's pull request controls every byte of them (it can change
synth, the workflow, or upload whatever it likes). pr-comment.yml runs this file from the default
branch, never from the PR. What comes out must be safe to post with a token that can write
comments, so the text is made inert rather than trusted:

- no raw HTML from the artifact at all (`&` and `<` are escaped), so no hidden `<!-- ... -->` comment can imitate
  the `<!-- gke-ai-batch:synth:STACK -->` marker that pr-comment.yml finds its comments by, no
  <img>, <picture>, <details> spoofing or autolink; the one tag put back is `<br>` inside a line
  (the report's table cells use it), which cannot start an HTML block there;
- no @mentions (a zero-width space after every `@`, so nobody is notified) and no cross-references
  (which would post "mentioned this" events on other issues): `#123` and `GH-123` get a zero-width
  space before the number, and a full issue, pull request or discussion URL
  (https://github.com/o/r/issues/1, /pull/1, /discussions/1) becomes a code span, which GitHub
  neither links nor reads references from;
- no images (`![` becomes `!\\[`), so nothing is fetched from an attacker's server when the
  comment is viewed;
- fenced code blocks are re-emitted with a fence longer than any backtick run inside them, so their
  content cannot end them early; code spans are kept only when they close on the same line and do
  not contain a table pipe, and every other backtick is escaped, so what this script treats as code
  is code for GitHub too (and raw `<` inside code renders as text);
- control and bidirectional-override characters are removed, invalid UTF-8 is replaced, each
  file is capped (MAX_CHARS) before and after escaping, and only MAX_ARTIFACTS stacks are read.

Only the standard library: the job that runs this installs nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
import unicodedata
from pathlib import Path

# GitHub rejects comment bodies over 65,536 characters; the marker and footer need the rest.
MAX_CHARS = 60_000
# Far more than the stacks this repository has; a PR cannot make the job post hundreds of comments.
MAX_ARTIFACTS = 30
# Same rule as stacks.py (and Pulumi): the stack name goes into the comment marker.
STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
TRUNCATED = "… (truncated: the full report is in the synth artifact)"

ZWSP = "\u200b"
PUNCT = set(string.punctuation)
FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
# Fence info strings kept as given; anything else becomes plain text (GitHub renders some info
# strings, e.g. geojson or stl, as embedded viewers).
FENCE_INFO = {"", "text", "mermaid", "json", "yaml", "diff", "console", "sh"}
BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}


def _clean_chars(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        c for c in text if c in "\n\t" or (unicodedata.category(c) != "Cc" and c not in BIDI)
    )


# A URL GitHub turns into a cross-reference (with or without a scheme, any case of the host).
REFERENCE_URL = re.compile(
    r"(?:https?://)?(?:www\.)?github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(?:issues|pulls?|discussions)/[0-9]+[^\s<>`|]*",
    re.IGNORECASE,
)


def _text(s: str, at_line_start: bool) -> str:
    """Escapes a run of text that is not code; issue URLs in it become code spans."""
    parts: list[str] = []
    start = 0
    for m in REFERENCE_URL.finditer(s):
        # Trailing punctuation is the sentence's, as GitHub's autolinks leave it out.
        url = m.group(0).rstrip(".,:;!?*_~'\")]")
        parts.append(_plain(s[start : m.start()], at_line_start and start == 0))
        parts.append(f"`{url}`")  # no backtick, `<` or `|` in it: a span GitHub keeps whole
        start = m.start() + len(url)
    parts.append(_plain(s[start:], at_line_start and start == 0))
    return "".join(parts)


def _plain(s: str, at_line_start: bool) -> str:
    """Escapes a run of text that is neither code nor an issue URL."""
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        nxt = s[i + 1] if i + 1 < n else ""
        if c == "\\" and nxt in "\\`":
            # An escaped backslash or backtick: kept as the pair (an escaped backtick opens no span).
            out.append(c + nxt)
            i += 2
            continue
        if c == "\\" and nxt in PUNCT:
            # Kept, and the escaped character goes through the rules below (`\#1` still links).
            out.append(c)
            i += 1
            continue
        if c == "#" and nxt.isdigit():
            out.append("#" + ZWSP)
        elif c in "Gg" and s[i : i + 3].lower() == "gh-" and s[i + 3 : i + 4].isdigit():
            # GH-123 is GitHub's other short form of an issue reference.
            out.append(s[i : i + 3] + ZWSP)
            i += 3
            continue
        elif c == "!" and nxt == "[":
            out.append("!\\")
        else:
            out.append(_char(c))
        i += 1
    result = "".join(out)
    # `<br>` back, except where it would begin the line (an HTML block start: its lines would then be
    # raw HTML, code spans included).
    head, tail = "", result
    if at_line_start:
        stripped = result.lstrip()
        if stripped.startswith("&lt;br>"):
            cut = len(result) - len(stripped) + len("&lt;br>")
            head, tail = result[:cut], result[cut:]
    return head + tail.replace("&lt;br>", "<br>")


def _char(c: str) -> str:
    if c == "&":
        return "&amp;"
    if c == "<":
        return "&lt;"
    if c == "@":
        return "@" + ZWSP
    return c


def _backtick_run(s: str, i: int) -> int:
    j = i
    while j < len(s) and s[j] == "`":
        j += 1
    return j - i


def _span_ok(content: str) -> bool:
    # GFM splits table rows on `|` before it finds code spans; only `\|` is kept inside a cell.
    for k, c in enumerate(content):
        if c == "|" and not (k >= 1 and content[k - 1] == "\\" and (k < 2 or content[k - 2] != "\\")):
            return False
    return True


def _line(line: str) -> str:
    """One line outside fenced code: code spans kept verbatim, everything else escaped."""
    out: list[str] = []
    text_start = 0
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n and line[i + 1] in PUNCT:
            i += 2
            continue
        if c != "`":
            i += 1
            continue
        run = _backtick_run(line, i)
        # The next backtick run of exactly the same length on this line closes the span.
        j = i + run
        close = -1
        while j < n:
            if line[j] == "`":
                r = _backtick_run(line, j)
                if r == run:
                    close = j
                    break
                j += r
            else:
                j += 1
        if close >= 0 and _span_ok(line[i + run : close]):
            out.append(_text(line[text_start:i], at_line_start=text_start == 0))
            out.append(line[i : close + run])
            i = text_start = close + run
        else:
            out.append(_text(line[text_start:i], at_line_start=text_start == 0))
            out.append("\\`" * run)
            i = text_start = i + run
    out.append(_text(line[text_start:], at_line_start=text_start == 0))
    return "".join(out)


def _blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """(kind, info, lines): kind "text" or "code" (a fenced block's content, fences removed)."""
    lines = text.split("\n")
    blocks: list[tuple[str, str, list[str]]] = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
            close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
            body: list[str] = []
            i += 1
            while i < len(lines) and not close.match(lines[i]):
                # CommonMark removes the opening fence's indentation from the content lines.
                line = lines[i]
                strip = min(indent, len(line) - len(line.lstrip(" ")))
                body.append(line[strip:])
                i += 1
            i += 1  # the closing fence (or the end of the text: an unclosed block runs to the end)
            blocks.append(("code", info.split()[0] if info else "", body))
        else:
            blocks.append(("text", "", [lines[i]]))
            i += 1
    return blocks


def _fence_for(body: list[str]) -> str:
    longest = max((len(r) for line in body for r in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def sanitize(raw: bytes | str, limit: int = MAX_CHARS) -> str:
    """The inert Markdown for one comment.md, at most about `limit` characters."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    truncated = len(text) > limit
    text = _clean_chars(text[:limit])
    out: list[str] = []
    size = 0
    for kind, info, lines in _blocks(text):
        if kind == "code":
            fence = _fence_for(lines)
            opening = fence + (info if info in FENCE_INFO else "text")
            rendered = [opening, *lines]
            closing = fence
        else:
            rendered = [_line(lines[0])]
            closing = None
        for k, line in enumerate(rendered):
            if size + len(line) + 1 > limit:
                truncated = True
                break
            out.append(line)
            size += len(line) + 1
        else:
            if closing is not None:
                out.append(closing)
                size += len(closing) + 1
            continue
        # Out of room: close the block this stopped in, so the notice is not inside it.
        if closing is not None and k > 0:
            out.append(closing)
        break
    body = "\n".join(out).rstrip("\n")
    if truncated:
        body += "\n\n" + TRUNCATED
    return body + "\n"


# What base-state may say (one word, written by the synth job): fixed text here, so the artifact
# picks one of these sentences and cannot word its own. An unknown or missing state adds nothing
# (an artifact from before the diff existed).
BASE_STATES = {
    "rendered": None,
    "new": "🆕 **New in this pull request**: the base branch has no such stack; the diff lists everything it creates.",
    "removed": "🗑️ **Removed in this pull request**: the head has no stack file for it; the diff shows what the base branch's render had.",
    "failed": "⚠️ **The base branch could not be rendered** (its synth failed): no diff, the report only.",
}
# Written here, not taken from the artifact; the report inside is escaped, so it cannot close it.
FOLD_OPEN = "<details><summary>Full report</summary>"
FOLD_CLOSE = "</details>"


def _read(file: Path) -> bytes | None:
    """The start of an artifact file (None when it is absent or not a regular file)."""
    if file.is_symlink() or not file.is_file():
        return None
    # UTF-8 takes at most 4 bytes a character: never read more than the cap can use. A file cut
    # here decodes to more than MAX_CHARS characters, so sanitize() marks it truncated.
    with file.open("rb") as fh:
        return fh.read(MAX_CHARS * 4 + 4)


def compose(lead: bytes | str | None, diff: bytes | str | None, report: bytes | str | None, state: str | None) -> str:
    """One stack's comment: the base state, the lead (status and stderr), the diff, the report folded.

    Each part is sanitized on its own, within what the parts before it left of MAX_CHARS, so the
    diff is never cut for the report's sake and the whole stays under GitHub's limit.
    """
    parts: list[str] = []
    note = BASE_STATES.get((state or "").strip())
    if note:
        parts.append(note + "\n")
    for raw in (lead, diff):
        room = MAX_CHARS - sum(map(len, parts))
        if raw and room > len(TRUNCATED) + 2:
            parts.append(sanitize(raw, room))
    room = MAX_CHARS - sum(map(len, parts)) - len(FOLD_OPEN) - len(FOLD_CLOSE) - 4
    if report and room > len(TRUNCATED) + 2:
        parts.append(f"{FOLD_OPEN}\n\n{sanitize(report, room)}\n{FOLD_CLOSE}\n")
    elif report:
        parts.append(TRUNCATED + "\n")
    return "\n".join(p.rstrip("\n") + "\n" for p in parts) if parts else "\n"


def read_reports(root: Path) -> tuple[list[dict[str, str]], list[str]]:
    """([{"stack", "text"}], warnings) for the artifacts under root, capped and sanitized."""
    reports: list[dict[str, str]] = []
    warnings: list[str] = []
    dirs = sorted(p for p in root.iterdir()) if root.is_dir() else []
    for d in dirs:
        stack = d.name[len("synth-") :] if d.name.startswith("synth-") else ""
        if not STACK_NAME.match(stack) or d.is_symlink() or not d.is_dir():
            warnings.append(f"skipping {d.name!r}: not synth-<stack name>")
            continue
        lead = _read(d / "comment.md")
        if lead is None:
            warnings.append(f"skipping {d.name}: no comment.md")
            continue
        if len(reports) == MAX_ARTIFACTS:
            warnings.append(f"more than {MAX_ARTIFACTS} synth artifacts; the rest are not posted")
            break
        state = (_read(d / "base-state") or b"")[:16].decode("ascii", errors="replace")
        text = compose(lead, _read(d / "diff.md"), _read(d / "report.md"), state)
        reports.append({"stack": stack, "text": text})
    return reports, warnings


def parser() -> argparse.ArgumentParser:
    doc = __doc__.split("\n\n")
    p = argparse.ArgumentParser(
        prog="pr_comment.py",
        description=doc[0],
        epilog="\n\n".join(doc[2:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("reports", metavar="REPORTS_DIR", type=Path, help="where the synth-* artifacts were downloaded")
    p.add_argument("out", metavar="OUT_JSON", type=Path, help="the sanitized comments, as JSON")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    reports, warnings = read_reports(args.reports)
    for w in warnings:
        print(f"::warning::{w}")
    args.out.write_text(json.dumps(reports, ensure_ascii=False), encoding="utf-8")
    print(f"{len(reports)} report(s): {', '.join(r['stack'] for r in reports) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
