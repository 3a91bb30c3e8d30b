"""The Pulumi SDK internals this repository relies on, checked for the pinned SDK.

synth's recording engine (gke_ai_batch/synth/engine.py) reaches below the SDK's public API where the public
API does not go: the mock monitor it subclasses, the stack-trace capture it switches off, the
coroutine that runs a program and waits for its registrations, the wire format of values. A new
pulumi release can change any of them without notice; these tests say which one moved. The
docs/benchmark.md, "Pulumi SDK internals synth relies on", lists them and why each is needed."""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import os
import re
import textwrap
from pathlib import Path

import pulumi
import pulumi.runtime
import pytest
from pulumi.runtime import mocks, rpc
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import stack as pulumi_stack
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.sync_await import _sync_await

from conftest import ROOT
from gke_ai_batch.synth import engine


def _pin(path: Path, package: str) -> str:
    match = re.search(rf"^{re.escape(package)}==([^\s;\\]+)", path.read_text(), re.M | re.I)
    assert match, f"{path.relative_to(ROOT)} does not pin {package}"
    return match.group(1)


def test_the_installed_sdk_is_the_pinned_one():
    pinned = _pin(ROOT / "requirements.txt", "pulumi")
    installed = importlib.metadata.version("pulumi")
    assert installed == pinned, (
        f"pulumi {installed} is installed but requirements.txt pins {pinned}: these tests vouch for "
        "the pinned SDK only; re-run them against the new one before moving the pin"
    )
    # The policy pack's virtualenv serves with the same SDK.
    assert _pin(ROOT / "policy" / "requirements.txt", "pulumi") == pinned


# --- public API, relied upon for more than its name -------------------------------------------


def test_config_env_is_the_language_hosts_json(monkeypatch):
    """gke_ai_batch.config.load_from_pulumi lists every key from PULUMI_CONFIG."""
    assert "get_config_env" in pulumi.runtime.__all__
    monkeypatch.setenv("PULUMI_CONFIG", '{"gke-ai-batch:cluster": "{\\"name\\": \\"c\\"}", "gcp:region": "r"}')
    assert pulumi.runtime.get_config_env() == {"gke-ai-batch:cluster": '{"name": "c"}', "gcp:region": "r"}
    monkeypatch.delenv("PULUMI_CONFIG")
    assert pulumi.runtime.get_config_env() == {}


def test_reset_options_forgets_the_root_stack():
    """engine.run: set_mocks keeps an existing root stack; reset_options is what clears it."""
    pulumi.runtime.set_mocks(engine._NoMocks(), project="p", stack="s", preview=False)
    assert pulumi.runtime.get_root_resource() is not None
    pulumi.runtime.reset_options(project="p", stack="s", preview=False)
    assert pulumi.runtime.get_root_resource() is None


def test_set_mocks_takes_a_monitor_and_set_all_config_secret_keys():
    assert "monitor" in inspect.signature(pulumi.runtime.set_mocks).parameters
    assert list(inspect.signature(pulumi.runtime.set_all_config).parameters) == ["config", "secret_keys"]


# --- internals ------------------------------------------------------------------------------


def test_mock_monitor_shape():
    """RecordingMonitor subclasses MockMonitor, answers RegisterResource itself, and keeps
    MockMonitor's registry (which its ReadResource and invokes consult) filled."""
    assert list(inspect.signature(mocks.MockMonitor.__init__).parameters) == ["self", "mocks"]
    assert list(inspect.signature(mocks.MockMonitor.RegisterResource).parameters) == ["self", "request"]
    assert mocks.MockMonitor.ResourceRegistration._fields == ("urn", "id", "state")
    assert isinstance(mocks.MockMonitor(engine._NoMocks()).resources, dict)


def test_register_resource_request_and_response_fields():
    fields = resource_pb2.RegisterResourceRequest.DESCRIPTOR.fields_by_name
    for name in ("type", "name", "parent", "custom", "object", "protect", "dependencies", "provider",
                 "deleteBeforeReplace", "ignoreChanges", "replaceOnChanges"):
        assert name in fields, name
    response = resource_pb2.RegisterResourceResponse(urn="u", id="i", object=engine.struct_pb2.Struct())
    assert (response.urn, response.id) == ("u", "i")


def test_stack_trace_capture_can_be_switched_off():
    """lean_runtime swaps the module-level _get_stack_trace for an empty StackTrace: that works
    only while the SDK looks the function up by name at each registration and accepts an empty
    trace."""
    assert inspect.signature(pulumi_resource._get_stack_trace).parameters == {}
    for fn in (pulumi_resource.register_resource, pulumi_resource.read_resource):
        assert "_get_stack_trace" in fn.__code__.co_names, fn.__name__
    assert pulumi_resource._get_source_position(source_pb2.StackTrace()) is None


