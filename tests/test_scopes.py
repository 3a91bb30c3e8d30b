"""One program, several clusters: each cluster's resources under its own naming scope, and
synth's per-cluster manifests.

The program below deploys one committed stack's plan twice, as clusters "a" and "b", under the
recording engine synth uses. Pulumi refuses a second resource with a URN already taken, and a
URN holds its parent's type, not the parent's name: without scopes the second cluster would
collide with the first."""

from __future__ import annotations

import functools
import json
import os

import pytest
import yaml

from gke_ai_batch import synth
from gke_ai_batch.domain.naming import KUBERNETES_PROVIDER, scope_of, scoped
from conftest import ROOT, synth_stack
from gke_ai_batch.synth import engine, output, stackfile
from test_hostile_inputs import snapshot

PROGRAM = """
import pulumi
from gke_ai_batch.config import load_from_pulumi
from gke_ai_batch.plan import build_plan
from gke_ai_batch.components.platform import deploy

plan = build_plan(load_from_pulumi(source="scopes"), pulumi.Config("gcp").get("project"))
for scope in {scopes!r}:
    for name, value in deploy(plan, scope=scope).items():
        pulumi.export(f"{{scope}}.{{name}}", value)
"""
ROOT_STACK = "pulumi:pulumi:Stack"


def run_program(tmp_path, stack: str, scopes: tuple[str, ...]) -> engine.Recording:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(scopes=scopes))
    config = stackfile.read(synth.StackFile.locate(ROOT, stack, None))
    return engine.run(
        program,
        project=synth.project_name(ROOT),
        stack=stack,
        config=config.values,
        secret_keys=config.secret_keys,
        outputs_for=synth.outputs_for(config.values.get("gcp:project", "")),
    )


@functools.lru_cache(maxsize=None)
def two_clusters(stack: str) -> engine.Recording:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        return run_program(Path(tmp), stack, ("a", "b"))


def unscoped(registration: engine.Registration, scope: str) -> str:
    """The registration as JSON, every logical name of `scope` back to its single-cluster one
    (its name, and in its own URN, its parent's, its dependencies' and its provider's)."""
    data = registration.to_json()
    data["name"] = data["name"].removeprefix(f"{scope}/")
    return json.dumps(data, sort_keys=True).replace(f"::{scope}/", "::")


# prod: a workload policy, admission checks, created namespaces; tpu-hotswap: its own node
# service account, an Artifact Registry grant, a patched namespace, sample workloads.
STACKS = ["prod", "tpu-hotswap"]


@pytest.mark.parametrize("stack", STACKS)
def test_each_cluster_is_the_single_cluster_stack_under_its_own_names(stack):
    recording = two_clusters(stack)
    urns = [r.urn for r in recording.resources]
    assert len(urns) == len(set(urns))
    single = [json.dumps(r.to_json(), sort_keys=True) for r in synth_stack(stack).recording.resources]
    for scope in ("a", "b"):
        mine = [r for r in recording.resources if r.name.startswith(f"{scope}/")]
        # Everything but the names is the single-cluster stack's: GKE and Kubernetes names,
        # inputs, options, parents, dependencies, in the same order.
        assert [unscoped(r, scope) for r in mine] == single[1:]
    assert [r.type for r in recording.resources if not r.name.startswith(("a/", "b/"))] == [ROOT_STACK]
    outputs = synth_stack(stack).recording.outputs
    assert {k: recording.outputs[f"a.{k}"] for k in outputs} == {k: recording.outputs[f"b.{k}"] for k in outputs} == outputs


@pytest.mark.parametrize("stack", STACKS)
def test_each_clusters_objects_go_through_its_own_provider(stack):
    recording = two_clusters(stack)
    providers = {r.name: r.urn for r in recording.resources if r.type == "pulumi:providers:kubernetes"}
    assert sorted(providers) == ["a/k8s", "b/k8s"]
    objects = [r for r in recording.resources if r.type.startswith("kubernetes:")]
    assert objects
    for r in objects:
        assert r.options["provider"] == providers[scoped(r.name.split("/", 1)[0], KUBERNETES_PROVIDER)], r.urn
    single = synth.output_files(synth_stack(stack))["manifests.yaml"]
    assert synth.Result(stack, recording=recording).manifests_by_cluster == {"a": single, "b": single}
    assert synth_stack(stack).manifests_by_cluster == {"": single}


