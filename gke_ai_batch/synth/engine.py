"""A recording engine: Pulumi's mock monitor, plus a record of every registration as the
engine would receive it (type, name, parent, dependencies, camelCase inputs, options).

Registrations run inline on the event loop rather than on the SDK's thread pool, so their
order depends only on the program: two runs of the same stack record the same sequence."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import gc
import json
import logging
import math
import os
import pkgutil
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import mocks
from pulumi import _types
from pulumi.output import Unknown
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gke_ai_batch.domain import urns

from . import leanrpc
from .diagnostics import Diagnostic

# The SDK's internals this file relies on (MockMonitor, _get_stack_trace, run_pulumi_func,
# _sync_await, the proto messages, these signatures, Output.future) are pinned with pulumi in
# requirements.txt and checked, for that version, by tests/test_pulumi_internals.py.

# Values' wire signatures (pulumi.runtime.rpc: _special_secret_sig, _special_resource_sig,
# _special_sig_key, UNKNOWN).
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

SECRET_MASK = "[secret]"
"""What synth writes for each value of a Pulumi secret: the value never leaves the engine."""
SECRET_DATA_MASK = base64.b64encode(SECRET_MASK.encode()).decode()
"""The mask of a Kubernetes Secret's `data` value, which the API server decodes as base64
(core/v1 Secret.data: map[string][]byte): the bytes "[secret]", so the Secret stays valid."""
_KUBERNETES_SECRET = "kubernetes:core/v1:Secret"


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    parent: str | None
    dependencies: list[str]
    inputs: dict[str, Any]
    options: dict[str, Any]
    outputs: dict[str, Any] | None = None
    """What a component registered as its outputs (register_outputs), which a stack policy reads
    as its properties; None for a custom resource, or a component that registered none. Not in
    resources.json, which lists what the program asks for."""

    def to_json(self) -> dict[str, Any]:
        out = {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "dependencies": self.dependencies,
            "inputs": self.inputs,
        }
        if self.options:
            out["options"] = self.options
        return out


@dataclass
class Recording:
    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    """What the program's entry function returned (the stack program's ProgramResult); None
    for a program run as a script."""


def plain(value: Any) -> Any:
    """protobuf Struct JSON -> plain JSON: whole floats become ints, secrets are masked,
    resource references become their URN."""
    if isinstance(value, dict):
        sig = value.get(_SIG_KEY)
        if sig == _SECRET_SIG:
            return masked(plain(value["value"])) if "value" in value else SECRET_MASK
        if sig == _RESOURCE_SIG:
            return value.get("urn")
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == _UNKNOWN:
        return "[unknown]"
    return value


def masked(value: Any) -> Any:
    """A secret's value in its shape: a mapping keeps its keys and a list its length, so that
    what holds it stays the object it is (a Secret's `data` a mapping of keys), and every
    value in it is masked."""
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return SECRET_MASK


def is_masked(value: Any) -> bool:
    """Whether `value` is a masked secret: every value in it a mask, and at least one."""
    if isinstance(value, dict):
        return bool(value) and all(is_masked(v) for v in value.values())
    if isinstance(value, list):
        return bool(value) and all(is_masked(v) for v in value)
    return value in (SECRET_MASK, SECRET_DATA_MASK)


def _secret_data_masked(type_: str, inputs: dict[str, Any]) -> dict[str, Any]:
    data = inputs.get("data")
    if type_ != _KUBERNETES_SECRET or not isinstance(data, dict):
        return inputs
    return {**inputs, "data": {k: SECRET_DATA_MASK if v == SECRET_MASK else v for k, v in data.items()}}


def _struct_to_plain(struct: struct_pb2.Struct) -> Any:
    """plain(json_format.MessageToDict(struct)) in one pass over the message, without the
    JSON printer's per-field descriptor lookups (a third of the monitor's time at scale)."""
    fields = struct.fields
    if _SIG_KEY in fields:
        sig = fields[_SIG_KEY]
        if sig.WhichOneof("kind") == "string_value":
            if sig.string_value == _SECRET_SIG:
                return masked(_value_to_plain(fields["value"])) if "value" in fields else SECRET_MASK
            if sig.string_value == _RESOURCE_SIG:
                return json_format.MessageToDict(fields["urn"]) if "urn" in fields else None
    return {k: _value_to_plain(fields[k]) for k in fields}


def _value_to_plain(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        text = value.string_value
        return "[unknown]" if text == _UNKNOWN else text
    if kind == "struct_value":
        return _struct_to_plain(value.struct_value)
    if kind == "list_value":
        return [_value_to_plain(v) for v in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        if number.is_integer():
            return int(number)
        if not math.isfinite(number):
            raise ValueError(f"Fail to serialize {number} for Value.number_value")
        return number
    if kind == "bool_value":
        return value.bool_value
    return None


class OfflineUnsupported(Exception):
    """The program constructs a resource whose values only the real engine can give: a
    StackReference reads another stack's outputs from the Pulumi backend, which synth has not.
    Raised in the resource's constructor, so the program's line is on the traceback."""


# pulumi/pulumi sdk/python/lib/pulumi/stack_reference.py: StackReference is a read of this type,
# whose `outputs` the engine fills from the referenced stack's checkpoint. The mock monitor's
# ReadResource has none to give (its `outputs` is None, so get_output fails in the SDK).
STACK_REFERENCE = "pulumi:pulumi:StackReference"


def _refuse_offline(args: pulumi.ResourceTransformationArgs) -> None:
    if args.type_ == STACK_REFERENCE:
        raise OfflineUnsupported(
            f"StackReference {args.name!r}: synth renders offline and cannot read another stack's outputs; "
            "give the values this program needs as config keys of its stack file instead")
    return None


class DuplicateUrnError(Exception):
    """Two resources of the program share a URN; Pulumi would refuse the second."""


class RecordingMonitor(mocks.MockMonitor):
    def __init__(self, outputs_for: Callable[[str, str, dict[str, Any]], dict[str, Any]]):
        super().__init__(_NoMocks())
        self.recording = Recording()
        self._outputs_for = outputs_for
        self._urns: set[str] = set()
        self._registered: dict[str, Registration] = {}

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # As the engine builds URNs: the parent's whole qualified type chain, without the root
        # stack. (The SDK's mock keeps only the parent's last type and includes the stack, so
        # its URNs would not match a real deployment's, and neither would a committed URN list.)
        qualified = type_
        if parent:
            parent_type = urns.parse(parent).qualified_type
            if parent_type != "pulumi:pulumi:Stack":
                qualified = f"{parent_type}{urns.TYPE_DELIMITER}{type_}"
        return urns.make(pulumi.get_stack(), pulumi.get_project(), qualified, name)

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        if urn in self._urns:
            # The engine refuses a second registration of a URN ("Duplicate resource URN",
            # pulumi/pulumi pkg/diag/errors.go GetDuplicateResourceURNError): a program that
            # did it would fail at `pulumi up`, so its recording must not succeed either.
            raise DuplicateUrnError(f"Duplicate resource URN '{urn}'; try giving it a unique name")
        self._urns.add(urn)
        inputs = _secret_data_masked(request.type, _struct_to_plain(request.object))
        options: dict[str, Any] = {}
        if request.protect:
            options["protect"] = True
        if request.deleteBeforeReplace:
            options["deleteBeforeReplace"] = True
        if request.retainOnDelete:
            options["retainOnDelete"] = True
        if list(request.replaceOnChanges):
            options["replaceOnChanges"] = sorted(request.replaceOnChanges)
        if list(request.ignoreChanges):
            options["ignoreChanges"] = sorted(request.ignoreChanges)
        if request.provider:
            options["provider"] = urns.provider_urn(request.provider)
        aliases = _program_aliases(request)
        if aliases:
            options["aliases"] = aliases
        registration = Registration(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            dependencies=sorted(set(request.dependencies)),
            inputs=inputs,
            options=options,
        )
        self.recording.resources.append(registration)
        self._registered[urn] = registration
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        state = struct_pb2.Struct()
        state.CopyFrom(request.object)
        extra = self._outputs_for(request.type, request.name, inputs)
        if extra:
            state.update(extra)
        resource_id = f"{request.name}-id" if request.custom else ""
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, resource_id, inputs)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=resource_id, object=state)

    def RegisterResourceOutputs(self, request):
        # A component's outputs replace its state's, as the engine does (pulumi/pulumi
        # pkg/resource/deploy/step_executor.go, ExecuteRegisterResourceOutputs): what a stack
        # policy reads as a component's properties. The root stack's are the program's exports
        # (Recording.outputs).
        registration = self._registered.get(request.urn)
        if registration is not None and registration.type != "pulumi:pulumi:Stack":
            registration.outputs = _struct_to_plain(request.outputs)
        return super().RegisterResourceOutputs(request)



def _program_aliases(request) -> list[Any]:
    """The aliases the program set on a resource, as the SDK sends them (an alias spec, or a
    URN). A provider SDK's resource class adds type-only aliases for its own renamed types
    (pulumi_gcp serviceaccount/account.py: alias_opts, Alias(type_="gcp:serviceAccount/account:Account")),
    the same on every render and nothing the program chose, so a custom resource's type-only
    aliases are left out; a component's are the program's."""
    out: list[Any] = []
    for alias in request.aliases:
        if alias.urn:
            out.append(alias.urn)
            continue
        spec = alias.spec
        fields = {k: v for k, v in (("name", spec.name), ("type", spec.type), ("stack", spec.stack),
                                    ("project", spec.project), ("parentUrn", spec.parentUrn)) if v}
        if spec.noParent:
            fields["noParent"] = True
        if request.custom and set(fields) == {"type"}:
            continue
        out.append(fields)
    return out


# pulumi_kubernetes yaml/yaml.py (_invoke_yaml_decode_async): the v1 ConfigFile and ConfigGroup
# hand their YAML to the provider's invoke of this token and register one resource per object it
# returns. Without an answer they registered nothing: the objects were missing from every file.
YAML_DECODE = "kubernetes:yaml:decode"


class YamlRefused(Exception):
    """The YAML a program hands pulumi_kubernetes to decode is one its provider refuses (go-yaml's
    limits, synth/yamlread.py): the program's input, refused (exit 2) naming the file it came
    from (yaml_source) with the problem's line in it."""

    def __init__(self, problem: Diagnostic, text: str):
        self.rule, self.line, self.text = problem.rule, problem.line, text
        super().__init__(problem.message)


