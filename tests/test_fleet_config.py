"""The fleet's config model (gke_ai_batch/config/fleet.py): each worker is checked with the rules a
single-cluster stack gets, its problems named under fleet.workers[i], and the fleet's own rules
(the manager runs nothing, workers spread over regions, queues reach some worker)."""

from __future__ import annotations

import copy

import pytest

from gke_ai_batch.config import ConfigError, load
from gke_ai_batch.config.fleet import FleetConfig, worker_stack


def h100(name: str = "h100-dws") -> dict:
    return {"name": name, "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "machineType": "a3-highgpu-8g",
            "capacity": "queued", "maxNodes": 4, "gvnic": True}


def worker(name: str, region: str, zones: str, pools: list[dict]) -> dict:
    # The manager reaches the worker's IP endpoint from its Cloud NAT's address.
    return {"name": name, "cluster": {"name": f"ml-{name}", "location": region,
                                      "nodeLocations": [f"{region}-{z}" for z in zones],
                                      "masterAuthorizedNetworks": [{"cidr": "203.0.113.7/32", "name": "manager-nat"}]},
            "nodePools": pools}


FLEET = {
    "name": "dws",
    "workers": [
        worker("us-east4", "us-east4", "ab", [h100()]),
        worker("europe-west4", "europe-west4", "bc", [h100()]),
        worker("us-east5", "us-east5", "a", [{"name": "v6e-flex", "tpu": {"version": "v6e", "topology": "2x4"},
                                               "capacity": "flexStart"}]),
    ],
}
STACK = {
    "cluster": {"name": "ml-manager", "location": "us-central1", "nodeLocations": ["us-central1-a"],
                "minMasterVersion": "1.34", "privateNodes": True},
    "clusterQueues": [
        {"name": "gpu", "flavors": ["nvidia-h100-80gb-queued"]},
        {"name": "tpu", "flavors": ["tpu-v6e-slice-2x4-flex"]},
    ],
    "teams": [
        {"namespace": "llm", "localQueue": "gpu", "clusterQueue": "gpu"},
        {"namespace": "research", "localQueue": "tpu", "clusterQueue": "tpu"},
    ],
    "priorities": [{"name": "high", "value": 1000}, {"name": "low", "value": 10}],
}


def problems(stack: dict | None = None, fleet: dict | None = None) -> dict[str, str]:
    """The stack's problems as {key path: messages}, as synth would print them."""
    values = {**copy.deepcopy(stack or STACK), "fleet": copy.deepcopy(fleet or FLEET)}
    try:
        load(values)
    except ConfigError as exc:
        out: dict[str, str] = {}
        for path, message in exc.problems:
            out[path] = out.get(path, "") + message
        return out
    return {}


def test_a_fleet_of_dws_and_flex_workers_is_valid():
    assert problems() == {}


def test_each_worker_is_checked_with_the_queues_its_flavors_serve():
    top = load({**copy.deepcopy(STACK), "fleet": copy.deepcopy(FLEET)})
    gpu, _, tpu = (worker_stack(top, w).config for w in top.fleet.workers)
    assert [q.name for q in gpu.cluster_queues] == ["gpu"] and [t.namespace for t in gpu.teams] == ["llm"]
    assert [q.name for q in tpu.cluster_queues] == ["tpu"] and [t.namespace for t in tpu.teams] == ["research"]
    assert gpu.workloads == [] and gpu.priorities == top.priorities and gpu.cluster.name == "ml-us-east4"


def test_a_workers_own_mistakes_are_named_under_it():
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][1]["nodePools"][0]["zones"] = ["us-east4-a"]  # another region's zone
    found = problems(fleet=fleet)
    [(path, message)] = found.items()
    assert path.startswith("gke-ai-batch:fleet.workers[1].nodePools[0].zones") and "worker europe-west4:" in message


def test_the_manager_runs_no_pools():
    stack = copy.deepcopy(STACK)
    stack["nodePools"] = [h100()]
    stack["cluster"]["nodeLocations"] = ["us-central1-a"]
    assert "a fleet's manager runs no workload" in problems(stack=stack)["gke-ai-batch:nodePools"]


def test_workers_spread_over_regions_and_clusters_do_not_collide():
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][1] = worker("us-east4-b", "us-east4", "c", [h100()])
    assert "same project already" in problems(fleet=fleet)["gke-ai-batch:fleet.workers[1].cluster.location"]
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][0]["cluster"].update(name="ml-manager", location="us-central1", nodeLocations=["us-central1-a"])
    found = problems(fleet=fleet)
    assert "is the manager's already" in found["gke-ai-batch:fleet.workers[0].cluster.name"]


def test_a_queue_flavor_no_worker_offers_is_refused():
    stack = copy.deepcopy(STACK)
    stack["clusterQueues"][0]["flavors"].append("nvidia-l4-spot")
    assert "no worker offers flavor 'nvidia-l4-spot'" in problems(stack=stack)["gke-ai-batch:clusterQueues[0].flavors[1].name"]


def test_batch_jobs_need_job_managed_by_on_the_manager():
    stack = copy.deepcopy(STACK)
    stack["cluster"]["minMasterVersion"] = "1.31"
    assert "1.32" in problems(stack=stack)["gke-ai-batch:cluster.minMasterVersion"]
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][2]["cluster"]["minMasterVersion"] = "1.31"  # workers need nothing of it
    assert "managedBy" not in problems(fleet=fleet).get("gke-ai-batch:fleet.workers[2].cluster.minMasterVersion", "")