def test_without_scopes_the_second_cluster_is_refused_as_pulumi_would(tmp_path):
    # What the engine refuses ("Duplicate resource URN"; pulumi/pulumi pkg/diag/errors.go
    # GetDuplicateResourceURNError), the recording engine refuses too.
    with pytest.raises(engine.DuplicateUrnError, match="Duplicate resource URN 'urn:pulumi:dev::gke-ai-batch::"):
        run_program(tmp_path, "dev", ("", ""))


def test_scoped_names_and_their_inverse():
    assert scoped("", "ml/train") == "ml/train"
    assert scoped("us-east4", "ml/train") == "us-east4/ml/train"
    assert scope_of(scoped("us-east4", KUBERNETES_PROVIDER), KUBERNETES_PROVIDER) == "us-east4"
    assert scope_of(KUBERNETES_PROVIDER, KUBERNETES_PROVIDER) == ""
    for name in ("k8s-2", "a/b/k8s", "../k8s", "A/k8s", "/k8s"):
        assert scope_of(name, KUBERNETES_PROVIDER) is None, name
    for bad in ("..", "a/b", "A", "-a", "a-", "1a", "a" * 41, "a\n", "a.b", "\uff41", "a\x00"):
        with pytest.raises(ValueError, match="is not a cluster scope"):
            scoped(bad, "cluster")


# -- synth's output: manifests/<cluster>.yaml ------------------------------------------------------


def _registration(name: str, type_: str, provider: str | None = None, inputs: dict | None = None):
    options = {"provider": provider} if provider else {}
    return engine.Registration(f"urn:pulumi:s::p::{type_}::{name}", type_, name, None, [], inputs or {}, options)


def _recording(*registrations: engine.Registration) -> engine.Recording:
    return engine.Recording(resources=list(registrations))


def test_several_clusters_write_one_manifest_file_each(tmp_path):
    result = synth.Result("prod", recording=two_clusters("prod"))
    out = tmp_path / "out"
    synth.write_outputs(result, out)
    files = snapshot(out)
    assert sorted(k for k in files if k.startswith("manifests")) == ["manifests", "manifests.yaml", "manifests/a.yaml", "manifests/b.yaml"]
    a, b = (list(yaml.safe_load_all(files[f"manifests/{c}.yaml"])) for c in "ab")
    assert a == b and a, "each cluster has every object of the plan"
    assert list(yaml.safe_load_all(files["manifests.yaml"])) == a + b
    assert oct(os.stat(out / "manifests").st_mode & 0o777) == oct(0o755)
    # The next run may replace what synth wrote, manifests/ included.
    assert output.check_target(out, ROOT) == out
    synth.write_outputs(result, out)
    assert snapshot(out) == files


def test_a_single_cluster_stack_writes_no_manifests_folder():
    files = synth.output_files(synth_stack("dev"))
    assert not [name for name in files if "/" in name]
    assert synth_stack("dev").manifests_by_cluster == {"": files["manifests.yaml"]}


def test_a_failed_write_of_a_cluster_file_leaves_the_previous_output(tmp_path, monkeypatch):
    result = synth.Result("prod", recording=two_clusters("prod"))
    out = tmp_path / "out"
    synth.write_outputs(result, out)
    (out / "manifests" / "a.yaml").write_text("previous\n")
    before = snapshot(tmp_path)
    written = []

    def failing_fsync(fd):
        written.append(os.readlink(f"/proc/self/fd/{fd}"))
        if written[-1].endswith("/manifests/b.yaml"):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "fsync", failing_fsync)
    with pytest.raises(output.OutputError, match="No space left on device"):
        synth.write_outputs(result, out)
    assert written[-1].endswith("/manifests/b.yaml")
    assert snapshot(tmp_path) == before, "the previous output changed, or a temporary folder was left"