def yaml_source(root: Path, text: str, limit: int = 2000) -> Path | None:
    """The file under `root` (a program's folder) whose text is `text`: what yaml.ConfigFile or
    ConfigGroup read and handed to the provider, which gets the text only. None for a string the
    program built (`yaml=[...]`); at most `limit` files are looked at, none larger than `text`."""
    size = len(text.encode())
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        for name in sorted(files):
            seen += 1
            if seen > limit:
                return None
            path = Path(folder, name)
            try:
                if not path.is_symlink() and path.is_file() and path.stat().st_size == size and path.read_text() == text:
                    return path
            except (OSError, UnicodeDecodeError):
                continue
    return None


def _decode_yaml(text: Any) -> list[dict[str, Any]]:
    """The provider's answer (pulumi/pulumi-kubernetes provider/pkg/provider/invoke_decode_yaml.go,
    decodeYaml): each document of the stream as a mapping, skipping those without a kind or an
    apiVersion ("Sometimes manifests include empty resources"). Read as every YAML from outside
    is (yamlread.load_all): a document of excessive aliasing, which the provider's go-yaml
    refuses, or one nested too deeply is refused before anything is built from it."""
    import yaml

    from . import yamlread

    text = text if isinstance(text, str) else ""
    try:
        docs = yamlread.load_all(text)
    except yamlread.YamlError as exc:
        raise YamlRefused(exc.problems[0], text) from None
    except yaml.YAMLError as exc:  # the provider fails the invoke on a file that is not YAML too
        mark = getattr(exc, "problem_mark", None)
        why = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise YamlRefused(Diagnostic(f"invalid YAML: {why}", "yaml.syntax", line=mark.line + 1 if mark else None), text) from None
    out = []
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ValueError(f"kubernetes:yaml:decode: a document is a {type(doc).__name__}, not a Kubernetes object")
        if doc.get("kind") and doc.get("apiVersion"):
            out.append(doc)
    return out


