"""The benchmark's generated stacks are stacks synth renders (a benchmark of refusals would
measure nothing), written as Pulumi reads them."""

from __future__ import annotations

import importlib.util

import synth
from conftest import ROOT


def test_the_benchmark_stack_renders(tmp_path):
    spec = importlib.util.spec_from_file_location("synth_bench", ROOT / "bench" / "synth_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = bench.write_stack(tmp_path, 16)
    result = synth.synthesize(ROOT, synth.StackFile.locate(ROOT, None, path))
    assert result.error is None and result.exit_code == 0, result.error
    assert result.plan.slices == 16
