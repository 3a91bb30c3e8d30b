"""synth's recording engine: what it changes in the process, it puts back."""

import gc

from pulumi.runtime import resource as pulumi_resource

from conftest import synth_stack
from synth import engine


def test_lean_runtime_restores_the_collector_and_stack_traces():
    original = pulumi_resource._get_stack_trace
    assert gc.isenabled()
    with engine.lean_runtime():
        assert not gc.isenabled()
        assert pulumi_resource._get_stack_trace is not original
    assert gc.isenabled()
    assert pulumi_resource._get_stack_trace is original


def test_outputs_are_resolved_and_secrets_masked():
    outputs = synth_stack("tpu-multislice").recording.outputs
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["capacity"] == {"slices": 3, "vms": 6, "tpuChips": 24, "gpus": 0}
    assert outputs["nodePools"] == ["nodepool-0", "nodepool-1", "nodepool-2"]


def test_synth_reports_on_the_plan_the_program_deployed():
    result = synth_stack("dev")
    assert result.plan is result.recording.program["plan"]
