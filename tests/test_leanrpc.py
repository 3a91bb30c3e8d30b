"""synth.leanrpc answers as the SDK functions it stands in for, on generated values and on
every annotation of the provider classes synth registers. (That whole stacks record the same
with and without it is tests/test_determinism.py's and the committed URN lists' business.)"""

from __future__ import annotations

import asyncio
import collections.abc
import functools
import typing
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi import _types
from pulumi.output import Unknown
from pulumi.runtime import rpc

from gke_ai_batch.synth import leanrpc
from support.unicode import any_text

ORIGINAL_SERIALIZE = rpc.serialize_property
ORIGINAL_DESERIALIZE = rpc.deserialize_properties
ORIGINAL_TRANSLATE = rpc.translate_output_properties
ORIGINAL_TYPES = _types._types_from_py_properties
ORIGINAL_RESOURCE_TYPES = _types.resource_types

ROOTS = [
    gcp.container.NodePoolArgs,
    gcp.container.ClusterArgs,
    gcp.container.outputs.NodePoolNodeConfig,
    gcp.container.outputs.ClusterPrivateClusterConfig,
    gcp.compute.ResourcePolicyArgs,
    k8s.core.v1.NamespaceArgs,
    k8s.batch.v1.JobArgs,
    k8s.helm.v3.ReleaseArgs,
]
RESOURCES = [
    gcp.container.NodePool,
    gcp.container.Cluster,
    gcp.serviceaccount.Account,
    gcp.compute.ResourcePolicy,
    k8s.core.v1.Namespace,
    k8s.batch.v1.Job,
    k8s.helm.v3.Release,
    k8s.apiextensions.CustomResource,
    k8s.Provider,
]


def _typed_classes() -> list[type]:
    """Every input and output type reachable from ROOTS' property annotations."""
    seen: list[type] = []
    todo = list(ROOTS)
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.append(cls)
        for hint in ORIGINAL_TYPES(cls).values():
            for inner in (hint, *typing.get_args(hint), *(a for h in typing.get_args(hint) for a in typing.get_args(h))):
                if inspect_class(inner) and (_types.is_input_type(inner) or _types.is_output_type(inner)):
                    todo.append(inner)
    return seen


def inspect_class(value: Any) -> bool:
    return isinstance(value, type)


@pulumi.input_type
class SyntheticArgs:
    """Getters the generated classes lack: a bare Output (left out of the types), one without
    a return hint, and a subclass overriding a getter."""

    @property
    @pulumi.getter(name="bareOutput")
    def bare_output(self) -> pulumi.Output: ...

    @property
    @pulumi.getter(name="noHint")
    def no_hint(self): ...

    @property
    @pulumi.getter(name="overridden")
    def overridden(self) -> typing.Optional[pulumi.Input[str]]: ...  # noqa: UP007


class SyntheticChildArgs(SyntheticArgs):  # an input type by inheritance
    @property
    @pulumi.getter(name="overridden")
    def overridden(self) -> typing.Optional[pulumi.Input[int]]: ...  # noqa: UP007


# Computed on first use, not at import: every xdist worker imports this module to collect it,
# and resolving the generated classes' type hints takes seconds.
@functools.cache
def typed() -> list[type]:
    return _typed_classes() + [SyntheticArgs, SyntheticChildArgs]


@functools.cache
def annotations() -> list[Any]:
    hints: list[Any] = [None, Any, dict, list, typing.Mapping[str, str], typing.List[str], typing.Optional[int]]  # noqa: UP006
    for cls in typed():
        hints.append(cls)
        hints.extend(ORIGINAL_TYPES(cls).values())
    return hints


@functools.cache
def names() -> list[str]:
    """Keys as programs write them: snake_case names of the typed classes, camelCase ones."""
    return sorted(
        {python for cls in typed() for python, _pulumi, _prop in _types._py_properties(cls)}
        | {pulumi for cls in typed() for _python, pulumi, _prop in _types._py_properties(cls)}
    )


ANNOTATION = st.deferred(lambda: st.sampled_from(annotations()))
keys = st.one_of(st.deferred(lambda: st.sampled_from(names())), any_text(max_size=3))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    any_text(max_size=4),
)


def _run(coroutine):
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.close()


