"""One program, several clusters: each cluster's resources under its own naming scope.

The program below deploys one committed stack's plan twice, as clusters "a" and "b", under the
recording engine synth uses. Pulumi refuses a second resource with a URN already taken, and a
URN holds its parent's type, not the parent's name: without scopes the second cluster would
collide with the first."""

from __future__ import annotations

import functools
import json

import pytest

import synth
from components.naming import KUBERNETES_PROVIDER, scope_of, scoped
from conftest import ROOT, synth_stack
from synth import engine, stackfile

PROGRAM = """
import pulumi
from components.config import load_from_pulumi
from components.plan import build_plan
from components.platform import deploy

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


def test_without_scopes_the_second_cluster_takes_the_first_ones_urns(tmp_path):
    # What the engine refuses ("Duplicate resource URN"; pulumi/pulumi pkg/diag/errors.go
    # GetDuplicateResourceURNError). The mock engine records both.
    urns = [r.urn for r in run_program(tmp_path, "dev", ("", "")).resources]
    single = [r.urn for r in synth_stack("dev").recording.resources]
    assert sorted(urns) == sorted(single[:1] + single[1:] * 2)


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
