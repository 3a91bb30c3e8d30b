"""The fleet stack as one consumer of the library: its MultiKueue objects come through the public
MultiKueueWorker (one per worker, on its provider, after its Kueue) and MultiKueueManager (on the
manager, after every worker's, before the ClusterQueues), and a fleet deployed before keeps every
URN through aliases (tests/fixtures/urns-before-multikueue-components: the URN list as it was)."""

from __future__ import annotations

import functools

import pytest

from conftest import ROOT
from test_dayone_multikueue_components import WORKER, _refused
from test_queue_components import _old_urns

MK = "gke-ai-batch:index:MultiKueue"


@functools.lru_cache(maxsize=None)
def _fleet() -> list[dict]:
    from conftest import synth_stack

    return [r.to_json() for r in synth_stack("fleet-dws").recording.resources]


def _by_urn() -> dict[str, dict]:
    return {r["urn"]: r for r in _fleet()}


def _owner(r: dict) -> dict | None:
    parent = _by_urn().get(r.get("parent") or "")
    return parent if parent and parent["type"].startswith(MK) else None


def test_every_urn_the_fleet_stack_had_before_the_multikueue_components_is_reached_by_an_alias():
    before = (ROOT / "tests" / "fixtures" / "urns-before-multikueue-components" / "fleet-dws.txt").read_text().split()
    reached = _old_urns(_fleet())
    assert [u for u in before if u not in reached] == []
    assert len(before) + 5 == len(_fleet())  # four MultiKueueWorkers and a MultiKueueManager, nothing else new


def test_every_multikueue_object_of_the_fleet_comes_through_a_public_component():
    def ours(r: dict) -> bool:
        kind, name = r["type"].rsplit(":", 1)[-1], str(r["inputs"].get("metadata", {}).get("name"))
        return "multikueue" in name or kind in ("MultiKueueCluster", "MultiKueueConfig") or (
            kind == "AdmissionCheck" and r["name"].startswith("manager/"))

    objects = [r for r in _fleet() if r["type"].startswith("kubernetes:") and ours(r)]
    loose = [r["urn"] for r in objects if _owner(r) is None and not r["type"].endswith(":RoleBinding")]
    assert objects and loose == []
    owners = {(_owner(r) or {}).get("name") for r in objects if not r["type"].endswith(":RoleBinding")}
    assert owners == {"us-east4/multikueue", "europe-west4/multikueue", "us-west1/multikueue", "us-east5/multikueue",
                      "manager/multikueue"}
    # The write RoleBindings stay with each Team: its namespace must exist first.
    bindings = [r for r in objects if r["type"].endswith(":RoleBinding")]
    assert bindings and all(_by_urn()[r["parent"]]["type"] == "gke-ai-batch:index:Team" for r in bindings)


def test_each_worker_component_is_on_its_provider_after_its_kueue_and_the_manager_after_every_worker():
    by_urn = _by_urn()
    workers = [r for r in _fleet() if r["type"] == f"{MK}Worker"]
    for w in workers:
        scope = w["name"].split("/")[0]
        children = [r for r in _fleet() if r.get("parent") == w["urn"]]
        assert {by_urn[r["options"]["provider"]]["name"] for r in children} == {f"{scope}/k8s"}
        assert any(by_urn[d]["name"] == f"{scope}/kueue" for d in children[0]["dependencies"])
    [manager] = [r for r in _fleet() if r["type"] == f"{MK}Manager"]
    secrets = [r for r in _fleet() if r.get("parent") == manager["urn"]]
    tokens = {r["urn"] for r in _fleet() if _owner(r) in workers and r["type"] == "kubernetes:core/v1:Secret"}
    assert len(tokens) == 4 and tokens <= set(secrets[0]["dependencies"])
    checks = {r["urn"] for r in secrets if r["type"].endswith(":AdmissionCheck")}
    queues = [r for r in _fleet() if r["type"].endswith(":ClusterQueue") and r["name"].startswith("manager/")]
    assert queues and all(checks <= set(q["dependencies"]) for q in queues)


def test_the_kubeconfigs_stay_secret_in_what_the_fleet_registers():
    from gke_ai_batch.synth.engine import SECRET_DATA_MASK

    secrets = [r for r in _fleet() if r["type"] == "kubernetes:core/v1:Secret" and r["name"].startswith("manager/")]
    assert len(secrets) == 4 and all(r["inputs"]["data"] == {"kubeconfig": SECRET_DATA_MASK} for r in secrets)


# -- the components' extensions the stack uses -----------------------------------------------------


