"""A bounded YAML reader that keeps positions and reads scalars as Pulumi does.

Pulumi reads stack files with gopkg.in/yaml.v2 (sdk/go/common/encoding/marshal.go), whose
scalar rules differ from PyYAML's YAML 1.1 constructors: `1e30` is a float there and a string
here, `1:20` a string there and 80 here; dates stay strings there (decode.go: "for backward
compatibility reasons we set it as a string") and become datetime objects here. So the values
are built here from PyYAML's event stream (its parser, not its constructors), with yaml.v2's
resolution, and every mapping key and sequence item keeps its line and column.

Building from events is also what bounds the work: the parser is iterative, so a deeply nested
file is refused at the depth limit instead of overflowing the C stack; aliases are counted as
the nodes they expand to, so a "billion laughs" file is refused (AliasBudget) instead of
exhausting memory. Everything wrong in a file that parses is reported at once.

Every other YAML the project reads from outside (a base render's manifests.yaml, the YAML a
program hands pulumi_kubernetes) goes through `load_all`: the same alias limit and a depth
limit, checked on the event stream before PyYAML builds anything."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from gke_ai_batch.config.errors import join_path
from gke_ai_batch.domain import quantity

from .diagnostics import Diagnostic

# libyaml's event parser when PyYAML has it (several times faster), else the pure-Python one.
_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_BYTES = 2 * 1024 * 1024
"""A stack file of the largest platform we model is about 60 KB; 2 MiB leaves room."""
MAX_DEPTH = 64
"""Stack config nests about ten levels deep; nothing legitimate needs 64."""
MAX_NODES = 200_000
"""Scalars, mappings, sequences and aliases after alias expansion: a stack file's budget, far
beyond the largest platform's (~6,000), on top of the alias limit every YAML has (AliasBudget)."""
EXACT_FLOAT = 2**53
"""Beyond this a YAML float is no longer exact as a float64 (JSON, Go, Python)."""

_V2_BOOLS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"), False),
}
_V2_NULLS = {"", "~", "null", "Null", "NULL"}
_V2_SPECIAL_FLOATS = {
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
}
# yaml.v2 resolve.go: ints through strconv.ParseInt(s, 0, 64) after removing '_' (so 0x, 0o,
# 0b and a leading-0 octal), floats through yamlStyleFloat.
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]+|[0-9]+)", re.ASCII)
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", re.ASCII)
_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_CORE}{t}" for t in ("str", "int", "float", "bool", "null")}


def key_path(path: tuple) -> str:
    """A document path (a tuple of keys and indexes) as a key path: `a.b[0]["odd key"]`."""
    return join_path(str(path[0]), path[1:]) if path else ""


def _problem(rule: str, message: str, line: int | None = None, column: int | None = None, path: str = "") -> Diagnostic:
    """Something wrong in a file, as a Diagnostic with no file yet: its reader (stackfile.py,
    program.py) places it in the file it read (`dataclasses.replace(d, file=...)`); 1-based line
    and column, None when the file is unreadable as a whole."""
    return Diagnostic(message, rule, path or None, None, line, column)


class YamlError(Exception):
    def __init__(self, problems: list[Diagnostic]):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


@dataclass
class Document:
    data: Any
    positions: dict[tuple, tuple[int, int]] = field(default_factory=dict)
    """Key path -> (line, column) of the mapping key or sequence item."""
    problems: list[Diagnostic] = field(default_factory=list)
    """What is wrong in a file that parses (keys, tags, numbers): the caller reports these
    with its own findings, all at once. Values at those places are left as their text."""


def decode(raw: bytes) -> str:
    """UTF-8 (with or without a BOM) or UTF-16 with a BOM, as yaml.v2's reader accepts."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlError(
            [_problem("yaml.encoding", f"not {encoding.upper().replace('-SIG', '')} text (byte {exc.start}: {exc.reason})", line)]
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise YamlError([_problem("yaml.encoding", "holds NUL bytes: a binary file, not YAML text", line)])
    return text


def read_bytes(path) -> bytes:
    """The file's bytes, refusing anything but a regular file of at most MAX_BYTES without
    reading more than that."""
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        raise YamlError([_problem("file", f"cannot read: {exc.strerror}")]) from None
    if not stat.S_ISREG(st.st_mode):
        raise YamlError([_problem("file", "not a regular file")])
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise YamlError([_problem("file", f"cannot read: {exc.strerror}")]) from None
    if len(raw) > MAX_BYTES:
        raise YamlError([_problem("yaml.size", f"larger than {MAX_BYTES // (1024 * 1024)} MiB")])
    return raw


def load(text: str, name: Callable[[tuple], str] = key_path) -> Document:
    """The single document in `text` and what is wrong in it, or YamlError when it cannot be
    read at all (syntax, size, depth, alias expansion); `name` names a problem's document path
    as its reader's diagnostics do (a stack file's by config key)."""
    return _Builder(text, name).build()


# go-yaml's limit on alias expansion (gopkg.in/yaml.v2 v2.4.0 decode.go:317-355, the fix of
# CVE-2019-11253; yaml.v3 decode.go has the same): a document may take at most 99% of its decoded
# nodes from aliases up to 400,000 nodes, a share that falls linearly to 10% at 4,000,000.
ALIAS_RATIO_RANGE = (400_000, 4_000_000)


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's allowedAliasRatio: the share of a document's decoded nodes that may come from
    alias expansion, once it has decoded `decoded` nodes."""
    low, high = ALIAS_RATIO_RANGE
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * ((decoded - low) / (high - low))


