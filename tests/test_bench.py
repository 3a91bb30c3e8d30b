"""The benchmark's generated stacks are stacks synth renders (a benchmark of refusals would
measure nothing), written as Pulumi reads them."""

from __future__ import annotations

import importlib.util
import json

from gke_ai_batch import synth
from conftest import ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("synth_bench", ROOT / "bench" / "synth_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_benchmark_stack_renders(tmp_path):
    bench = _bench()
    path = bench.write_stack(tmp_path, 16)
    result = synth.synthesize(ROOT, synth.StackFile.locate(ROOT, None, path))
    assert result.error is None and result.exit_code == 0, result.error
    assert result.plan.slices == 16


def test_the_sdk_floor_registers_what_synth_recorded_flat_under_the_stock_mocks(tmp_path, monkeypatch):
    """Issue 21's floor: the generated program registers every resource synth recorded (same type
    tokens, names and inputs) under pulumi.runtime.set_mocks, and waits for them all."""
    import subprocess
    import sys

    from gke_ai_batch.synth import engine

    bench = _bench()
    # The worker notes which registrations are custom resources; here only for this test.
    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", engine.RecordingMonitor.RegisterResource)
    monkeypatch.setattr(bench, "_CUSTOM", {})
    bench._note_custom()
    path = bench.write_stack(tmp_path, 1)
    result = synth.synthesize(ROOT, synth.StackFile.locate(ROOT, None, path))
    assert result.error is None, result.error
    shape = bench._shape(result.recording)
    kinds = {r["kind"] for r in shape}
    assert kinds == {"custom", "component", "provider"}, kinds
    assert all(r["type"] != "pulumi:pulumi:Stack" for r in shape)
    shape_path = tmp_path / "shape.json"
    shape_path.write_text(json.dumps(shape))
    # Only pulumi itself: the providers' modules cost seconds to import and register nothing here.
    floor = bench.write_sdk_floor(tmp_path, 1, shape_path, [("pulumi", "CustomResource")])
    proc = subprocess.run([sys.executable, str(floor)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(len(shape))], proc.stdout


def test_the_floor_imports_the_sdk_class_of_each_type_it_registers(tmp_path):
    """Issue 29's floor imports what a hand-written program registering the same resources
    would: the provider's own class for each type token (as the provider registers it with the
    SDK), the generic CustomResource for a Kubernetes type no SDK class declares, and nothing for
    components."""
    bench = _bench()
    shape = [
        {"kind": "custom", "type": "gcp:container/nodePool:NodePool"},
        {"kind": "custom", "type": "gcp:compute/resourcePolicy:ResourcePolicy"},
        {"kind": "custom", "type": "kubernetes:core/v1:Namespace"},
        {"kind": "custom", "type": "kubernetes:helm.sh/v3:Release"},
        {"kind": "custom", "type": "kubernetes:rbac.authorization.k8s.io/v1:Role"},
        {"kind": "custom", "type": "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"},
        {"kind": "custom", "type": "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"},
        {"kind": "provider", "type": "pulumi:providers:kubernetes"},
        {"kind": "component", "type": "gke-ai-batch:index:TpuSlices"},
    ]
    assert bench.floor_imports(shape) == [
        ("pulumi_gcp.compute", "ResourcePolicy"),
        ("pulumi_gcp.container", "NodePool"),
        ("pulumi_kubernetes", "Provider"),
        ("pulumi_kubernetes.apiextensions", "CustomResource"),
        ("pulumi_kubernetes.core.v1", "Namespace"),
        ("pulumi_kubernetes.helm.v3", "Release"),
        ("pulumi_kubernetes.rbac.v1", "Role"),
    ]
