"""What a careless new user met after "Day one": python -m synth.add with names that are Pulumi
stack names but not GKE names, copies of a fleet stack, stack files it could not read or
write, and fleet workers that clash with another stack's clusters in GCP."""

from __future__ import annotations

import json
import os

import pytest

from gke_ai_batch import synth
from gke_ai_batch.synth import add as add_cmd
from gke_ai_batch.synth import yamlread
from conftest import synth_config
from test_dayone_cli import tree  # noqa: F401  (the fixture)
from test_hostile_inputs import snapshot


def cluster_names(path) -> list[str]:
    config = yamlread.load(yamlread.decode(path.read_bytes())).data["config"]
    workers = (config.get("gke-ai-batch:fleet") or {}).get("workers", [])
    return [config["gke-ai-batch:cluster"]["name"], *(w["cluster"]["name"] for w in workers)]


@pytest.mark.parametrize(("stack", "cluster"), [("East.V2", "east-v2"), ("ml_team", "ml-team"), ("b" * 100, "b" * 40)])
def test_add_names_the_copys_cluster_in_gke_form_for_any_pulumi_stack_name(tree, stack, cluster):  # noqa: F811
    said = add_cmd.add(tree, stack)
    assert f"with the cluster named {cluster!r}" in said[0]
    assert cluster_names(tree / "stacks" / f"Pulumi.{stack}.yaml") == [cluster]
    assert add_cmd.missing_registration(tree, stack) == []


def test_add_refused_copy_says_how_to_keep_a_file_to_fix(tree):  # noqa: F811
    before = snapshot(tree)
    with pytest.raises(add_cmd.Refused) as refused:
        add_cmd.add(tree, "1-1")  # no letter to start a cluster name with: the copy clashes with dev
    assert "with cluster 'ml-dev' in us-central1" in str(refused.value)
    assert "write stacks/Pulumi.1-1.yaml yourself" in refused.value.lines[-1]
    assert snapshot(tree) == before


def test_a_fleet_worker_clashing_with_another_stacks_cluster_is_refused(tree):  # noqa: F811
    # Only the manager renamed: the four workers are fleet-dws's own clusters, in its project.
    text = (tree / "stacks" / "Pulumi.fleet-dws.yaml").read_text()
    (tree / "stacks" / "Pulumi.copy.yaml").write_text(text.replace("name: fleet-manager", "name: copy-manager"))
    result = synth.synthesize(tree, synth.StackFile.locate(tree, "copy", None))
    assert [(d.path, d.rule) for d in result.diagnostics] == [
        (f"gke-ai-batch:fleet.workers[{i}].cluster.name", "cross-stack") for i in range(4)
    ]
    assert "with cluster 'fleet-us-east4' in us-east4; GKE cluster names are unique" in result.diagnostics[0].message
    assert result.diagnostics[0].line == 36


def test_a_fleet_worker_in_its_own_project_clashes_only_there(tree):  # noqa: F811
    text = (tree / "stacks" / "Pulumi.fleet-dws.yaml").read_text()
    text = text.replace("name: fleet-manager", "name: copy-manager")
    text = text.replace("      - name: us-east4\n", "      - name: us-east4\n        project: acme-other\n")
    for worker in ("europe-west4", "us-west1", "us-east5"):
        text = text.replace(f"name: fleet-{worker}", f"name: copy-{worker}")
    (tree / "stacks" / "Pulumi.copy.yaml").write_text(text)
    assert not synth.synthesize(tree, synth.StackFile.locate(tree, "copy", None)).diagnostics


def test_add_from_a_fleet_renames_every_clashing_worker(tree):  # noqa: F811
    said = add_cmd.add(tree, "fleet2", "fleet-dws")
    assert cluster_names(tree / "stacks" / "Pulumi.fleet2.yaml") == [
        "fleet2",
        "fleet2-us-east4",
        "fleet2-europe-west4",
        "fleet2-us-west1",
        "fleet2-us-east5",
    ]
    assert "the original's would clash with them in GCP" in said[0]
    assert add_cmd.missing_registration(tree, "fleet2") == []


