"""What every component does with its args and options, in one place: the type token it
registers, the options its children get, and the checks of args as data (unknown keys, whole
numbers from other languages, strings, project ids, Outputs where a plain value is needed) that
run before anything is registered.

No `from __future__ import annotations`: the components' annotations are read as objects by
Pulumi's component analyzer, and these helpers are typed alike."""

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pydantic.alias_generators import to_camel, to_snake

from gke_ai_batch.config.errors import NAMESPACE, ArgsError, did_you_mean, join_path
from gke_ai_batch.config.gcpnames import project_id_problem
from gke_ai_batch.config.standalone import batch_key


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


def opts_problems(opts: pulumi.ResourceOptions | None) -> list[tuple[str, str]]:
    """Options a component cannot honour. ignore_changes names properties of the resource it is
    given to, and a component's args are never diffed (the engine diffs only custom resources),
    while Pulumi passes none of it to the children: it would ignore nothing, silently."""
    if opts is not None and opts.ignore_changes:
        return [(
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


def unknown_keys(args: Mapping[str, Any], spec: type, path: str) -> list[tuple[str, str]]:
    """Keys a TypedDict does not declare (a TypedDict is not checked at run time): a misspelt or
    camelCase key would otherwise be dropped, and the check it feeds skipped."""
    known = sorted(spec.__required_keys__ | spec.__optional_keys__)
    return [
        (f"{path}.{key}", f"unknown arg{did_you_mean(str(key), known)}; known: {', '.join(known)}")
        for key in args
        if key not in known
    ]


def not_strings(values: Mapping[str, Any], where: str, plain: tuple[str, ...], inputs: tuple[str, ...]) -> list[tuple[str, str]]:
    """Values that must be strings (`plain`) or strings or Outputs (`inputs`) and are not: a
    number where a name or an email is meant would reach a resource as one."""
    found = []
    for key in (*plain, *inputs):
        value = values.get(key, "")
        if isinstance(value, str) or (key in inputs and isinstance(value, pulumi.Output)):
            continue
        kind = "a string" if key in plain else "a string or an Output"
        found.append((f"{where}.{key}", f"must be {kind}, not {type(value).__name__}"))
    return found


def project_problems(values: Mapping[str, Any], where: str, outputs: bool) -> list[tuple[str, str]]:
    """A `project` arg that GCP would refuse: not a string (or an Output, where `outputs`: it only
    passes through), or a string that is not a project id (the rule of a stack's gcp:project).
    An Output where a plain project is needed is the caller's to say, with its other Outputs."""
    if "project" not in values:
        return []
    project = values["project"]
    if project is None:
        return [(f"{where}.project", "required")]
    if isinstance(project, str):
        problem = project_id_problem(project)
        return [(f"{where}.project", problem)] if problem else []
    if isinstance(project, pulumi.Output):
        return []
    return [(f"{where}.project", f"must be {'a string or an Output' if outputs else 'a string'}, not {type(project).__name__}")]


def outputs_in(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    # Every arg decides what is registered (a chart version, the values' text, which objects
    # the probe needs) and is checked against Kueue's rules on construction.
    return [
        (f"args.{key}", "must be a plain value known when the component is built, not an Output")
        for key, value in args.items()
        if isinstance(value, pulumi.Output)
    ]


def snake(parts: Sequence) -> tuple:
    return tuple(to_snake(p) if isinstance(p, str) else p for p in parts)


def camel(value: Any) -> Any:
    """Args (snake_case) as the stack key spells them (camelCase), at every level: no Kueue
    arg holds a mapping whose keys are the user's own."""
    if isinstance(value, dict):
        return {to_camel(k) if isinstance(k, str) else k: camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def validated_key(component: str, name: str, key: str, args: Any, spec: type, nested: dict[str, type]) -> Any:
    """The args as their stack key, validated; ArgsError with every problem at its arg path.
    `nested`: args whose mapping values are TypedDicts of their own, checked for unknown keys."""
    where = f"{component} {name}"
    if not isinstance(args, dict):
        raise ArgsError(where, [("args", f"must be a mapping of {spec.__name__}, not {type(args).__name__}")])
    args = whole_numbers(args)
    problems = unknown_keys(args, spec, "args") + outputs_in(args)
    known = spec.__required_keys__ | spec.__optional_keys__
    args = {k: v for k, v in args.items() if k in known and not isinstance(v, pulumi.Output)}
    for arg, inner in nested.items():
        if isinstance(args.get(arg), dict):
            # Through the package, an arg typed Any arrives as the program wrote it (camelCase
            # from YAML or TypeScript): only typed args are renamed (component.py,
            # map_input_properties).
            args[arg] = {to_snake(k) if isinstance(k, str) else k: v for k, v in args[arg].items()}
            problems += unknown_keys(args[arg], inner, f"args.{arg}")
            args[arg] = {k: v for k, v in args[arg].items() if k in inner.__required_keys__ | inner.__optional_keys__}
    missing = [(f"args.{k}", "required") for k in sorted(spec.__required_keys__) if k not in args]
    if missing:
        raise ArgsError(where, problems + missing)
    # The stack key's value: the args themselves, or the one arg that holds it (a list).
    whole = key not in known
    multi_kueue = args.pop("multi_kueue", None)
    data: dict[str, Any] = {key: camel(args if whole else args[key])}
    if multi_kueue is not None:
        data["multiKueue"] = camel(multi_kueue)
    model, found = batch_key(key, data)
    for loc, msg in found:
        head, rest = (loc[0], loc[1:]) if loc else (key, ())
        at = "args" if head == key and whole else f"args.{to_snake(head)}"
        problems.append((join_path(at, snake(rest)), msg))
    if problems:
        raise ArgsError(where, problems)
    return model
