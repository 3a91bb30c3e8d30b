"""synth's recording engine: what it changes in the process, it puts back."""

import gc

from pulumi.runtime import resource as pulumi_resource

from conftest import synth_stack
from gke_ai_batch.synth import engine
from support.unicode import any_text


def test_lean_runtime_restores_the_collector_and_stack_traces():
    original = pulumi_resource._get_stack_trace
    replaced = {(m, name): getattr(m, name) for m, name, _ in engine._LEAN_REPLACEMENTS}
    assert len(replaced) == 13  # this SDK has every function lean_runtime replaces
    assert gc.isenabled()
    with engine.lean_runtime():
        assert not gc.isenabled()
        assert pulumi_resource._get_stack_trace is not original
        for module, name, replacement in engine._LEAN_REPLACEMENTS:
            assert getattr(module, name) is replacement
    assert gc.isenabled()
    assert pulumi_resource._get_stack_trace is original
    assert all(getattr(m, name) is f for (m, name), f in replaced.items())


def test_remembered_type_functions_answer_as_the_sdks_do():
    """Every annotation of pulumi-gcp's NodePool input and output types, through the SDK's
    functions and through lean_runtime's remembered ones (twice: the second is remembered)."""
    import collections.abc
    import typing

    import pulumi_gcp as gcp
    from pulumi import _types
    from pulumi.runtime import rpc

    seen, hints, todo = set(), [], [gcp.container.NodePoolArgs, gcp.container.outputs.NodePoolNodeConfig]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for hint in _types._types_from_py_properties(cls).values():
            hints.append(hint)
            for inner in (hint, *typing.get_args(hint)):
                if _types.is_input_type(inner) or _types.is_output_type(inner):
                    todo.append(inner)
    for hint in _types._raw_return_hints(gcp.container.NodePoolArgs).values():
        hints.append(hint)
    assert len(hints) > 100
    originals = {name: getattr(m, name) for m, name, _ in engine._LEAN_REPLACEMENTS}
    lists = 0
    with engine.lean_runtime():
        for _ in range(2):
            for hint in hints:
                unwrapped = originals["unwrap_type"](hint)
                assert _types.unwrap_type(hint) == unwrapped
                assert _types.unwrap_optional_type(hint) == originals["unwrap_optional_type"](hint)
                if typing.get_origin(unwrapped) in (list, collections.abc.Sequence):
                    lists += 1
                    assert rpc._get_list_element_type(unwrapped) == originals["_get_list_element_type"](unwrapped)
                if _types.is_input_type(hint):
                    names = originals["input_type_py_to_pulumi_names"](hint)
                    assert _types.input_type_py_to_pulumi_names(hint) == names
    assert lists > 0


def test_outputs_are_resolved_and_secrets_masked():
    outputs = synth_stack("tpu-multislice").recording.outputs
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["capacity"] == {"slices": 3, "vms": 6, "tpuChips": 24, "gpus": 0}
    assert outputs["nodePools"] == ["nodepool-0", "nodepool-1", "nodepool-2"]


def test_synth_reports_on_the_plan_the_program_deployed():
    result = synth_stack("dev")
    assert result.plan is result.recording.result.plan and result.config is result.recording.result.config


def test_contains_unknowns_answers_as_the_sdks_does():
    """The engine's cycle-free contains_unknowns agrees with the SDK's on nested values,
    shared and self-referencing containers included."""
    from hypothesis import given
    from hypothesis import strategies as st
    from pulumi.output import Unknown
    from pulumi.runtime import rpc

    original = rpc.contains_unknowns
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), any_text(max_size=3), st.just(Unknown()))
    values = st.recursive(
        leaves, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(any_text(max_size=2), inner, max_size=4))
    )

    @given(values)
    def agrees(value):
        assert engine._contains_unknowns(value) == original(value)
        shared = [value, {"again": value}]
        assert engine._contains_unknowns(shared) == original(shared)

    agrees()
    looped: dict = {"x": 1}
    looped["self"] = [looped]
    assert engine._contains_unknowns(looped) is original(looped) is False
    looped["u"] = Unknown()
    assert engine._contains_unknowns(looped) is original(looped) is True
    with engine.lean_runtime():
        assert rpc.contains_unknowns is engine._contains_unknowns
    assert rpc.contains_unknowns is original


def test_struct_to_plain_reads_a_struct_as_the_json_printer_then_plain_do():
    """The monitor's one-pass reading of a registration's inputs gives what protobuf's JSON
    printer followed by engine.plain gives, key order included."""
    from google.protobuf import json_format, struct_pb2
    from hypothesis import given
    from hypothesis import strategies as st

    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**52), max_value=2**52),
        st.floats(allow_nan=False, allow_infinity=False),
        any_text(max_size=3),
        st.sampled_from([engine._UNKNOWN, engine._SECRET_SIG, engine._RESOURCE_SIG]),
    )
    keys = st.one_of(any_text(max_size=2), st.just(engine._SIG_KEY), st.just("urn"))
    values = st.recursive(
        leaves, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4))
    )

    @given(st.dictionaries(keys, values, max_size=5))
    def agrees(inputs):
        struct = struct_pb2.Struct()
        struct.update(inputs)
        expected = engine.plain(json_format.MessageToDict(struct))
        assert repr(engine._struct_to_plain(struct)) == repr(expected)

    agrees()