def test_add_never_writes_through_a_dangling_link(tree, tmp_path):  # noqa: F811
    target = tmp_path / "elsewhere.yaml"
    (tree / "stacks" / "Pulumi.ln.yaml").symlink_to(target)
    with pytest.raises(add_cmd.Refused) as refused:
        add_cmd.add(tree, "ln")
    assert "stacks/Pulumi.ln.yaml" in str(refused.value)
    assert not os.path.lexists(target)
    assert add_cmd.missing_registration(tree, "ln") == ["stacks/urns/ln.txt", "policy/config/ln.json"]


@pytest.mark.parametrize("content", [b"\x80\x81 not utf-8", None], ids=["not-utf8", "a-folder"])
def test_add_refuses_a_stack_file_it_cannot_read_without_a_traceback(tree, content):  # noqa: F811
    path = tree / "stacks" / "Pulumi.odd.yaml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    before = snapshot(tree)
    with pytest.raises(add_cmd.Refused) as refused:
        add_cmd.add(tree, "odd")
    assert refused.value.code == 2 and "stacks/Pulumi.odd.yaml" in str(refused.value)
    assert snapshot(tree) == before


def test_add_refuses_a_folder_it_cannot_write_in_without_a_traceback(tree):  # noqa: F811
    import shutil

    shutil.rmtree(tree / "stacks" / "urns")
    (tree / "stacks" / "urns").write_text("")  # where the URN lists go is not a folder
    before = snapshot(tree)
    with pytest.raises(add_cmd.Refused) as refused:
        add_cmd.add(tree, "east")
    assert "stacks/urns/east.txt: cannot be written" in str(refused.value)
    assert snapshot(tree) == before


def test_add_reads_the_schema_line_of_a_stack_file_with_a_bom(tree):  # noqa: F811
    text = (tree / "stacks" / "Pulumi.tpu-flex.yaml").read_text().replace("name: tpu-flex", "name: bom")
    (tree / "stacks" / "Pulumi.bom.yaml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    add_cmd.add(tree, "bom")
    assert add_cmd.missing_registration(tree, "bom") == []


def test_add_interrupted_leaves_nothing_and_says_so(tree, monkeypatch, capsys):  # noqa: F811
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    add = add_cmd.add
    monkeypatch.setattr(add_cmd, "add", lambda root, name, source, notes=None: add(tree, name, source, notes=notes))
    monkeypatch.setattr(synth, "synthesize", interrupted)
    before = snapshot(tree)
    assert add_cmd.main(["east"]) == 130
    assert capsys.readouterr().err == "synth.add: east: interrupted; nothing written\n"
    assert snapshot(tree) == before


# -- durations as Go writes them -----------------------------------------------------------------


def _pool_input(result, key: str):
    pools = [r for r in result.recording.resources if r.type == "gcp:container/nodePool:NodePool"]
    return [p.inputs["nodeConfig"].get(key) for p in pools]


def test_a_duration_in_several_units_renders_as_go_and_gke_read_it(tmp_path):
    from test_config_errors import pools, valid

    config = valid()
    pools(config)[1].update(maxRunDuration="1h30m")
    config["gke-ai-batch:kueue"] = {"waitForPodsReady": {"timeout": "1h30m", "recoveryTimeout": "2m30s"}}
    result = synth_config(tmp_path, config)
    assert result.diagnostics == []
    assert "5400s" in _pool_input(result, "maxRunDuration")
    # Kueue's Configuration, as the chart's managerConfig string: the same durations, in Go's form.
    rendered = json.dumps([r.inputs for r in result.recording.resources])
    assert "timeout: 90m" in rendered and "recoveryTimeout: 150s" in rendered