PROGRAM = """
import pulumi
from gke_ai_batch.components.multikueue import MultiKueueManager, MultiKueueWorker
from gke_ai_batch.synth import MOCK_CA

w = MultiKueueWorker("w1", {"namespaces": ["team-a", "team-b"], "frameworks": ["batch/job"], "endpoint": "34.1.2.3",
                             "ca_certificate": MOCK_CA, "bind_namespaces": False})
pulumi.export("bindings", [m["metadata"]["namespace"] for m in w.role_bindings])
m = MultiKueueManager("mk", {"workers": [{"name": "w1", "kubeconfig": w.kubeconfig}, {"name": "w2", "kubeconfig": "k"}],
                             "admission_checks": [{"name": "gpu", "workers": ["w2", "w1"]}, {"name": "tpu", "workers": ["w2"]}]})
pulumi.export("checks", m.admission_checks)
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    from support.programs import run_program

    return run_program(tmp_path_factory.mktemp("mk"), PROGRAM)


def test_a_worker_that_leaves_the_namespace_bindings_to_its_caller_registers_none(recording):
    kinds = [r.type.rsplit(":", 1)[-1] for r in recording.resources if r.name.startswith("w1-")]
    assert kinds == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRole", "Secret"]
    assert recording.outputs["bindings"] == ["team-a", "team-b"]


def test_a_manager_registers_each_workers_secret_and_cluster_once_and_a_config_and_check_per_check(recording):
    children = [r for r in recording.resources if r.name.startswith("mk-")]
    assert [(r.type.rsplit(":", 1)[-1], r.inputs["metadata"]["name"]) for r in children] == [
        ("Secret", "multikueue-w1"), ("Secret", "multikueue-w2"), ("MultiKueueCluster", "w1"), ("MultiKueueCluster", "w2"),
        ("MultiKueueConfig", "gpu"), ("MultiKueueConfig", "tpu"), ("AdmissionCheck", "gpu"), ("AdmissionCheck", "tpu"),
    ]
    assert [r.inputs["spec"]["clusters"] for r in children if r.type.endswith("MultiKueueConfig")] == [["w2", "w1"], ["w2"]]
    # A MultiKueueConfig after every cluster it names, not only the last one registered.
    config = children[4]
    assert {r.urn for r in children[:4]} <= set(config.dependencies)
    assert recording.outputs["checks"] == ["gpu", "tpu"]


MANAGER = {"workers": [{"name": "w1", "kubeconfig": "k"}, {"name": "w2", "kubeconfig": "k"}]}


@pytest.mark.parametrize(
    "args, lines",
    [
        ({**MANAGER, "admission_check": "a", "admission_checks": [{"name": "b", "workers": ["w1"]}]},
         ["MultiKueueManager mk: args.admission_checks: give admission_check or admission_checks, not both"]),
        ({**MANAGER, "admission_checks": [{"name": "b", "workers": ["w1", "w3"]}, {"name": "b", "workers": ["w2"]}]},
         ["MultiKueueManager mk: args.admission_checks[0].workers[1]: 'w3' is not one of args.workers",
          "MultiKueueManager mk: args.admission_checks[1].name: 'b' is named twice: each AdmissionCheck once"]),
        ({**MANAGER, "admission_checks": [{"name": "B", "workers": []}, {"name": "c", "cluster": ["w1"]}]},
         ["MultiKueueManager mk: args.admission_checks[0].name: admission check name: 'B' is not a valid Kubernetes name",
          "MultiKueueManager mk: args.admission_checks[0].workers: 0 workers: a MultiKueueConfig lists 1 to 20 clusters",
          "MultiKueueManager mk: args.admission_checks[1].cluster: unknown arg",
          "MultiKueueManager mk: args.admission_checks[1].workers: required"]),
        ({**MANAGER, "admission_checks": []},
         ["MultiKueueManager mk: args.admission_checks: must be a non-empty list of {name, workers}"]),
    ],
    ids=["both", "unknown-and-twice", "names-and-keys", "empty"],
)
def test_a_bad_admission_checks_arg_is_named_with_every_problem_at_once(args, lines):
    got = _refused("MultiKueueManager", args)
    for line in lines:
        assert any(g.startswith(line) for g in got), (line, got)


def test_a_bind_namespaces_of_the_wrong_kind_is_named():
    assert _refused("MultiKueueWorker", {**WORKER, "bind_namespaces": "no"}) == [
        "MultiKueueWorker mk: args.bind_namespaces: must be true or false, not str"
    ]
