"""synth calls a program through a function, and renders any Pulumi program that uses the
library (`python -m synth --program DIR --config FILE`)."""

from __future__ import annotations

import json
import runpy

from conftest import ROOT, synth_stack


def test_the_stack_program_is_a_function_and_importing_it_registers_nothing():
    """Loaded as a module (not as __main__), __main__.py defines `program` and runs nothing:
    synth calls that function and reads what it returns, never the program's globals."""
    from gke_ai_batch.plan.program import ENTRY, ProgramResult

    namespace = runpy.run_path(str(ROOT / "__main__.py"), run_name="not_main")
    assert callable(namespace[ENTRY])
    assert not {"plan", "admission", "fleet_plan", "config"} & set(namespace)
    result = synth_stack("existing-cluster")
    program = result.recording.result
    assert isinstance(program, ProgramResult)
    assert (result.config, result.plan, result.admission, result.fleet) == (
        program.config, program.plan, program.admission, None)


def test_pulumi_runs_the_stack_program_as_a_script_and_it_registers_the_same():
    """`pulumi up` runs __main__.py as a script (run_name __main__, pulumi-language-python-exec):
    that path registers exactly what synth's call of `program()` does."""
    import synth
    from synth import engine, stackfile

    stack_file = synth.StackFile.locate(ROOT, "existing-cluster", None)
    config = stackfile.read(stack_file)
    with engine.lean_runtime():
        script = engine.run(
            ROOT / "__main__.py",
            project=synth.project_name(ROOT),
            stack="existing-cluster",
            config=config.values,
            secret_keys=config.secret_keys,
            outputs_for=synth.outputs_for(config.values["gcp:project"]),
        )
    called = synth_stack("existing-cluster").recording
    assert script.result is None
    assert [r.to_json() for r in script.resources] == [r.to_json() for r in called.resources]
    assert json.dumps(script.outputs, sort_keys=True) == json.dumps(called.outputs, sort_keys=True)
