"""Turn pydantic's validation errors into one message a person can act on: every problem on
its own line, each naming the stack-file key path (gke-ai-batch:nodePools[2].tpu.topology)
and what is allowed there."""

from __future__ import annotations

import difflib
import math
import re
import types
import typing
from typing import Any, Callable, Iterable, Union

from pulumi import Output, RunError
from pydantic import BaseModel, ValidationError

from gke_ai_batch.config.base import RuleError, RuleErrors
from gke_ai_batch.domain.findings import CONFIG, Finding

NAMESPACE = "gke-ai-batch"
ARGS = "args"
"""The rule id of a component arg refused (ArgsError)."""
_IDENT_RX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


NOT_AN_OUTPUT = "must be a plain value known when the component is built, not an Output"
"""What a component says of an Output where a value must be known when it is built (it decides
what is registered, or is checked against GKE's rules)."""

def did_you_mean(word: str, choices, cutoff: float = 0.6) -> str:
    """` (did you mean 'x'?)` for the choice closest to a misspelt `word`, or "" if none is close."""
    hint = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def at_key(path: str, message: str) -> Finding:
    """A stack-config problem at its key path (gke-ai-batch:nodePools[2].tpu): rule "config"."""
    return Finding.at(path, message, CONFIG)


def at_arg(path: str, message: str) -> Finding:
    """A component's arg refused at its arg path (args.topology): rule "args"."""
    return Finding.at(path, message, ARGS)


class ConfigError(RunError):
    """The stack config is invalid. `findings` holds a Finding per problem (rule "config",
    at_key, unless the finding names its own, as the admission model's do); `problems` the
    same as a read-only view of (key path, message) pairs. A RunError, so `pulumi up` prints
    the message alone, without a traceback."""

    def __init__(self, problems: Iterable[Finding], source: str | None = None):
        self.findings = list(problems)
        self.source = source
        super().__init__(self.render())

    @property
    def problems(self) -> list[tuple[str, str]]:
        """(path, message) pairs: a read-only view of `findings`, as callers have always read them."""
        return [(f.where, f.message) for f in self.findings]

    def render(self) -> str:
        where = f"{self.source}: " if self.source else ""
        if len(self.findings) == 1:
            [f] = self.findings
            return f"{where}invalid stack config: {f.where}: {f.message}"
        lines = [f"{where}invalid stack config ({len(self.findings)} problems):"]
        lines += [f"  {f.where}: {f.message}" for f in self.findings]
        return "\n".join(lines)


class ArgsError(RunError):
    """A component's args break the rules a stack file's keys would: every problem at once,
    each at its arg path (args.topology), with the stack config's message. `findings` as
    ConfigError's (rule "args", at_arg), `problems` a read-only view of them as (arg path,
    message) pairs. A RunError, so `pulumi up` prints the message alone."""

    def __init__(self, component: str, problems: Iterable[Finding]):
        self.component = component
        self.findings = list(problems)
        super().__init__("\n".join(f"{component}: {f.where}: {f.message}" for f in self.findings))

    @property
    def problems(self) -> list[tuple[str, str]]:
        """(path, message) pairs: a read-only view of `findings`, as callers have always read them."""
        return [(f.where, f.message) for f in self.findings]


def format_path(loc: tuple[str | int, ...]) -> str:
    if not loc:
        return NAMESPACE
    head, *rest = loc
    return join_path(f"{NAMESPACE}:{head}", rest)


def join_path(key: str, rest) -> str:
    """A stack-file key path: the config key, then .name, [index] or ["odd key"] per level."""
    out = key
    for part in rest:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        elif not isinstance(part, str):
            # A mapping key that is no string (a Python caller's None, True or tuple): as Python writes it.
            out += f"[{part!r}]"
        elif _IDENT_RX.fullmatch(part):
            out += f".{part}"
        else:
            out += f'["{part}"]'
    return out


def from_validation_error(exc: ValidationError, root: type[BaseModel]) -> ConfigError:
    return ConfigError(located(exc, root, format_path, CONFIG))


def located(
    exc: ValidationError, root: type[BaseModel], place: Callable[[tuple], str], rule: str, by_name: bool = False
) -> list[Finding]:
    """Each problem as the Finding of `rule` at `place(key path below root)`: the stack file's
    key path (format_path) or a component's arg path (join_path("args", ...))."""
    return [Finding.at(place(loc), message, rule) for loc, message in located_problems(exc, root, by_name)]


