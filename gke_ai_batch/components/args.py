"""What every component does with its args and options, in one place: the type token it
registers, the options its children get, and the checks of args as data (unknown keys, whole
numbers from other languages, strings, project ids, Outputs where a plain value is needed) that
run before anything is registered.

No `from __future__ import annotations`: the components' annotations are read as objects by
Pulumi's component analyzer, and these helpers are typed alike."""

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, TypeVar, get_args, get_origin, get_type_hints, is_typeddict

import pulumi
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.errors import ARGS, NAMESPACE, NOT_AN_OUTPUT, ArgsError, at_arg, did_you_mean, field_path, join_path, located, located_problems
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.config.gcpnames import project_id_problem

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def type_token(component: type) -> str:
    """The token a component registers and the package's schema names: Pulumi's component
    analyzer puts every component in the index module under its class name
    (pulumi/provider/experimental/schema.py, generate_schema). The package is named as the
    project, whose stack config namespace NAMESPACE is."""
    return f"{NAMESPACE}:index:{component.__name__}"


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, **own: Any) -> pulumi.ResourceOptions:
    """A Google Cloud child's options. Pulumi passes only protect and providers from a parent to
    its children (pulumi/resource.py, Resource.__init__: "Infer protection from parent", "Infer
    providers ... from parent"); of the rest of the component's opts, the children need two:
    depends_on (they must wait for the project's APIs and the cluster as the component does) and
    retain_on_delete (meant for the cloud resources: a component has nothing to delete). `own`:
    the child's own options; a depends_on there adds to the component's."""
    after = [*depends_on_of(opts), *own.pop("depends_on", [])]
    retain = opts.retain_on_delete if opts is not None else None
    return pulumi.ResourceOptions(parent=parent, depends_on=after, retain_on_delete=retain, **own)


def opts_problems(opts: pulumi.ResourceOptions | None) -> list[Finding]:
    """Options a component cannot honour. ignore_changes names properties of the resource it is
    given to, and a component's args are never diffed (the engine diffs only custom resources),
    while Pulumi passes none of it to the children: it would ignore nothing, silently."""
    if opts is not None and opts.ignore_changes:
        return [at_arg(
            "opts.ignore_changes",
            "a component's children do not inherit it and its own args are never diffed, so it would ignore "
            "nothing; to ignore a property of its resources, use opts.transforms (Pulumi applies them to "
            "every child)",
        )]
    return []


def aliased(opts: pulumi.ResourceOptions | None, old: str) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=old)]))