def canonical(value: Any) -> Any:
    """A value with its types spelt out (an output type is a dict subclass; a float is not an
    int) and every Unknown alike (each is its own object)."""
    if isinstance(value, Unknown):
        return "<unknown>"
    if isinstance(value, dict):
        return (type(value).__name__, [(canonical(k), canonical(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [canonical(v) for v in value])
    return (type(value).__name__, repr(value))


def _outcome(call):
    try:
        return ("value", canonical(call()))
    except Exception as exc:  # noqa: BLE001 - both sides must fail alike
        return ("error", type(exc).__name__)


def test_the_typed_classes_cover_nested_types():
    assert len(typed()) > 60
    assert any(typing.get_origin(typing.Optional[h]) for h in annotations())  # noqa: UP007
    assert gcp.container.outputs.NodePoolNodeConfigGuestAccelerator in typed()


# -- serialize ---------------------------------------------------------------------------------

plain_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=5),
    ),
    max_leaves=25,
)


def _serialize_both(value: Any, typ: Any, transformer: Any) -> tuple[Any, Any]:
    fast = leanrpc.fast_serialize_property(ORIGINAL_SERIALIZE)

    async def through(fn):
        deps: list = []
        rpc.serialize_property = fn  # the SDK recurses through its module global
        try:
            result = await fn(value, deps, "key", None, transformer, typ)
        finally:
            rpc.serialize_property = ORIGINAL_SERIALIZE
        return result, [id(d) for d in deps]  # canonical() keeps the ids of the dependencies

    return (
        _outcome(lambda: _run(through(ORIGINAL_SERIALIZE))),
        _outcome(lambda: _run(through(fast))),
    )


@settings(max_examples=200, deadline=None)
@given(plain_values, ANNOTATION, st.sampled_from([None, str.upper]))
def test_serialize_plain_values_as_the_sdk(value, typ, transformer):
    expected, actual = _serialize_both(value, typ, transformer)
    assert actual == expected


def test_serialize_a_typed_node_pool_as_the_sdk():
    value = {
        "machine_type": "ct6e-standard-4t",
        "guest_accelerators": [{"type": "nvidia-h100-80gb", "count": 8, "gpu_driver_installation_config": {"gpu_driver_version": "LATEST"}}],
        "labels": {"snake_case_label": "kept as written"},
        "taints": [{"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"}],
        "reservation_affinity": {"consume_reservation_type": "SPECIFIC_RESERVATION", "key": "k", "values": ["r"]},
    }
    typ = ORIGINAL_TYPES(gcp.container.NodePoolArgs)["nodeConfig"]
    expected, actual = _serialize_both(value, typ, None)
    assert expected[0] == "value"
    assert "guestAccelerators" in repr(expected) and "snake_case_label" in repr(expected)
    assert actual == expected


@pytest.mark.parametrize(
    "value",
    [
        pulumi.Output.from_input("known"),
        pulumi.Output.secret({"a_b": 1}),
        {"a": pulumi.Output.from_input(["x", 1])},
        [1, pulumi.Output.from_input({"service_account": "sa"})],
        Unknown(),
        {"nested": {"deeper": [Unknown()]}},
        b"bytes",
        {"set": {1, 2}},
    ],
    ids=["output", "secret", "output-in-dict", "output-in-list", "unknown", "nested-unknown", "bytes", "set"],
)
def test_serialize_hands_what_is_not_plain_data_to_the_sdk(value):
    for typ in (None, gcp.container.NodePoolNodeConfigArgs):
        expected, actual = _serialize_both(value, typ, None)
        assert actual == expected


# -- deserialize -------------------------------------------------------------------------------

wire_values = st.recursive(
    st.one_of(scalars, st.sampled_from([rpc.UNKNOWN, rpc._special_secret_sig])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(keys, st.just(rpc._special_sig_key), st.just("value")), inner, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.one_of(keys, st.just("__internal")), wire_values, max_size=5), st.sampled_from([None, True, False]), st.sampled_from([True, False]))
def test_deserialize_as_the_sdk(inputs, keep_unknowns, keep_internal):
    struct = struct_pb2.Struct()
    struct.update(inputs)
    fast = leanrpc.fast_deserialize_properties(ORIGINAL_DESERIALIZE)
    assert _outcome(lambda: fast(struct, keep_unknowns, keep_internal)) == _outcome(
        lambda: ORIGINAL_DESERIALIZE(struct, keep_unknowns, keep_internal)
    )


# -- translate ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(plain_values, ANNOTATION, st.booleans())
def test_translate_outputs_as_the_sdk(value, typ, by_metadata):
    fast = leanrpc.fast_translate_output_properties(ORIGINAL_TRANSLATE)

    def through(fn):
        rpc.translate_output_properties = fn
        try:
            return fn(value, str.lower, typ, by_metadata)
        finally:
            rpc.translate_output_properties = ORIGINAL_TRANSLATE

    assert _outcome(lambda: through(fast)) == _outcome(lambda: through(ORIGINAL_TRANSLATE))