class _NoMocks(pulumi.runtime.Mocks):
    def new_resource(self, args):  # pragma: no cover - RegisterResource above answers instead
        return f"{args.name}-id", args.inputs

    def call(self, args):
        if args.token == YAML_DECODE:
            return {"result": _decode_yaml(args.args.get("text"))}
        return {}


class _InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs each RPC at once on the calling (event loop) thread: a deterministic order."""

    def submit(self, fn, /, *args, **kwargs):
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            future.set_exception(exc)
        return future


PROGRAM_MODULE = "__pulumi_program__"
"""The module name a program runs under when synth calls its entry function: not __main__, so
its `if __name__ == "__main__":` block (what `pulumi up` runs) stays out of the way."""


def run_program(program: Path, entry: str | None) -> Any:
    """The program's body. Without `entry`, as pulumi-language-python-exec runs it:
    `runpy.run_path(PROGRAM, run_name='__main__')` (pulumi/pulumi sdk/python/cmd/
    pulumi-language-python-exec), so a plain script registers its resources at import and a
    directory runs its __main__.py with the directory on sys.path. With `entry`, the file is
    loaded as a module and that function is called: what it returns is the program's result."""
    if entry is None:
        runpy.run_path(str(program), run_name="__main__")
        return None
    return runpy.run_path(str(program), run_name=PROGRAM_MODULE)[entry]()