class AliasBudget:
    """One document's count of decoded nodes as go-yaml's decoder keeps it (`decodeCount`,
    `aliasCount`): every node decoded, the document's and each alias's own included, and those
    decoded while expanding an alias. Pulumi reads stack files and pulumi-kubernetes reads
    manifests with go-yaml, which fails a document "contains excessive aliasing" beyond
    `allowed_alias_ratio`; so does every reader here, counting an alias's expansion at once
    (the anchor's decoded size) instead of making it: a billion laughs costs a few additions.

    Counting a whole expansion at once refuses what go-yaml refuses: while an alias expands,
    both counts grow by one a node, so the share only rises and the allowed share only falls."""

    __slots__ = ("decoded", "aliased")

    def __init__(self) -> None:
        self.decoded = 0
        self.aliased = 0

    def node(self, expanded: int = 0) -> bool:
        """Count one node of the document as written, and the `expanded` nodes decoded for it
        when it is an alias; False once the document holds excessive aliasing."""
        self.decoded += 1 + expanded
        self.aliased += expanded
        return not (
            self.aliased > 100 and self.decoded > 1000 and self.aliased / self.decoded > allowed_alias_ratio(self.decoded)
        )

    def message(self) -> str:
        return (
            f"document contains excessive aliasing: {self.aliased:,} of its first {self.decoded:,} values once "
            f"aliases are expanded are copies made by aliases (Pulumi's YAML decoder, go-yaml, refuses a document "
            f"whose aliases make more than {allowed_alias_ratio(self.decoded):.0%} of it)"
        )


MAX_MANIFEST_DEPTH = 200
"""Manifests (not stack files): far deeper than any synth writes, and within what PyYAML's
composer builds (it recurses a few Python frames per level; libyaml's overflows the C stack)."""
# libyaml's event parser when PyYAML has it: iterative, and several times faster.
_EVENTS = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PYYAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_all(text: str, max_depth: int = MAX_MANIFEST_DEPTH) -> list[Any]:
    """The documents of a YAML stream as PyYAML's safe loader reads them, or YamlError (one
    problem, placed) for a document nested more than `max_depth` deep or holding excessive
    aliasing (AliasBudget): both are found on the event stream before anything is built, so
    neither a deep nor an exponential file costs more than reading it. Syntax errors are
    PyYAML's (yaml.YAMLError), raised as they are."""
    _check_events(text, max_depth)
    return list(yaml.load_all(text, Loader=_PYYAML_LOADER))


def _check_events(text: str, max_depth: int) -> None:
    # Per document, as go-yaml counts (a Decoder makes a new decoder for each document) and as
    # anchors are scoped. An open collection is [decoded size so far, its anchor].
    budget = AliasBudget()
    anchors: dict[str, int] = {}
    open_: list[list] = []
    for event in yaml.parse(text, Loader=_EVENTS):
        if isinstance(event, yaml.DocumentStartEvent):
            budget, anchors = AliasBudget(), {}
            budget.node()
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            size, anchor = open_.pop()
            if anchor:
                anchors[anchor] = size
            if open_:
                open_[-1][0] += size
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        expanded = 0
        if isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for _, anchor in open_):
                # PyYAML would build a structure that holds itself, which nothing can walk.
                _refuse(event, "yaml.alias", f"anchor {event.anchor!r} value contains itself (go-yaml refuses it)")
            if event.anchor not in anchors:
                break  # an undefined alias: PyYAML's composer says which, and where
            expanded = anchors[event.anchor]
        ok = budget.node(expanded)
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_) >= max_depth:
                _refuse(event, "yaml.depth", f"nested more than {max_depth} levels deep")
            open_.append([1, event.anchor])
        else:
            if isinstance(event, yaml.ScalarEvent) and event.anchor:
                anchors[event.anchor] = 1
            if open_:
                open_[-1][0] += 1 + expanded
        if not ok:
            _refuse(event, "yaml.alias", budget.message())