def test_run_pulumi_func_and_sync_await():
    assert inspect.iscoroutinefunction(pulumi_stack.run_pulumi_func)
    assert _sync_await(asyncio.sleep(0, result=5)) == 5

    def fails():
        raise KeyError("boom")

    with pytest.raises(KeyError):  # the program's own exception, after the RPCs are done
        _sync_await(pulumi_stack.run_pulumi_func(fails))


def test_wire_signatures():
    assert engine._SECRET_SIG == rpc._special_secret_sig
    assert engine._RESOURCE_SIG == rpc._special_resource_sig
    assert engine._SIG_KEY == rpc._special_sig_key
    assert engine._UNKNOWN == rpc.UNKNOWN


PROGRAM = '''
import pulumi
import pulumi.runtime


class Comp(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("test:index:Comp", name, None, opts)


config = pulumi.runtime.get_config_env()
provider = pulumi.ProviderResource("test", "prov", {})
comp = Comp("comp")
first = pulumi.CustomResource(
    "test:index:Thing",
    "first",
    {"someValue": 1},
    pulumi.ResourceOptions(
        parent=comp, provider=provider, protect=True, ignore_changes=["b", "a"],
        replace_on_changes=["z"], delete_before_replace=True,
    ),
)
second = pulumi.CustomResource(
    "test:index:Thing", "second", {"ref": first.id}, pulumi.ResourceOptions(parent=comp, depends_on=[first])
)
pulumi.export("plain", {"n": 2, "config": config["proj:key"]})
pulumi.export("secret", pulumi.Output.secret("s3cret"))
import sys
pulumi.export("runAs", {"name": __name__, "argv": sys.argv})
'''


def test_the_engine_records_a_program_end_to_end(tmp_path: Path, monkeypatch):
    """Everything above at once, as synth uses it: registrations in construction order with
    parents, dependencies and options (the stack transformation and the monitor), outputs read
    off the root stack (Stack.outputs, Output.future/is_secret), config handed over as the
    language host does and taken back afterwards."""
    monkeypatch.delenv("PULUMI_CONFIG", raising=False)
    program = tmp_path / "__main__.py"
    program.write_text(textwrap.dedent(PROGRAM))
    recording = engine.run(program, project="proj", stack="stk", config={"proj:key": "v"}, outputs_for=lambda *_: {})
    by_name = {r.name: r for r in recording.resources}
    assert [r.name for r in recording.resources] == ["proj-stk", "prov", "comp", "first", "second"]
    assert recording.resources[0].type == "pulumi:pulumi:Stack"
    comp, first, second = by_name["comp"], by_name["first"], by_name["second"]
    assert first.urn == "urn:pulumi:stk::proj::test:index:Comp$test:index:Thing::first"
    assert first.parent == second.parent == comp.urn
    assert first.inputs == {"someValue": 1}
    assert first.options == {
        "protect": True,
        "deleteBeforeReplace": True,
        "replaceOnChanges": ["z"],
        "ignoreChanges": ["a", "b"],
        "provider": by_name["prov"].urn,
    }
    assert first.urn in second.dependencies and second.inputs == {"ref": "first-id"}
    # Run as the language host runs it: as __main__, with its own path as the only argument.
    run_as = {"name": "__main__", "argv": [str(program)]}
    assert recording.outputs == {"plain": {"n": 2, "config": "v"}, "secret": "[secret]", "runAs": run_as}
    assert recording.result is None
    assert "PULUMI_CONFIG" not in os.environ


def test_a_failing_program_raises_its_own_error(tmp_path: Path):
    program = tmp_path / "__main__.py"
    program.write_text("raise LookupError('from the program')\n")
    with pytest.raises(LookupError, match="from the program"):
        engine.run(program, project="proj", stack="stk", config={}, outputs_for=lambda *_: {})


# --- outside synth ----------------------------------------------------------------------------


def test_pulumi_kubernetes_version_helper():
    """gke_ai_batch/components/k8s.py registers custom objects with the provider's own plugin version."""
    from pulumi_kubernetes import _utilities

    assert _utilities.get_version() == importlib.metadata.version("pulumi-kubernetes")


def test_pulumi_policy_proxy_names():
    """gke_ai_batch/policy/crossguard.py unwraps the pack SDK's property proxies and knows its unknowns."""
    from pulumi_policy import proxy

    for name in ("UNKNOWN_BOOLEAN_VALUE", "UNKNOWN_NUMBER_VALUE", "UNKNOWN_STRING_VALUE", "UNKNOWN_ARRAY_VALUE",
                 "UNKNOWN_ASSET_VALUE", "UNKNOWN_ARCHIVE_VALUE", "UNKNOWN_OBJECT_VALUE"):
        assert isinstance(getattr(proxy, name), str), name
    wrapped = proxy.unknown_checking_proxy({"a": [1]})
    assert isinstance(wrapped, proxy._DictProxy) and isinstance(wrapped["a"], proxy._ListProxy)
    target = wrapped["__target"]  # the escape hatch crossguard.plain reads
    assert type(target) is dict and list(target) == ["a"] and isinstance(target["a"], proxy._ListProxy)