def run(
    program: Path,
    *,
    project: str,
    stack: str,
    config: dict[str, str],
    secret_keys: list[str] | None = None,
    outputs_for: Callable[[str, str, dict[str, Any]], dict[str, Any]],
    entry: str | None = None,
    cwd: Path | None = None,
) -> Recording:
    """Run a Pulumi program (a file, or a directory with a __main__.py) under the recording
    engine and return what it registered. `entry`: the function of the program to call
    (run_program); `cwd`: the folder to run it in, as the language host's --pwd (the project's)."""
    monitor = RecordingMonitor(outputs_for)
    # set_mocks keeps an existing root stack; each run gets its own (one process may synth
    # several stacks, as the tests do): reset_options forgets the root.
    pulumi.runtime.reset_options(project=project, stack=stack, preview=False)
    pulumi.runtime.set_mocks(_NoMocks(), project=project, stack=stack, preview=False, monitor=monitor)
    # As pulumi-language-python-exec does with what the language host put in PULUMI_CONFIG.
    pulumi.runtime.set_all_config(config, list(secret_keys or []))

    order = _ConstructionOrder(project, stack)
    pulumi.runtime.register_stack_transformation(order.record)
    pulumi.runtime.register_stack_transformation(_refuse_offline)

    def main():
        asyncio.get_running_loop().set_default_executor(_InlineExecutor())
        monitor.recording.result = run_program(program, entry)

    root = str(program if program.is_dir() else program.parent)
    with lean_runtime(), language_host_config(config, secret_keys or []), _as_language_host(program, cwd), program_imports(root):
        _sync_await(run_pulumi_func(main))
        monitor.recording.outputs = _sync_await(_stack_outputs())
    # Registrations arrive as their inputs resolve, which depends on hash order inside the
    # SDK; the program's own construction order does not.
    monitor.recording.resources.sort(key=lambda r: order.position(r.urn))
    return monitor.recording


