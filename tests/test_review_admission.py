"""Admission in the PR diff: every render writes admission.json (the model's verdict per sample,
each ClusterQueue's largest admissible workload), and the diff names what changes in it."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import STACKS, synth_config, synth_stack
from test_diff import _config, _variant


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    from gke_ai_batch import synth
    out = {}
    for name in ("base", "add-slice"):
        result = synth_config(tmp_path_factory.mktemp(name), _config() if name == "base" else _variant(name))
        assert not result.diagnostics, [d.render() for d in result.diagnostics]
        out[name] = synth.output_files(result)
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_every_render_writes_the_models_verdicts_and_largest_workloads(stack):
    from gke_ai_batch import synth
    result = synth_stack(stack)
    data = json.loads(synth.output_files(result)["admission.json"])
    assert set(data) == {"workloads", "queues"}
    if result.fleet is None:
        assert set(data["workloads"]) == {v.workload.name for v in result.admission.verdicts}
        assert set(data["queues"]) == set(result.admission.world.queues)
        assert all(v["admissible"] for v in data["workloads"].values())  # else synth refuses the stack
    else:
        assert all("/" in k for k in (*data["workloads"], *data["queues"]))


def test_a_queue_that_grows_shows_its_largest_workload_before_and_after(renders):
    from gke_ai_batch.synth import diff

    data = diff.compute(diff.Render.from_files(renders["base"]), diff.Render.from_files(renders["add-slice"]))
    assert data["admission"]["compared"] and not data["admission"]["workloads"]
    assert data["admission"]["queues"]["qa"]["before"]["fa/google.com/tpu"] == {"most": "16", "nominal": "16"}
    assert data["admission"]["queues"]["qa"]["after"]["fa/google.com/tpu"] == {"most": "24", "nominal": "24"}
    assert "qb" not in data["admission"]["queues"]
    text = diff.markdown("test", data)
    assert "### Admission verdicts that change" not in text  # no sample's verdict changes
    assert "### Largest workload a cluster queue can admit" in text and "| `qa` | `fa` | 16 → 24 |" in text


def test_a_sample_that_is_no_longer_admissible_is_named_with_the_models_reason():
    # A stack with a sample that could never run is refused, so one render of the same code
    # never flips a verdict: a base rendered by an older model can. Crafted here.
    from gke_ai_batch import synth
    from gke_ai_batch.synth import diff

    base = diff.Render.from_files(synth.output_files(synth_stack("tpu-multislice")))
    name = "low-priority"
    assert base.admission["workloads"][name]["admissible"]
    head_admission = copy.deepcopy(base.admission)
    head_admission["workloads"][name] = {"admissible": False, "clusterQueue": "qa", "rule": "quota",
                                         "reason": "asks for 32 google.com/tpu; qa admits at most 16"}
    head = diff.Render(base.resources, base.cost, base.policy, base.manifests, head_admission)
    data = diff.compute(base, head)
    assert list(data["admission"]["workloads"]) == [name] and not data["empty"]
    text = diff.markdown("test", data)
    assert f"| `{name}` | ✅ admissible | ❌ never: asks for 32 google.com/tpu; qa admits at most 16 |" in text
    # The reverse, too.
    back = diff.compute(head, base)
    assert back["admission"]["workloads"][name]["after"]["admissible"] is True


def test_a_base_render_without_admission_json_is_diffed_without_it(renders, tmp_path):
    from gke_ai_batch.synth import diff, output

    files = dict(renders["base"])
    del files["admission.json"]
    output.write(tmp_path / "old", files)
    data = diff.compute(diff.Render.from_folder(tmp_path / "old"), diff.Render.from_files(renders["add-slice"]))
    assert data["admission"] == {"compared": False, "workloads": {}, "queues": {}}
    assert "Admission verdicts are not compared" in diff.markdown("test", data)