def located_problems(exc: ValidationError, root: type[BaseModel], by_name: bool = False) -> list[tuple[tuple, str]]:
    """Each problem as (key path below `root`, message): the path still a tuple of keys, not
    yet placed, for callers that place it their own way (`located`; a component's pool entry,
    gke_ai_batch/components/nodepools.py; the stack's every_problem).
    `by_name`: `root` was validated by field name (a component's args: by_name=True,
    by_alias=False), so paths are field names (field_path) and an unknown key is offered the
    field names, while the unknown key itself is named as written (a camelCase key is unknown
    there, not the field it spells)."""
    problems: list[tuple[tuple, str]] = []
    located: list[tuple[tuple, dict]] = []
    for err in _expanded(exc.errors(include_url=False)):
        loc = _clean_loc(root, tuple(err["loc"]))
        rule = (err.get("ctx") or {}).get("error")
        if isinstance(rule, RuleError):
            loc = loc + rule.path
        if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc = loc + ("kind",)
        if by_name:
            extra = err["type"] == "extra_forbidden"
            loc = field_path(root, loc[:-1]) + loc[-1:] if extra else field_path(root, loc)
        located.append((loc, err))
    by_path: dict[tuple, list[dict]] = {}
    for loc, err in located:
        # A value tried against a union (a name or a mapping, say) fails the members it does
        # not resemble at once; if another member got further, that is the real error.
        if err["type"] in _TYPE_WORDS and any(len(other) > len(loc) and other[: len(loc)] == loc for other, _ in located):
            continue
        by_path.setdefault(loc, []).append(err)
    for loc, errs in by_path.items():
        problems.append((loc, _message(root, loc, errs, by_name)))
    return problems


def _expanded(errors: list[dict]) -> list[dict]:
    """One error per broken rule: a validator's RuleErrors becomes one entry per RuleError."""
    out: list[dict] = []
    for err in errors:
        rules = (err.get("ctx") or {}).get("error")
        if isinstance(rules, RuleErrors):
            out += [{**err, "ctx": {**err["ctx"], "error": rule}} for rule in rules.errors]
        else:
            out.append(err)
    return out


def _message(root: type[BaseModel], loc: tuple, errs: list[dict], by_name: bool = False) -> str:
    # A value tried against a union yields one error per member; the custom ones say most.
    custom = [e for e in errs if e["type"] == "value_error"]
    if not custom and len(errs) > 1 and all(e["type"] in _TYPE_WORDS for e in errs):
        expected = []
        for e in errs:
            if _TYPE_WORDS[e["type"]] not in expected:
                expected.append(_TYPE_WORDS[e["type"]])
        return f"expected {' or '.join(expected)}, got {errs[0]['input']!r}"
    chosen = custom or errs
    msgs: list[str] = []
    for err in chosen:
        msg = _describe(root, loc, err, by_name)
        if msg not in msgs:
            msgs.append(msg)
    return "; or ".join(msgs) if len(msgs) > 1 and not custom else "; ".join(msgs)


_TYPE_WORDS = {
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "float_type": "a number",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "literal_error": "one of the allowed values",
}


def _describe(root: type[BaseModel], loc: tuple, err: dict, by_name: bool = False) -> str:
    kind = err["type"]
    if isinstance(err.get("input"), Output):
        # Nested in args a model reads (a label, a topology level): said as at the top, never
        # with the Output's repr, whose address changes from run to run.
        return NOT_AN_OUTPUT
    if kind == "value_error":
        rule = (err.get("ctx") or {}).get("error")
        return rule.message if isinstance(rule, RuleError) else str(rule)
    if kind == "extra_forbidden":
        allowed = _allowed_keys(root, tuple(err["loc"][:-1]), by_name)
        key = str(loc[-1])
        model = _model_at(root, tuple(err["loc"][:-1]))
        removed = getattr(model, "REMOVED_KEYS", {}).get(key)
        if removed:
            return f"unknown key {key!r}: {removed}"
        text = f"unknown key {key!r}{did_you_mean(key, allowed)}"
        return f"{text}; allowed: {', '.join(allowed)}" if allowed else text
    if kind == "missing":
        return "required"
    if kind == "union_tag_invalid":
        return f"unknown kind {err['ctx']['tag']!r}; allowed: {err['ctx']['expected_tags']}"
    if kind == "union_tag_not_found":
        return "required: kind (one of 'jobset', 'job', 'provisioningRequest')"
    msg = err["msg"]
    value = err.get("input")
    if kind.endswith("_type") or kind.startswith(("int_", "bool_", "float_", "string_")):
        msg += f", got {value!r}"
        if kind in ("int_type", "float_type", "bool_type") and isinstance(value, str) and _unquoted(value, kind):
            # YAML reads "4" and "true" as strings; the schema never converts them.
            msg += f': remove the quotes (write {value.strip()}, not "{value}")'
    if kind == "literal_error" and isinstance(value, str):
        choices = re.findall(r"'((?:[^'\\]|\\.)*)'", str((err.get("ctx") or {}).get("expected", "")))
        same = [c for c in choices if c.lower() == value.lower()]
        msg += f", got {value!r}" + (f" (did you mean {same[0]!r}? values are case-sensitive)" if same else did_you_mean(value, choices))
    return msg


