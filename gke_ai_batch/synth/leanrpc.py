"""Plain-data fast paths for the SDK's per-value RPC work, answer for answer.

The SDK serializes every input value with a coroutine per value, however plain (a str in a
dict in a list: three awaits), deserializes what the engine echoes back one protobuf accessor
at a time, and makes each resource property an Output whose state arrives through four
futures and a task. At 256 slices that is ~18,000 coroutines and ~7,500 tasks for values that
are plain data. Each function below does the same for plain data synchronously, and hands
anything else (an Output, a Resource, an asset, an awaitable, an input-type object, a str
subclass such as an enum, a secret or resource signature) to the SDK's own function, so the
answer is the SDK's answer by construction. tests/test_leanrpc.py compares both on generated
values and typed annotations, and tests/test_determinism.py every stack's recording.

Each `fast_*` takes the SDK's function and returns its replacement (synth.engine installs them
for the duration of a recording only)."""

from __future__ import annotations

import asyncio
import functools
import typing
from collections import abc
from typing import Any, Callable, Optional

from google.protobuf import struct_pb2
from pulumi import _types
from pulumi.output import Output, _OutputData
from pulumi.runtime import rpc

_NONE = type(None)
# Exact types only: a subclass (an enum's str, a bool is not an int here) takes the SDK's path.
_SCALARS = frozenset({str, int, float, bool, _NONE})
_MAPPING_ORIGINS = (dict, typing.Dict, abc.Mapping, typing.Mapping)  # noqa: UP006 - as the SDK lists them


class _NotPlain(Exception):
    """Raised inside a fast path at the first value it does not handle: the SDK takes over."""


_NOT_PLAIN = _NotPlain()


# -- serialize ---------------------------------------------------------------------------------