@contextlib.contextmanager
def stdout_to_stderr():
    """Everything a program writes to standard output goes to standard error while it runs, so
    stdout carries synth's own output only (--json promises one JSON document there): print()
    through sys.stdout, and also what bypasses it, a subprocess the program starts or a write to
    file descriptor 1, which get descriptor 2 in its place (os.dup2); put back afterwards."""
    for stream in (sys.stdout, sys.__stdout__):
        with contextlib.suppress(Exception):
            stream.flush()  # synth's own pending output stays before the program's
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptor 1 or 2 to move: sys.stdout is all there is
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            sys.__stdout__.flush()  # what the program buffered on the real stdout: to stderr too
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


# synth's own top-level packages (beside the gke_ai_batch package) that a program's run needs as they
# are, so a program's module of the same name never stands in for them: the engine, and the
# library the program builds with.
_SYNTH_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
_ENGINE_PACKAGES = {"synth", "gke_ai_batch"}


@contextlib.contextmanager
def program_imports(root: str):
    """The program's folder first on sys.path while it runs, as the language host puts it
    (runpy.run_path), and its imports kept apart from synth's: a program folder's own `policy/`
    (where a CrossGuard pack lives) or any module of the name of one of synth's own packages
    other than the engine's is the program's while it runs and synth's again afterwards; sys.path
    and the modules imported from the program's folder are put back as they were, so neither
    synth's later imports nor the next program find the program's modules in their place."""
    saved_path = list(sys.path)
    before = dict(sys.modules)
    # The stack program: its folder's modules are synth's. Its folder is not listed (that and
    # the scan of sys.modules below were ~5 ms of each stack's render).
    shadowed = set() if os.path.realpath(root) == _SYNTH_HOME else {m.name for m in pkgutil.iter_modules([root])}
    hidden = {name for name in shadowed - _ENGINE_PACKAGES if name in before and _synths_own(before[name])}
    stashed = {name: m for name, m in before.items() if name.partition(".")[0] in hidden} if hidden else {}
    for name in stashed:
        del sys.modules[name]
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        yield
    finally:
        sys.path[:] = saved_path
        # Only a module imported while the program ran can be the program's: the set difference
        # finds those without walking every loaded module in Python (thousands in a process that
        # has also loaded its tools: ~2 ms of each render in the test suite).
        imported = [*(sys.modules.keys() - before.keys()), *(name for name in stashed if name in sys.modules)]
        if imported:
            # Other import roots inside the program's folder (a virtualenv there) are not its modules.
            inside = os.path.realpath(root) + os.sep
            real = {os.path.realpath(p) + os.sep for p in saved_path if isinstance(p, str) and p}
            others = [r for r in real if r != inside and r.startswith(inside)]
            for name in imported:
                if name.partition(".")[0] in hidden or _from_folder(sys.modules.get(name), inside, others):
                    sys.modules.pop(name, None)
        sys.modules.update(stashed)


def _from_folder(module: Any, inside: str, others: list[str]) -> bool:
    """Whether `module` was loaded from the program's folder (`inside`: its real path and a
    separator), not from another import root in it (`others`), and is not one of synth's own."""
    paths = [os.path.realpath(p) for p in (getattr(module, "__file__", None), *(getattr(module, "__path__", None) or []))
             if isinstance(p, str)]
    top = sys.modules.get(getattr(module, "__name__", "").partition(".")[0])
    return (any(p.startswith(inside) and not p.startswith(tuple(others)) for p in paths)) and not _synths_own(top)


def _synths_own(module: Any) -> bool:
    """Whether a top-level module is one of synth's own packages (a folder beside synth's)."""
    return any(isinstance(p, str) and os.path.dirname(os.path.realpath(p)) == _SYNTH_HOME for p in getattr(module, "__path__", None) or [])