def _refuse(event, rule: str, message: str):
    mark = event.start_mark
    raise YamlError([_problem(rule, message, mark.line + 1, mark.column + 1)])


class _Frame:
    __slots__ = ("container", "path", "key", "key_ok", "seen", "nodes", "anchor", "start")

    def __init__(self, container, path, anchor, start):
        self.container = container
        self.path = path
        self.key = _NO_KEY
        self.key_ok = True
        self.seen: dict[str, int] = {}
        self.nodes = 1
        self.anchor = anchor
        self.start = start


_NO_KEY = object()


class _Builder:
    def __init__(self, text: str, name: Callable[[tuple], str] = key_path):
        self.text = text
        self.name = name
        self.problems: list[Diagnostic] = []
        self.positions: dict[tuple, tuple[int, int]] = {}
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.nodes = 0
        self.budget = AliasBudget()
        self.refused_key: Any = None  # what the last refused (non-string) key reads as
        # Where each line starts. The parser also breaks lines at NEL, LS and PS (YAML 1.1, as
        # yaml.v2 does), which editors, grep and git show within a line: positions are taken
        # from the character index instead, with lines ended by \n, \r\n or \r only.
        self.line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]

    def position(self, index: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, index)
        return line, index - self.line_starts[line - 1] + 1

    def problem(self, mark, path: tuple, rule: str, message: str) -> None:
        line, column = self.position(mark.index) if mark is not None else (None, None)
        self.problems.append(_problem(rule, message, line, column, self.name(path) if path else ""))

    def build(self) -> Document:
        try:
            root = self._walk()
        except yaml.reader.ReaderError as exc:
            line, column = self.position(exc.position)
            self.problems.append(
                _problem("yaml.syntax", f"invalid YAML: unacceptable character #x{exc.character:04x} ({exc.reason})", line, column)
            )
            raise YamlError(self.problems) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            what = getattr(exc, "problem", None) or str(exc)
            context = getattr(exc, "context", None)
            message = " ".join((f"{context}, {what}" if context else what).split())
            self.problems.append(
                _problem("yaml.syntax", f"invalid YAML: {message}", *(self.position(mark.index) if mark else (None, None)))
            )
            raise YamlError(self.problems) from None
        except _Abort:
            raise YamlError(self.problems) from None
        return Document(root, self.positions, self.problems)

    def _walk(self) -> Any:
        stack: list[_Frame] = []
        root: Any = None
        documents = 0
        loader = _PARSER(self.text)
        try:
            while True:
                event = loader.get_event()
                if event is None or isinstance(event, yaml.StreamEndEvent):
                    break
                if isinstance(event, yaml.DocumentStartEvent):
                    documents += 1
                    if documents > 1:
                        self.problem(event.start_mark, (), "yaml.documents", "a stack file holds one YAML document, not several")
                        raise _Abort
                    if event.version not in (None, (1, 1)):
                        # yaml.v2 (parserc.go) accepts no other version; libyaml also takes 1.2.
                        version = ".".join(map(str, event.version))
                        self.problem(event.start_mark, (), "yaml.syntax", f"invalid YAML: %YAML {version}: Pulumi's YAML reader accepts only %YAML 1.1 (found incompatible YAML document)")
                        raise _Abort
                    self.budget.node()  # go-yaml decodes the document node too
                    continue
                if isinstance(event, (yaml.StreamStartEvent, yaml.DocumentEndEvent)):
                    continue
                if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                    frame = stack.pop()
                    if frame.anchor:
                        self.anchors[frame.anchor] = (frame.container, frame.nodes)
                    if stack:
                        stack[-1].nodes += frame.nodes
                        self._attach(stack[-1], frame.container, frame.start, frame.nodes)
                    else:
                        root = frame.container
                    continue
                parent = stack[-1] if stack else None
                path = self._child_path(parent)
                if isinstance(event, yaml.AliasEvent):
                    if event.anchor not in self.anchors:
                        self.problem(event.start_mark, path, "yaml.alias", f"unknown alias *{event.anchor}")
                        raise _Abort
                    value, count = self.anchors[event.anchor]
                    self._count(event.start_mark, path, expanded=count)
                    if parent is None:
                        root = value
                    else:
                        parent.nodes += 1 + count
                        self._attach(parent, value, event.start_mark, count, alias=True)
                    continue
                if isinstance(event, yaml.ScalarEvent):
                    self._count(event.start_mark, path)
                    value = self._scalar(event, path, as_key=parent is not None and _wants_key(parent))
                    if event.anchor:
                        # A refused key is anchored as what it reads as (an alias of it is a
                        # value, or a key refused again), never as the marker of its refusal.
                        anchored = self.refused_key if value is _BAD_KEY_VALUE else value
                        self.anchors[event.anchor] = (anchored, 1)
                    if parent is None:
                        root = value
                    else:
                        parent.nodes += 1
                        self._attach(parent, value, event.start_mark, 1)
                    continue
                # A mapping or a sequence starts.
                self._count(event.start_mark, path)
                if len(stack) >= MAX_DEPTH:
                    self.problem(event.start_mark, path, "yaml.depth", f"nested more than {MAX_DEPTH} levels deep")
                    raise _Abort
                is_map = isinstance(event, yaml.MappingStartEvent)
                self._check_collection_tag(event, path, is_map)
                if parent is not None and _wants_key(parent):
                    self.problem(event.start_mark, path, "yaml.key", "a mapping key must be a string, not a mapping or a list")
                    parent.key_ok = False
                stack.append(_Frame({} if is_map else [], path, event.anchor, event.start_mark))
        finally:
            loader.dispose()
        return root

    def _count(self, mark, path: tuple, expanded: int = 0) -> None:
        """One node as written, and the `expanded` nodes an alias decodes to (go-yaml's count:
        an anchor's size includes the aliases in it)."""
        self.nodes += 1 + expanded
        if not self.budget.node(expanded):
            self.problem(mark, path, "yaml.alias", self.budget.message())
            raise _Abort
        if self.nodes > MAX_NODES:
            self.problem(mark, path, "yaml.size", f"more than {MAX_NODES:,} values once aliases are expanded")
            raise _Abort

    @staticmethod
    def _child_path(parent: _Frame | None) -> tuple:
        if parent is None:
            return ()
        if isinstance(parent.container, list):
            return (*parent.path, len(parent.container))
        if parent.key is _NO_KEY or parent.key is _BAD_KEY:
            # A refused or repeated key: what is wrong in its value is placed by its own
            # line and column, under the mapping's path.
            return parent.path
        return (*parent.path, parent.key)

    def _attach(self, frame: _Frame, value: Any, mark, nodes: int, alias: bool = False) -> None:
        container = frame.container
        if isinstance(container, list):
            self.positions[(*frame.path, len(container))] = self.position(mark.index)
            container.append(value)
            return
        if frame.key is _NO_KEY:
            # `value` is a key (an alias used as a key lands here too).
            if value is _BAD_KEY_VALUE:
                frame.key_ok = False
            elif alias and not isinstance(value, str):
                self.problem(mark, frame.path, "yaml.key", "a mapping key must be a string")
                frame.key_ok = False
            frame.key = value if frame.key_ok else _BAD_KEY
            if frame.key_ok:
                line, column = self.position(mark.index)
                if value in frame.seen:
                    self.problem(
                        mark,
                        (*frame.path, value),
                        "yaml.duplicate-key",
                        f"key {value!r} is already defined at line {frame.seen[value]} (Pulumi refuses duplicate keys)",
                    )
                    frame.key = _BAD_KEY
                else:
                    frame.seen[value] = line
                    self.positions[(*frame.path, value)] = (line, column)
            return
        if frame.key is not _BAD_KEY:
            container[frame.key] = value
        frame.key = _NO_KEY
        frame.key_ok = True

    def _check_collection_tag(self, event, path: tuple, is_map: bool) -> None:
        tag = event.tag
        if tag in (None, "!", f"{_CORE}{'map' if is_map else 'seq'}"):
            return
        self.problem(event.start_mark, path, "yaml.tag", f"unsupported YAML tag {tag_name(tag)}: stack config holds plain mappings, lists and scalars")

    def _scalar(self, event, path: tuple, *, as_key: bool) -> Any:
        text = event.value
        tag = event.tag
        plain = tag is None and bool(event.implicit[0])
        if tag not in (None, "!") and tag not in _SCALAR_TAGS:
            self.problem(event.start_mark, path, "yaml.tag", f"unsupported YAML tag {tag_name(tag)}: stack config holds plain mappings, lists and scalars")
            return text
        if not plain and tag in (None, "!", f"{_CORE}str"):
            return text
        want = tag[len(_CORE) :] if tag else None
        value = _resolve(text, want)
        if value is _INVALID:
            self.problem(event.start_mark, path, "yaml.tag", f"{_shown(text, path, repr)} is not a valid !!{want}")
            return text
        if as_key:
            if text == "<<" and plain:
                self.problem(event.start_mark, path, "yaml.merge", "merge keys (<<) are not supported in stack files: write the keys out")
                return text
            if not isinstance(value, str):
                self.problem(
                    event.start_mark,
                    path,
                    "yaml.key",
                    f"mapping key {text!r} is read as {_kind(value)}, not a string: quote it",
                )
                self.refused_key = value
                return _BAD_KEY_VALUE
            return value
        return self._check_number(value, text, event.start_mark, path)

    def _check_number(self, value: Any, text: str, mark, path: tuple) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        shown = _shown(text, path)
        if isinstance(value, int):
            outside = quantity.int64_problem(value, shown)
            if outside:
                self.problem(mark, path, "yaml.number", outside)
            elif _LEGACY_OCTAL.fullmatch(text.replace("_", "")):
                decimal = f"{value}" if shown == text else "its decimal value"
                self.problem(
                    mark, path, "yaml.number", f"{shown} is octal to Pulumi's YAML reader (= {decimal}): write {decimal}, or quote it"
                )
            return value
        if not math.isfinite(value):
            self.problem(mark, path, "yaml.number", f"{shown} is not a finite number")
        elif abs(value) >= EXACT_FLOAT:
            self.problem(mark, path, "yaml.number", f"{shown} is 2^53 or beyond, where a float is no longer exact")
        return value


