"""The diff of a render against a base render (`python -m synth STACK --base DIR`, gke_ai_batch/synth/diff.py):
a stack against its own render is an empty diff; each kind of change names exactly that change,
with its capacity, quota and cost deltas and what `pulumi up` will do."""

from __future__ import annotations

import copy
import functools
import json

import pytest

from conftest import STACKS, base_config, synth_config, synth_stack

POOL = "gcp:container/nodePool:NodePool"


def _config() -> dict:
    return base_config(
        nodePools=[
            {"name": "a", "tpu": {"version": "v5e", "topology": "2x4"}, "slices": 2},
            {"name": "b", "tpu": {"version": "v5e", "topology": "4x4"}, "slices": 1},
        ],
        flavors=[{"name": "fa", "pools": ["a"]}, {"name": "fb", "pools": ["b"]}],
        clusterQueues=[
            {"name": "qa", "namespaceSelector": {}, "flavors": ["fa"]},
            {"name": "qb", "namespaceSelector": {}, "flavors": ["fb"]},
        ],
        teams=[{"namespace": "research", "localQueue": "lq", "clusterQueue": "qa"}],
    )


def _variant(name: str) -> dict:
    config = copy.deepcopy(_config())
    pools = config["gke-ai-batch:nodePools"]
    if name == "add-slice":
        pools[0]["slices"] = 3
    elif name == "move-team":
        config["gke-ai-batch:teams"][0]["clusterQueue"] = "qb"
    elif name == "topology":
        pools[1]["tpu"]["topology"] = "4x8"
    elif name == "remove-pool":
        del pools[1]
        config["gke-ai-batch:flavors"].pop()
        config["gke-ai-batch:clusterQueues"].pop()
    return config


@functools.lru_cache(maxsize=None)
def _files(name: str, tmp_root: str) -> dict[str, str]:
    """One render per variant per session."""
    from gke_ai_batch import synth
    from pathlib import Path

    folder = Path(tmp_root) / name
    folder.mkdir(parents=True, exist_ok=True)
    result = synth_config(folder, _config() if name == "base" else _variant(name))
    assert not result.diagnostics, [d.render() for d in result.diagnostics]
    return synth.output_files(result)


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("diff"))
    return lambda name: _files(name, root)


def _diff(renders, name: str) -> dict:
    from gke_ai_batch.synth import diff

    return diff.compute(diff.Render.from_files(renders("base")), diff.Render.from_files(renders(name)))


def _urn_names(urns: list[str]) -> list[str]:
    return [u.split("::")[-1] for u in urns]


@pytest.mark.parametrize("stack", STACKS)
def test_a_stack_against_its_own_render_is_an_empty_diff(stack, tmp_path):
    from gke_ai_batch import synth
    from gke_ai_batch.synth import diff, output

    files = synth.output_files(synth_stack(stack))
    output.write(tmp_path / "base", files)
    data = diff.compute(diff.Render.from_folder(tmp_path / "base"), diff.Render.from_files(files))
    assert data["empty"], data
    assert diff.markdown(stack, data).splitlines()[-1] == "No changes: the render matches the base render."


def test_adding_a_slice_names_the_new_pool_its_chips_and_cost(renders):
    data = _diff(renders, "add-slice")
    r = data["resources"]
    assert _urn_names(r["added"]) == ["a-2"] and _urn_names(r["changed"]) == ["qa"]
    assert not r["replaced"] and not r["deleted"]
    assert data["capacity"] == {"fa": {"before": {"pools": 2, "slices": 2, "vms": 4, "accelerators": 16},
                                       "after": {"pools": 3, "slices": 3, "vms": 6, "accelerators": 24}}}
    # Kueue's quota follows the flavor's chips: 16 -> 24.
    quota = data["clusterQueues"]["qa"]
    assert quota["before"]["quotas"]["fa/google.com/tpu"]["nominalQuota"] == 16
    assert quota["after"]["quotas"]["fa/google.com/tpu"]["nominalQuota"] == 24
    assert list(data["cost"]["pools"]) == ["test/a-2"] and data["cost"]["pools"]["test/a-2"]["before"] is None
    added = data["cost"]["pools"]["test/a-2"]["after"]
    assert data["cost"]["after"] == pytest.approx(data["cost"]["before"] + added)
    assert [(s["operation"], s["name"]) for s in data["operations"]] == [("create", "a-2"), ("update", "qa")]
    assert data["operations"][0]["note"].startswith("slow")
    assert not data["teams"] and not data["priorities"]