@contextlib.contextmanager
def _as_language_host(program: Path, cwd: Path | None):
    """sys.argv and the working folder as pulumi-language-python-exec sets them for the program:
    `sys.argv = [args.PROGRAM] + args.ARGS` (no ARGS here) and `os.chdir(args.pwd)`; so a program
    parsing its arguments never sees synth's. Both are put back afterwards."""
    saved_argv, saved_cwd = sys.argv, os.getcwd() if cwd is not None else None
    sys.argv = [str(program)]
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        sys.argv = saved_argv
        if saved_cwd is not None:
            os.chdir(saved_cwd)


def _contains_unknowns(value: Any) -> bool:
    """The SDK's rpc.contains_unknowns, answer for answer (an Unknown anywhere in the dicts and
    lists reachable from `value`, each container visited once), without its recursive inner
    function: each call of that makes a function and its closure cell refer to each other, a
    cycle only the collector frees. The SDK calls it for every Output it resolves (~20,000 at
    256 slices), so with the collector off it left ~100,000 objects of garbage for the
    collection at the end to trace."""
    if isinstance(value, Unknown):
        return True
    if not isinstance(value, (dict, list)):
        return False
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Unknown):
            return True
        if isinstance(v, (dict, list)) and id(v) not in seen:
            seen.add(id(v))
            stack.extend([v[k] for k in v] if isinstance(v, dict) else v)
    return False


