"""MultiKueueWorker and MultiKueueManager from any Pulumi program: two of each side by side, on
each cluster's own provider, in the fleet's order, and bad args refused at their arg paths."""

from __future__ import annotations

import pytest

from support.programs import run_program as _run

PROGRAM = """
import pulumi
from gke_ai_batch.components.cluster import GkeCluster
from gke_ai_batch.components.multikueue import MultiKueueManager, MultiKueueWorker

def cluster(name, location):
    return GkeCluster(name, {"name": name, "location": location, "project": "acme-ml"})

kubeconfigs = []
for name, location in (("w1", "us-east5"), ("w2", "us-west1")):
    c = cluster(name, location)
    mk = MultiKueueWorker(f"{name}-mk", {"namespaces": ["team-a", "team-b"], "frameworks": ["jobset.x-k8s.io/jobset"],
                                         "endpoint": c.endpoint, "ca_certificate": c.cluster_ca_certificate,
                                         "worker": name},
                          pulumi.ResourceOptions(provider=c.provider))
    kubeconfigs.append({"name": name, "kubeconfig": mk.kubeconfig})
for name in ("m1", "m2"):
    m = cluster(name, "us-central1")
    mgr = MultiKueueManager(f"{name}-mk", {"workers": kubeconfigs, "admission_check": f"fleet-{name}"},
                            pulumi.ResourceOptions(provider=m.provider, protect=name == "m2"))
    pulumi.export(name, mgr.admission_check)
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("mk"), PROGRAM)


def _children(recording, owner: str):
    parent = next(r.urn for r in recording.resources if r.type.startswith("gke-ai-batch:index:MultiKueue") and r.name == owner)
    return [r for r in recording.resources if r.parent == parent]


def test_a_worker_grants_its_manager_in_order_on_its_own_provider(recording):
    for worker in ("w1", "w2"):
        children = _children(recording, f"{worker}-mk")
        assert [(r.inputs.get("kind") or r.type.rsplit(":", 1)[-1], r.name) for r in children] == [
            ("ServiceAccount", f"{worker}-mk-kueue-system/multikueue-sa"),
            ("ClusterRole", f"{worker}-mk-multikueue-sa-read"),
            ("ClusterRoleBinding", f"{worker}-mk-multikueue-sa-read"),
            ("ClusterRole", f"{worker}-mk-multikueue-sa-write"),
            ("RoleBinding", f"{worker}-mk-team-a/multikueue-sa-write"),
            ("RoleBinding", f"{worker}-mk-team-b/multikueue-sa-write"),
            ("Secret", f"{worker}-mk-kueue-system/multikueue-sa"),
        ]
        provider = next(r.urn for r in recording.resources if r.name == f"{worker}-k8s")
        assert all(r.options["provider"] == provider for r in children)
        # Each waits for the one before it: the token controller fills a token only for an existing account.
        assert all(children[i - 1].urn in children[i].dependencies for i in range(1, len(children)))


def test_a_manager_registers_each_workers_secret_and_cluster_then_the_config_and_check(recording):
    for manager in ("m1", "m2"):
        children = _children(recording, f"{manager}-mk")
        kinds = [r.type.rsplit(":", 1)[-1] for r in children]
        assert kinds == ["Secret", "Secret", "MultiKueueCluster", "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"]
        config = next(r for r in children if r.type.endswith("MultiKueueConfig"))
        assert config.inputs["metadata"]["name"] == f"fleet-{manager}" and config.inputs["spec"]["clusters"] == ["w1", "w2"]
        assert all(r.options.get("protect", False) is (manager == "m2") for r in children)
        assert recording.outputs[manager] == f"fleet-{manager}"


def _refused(component: str, args) -> list[str]:
    from gke_ai_batch.components import multikueue
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        getattr(multikueue, component)("mk", args)
    return str(caught.value).splitlines()


WORKER = {"namespaces": ["team-a"], "frameworks": ["batch/job"], "endpoint": "34.1.2.3", "ca_certificate": "Q0E="}


@pytest.mark.parametrize(
    "change, line",
    [
        ({"frameworks": ["kubeflow.org/pytorchjob"]}, "MultiKueueWorker mk: args.frameworks: no MultiKueue worker RBAC is written for kubeflow.org/pytorchjob"),
        ({"namespaces": []}, "MultiKueueWorker mk: args.namespaces: a worker that mirrors no team namespace"),
        ({"namespaces": ["Team_A"]}, "MultiKueueWorker mk: args.namespaces[0]: 'Team_A' is not a valid Kubernetes name"),
        ({"worker": "W1"}, "MultiKueueWorker mk: args.worker: 'W1' is not a valid Kubernetes name"),
        ({"caCertificate": "x"}, "MultiKueueWorker mk: args.caCertificate: unknown arg (did you mean 'ca_certificate'?)"),
        ({"worker": 7}, "MultiKueueWorker mk: args.worker: must be a string, not int"),
        ({"endpoint": None}, "MultiKueueWorker mk: args.endpoint: must be a string or an Output, not NoneType"),
    ],
    ids=["framework", "no-namespace", "namespace-name", "worker-name", "camelCase", "worker-int", "endpoint-none"],
)
def test_a_bad_worker_arg_is_named(change, line):
    lines = _refused("MultiKueueWorker", {**WORKER, **change})
    assert any(l.startswith(line) for l in lines), lines


def test_a_bad_manager_arg_is_named_with_every_problem_at_once():
    workers = [{"name": "w1", "kubeconfig": "k"}, {"name": "w1", "kubeconfig": "k"}, {"name": "w3"}]
    lines = _refused("MultiKueueManager", {"workers": workers, "admission_check": "Fleet"})
    assert lines[0] == "MultiKueueManager mk: args.workers[2].kubeconfig: required", lines
    assert any(l.startswith("MultiKueueManager mk: args.admission_check: admission check name: 'Fleet' is not a valid") for l in lines)
    assert "MultiKueueManager mk: args.workers: workers listed more than once: w1 (MultiKueueConfig clusters must be unique)" in lines
    many = [{"name": f"w{i}", "kubeconfig": "k"} for i in range(21)]
    assert _refused("MultiKueueManager", {"workers": many}) == [
        "MultiKueueManager mk: args.workers: 21 workers: a MultiKueueConfig lists 1 to 20 clusters"
    ]


def test_a_manager_arg_of_the_wrong_kind_is_named_not_a_crash():
    workers = [{"name": "w1", "kubeconfig": 3}, {"name": "w2"}]
    assert _refused("MultiKueueManager", {"workers": workers, "admission_check": ["x"]}) == [
        "MultiKueueManager mk: args.workers[1].kubeconfig: required",
        "MultiKueueManager mk: args.admission_check: must be a string, not list",
        "MultiKueueManager mk: args.workers[0].kubeconfig: must be a string or an Output, not int",
    ]