@pytest.mark.parametrize(
    "plant, shown",
    [
        (lambda m: (m / "notes.txt").write_text("keep me\n"), "manifests/notes.txt"),
        (lambda m: (m / "x.yaml").symlink_to("/etc/hostname"), "manifests/x.yaml"),
        (lambda m: (m / "sub").mkdir(), "manifests/sub"),
        (lambda m: (m / "Upper.yaml").write_text(""), "manifests/Upper.yaml"),
    ],
    ids=["a note", "a link", "a folder", "not a cluster's name"],
)
def test_a_manifests_folder_holding_foreign_files_is_not_replaced(tmp_path, plant, shown):
    out = tmp_path / "out"
    output.write(out, {"report.md": "previous\n", "manifests/a.yaml": ""})
    plant(out / "manifests")
    with pytest.raises(output.OutputError, match=f"now also holds {shown}"):
        output.check_target(out, ROOT)


def test_a_manifests_link_or_an_unmarked_manifests_folder_is_not_replaced(tmp_path):
    linked = tmp_path / "linked"
    output.write(linked, {"report.md": ""})
    (tmp_path / "elsewhere").mkdir()
    (linked / "manifests").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(output.OutputError, match="now also holds manifests"):
        output.check_target(linked, ROOT)
    unmarked = tmp_path / "unmarked"
    (unmarked / "manifests").mkdir(parents=True)
    (unmarked / "report.md").write_text("")
    with pytest.raises(output.OutputError, match="is not a folder synth wrote"):
        output.check_target(unmarked, ROOT)


@pytest.mark.parametrize(
    "name",
    [
        "manifests/../x.yaml", "manifests/../../etc/x.yaml", "../x.yaml", "/etc/x.yaml", "manifests/.yaml",
        "manifests/A.yaml", "manifests/a.yml", "manifests/a", "manifests/a/b.yaml", "other/a.yaml", ".hidden",
        "manifests", "", "a\x00.yaml", f"manifests/{'a' * 41}.yaml", output.MARKER,
    ],
)
def test_path_tricks_are_refused_before_anything_is_written(tmp_path, name):
    out = tmp_path / "out"
    output.write(out, {"report.md": "previous\n"})
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match="synth writes no file named|no cluster file"):
        output.write(out, {"report.md": "new\n", name: "x"})
    assert snapshot(tmp_path) == before


def test_every_object_must_belong_to_a_cluster():
    a, b = _registration("a/k8s", "pulumi:providers:kubernetes"), _registration("b/k8s", "pulumi:providers:kubernetes")
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    ok = _recording(a, b, _registration("a/ml", "kubernetes:core/v1:Namespace", a.urn, ns))
    assert synth.manifests_by_cluster(ok) == {"a": [ns], "b": []}
    assert synth.Result("s", recording=ok).manifests_by_cluster == {"a": yaml.safe_dump(ns, sort_keys=True), "b": ""}
    refused = {
        r"applied by no cluster's Kubernetes provider \(the default\)": _recording(
            a, b, _registration("ml", "kubernetes:core/v1:Namespace", None, ns)
        ),
        "is no cluster's": _recording(_registration("other", "pulumi:providers:kubernetes")),
    }
    for words, recording in refused.items():
        with pytest.raises(ValueError, match=words):
            synth.manifests_by_cluster(recording)
    # Several clusters, one of them unscoped: it would have no file of its own.
    mixed = _recording(_registration("k8s", "pulumi:providers:kubernetes"), a)
    with pytest.raises(ValueError, match="no cluster file for '' is not a cluster scope"):
        synth.output_files(synth.Result("s", recording=mixed))


def test_the_report_reads_each_clusters_pools_by_their_gke_names():
    from gke_ai_batch.synth import report

    single = synth_stack("prod")
    assert single.plan.config.production, "prod's pools are protected: the report says so"
    result = synth.Result("prod", recording=two_clusters("prod"), plan=single.plan, admission=single.admission)
    # The Cost section prices what was recorded: two clusters' pools cost twice one's.
    assert _without_cost(report.render(result, single.violations)) == _without_cost(report.render(single, single.violations))
    from gke_ai_batch.synth.report import cost

    assert cost.compute(result)["total"]["perHourMax"] == pytest.approx(2 * single.cost["total"]["perHourMax"])


def _without_cost(text: str) -> str:
    head, _, rest = text.partition("### Cost\n")
    return head + rest[rest.index("\n### "):]