def _memo_by_identity(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """fn, remembered per argument object (held, so that its id stays its own). For the SDK's
    pure functions of a type annotation, asked again for the same few hundred annotation
    objects for every value it serializes or translates."""
    answers: dict[int, tuple[Any, Any]] = {}

    def remembered(arg: Any) -> Any:
        known = answers.get(id(arg))
        if known is not None and known[0] is arg:
            return known[1]
        answer = fn(arg)
        answers[id(arg)] = (arg, answer)
        return answer

    return remembered


def _lean_debug(original: Callable[..., None]) -> Callable[..., None]:
    """pulumi.log.debug, less the messages the mock engine would drop: the SDK logs ~5 per
    resource, each built into a LogRequest that MockEngine.Log hands to a logger not enabled
    for DEBUG (the root logger, unless the caller configured one)."""

    def debug(msg: str, resource: Any = None, stream_id: int | None = None, ephemeral: bool | None = None) -> None:
        engine = settings.get_engine()
        if isinstance(engine, mocks.MockEngine) and not engine.logger.isEnabledFor(logging.DEBUG):
            return
        original(msg, resource, stream_id, ephemeral)

    return debug


def _lean_replacements() -> list[tuple[Any, str, Any]]:
    """(module, attribute, replacement) for lean_runtime, for each attribute this SDK has."""
    wanted = [
        # Nothing here reads the source position the SDK captures for every resource.
        (pulumi_resource, "_get_stack_trace", lambda original: source_pb2.StackTrace),
        (rpc, "contains_unknowns", lambda original: _contains_unknowns),
        # Plain data without a coroutine, a task or a protobuf accessor per value (leanrpc).
        (rpc, "serialize_property", leanrpc.fast_serialize_property),
        (rpc, "deserialize_properties", leanrpc.fast_deserialize_properties),
        (rpc, "translate_output_properties", leanrpc.fast_translate_output_properties),
        (rpc, "transfer_properties", leanrpc.fast_transfer_properties),
        # A property's type derived when first looked up, not every property's on first use.
        (_types, "_types_from_py_properties", leanrpc.lazy_types_from_py_properties),
        (_types, "resource_types", leanrpc.lazy_resource_types),
        (pulumi.log, "debug", _lean_debug),
        # Pure functions of a type annotation, called for every typed value serialized or
        # translated back (pulumi-gcp's NodePool input and output types): ~40,000 calls at 256
        # slices, each re-deriving typing.get_origin/get_args (unwrap_type also re-imports).
        (_types, "unwrap_type", _memo_by_identity),
        (_types, "unwrap_optional_type", _memo_by_identity),
        (rpc, "_get_list_element_type", _memo_by_identity),
        (_types, "input_type_py_to_pulumi_names", _memo_by_identity),
    ]
    return [(module, name, make(getattr(module, name))) for module, name, make in wanted if hasattr(module, name)]


_LEAN_REPLACEMENTS = _lean_replacements()


@contextlib.contextmanager
def language_host_config(config: dict[str, str], secret_keys: list[str]):
    """The config in the environment, as the language host hands it to a program: PULUMI_CONFIG
    (JSON of every key, structured values as JSON text) and PULUMI_CONFIG_SECRET_KEYS. The
    program lists its keys from there (gke_ai_batch.config.load_from_pulumi)."""
    wanted = {"PULUMI_CONFIG": json.dumps(config), "PULUMI_CONFIG_SECRET_KEYS": json.dumps(list(secret_keys))}
    saved = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def lean_runtime():
    """What a recording does not need, and what costs most at scale (bench/synth_bench.py):
    the cyclic garbage collector, which rescans every object the SDK imported each time a few
    hundred Outputs pile up (half the time at 256 slices), and the source stack trace the SDK
    captures for every resource, which nothing here reads. And SDK functions swapped for
    equivalents that cost less at scale (_LEAN_REPLACEMENTS): a contains_unknowns that makes no
    cyclic garbage, and remembered answers of pure functions of type annotations."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    originals = [(module, name, getattr(module, name)) for module, name, _ in _LEAN_REPLACEMENTS]
    for module, name, replacement in _LEAN_REPLACEMENTS:
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module, name, original in originals:
            setattr(module, name, original)
        if gc_was_enabled:
            gc.enable()


class _ConstructionOrder:
    """Numbers resources in the order the program constructs them (a stack transformation
    runs synchronously in every resource's constructor) and names them by the URN the
    engine will give them."""

    def __init__(self, project: str, stack: str):
        self._stack, self._project = stack, project
        self._qualified: dict[int, str] = {}
        self._position: dict[str, int] = {}

    def record(self, args: pulumi.ResourceTransformationArgs) -> None:
        parent = args.opts.parent if args.opts is not None else None
        qualified = args.type_
        if parent is not None and id(parent) in self._qualified:
            qualified = f"{self._qualified[id(parent)]}{urns.TYPE_DELIMITER}{args.type_}"
        self._qualified[id(args.resource)] = qualified
        self._position.setdefault(urns.make(self._stack, self._project, qualified, args.name), len(self._position))
        return None

    def position(self, urn: str) -> int:
        # The root stack is created before the transformation exists: it comes first.
        return self._position.get(urn, -1)


def _through_protobuf(value: Any) -> Any:
    """`value` as the engine receives it, a protobuf Value: numbers are doubles (10**30 is
    rounded), and NaN or an infinity is the ValueError a resource's input gets, rather than
    `NaN` in outputs.json, which is no JSON (and no base a diff can read)."""
    holder = struct_pb2.Struct()
    holder.update({"v": value})
    return _value_to_plain(holder.fields["v"])


async def _stack_outputs() -> dict[str, Any]:
    """The program's exports, resolved (secrets masked). The mock engine registers the root
    stack's outputs before the program runs, so they are read off the stack here."""
    # Each serialized as the SDK does when it registers the stack's outputs (pulumi/runtime/
    # stack.py, register_outputs): an exported resource becomes a reference (its URN here), and a
    # value protobuf cannot hold (a dataclass) is the SDK's ValueError, failing `pulumi up` too.
    stack = pulumi.runtime.get_root_resource()
    outputs: dict[str, Any] = {}
    for name, value in sorted(getattr(stack, "outputs", {}).items()):
        output = pulumi.Output.from_input(value)
        serialized = plain(await rpc.serialize_property(await output.future(), [], name))
        try:
            resolved = _through_protobuf(serialized)
        except ValueError as exc:
            raise ValueError(f"pulumi.export({name!r}): {exc}") from None
        outputs[name] = masked(resolved) if await output.is_secret() else resolved
    return outputs