def test_translate_makes_enums_and_ints_as_the_sdk():
    import enum

    class Colour(str, enum.Enum):
        RED = "red"

    class Count(enum.IntEnum):
        ONE = 1

    fast = leanrpc.fast_translate_output_properties(ORIGINAL_TRANSLATE)
    for value, typ in [("red", Colour), ("red", typing.Optional[Colour]), (True, Count), (1.0, int), (2.0, None), ("x", str)]:  # noqa: UP007
        assert repr(fast(value, str, typ)) == repr(ORIGINAL_TRANSLATE(value, str, typ))
    assert fast("red", str, Colour) is Colour.RED


# -- transfer and resolve ----------------------------------------------------------------------


def test_transferred_properties_resolve_as_the_sdks():
    class Res:
        pass

    async def resolve_all(transfer):
        res = Res()
        resolvers = transfer(res, {"urn": None, "id": None, "a": None, "b": None, "c": None, "d": None}, True)
        dep = Res()
        resolvers["a"]("value", True, False, {dep}, None)
        resolvers["b"]({"k": [Unknown()]}, True, True, None, None)
        resolvers["c"](None, False, False, None, None)
        resolvers["d"](None, False, False, None, RuntimeError("failed"))
        seen = {"resolvers": sorted(resolvers), "attributes": sorted(k for k in vars(res) if k in "abcd")}
        for name in "abc":
            output = vars(res)[name]
            data = await output._data
            seen[name] = (canonical(data.value), data.is_known, data.is_secret, len(data.resources), res in data.resources)
        with pytest.raises(RuntimeError, match="failed"):
            await vars(res)["d"].future()
        return seen

    assert _run(resolve_all(leanrpc.fast_transfer_properties(rpc.transfer_properties))) == _run(
        resolve_all(rpc.transfer_properties)
    )


# -- type annotations --------------------------------------------------------------------------


def test_lazy_types_answer_as_the_sdks_for_every_class_and_property():
    lazy_types = leanrpc.lazy_types_from_py_properties(ORIGINAL_TYPES)
    checked = 0
    for cls in typed():
        expected = ORIGINAL_TYPES(cls)
        lazy = lazy_types(cls)
        for _python, pulumi_name, _prop in _types._py_properties(cls):
            assert lazy.get(pulumi_name, "absent") == expected.get(pulumi_name, "absent"), (cls, pulumi_name)
            assert (pulumi_name in lazy) == (pulumi_name in expected)
            checked += 1
        assert lazy.get("noSuchProperty") is None and "noSuchProperty" not in lazy
        assert list(lazy) == list(expected) and dict(lazy) == expected
    assert checked > 500


def test_lazy_resource_types_answer_as_the_sdks():
    lazy_types = leanrpc.lazy_types_from_py_properties(ORIGINAL_TYPES)
    lazy_resource_types = leanrpc.lazy_resource_types(ORIGINAL_RESOURCE_TYPES)
    saved = _types._types_from_py_properties
    _types._types_from_py_properties = lazy_types
    try:
        for cls in RESOURCES:
            expected = ORIGINAL_RESOURCE_TYPES(cls)
            lazy = lazy_resource_types(cls)
            names = {p for _a, p, _b in _types._py_properties(cls)} | set(expected) | {"noSuchProperty"}
            for name in sorted(names):
                assert lazy.get(name) == expected.get(name), (cls, name)
            assert dict(lazy) == expected
    finally:
        _types._types_from_py_properties = saved


def test_only_what_is_looked_up_is_derived():
    """The point of the lazy types: a registration with a few properties of a class with many
    derives a few annotations."""
    lazy = leanrpc.lazy_types_from_py_properties(ORIGINAL_TYPES)(gcp.container.Cluster)
    assert lazy.get("location") is str
    assert len(lazy._known) == 1 and len(lazy._getters) > 100


def test_mapping_protocol():
    lazy = leanrpc.lazy_types_from_py_properties(ORIGINAL_TYPES)(gcp.container.NodePoolArgs)
    assert isinstance(lazy, collections.abc.Mapping)
    assert lazy["nodeConfig"] == ORIGINAL_TYPES(gcp.container.NodePoolArgs)["nodeConfig"]
    with pytest.raises(KeyError):
        lazy["noSuchProperty"]
    assert len(lazy) == len(ORIGINAL_TYPES(gcp.container.NodePoolArgs))