class _Abort(Exception):
    """Stop reading: the problem is recorded and what follows would cost without telling more."""


_BAD_KEY = object()
_BAD_KEY_VALUE = object()
_INVALID = object()
_LEGACY_OCTAL = re.compile(r"[-+]?0[0-7]+", re.ASCII)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _wants_key(frame: _Frame) -> bool:
    return isinstance(frame.container, dict) and frame.key is _NO_KEY


def _resolve(text: str, want: str | None) -> Any:
    """A scalar as yaml.v2 resolves it (resolve.go), or as its explicit core tag asks."""
    if want in (None, "null") and text in _V2_NULLS:
        return None
    if want in (None, "bool") and text in _V2_BOOLS:
        return _V2_BOOLS[text]
    if want in (None, "float") and text in _V2_SPECIAL_FLOATS:
        return _V2_SPECIAL_FLOATS[text]
    compact = text.replace("_", "")
    if want in (None, "int", "float") and _GO_INT.fullmatch(compact):
        number = _go_int(compact)
        return float(number) if want == "float" else number
    if want in (None, "float") and _YAML_FLOAT.fullmatch(compact):
        number = float(compact)
        # Go's ParseFloat fails with ErrRange beyond float64, and yaml.v2 then keeps the text.
        return number if math.isfinite(number) or want == "float" else text
    if want is None or want == "str":
        return text
    return _INVALID