def test_a_problem_in_a_workers_cut_down_queues_names_the_fleets_key():
    stack = copy.deepcopy(STACK)
    stack["clusterQueues"][1]["flavors"] = ["nvidia-h100-80gb-queued", "tpu-v6e-slice-2x4-flex"]
    top = load({**stack, "fleet": copy.deepcopy(FLEET)})
    tpu = worker_stack(top, top.fleet.workers[2])
    # The TPU worker mirrors only the second queue, with only its second flavor.
    assert [q.name for q in tpu.config.cluster_queues] == ["tpu"]
    assert tpu.fleet_path(("clusterQueues", 0, "flavors", 0, "quotas")) == ("clusterQueues", 1, "flavors", 1, "quotas")
    assert tpu.fleet_path(("teams", 0, "namespace")) == ("teams", 1, "namespace")
    assert tpu.fleet_path(("priorities", 0)) == ("priorities", 0)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda f: f["workers"].pop(), "at least 2"),
        (lambda f: f["workers"].extend(copy.deepcopy(f["workers"][:1]) * 20), "at most 20"),
    ],
)
def test_fleet_shape(edit, words):
    fleet = copy.deepcopy(FLEET)
    edit(fleet)
    if words == "at least 2":
        fleet["workers"].pop()
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        FleetConfig.model_validate(fleet)



def test_the_manager_must_reach_every_workers_api_server():
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][0]["cluster"]["controlPlane"] = {"ipEndpoint": "disabled"}
    fleet["workers"][0]["cluster"].pop("masterAuthorizedNetworks")
    fleet["workers"][1]["cluster"]["masterAuthorizedNetworks"] = []
    fleet["workers"][2]["cluster"].update(controlPlane={"ipEndpoint": "private"}, privateNodes=True)
    found = problems(fleet=fleet)
    assert "Kueue runs no credential plugin" in found["gke-ai-batch:fleet.workers[0].cluster.controlPlane.ipEndpoint"]
    assert "lets the manager in" in found["gke-ai-batch:fleet.workers[1].cluster.masterAuthorizedNetworks"]
    assert "answers only its VPC in its region" in found["gke-ai-batch:fleet.workers[2].cluster.controlPlane.ipEndpoint"]


def test_worker_names_are_checked_with_every_other_rule():
    # A repeated name or the manager's scope is named at its key, beside the fleet's other
    # mistakes, not instead of them.
    fleet = copy.deepcopy(FLEET)
    fleet["workers"].append(copy.deepcopy(fleet["workers"][0]))
    fleet["workers"][1]["name"] = "manager"
    fleet["workers"][2]["cluster"]["masterAuthorizedNetworks"] = []
    found = problems(fleet=fleet)
    assert found["gke-ai-batch:fleet.workers[3].name"] == "worker 'us-east4' is listed already (workers[0])"
    assert "names the manager's resources" in found["gke-ai-batch:fleet.workers[1].name"]
    assert "lets the manager in" in found["gke-ai-batch:fleet.workers[2].cluster.masterAuthorizedNetworks"]


def _load(stack: dict, fleet: dict, project: str) -> dict[str, str]:
    try:
        load({**copy.deepcopy(stack), "fleet": copy.deepcopy(fleet)}, project=project)
    except ConfigError as exc:
        return dict(exc.problems)
    return {}


def test_a_worker_naming_the_stacks_own_project_is_in_the_managers_project():
    # Explicitly the same project as gcp:project: the manager's cluster itself, and a private
    # endpoint in the manager's VPC; another project's "default" network is another VPC.
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][0]["project"] = "acme-ml"
    fleet["workers"][0]["cluster"].update(name="ml-manager", location="us-central1", nodeLocations=["us-central1-a"])
    found = _load(STACK, fleet, "acme-ml")
    assert "is the manager's already" in found["gke-ai-batch:fleet.workers[0].cluster.name"]
    fleet = copy.deepcopy(FLEET)
    fleet["workers"][0]["cluster"].update(location="us-central1", nodeLocations=["us-central1-b"], privateNodes=True,
                                          controlPlane={"ipEndpoint": "private"})
    fleet["workers"][0]["project"] = "acme-ml"
    assert _load(STACK, fleet, "acme-ml") == {}
    fleet["workers"][0]["project"] = "acme-ml-other"
    assert "answers only its VPC" in _load(STACK, fleet, "acme-ml")["gke-ai-batch:fleet.workers[0].cluster.controlPlane.ipEndpoint"]


@pytest.mark.parametrize("integrations, at, words", [
    (["batch/job", "jobset.x-k8s.io/jobset", "pod"], "kueue.integrations[2]", "pod in a fleet"),
    (["batch/job", "leaderworkerset.x-k8s.io/leaderworkerset"], "kueue.integrations[1]", "never connects"),
    (["pod"], "kueue.integrations", "enable at least one of batch/job, jobset.x-k8s.io/jobset"),
])
def test_a_fleet_enables_only_the_job_kinds_the_workers_let_the_manager_watch(integrations, at, words):
    stack = {**copy.deepcopy(STACK), "kueue": {"integrations": integrations}}
    assert words in problems(stack=stack)[f"gke-ai-batch:{at}"]


def test_a_worker_that_serves_no_queue_is_refused():
    fleet = copy.deepcopy(FLEET)
    l4 = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}
    fleet["workers"].append(worker("us-west4", "us-west4", "a", [l4]))
    assert "serves no ClusterQueue" in problems(fleet=fleet)["gke-ai-batch:fleet.workers[3].nodePools"]


def test_the_manager_behind_authorized_networks_has_private_nodes():
    stack = copy.deepcopy(STACK)
    stack["cluster"]["privateNodes"] = False
    assert "ephemeral IP" in problems(stack=stack)["gke-ai-batch:cluster.privateNodes"]