def _serialize_plain(value: Any, typ: Any, input_transformer: Optional[Callable[[str], str]]) -> Any:
    """rpc.serialize_property for a value made only of exact dicts, lists, tuples and
    scalars (no Output, Resource or awaitable inside: none adds a dependency)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    typ = _types.unwrap_type(typ) if typ else typ
    if typ is Any:
        typ = None
    if kind is list or kind is tuple:
        element_type = rpc._get_list_element_type(typ)
        return [_serialize_plain(elem, element_type, input_transformer) for elem in value]
    if kind is not dict:
        raise _NOT_PLAIN
    get_type: Callable[[Any], Any] = _no_type
    translate = input_transformer
    if typ is not None:
        case = _types.reduce_discriminated_union(typ, value, _types._py_name_for)
        if case is not None:
            typ = case
        if _types.is_input_type(typ):
            names = _types.input_type_py_to_pulumi_names(typ)
            get_type = _types.input_type_types(typ).get
            translate = functools.partial(_translate_name, names)
        elif typ is dict or typing.get_origin(typ) in _MAPPING_ORIGINS:
            args = typing.get_args(typ)
            if len(args) == 2 and args[0] is str:
                get_type = functools.partial(_same_type, args[1])
                translate = None
        else:
            translate = None
    out = {}
    for k in value:
        key = translate(k) if translate is not None else k
        out[key] = _serialize_plain(value[k], get_type(key), input_transformer)
    return out


def _no_type(_key: Any) -> None:
    return None


def _same_type(typ: Any, _key: Any) -> Any:
    return typ


def _translate_name(names: dict[str, str], key: str) -> str:
    return names.get(key) or key


def fast_serialize_property(original: Callable[..., Any]) -> Callable[..., Any]:
    async def serialize_property(
        value: Any,
        deps: Any,
        property_key: Any,
        resource_obj: Any = None,
        input_transformer: Any = None,
        typ: Any = None,
        keep_output_values: bool = False,
        exclude_resource_refs_from_deps: bool = False,
        return_protobuf_value: bool = False,
    ) -> Any:
        if not return_protobuf_value:
            try:
                return _serialize_plain(value, typ, input_transformer)
            except Exception:  # noqa: BLE001 - not plain, or an error the SDK words itself
                pass
        return await original(
            value,
            deps,
            property_key,
            resource_obj,
            input_transformer,
            typ,
            keep_output_values,
            exclude_resource_refs_from_deps,
            return_protobuf_value,
        )

    return serialize_property


# -- deserialize -------------------------------------------------------------------------------


def _struct_plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    """rpc.deserialize_properties for a Struct with no signature key (secret, resource,
    asset, archive, output value) and no unknown anywhere inside."""
    fields = struct.fields
    if rpc._special_sig_key in fields:
        raise _NOT_PLAIN
    out = {}
    for k in fields:
        value = _value_plain(fields[k])
        if value is not None:
            out[k] = value
    return out


def _value_plain(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        text = value.string_value
        if text == rpc.UNKNOWN:
            raise _NOT_PLAIN
        return text
    if kind == "number_value":
        return value.number_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return _struct_plain(value.struct_value)
    if kind == "list_value":
        return [_value_plain(v) for v in value.list_value.values]
    return None


def fast_deserialize_properties(original: Callable[..., Any]) -> Callable[..., Any]:
    def deserialize_properties(props_struct: Any, keep_unknowns: Any = None, keep_internal: Any = True) -> Any:
        # keep_internal=False drops "__"-prefixed keys: rare, left to the SDK.
        if keep_internal is not False and type(props_struct) is struct_pb2.Struct:
            try:
                return _struct_plain(props_struct)
            except _NotPlain:
                pass
        return original(props_struct, keep_unknowns, keep_internal)

    return deserialize_properties


# -- translate ---------------------------------------------------------------------------------


def fast_translate_output_properties(original: Callable[..., Any]) -> Callable[..., Any]:
    """The SDK's function for everything but its commonest call: an exact str, bool or None
    (and a float or int where no type asks for an int or an enum), which it returns as is."""

    def translate_output_properties(
        output: Any,
        output_transformer: Any,
        typ: Any = None,
        transform_using_type_metadata: bool = False,
        path: Any = None,
        return_none_on_dict_type_mismatch: bool = False,
    ) -> Any:
        kind = type(output)
        if kind is _NONE:
            return output
        if kind is str or kind is bool:
            if typ is None or not _is_enum(typ):
                return output
        elif (kind is float or kind is int) and typ is None:
            return output
        return original(
            output, output_transformer, typ, transform_using_type_metadata, path, return_none_on_dict_type_mismatch
        )

    return translate_output_properties


@functools.lru_cache(maxsize=None)
def _is_enum_unwrapped(typ: Any) -> bool:
    import enum
    import inspect

    return inspect.isclass(typ) and issubclass(typ, enum.Enum)


def _is_enum(typ: Any) -> bool:
    """Whether the SDK would turn a str or bool into an enum for `typ` (after unwrapping
    Optional, as it does). A bool is an int, so an IntEnum would take it too."""
    try:
        return _is_enum_unwrapped(_types.unwrap_optional_type(typ))
    except TypeError:  # an unhashable annotation: ask the SDK
        return True


# -- resource properties -----------------------------------------------------------------------


def fast_transfer_properties(original: Callable[..., Any]) -> Callable[..., Any]:
    """rpc.transfer_properties with one future per property, holding the Output's whole
    state, in place of four futures gathered by a task per property; and not tracked in the
    SDK's set of outstanding outputs, which exists so that the program waits for each and sees
    its failure: these are resolved by their resource's registration, which the SDK tracks as
    an RPC, and a failed registration fails the run through that RPC first."""

    def transfer_properties(res: Any, props: Any, custom: bool) -> dict[str, Any]:
        resolvers = {}
        for name in props:
            if name == "urn" or (name == "id" and custom):
                continue  # the SDK resolves these itself
            data: asyncio.Future = asyncio.Future()
            resolvers[name] = functools.partial(_resolve, res, data)
            output = object.__new__(Output)
            output._data = data
            res.__dict__[name] = output
        return resolvers

    return transfer_properties


def _resolve(
    res: Any,
    data: asyncio.Future,
    value: Any,
    is_known: bool,
    is_secret: bool,
    deps: Any,
    failed: Optional[Exception],
) -> None:
    if failed is not None:
        data.set_exception(failed)
        return
    resources = set(deps) if deps else set()
    resources.add(res)
    data.set_result(_OutputData(resources=resources, value=value, is_known=is_known, is_secret=is_secret))


# -- type annotations --------------------------------------------------------------------------

_ABSENT = object()


class _LazyTypes(abc.Mapping):
    """_types._types_from_py_properties(cls), each property's type derived on first lookup.

    The SDK derives every property's type for a class the first time it sees one: a
    typing.get_type_hints per property getter, on string annotations (pulumi-gcp's Cluster has
    ~150), though a registration looks up only the properties it has. A lookup here runs the
    same derivation for the one property (the last getter in the MRO with a return hint wins,
    Output[T] and Optional[T] unwrap to T, a bare Output is left out); iterating falls back to
    the SDK's own whole dict, so its order is the SDK's."""

    def __init__(self, cls: type, whole: Callable[[type], dict[str, Any]]):
        self._cls = cls
        self._whole = whole
        self._getters: dict[str, list[Any]] = {}
        for _python_name, pulumi_name, prop in _types._py_properties(cls):
            self._getters.setdefault(pulumi_name, []).append(prop.fget)
        self._known: dict[str, Any] = {}
        self._globalns: Optional[dict[str, Any]] = None

    def _type(self, key: Any) -> Any:
        known = self._known.get(key, _ABSENT)
        if known is _ABSENT and key not in self._known:
            known = self._known[key] = self._derive(key)
        return known

    def _derive(self, key: Any) -> Any:
        getters = self._getters.get(key)
        if not getters:
            return _ABSENT
        if self._globalns is None:
            self._globalns = _types._globals_for_cls(self._cls)
        localns = {"Output": Output, "T": type(None)}
        for fget in reversed(getters):
            hint = typing.get_type_hints(fget, globalns=self._globalns, localns=localns).get("return")
            if hint is not None:
                typ = _types.unwrap_type(hint)
                return _ABSENT if typ is Output else typ
        return _ABSENT

    def get(self, key: Any, default: Any = None) -> Any:
        typ = self._type(key)
        return default if typ is _ABSENT else typ

    def __getitem__(self, key: Any) -> Any:
        typ = self._type(key)
        if typ is _ABSENT:
            raise KeyError(key)
        return typ

    def __contains__(self, key: Any) -> bool:
        return self._type(key) is not _ABSENT

    def __iter__(self):
        return iter(self._whole(self._cls))

    def __len__(self) -> int:
        return len(self._whole(self._cls))


class _LazyResourceTypes(abc.Mapping):
    """_types.resource_types(cls): the class's annotation types, overridden by its property
    getters' types, looked up per property."""

    def __init__(self, annotations: dict[str, Any], properties: _LazyTypes, whole: Callable[[], dict[str, Any]]):
        self._annotations = annotations
        self._properties = properties
        self._whole = whole

    def get(self, key: Any, default: Any = None) -> Any:
        typ = self._properties.get(key, _ABSENT)
        if typ is _ABSENT:
            return self._annotations.get(key, default)
        return typ

    def __getitem__(self, key: Any) -> Any:
        typ = self.get(key, _ABSENT)
        if typ is _ABSENT:
            raise KeyError(key)
        return typ

    def __contains__(self, key: Any) -> bool:
        return self.get(key, _ABSENT) is not _ABSENT

    def __iter__(self):
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())


def lazy_types_from_py_properties(original: Callable[[type], dict[str, Any]]) -> Callable[[type], Any]:
    made: dict[type, _LazyTypes] = {}

    def types_from_py_properties(cls: type) -> Any:
        lazy = made.get(cls)
        if lazy is None:
            lazy = made[cls] = _LazyTypes(cls, original)
        return lazy

    return types_from_py_properties


def lazy_resource_types(original: Callable[[type], dict[str, Any]]) -> Callable[[type], Any]:
    made: dict[type, _LazyResourceTypes] = {}

    def resource_types(cls: type) -> Any:
        lazy = made.get(cls)
        if lazy is None:
            lazy = made[cls] = _LazyResourceTypes(
                _types._types_from_annotations(cls),
                _types._types_from_py_properties(cls),
                functools.partial(original, cls),
            )
        return lazy

    return resource_types