def test_moving_a_team_to_another_queue_changes_its_local_queue_only(renders):
    data = _diff(renders, "move-team")
    r = data["resources"]
    assert _urn_names(r["changed"]) == ["research/lq"] and not (r["added"] or r["replaced"] or r["deleted"])
    assert data["teams"] == {"research/lq": {"before": "qa", "after": "qb"}}
    assert r["details"][r["changed"][0]] == [
        {"path": "spec.clusterQueue", "before": "qa", "after": "qb", "replaces": False}]
    assert not data["capacity"] and not data["clusterQueues"] and data["cost"]["before"] == data["cost"]["after"]


def test_a_new_topology_replaces_the_pool_with_a_capacity_gap(renders):
    data = _diff(renders, "topology")
    r = data["resources"]
    assert _urn_names(r["replaced"]) == ["b-0"]
    changes = {c["path"]: c for c in r["details"][r["replaced"][0]]}
    assert changes["placementPolicy.tpuTopology"] == {
        "path": "placementPolicy.tpuTopology", "before": "4x4", "after": "4x8", "replaces": True}
    assert data["capacity"] == {"fb": {"before": {"pools": 1, "slices": 1, "vms": 4, "accelerators": 16},
                                       "after": {"pools": 1, "slices": 1, "vms": 8, "accelerators": 32}}}
    quota = data["clusterQueues"]["qb"]
    assert quota["before"]["quotas"]["fb/google.com/tpu"]["nominalQuota"] == 16
    assert quota["after"]["quotas"]["fb/google.com/tpu"]["nominalQuota"] == 32
    step = next(s for s in data["operations"] if s["name"] == "b-0")
    assert step["operation"] == "replace" and "capacity gap" in step["note"]
    assert data["cost"]["after"] > data["cost"]["before"]


def test_removing_a_pool_deletes_it_last_and_says_its_pods_are_evicted(renders):
    from gke_ai_batch.synth import diff

    data = _diff(renders, "remove-pool")
    r = data["resources"]
    assert set(_urn_names(r["deleted"])) == {"b", "b-0", "fb", "qb"} and not r["added"]
    assert data["capacity"] == {"fb": {"before": {"pools": 1, "slices": 1, "vms": 4, "accelerators": 16}, "after": None}}
    assert data["clusterQueues"]["qb"]["after"] is None
    assert data["cost"]["pools"]["test/b-0"]["after"] is None
    steps = data["operations"]
    assert all(s["operation"] == "delete" for s in steps)
    pool = next(s for s in steps if s["name"] == "b-0")
    assert "evicted" in pool["note"] and pool["doc"].startswith("https://cloud.google.com/")
    text = diff.markdown("test", data)
    assert "### What `pulumi up` will do" in text and "### Cost per 30 days" in text


def test_the_cli_writes_diff_files_and_refuses_a_base_that_is_no_render(tmp_path, capsys):
    # In this process (synth.__main__.main), as tests/test_hostile_inputs.py runs the CLI: four
    # fresh processes cost ~10 s of the suite's minute.
    from gke_ai_batch.synth.__main__ import main

    def cli(*argv):
        code = main([str(a) for a in argv])
        err = capsys.readouterr().err
        assert "Traceback" not in err
        return code, err

    assert cli("tpu-multislice", "--out", tmp_path / "base", "--quiet") == (0, "")
    code, err = cli("tpu-multislice", "--out", tmp_path / "head", "--base", tmp_path / "base", "--quiet")
    assert code == 0, err
    assert json.loads((tmp_path / "head" / "diff.json").read_text())["resources"]["added"] == []
    assert "No changes" in (tmp_path / "head" / "diff.md").read_text()
    (tmp_path / "empty").mkdir()
    code, err = cli("tpu-multislice", "--out", tmp_path / "head", "--base", tmp_path / "empty")
    assert code == 2
    assert f"{tmp_path / 'empty' / 'resources.json'}: --base: is missing" in err
    (tmp_path / "base" / "cost.json").write_text("{")
    code, err = cli("tpu-multislice", "--out", tmp_path / "head", "--base", tmp_path / "base")
    assert code == 2 and "cost.json: --base: is not JSON" in err
