"""What keeps the test suite quick without changing what its tests prove: the faster tools it
leans on write what the slower ones did, and a hostile input is refused before the slow path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import ROOT, STACKS
from gke_ai_batch.synth import yamlread


# Scalars the fuzzers draw: what YAML 1.1 or yaml.v2 reads as another type, quotes, non-ASCII,
# control characters, a line longer than the emitters' width.
ODD = {"config": {"a": ["yes", "n", "1e3", "0x1F", "", " lead", "a: b", "#x", "é", "\x00\t", "x" * 200, "~", None, 1.5, True]}}


def _config(stack: str):
    return ODD if stack == "odd" else yamlread.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()).data


@pytest.mark.parametrize("stack", [*STACKS, "odd"])
def test_stack_files_are_written_as_pyyamls_own_emitter_writes_them(stack):
    """yamlread.dump uses libyaml's emitter (the tests write thousands of stack files); its text
    is the pure-Python emitter's, byte for byte, and reads back as what was written."""
    config = _config(stack)
    assert yamlread._StackDumper.__mro__[1] is getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class PureDumper(yaml.SafeDumper):
        pass

    PureDumper.add_representer(str, yamlread._represent_str)
    text = yamlread.dump(config)
    assert text == yaml.dump(config, Dumper=PureDumper, sort_keys=False, allow_unicode=False)
    assert yamlread.load(text).data == config


def test_a_base_manifests_yaml_nested_too_deeply_is_refused_before_pyyaml_composes_it(monkeypatch):
    """PyYAML's pure-Python reader takes ~1 s to reach its recursion limit on `[[[[...`: the
    depth is read off libyaml's events first (gke_ai_batch/synth/diff.py, MAX_YAML_DEPTH)."""
    from gke_ai_batch.synth import diff

    def composed(text):
        raise AssertionError("PyYAML's composer was handed a file nested past the limit")

    deep = "[" * (diff.MAX_YAML_DEPTH + 1) + "]" * (diff.MAX_YAML_DEPTH + 1)
    with monkeypatch.context() as m:
        m.setattr(diff.yaml, "safe_load_all", composed)
        with pytest.raises(diff.DiffError, match="is not YAML: nested too deeply") as refused:
            diff.Render.from_files({"manifests.yaml": "[" * 100_000}, ROOT)
        assert Path(refused.value.path).name == "manifests.yaml"
        with pytest.raises(diff.DiffError, match="is not YAML: nested too deeply"):
            diff.Render.from_files({"manifests.yaml": deep}, ROOT)
    # At the limit, the file is read as before.
    at_limit = "[" * diff.MAX_YAML_DEPTH + "]" * diff.MAX_YAML_DEPTH
    assert diff._yaml_documents(at_limit) == list(yaml.safe_load_all(at_limit))


def test_the_suite_collects_garbage_less_often_than_cpythons_default():
    """tests/conftest.py: full collections over the suite's heap were ~12% of a worker's CPU."""
    import gc

    threshold = gc.get_threshold()
    assert threshold[0] >= 10_000 and threshold[1:] >= (50, 100), threshold


def _embedded_yaml(stack: str) -> list[str]:
    """The YAML texts the plan writes into a render through libyaml's emitter
    (gke_ai_batch/plan/kueue.py _yaml): Kueue's Configuration in its chart values, the webhook
    probe's objects in their ConfigMap."""
    from conftest import synth_stack

    texts = []
    for r in synth_stack(stack).recording.resources:
        manager = ((r.inputs.get("values") or {}).get("managerConfig") or {}) if r.type == "kubernetes:helm.sh/v3:Release" else {}
        texts += [manager["controllerManagerConfigYaml"]] if "controllerManagerConfigYaml" in manager else []
        if r.type == "kubernetes:core/v1:ConfigMap":
            texts += [text for key, text in (r.inputs.get("data") or {}).items() if key.endswith(".yaml")]
    return texts


@pytest.mark.parametrize("stack", STACKS)
def test_the_yaml_a_render_embeds_is_pyyamls_own_emitters_text(stack):
    texts = _embedded_yaml(stack)
    assert texts, "the stack embeds no Kueue Configuration: the walk above lost it"
    for text in texts:
        assert text == yaml.safe_dump(yaml.safe_load(text), sort_keys=False)