def _unquoted(text: str, kind: str) -> bool:
    """Whether `text` would be the type asked for, written without quotes."""
    text = text.strip()
    if kind == "bool_type":
        return text in ("true", "false")
    try:
        number = float(text) if kind == "float_type" else int(text)
    except ValueError:
        return False
    return math.isfinite(number)


def _clean_loc(root: type[BaseModel], loc: tuple, names: bool = False) -> tuple:
    """Drop the parts pydantic adds for unions and discriminators, which are not keys; `names`:
    each model's key as its field's name rather than as given (field_path)."""
    out: list = []
    annotation: Any = root
    for part in loc:
        annotation = _unwrap(annotation)
        if names and isinstance(part, str):
            models = [m for m in _members(annotation) if isinstance(m, type) and issubclass(m, BaseModel)]
            part = next((n for m in models for n, f in m.model_fields.items() if part in (f.alias, n)), part)
        step = _step(annotation, part)
        if step is _SKIP:
            continue
        if isinstance(step, _Narrow):
            annotation = step.member
            continue
        out.append(part)
        annotation = step
    return tuple(out)


_SKIP = object()


class _Narrow:
    """A discriminator tag in a loc: not a key, but it tells which union member applies."""

    def __init__(self, member: Any):
        self.member = member


def _tagged_member(members: list[Any], tag: str) -> Any:
    for m in members:
        if isinstance(m, type) and issubclass(m, BaseModel) and "kind" in m.model_fields:
            if tag in typing.get_args(m.model_fields["kind"].annotation):
                return m
    return None


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _members(annotation: Any) -> list[Any]:
    """A union's members, nested unions flattened, None left out (Optional is no choice)."""
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return [m for a in typing.get_args(annotation) if a is not type(None) for m in _members(a)]
    return [annotation]


def _step(annotation: Any, part: Any) -> Any:
    """The annotation one loc part further down, or _SKIP if the part names a union member."""
    members = _members(annotation)
    if part == "[key]":
        return _SKIP  # pydantic's mark of a mapping's key (not its value) that failed: the key is the path
    if isinstance(part, str):
        tagged = _tagged_member(members, part)
        if tagged is not None:
            return _Narrow(tagged)
        models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        if len(members) > 1:
            # pydantic labels a union member's errors with the member: a model's class name
            # narrows to that model; 'int', 'str', 'function-after[...]' are not keys.
            named = next((m for m in models if m.__name__ == part), None)
            if named is not None:
                return _Narrow(named)
            if part in _SCALAR_LABELS or "[" in part:
                return _SKIP
        for m in models:
            for name, field in m.model_fields.items():
                if part in (field.alias, name):
                    return field.annotation
        for m in members:
            if typing.get_origin(m) is dict:
                return typing.get_args(m)[1]
        return None  # a key the model does not know (an extra key)
    for m in members:
        if typing.get_origin(m) is list:
            return typing.get_args(m)[0]
    return None


_SCALAR_LABELS = {"int", "str", "bool", "float", "none", "list", "dict"}


def field_path(root: type[BaseModel], loc: tuple) -> tuple:
    """A key path below `root` as its fields' names: the snake_case arg path a Python caller
    wrote, where the stack file spells the same key by its alias (camelCase, made by the
    models' alias generator). Keys of a mapping field (labels) and list indexes stay as given.
    With `located_problems`, the one way a component names a stack rule's key as its arg."""
    return _clean_loc(root, loc, names=True)


def _allowed_keys(root: type[BaseModel], loc: tuple, by_name: bool = False) -> list[str]:
    model = _model_at(root, loc)
    return [n if by_name else f.alias or n for n, f in model.model_fields.items()] if model is not None else []


def _model_at(root: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    """The model whose keys live at `loc`, or None."""
    annotation: Any = root
    for part in loc:
        step = _step(_unwrap(annotation), part)
        if step is _SKIP:
            continue
        if isinstance(step, _Narrow):
            step = step.member
        if step is None:
            return None
        annotation = step
    for m in _members(_unwrap(annotation)):
        if isinstance(m, type) and issubclass(m, BaseModel):
            return m
    return None