def _go_int(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    lower = digits.lower()
    base = 10
    if lower.startswith(("0x", "0o", "0b")):
        base, digits = {"x": 16, "o": 8, "b": 2}[lower[1]], digits[2:]
    elif len(digits) > 1 and digits.startswith("0"):
        base = 8
    # MAX_BYTES bounds the digits, but int() of thousands of them is slow (and refused beyond
    # 4,300 decimal ones): 70 significant digits in any base are outside int64 anyway.
    significant = digits.lstrip("0") or "0"
    if len(significant) > 70:
        return sign * 2**70
    return sign * int(significant, base)


def _shown(text: str, path: tuple, quote=str) -> str:
    """The scalar as a message quotes it; never the ciphertext of a `{secure: ...}` value."""
    return "the secure (encrypted) value" if "secure" in path else quote(text)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    return f"the number {value}"


def tag_name(tag: str) -> str:
    return f"!!{tag[len(_CORE):]}" if tag.startswith(_CORE) else tag


class _StackDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """PyYAML's dumper quotes what YAML 1.1 would read as another type; yaml.v2 reads more
    scalars as non-strings (y, n, 1e3), so those are quoted too. libyaml's emitter when PyYAML
    has it (the same text, ~4x faster: the tests write thousands of stack files)."""


def _represent_str(dumper: yaml.SafeDumper, value: str):
    style = "'" if _resolve(value, None) is not value else None
    return dumper.represent_scalar(f"{_CORE}str", value, style=style)


_StackDumper.add_representer(str, _represent_str)


def dump(data: Any) -> str:
    """YAML that Pulumi (yaml.v2) and this reader read back as `data` (for tools and tests that
    write stack files)."""
    return yaml.dump(data, Dumper=_StackDumper, sort_keys=False, allow_unicode=False)