def depends_on_of(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """What the component depends on: Pulumi's children do not wait for what their parent
    depends on, so the children that must (the release, the probe) get it themselves."""
    depends_on = opts.depends_on if opts is not None else None
    if depends_on is None:
        return []
    return list(depends_on) if isinstance(depends_on, (list, tuple)) else [depends_on]


def whole_numbers(value: Any) -> Any:
    """Whole-number floats as ints. A program in another language reaches the component through
    the package's wire format, where every number is a double (google.protobuf.Struct), and the
    SDK's input mapping hands them on as floats (pulumi/provider/experimental/component.py,
    map_input_properties); the args' integers (slices, max_nodes, gpu.count) are strict ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


def unknown_keys(args: Mapping[str, Any], spec: type, path: str) -> list[Finding]:
    """Keys a TypedDict does not declare (a TypedDict is not checked at run time): a misspelt or
    camelCase key would otherwise be dropped, and the check it feeds skipped."""
    known = sorted(spec.__required_keys__ | spec.__optional_keys__)
    return [
        at_arg(join_path(path, (key,)), f"unknown arg{did_you_mean(str(key), known)}; known: {', '.join(known)}")
        for key in args
        if key not in known
    ]


def not_strings(values: Mapping[str, Any], where: str, plain: tuple[str, ...], inputs: tuple[str, ...]) -> list[Finding]:
    """Values that must be strings (`plain`) or strings or Outputs (`inputs`) and are not: a
    number where a name or an email is meant would reach a resource as one."""
    found = []
    for key in (*plain, *inputs):
        value = values.get(key, "")
        if isinstance(value, str) or (key in inputs and isinstance(value, pulumi.Output)):
            continue
        kind = "a string" if key in plain else "a string or an Output"
        found.append(at_arg(f"{where}.{key}", f"must be {kind}, not {type(value).__name__}"))
    return found


def project_problems(values: Mapping[str, Any], where: str, outputs: bool) -> list[Finding]:
    """A `project` arg that GCP would refuse: not a string (or an Output, where `outputs`: it only
    passes through), or a string that is not a project id (the rule of a stack's gcp:project).
    An Output where a plain project is needed is the caller's to say, with its other Outputs."""
    if "project" not in values:
        return []
    project = values["project"]
    if project is None:
        return [at_arg(f"{where}.project", "required")]
    if isinstance(project, str):
        problem = project_id_problem(project)
        return [at_arg(f"{where}.project", problem)] if problem else []
    if isinstance(project, pulumi.Output):
        return []
    return [at_arg(f"{where}.project", f"must be {'a string or an Output' if outputs else 'a string'}, not {type(project).__name__}")]


def outputs_in(args: Mapping[str, Any]) -> list[Finding]:
    # Every arg decides what is registered (a chart version, the values' text, which objects
    # the probe needs) and is checked against Kueue's rules on construction.
    return [
        at_arg(f"args.{key}", NOT_AN_OUTPUT)
        for key, value in args.items()
        if isinstance(value, pulumi.Output)
    ]


def declared_args(
    component: str, name: str, args: Any, spec: type, loose: Mapping[str, tuple[type, type[BaseModel]]] = {}, inputs: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[Finding]]:
    """The args as their TypedDict `spec` declares them, and the problems found on the way:
    every key it does not declare, at every level (the mappings of its nested TypedDicts, in
    lists too), refused at its arg path and left out, so that the config model judges the rest
    and every problem is said at once; an Output where a plain value is needed (all args but
    `inputs`); a required arg missing. ArgsError at once if `args` is not a mapping or misses a
    required arg (the rest would be judged without it). A camelCase key is unknown: a Python
    caller writes the args' names, and the component package renames a typed arg's keys.

    `loose`: args typed Any (a mapping or a boolean: the component analyzer takes no unions),
    each with the TypedDict and the config model of its mapping form. Through the component
    package such a mapping arrives as a YAML or TypeScript program wrote it, camelCase: only typed
    args are renamed (pulumi/provider/experimental/component.py, map_input_properties). Its keys
    that are the model's aliases (made by the models' one alias generator) are read as the
    fields they alias; any other key is judged as written."""
    where = f"{component} {name}"
    if not isinstance(args, dict):
        raise ArgsError(where, [at_arg("args", f"must be a mapping of {spec.__name__}, not {type(args).__name__}")])
    args = whole_numbers(args)
    for arg, (_, model) in loose.items():
        if isinstance(args.get(arg), dict):
            names = {f.alias: n for n, f in model.model_fields.items() if f.alias}
            args[arg] = {names.get(k, k) if isinstance(k, str) else k: v for k, v in args[arg].items()}
    problems: list[Finding] = []
    hints = {**get_type_hints(spec), **{arg: inner for arg, (inner, _) in loose.items()}}
    kept = _declared(args, spec, hints, ("args",), problems)
    problems += outputs_in({k: v for k, v in kept.items() if k not in inputs})
    kept = {k: v for k, v in kept.items() if k in inputs or not isinstance(v, pulumi.Output)}
    missing = [at_arg(f"args.{k}", "required") for k in sorted(spec.__required_keys__) if k not in kept]
    if missing:
        raise ArgsError(where, problems + missing)
    return kept, problems


def _declared(value: dict, spec: type, hints: Mapping[str, Any], at: tuple, problems: list[Finding]) -> dict:
    problems += unknown_keys(value, spec, join_path(at[0], at[1:]))
    return {key: _declared_in(item, hints[key], (*at, key), problems) for key, item in value.items() if key in hints}


def _declared_in(value: Any, hint: Any, at: tuple, problems: list[Finding]) -> Any:
    if is_typeddict(hint) and isinstance(value, dict):
        return _declared(value, hint, get_type_hints(hint), at, problems)
    if get_origin(hint) is list and isinstance(value, list):
        (inner,) = get_args(hint)
        return [_declared_in(v, inner, (*at, i), problems) for i, v in enumerate(value)]
    return value


Place = Callable[[tuple], "str | None"]
"""A key path below an entry, by its fields' names -> the arg path it came from, or None for a
problem the caller does not judge there."""


def validated(model: type[M], data: Any, at: tuple = (), *, place: Place | None = None) -> tuple[M | None, list[Finding]]:
    """`data` validated by `model` by field name, as a Python caller writes args (a camelCase key
    is unknown here: the model's extra=forbid names it as written and offers the field names),
    or None; every problem at its arg path: args.`at` and the fields' names (config/errors.py,
    located_problems by_name; a label's key as written), or where `place` puts it."""
    try:
        return model.model_validate(data, by_name=True, by_alias=False), []
    except ValidationError as exc:
        return None, placed(located_problems(exc, model, by_name=True), place or (lambda loc: join_path("args", (*at, *loc))))


def placed(problems: Iterable[tuple[tuple, str]], place: Place) -> list[Finding]:
    """(key path, message) pairs of one entry as args Findings at `place(path)`, those it drops left out."""
    return [at_arg(path, message) for loc, message in problems if (path := place(loc)) is not None]


def entry_rules(model: type[BaseModel], found: Iterable[RuleError], place: Place) -> list[Finding]:
    """A stack rule's problems about one entry (paths as the stack spells its keys) at their arg
    paths: the entry's field names (config/errors.py, field_path), then `place`."""
    return placed(((field_path(model, e.path), e.message) for e in found), place)


@functools.cache
def _list_of(cap: int) -> TypeAdapter:
    return TypeAdapter(Annotated[list[Any], Field(max_length=cap)], config=ConfigDict(strict=True))


def entries(model: type[M], value: Any, cap: int, at: str) -> tuple[list[M] | None, list[Finding]]:
    """A list arg validated entry by entry, each by `model` as its stack key's entries are
    (validated), at most `cap` of them as the stack allows; or None and every problem."""
    try:
        _list_of(cap).validate_python(value)
    except ValidationError as exc:
        # The list's own problem (not a list, too long): pydantic's words, as the stack file's.
        return None, located(exc, model, lambda loc: join_path("args", (at, *loc)), ARGS)
    found: list[M] = []
    problems: list[Finding] = []
    for i, entry in enumerate(value):
        valid, wrong = validated(model, entry, (at, i))
        problems += wrong
        if valid is not None:
            found.append(valid)
    return (None if problems else found), problems


def accepted(component: str, name: str, value: T | None, problems: list[Finding]) -> T:
    """`value`, unless a problem was found (or no value made): then ArgsError with every one."""
    if problems or value is None:
        raise ArgsError(f"{component} {name}", problems)
    return value


def rule_problems(found: Iterable[RuleError], keys: Mapping[str, tuple[tuple, type[BaseModel]]]) -> list[Finding]:
    """The stack's rules' problems, whose paths start at a stack key (kueue, priorities), at
    their arg paths: `keys` maps each stack key to its arg path and the config model below it;
    the index of a list key's entry is kept, and the rest named by the fields' names."""
    out = []
    for e in found:
        head, rest = e.path[0], e.path[1:]
        at, model = keys[str(head)]
        index = rest[:1] if rest and isinstance(rest[0], int) else ()
        out.append(at_arg(join_path("args", (*at, *index, *field_path(model, rest[len(index):]))), e.message))
    return out
