"""Names and references Google Cloud checks, refused by synth first (exit 2, the key's
file:line:column and the rule): Autopilot clusters in a zone, Compute Engine names (networks,
subnetworks, reservations), machine types Compute Engine does not have, project ids, a
subnetwork of another region, and teams that give one namespace two values of a label. Each
refusal sits next to a near miss the rule must accept."""

from __future__ import annotations

import copy

import pytest

from gke_ai_batch.config import ConfigError, gcp_project_problem, load
from conftest import ROOT, base_config, synth_config
from support.diagnostics import assert_names
from gke_ai_batch.synth import yamlread

NS = "gke-ai-batch"
CPU = {"name": "cpu", "machineType": "n2-standard-8", "maxNodes": 2}


def cluster(c) -> dict:
    return c[f"{NS}:cluster"]


def pools(c) -> list:
    return c[f"{NS}:nodePools"]


def teams(c) -> list:
    return c[f"{NS}:teams"]


def valid() -> dict:
    return base_config(
        nodePools=[copy.deepcopy(CPU)],
        flavors=[{"name": "cpu", "pools": ["cpu"]}],
        clusterQueues=[{"name": "cq", "flavors": [{"name": "cpu", "quotas": {"cpu": 8}}]}],
        teams=[
            {"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "labels": {"cost-center": "ml"}},
            {"namespace": "team-a", "localQueue": "lq2", "clusterQueue": "cq"},
        ],
    )


def autopilot(location: str):
    def change(c):
        c.pop(f"{NS}:nodePools")
        c[f"{NS}:flavors"] = [{"name": "cpu"}]  # Autopilot makes its nodes: a flavor without pools
        cluster(c).pop("nodeLocations")
        cluster(c).update(mode="autopilot", location=location)

    return change


def fleet_stack() -> dict:
    return yamlread.load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text()).data["config"]


def worker(c, i: int = 0) -> dict:
    return c[f"{NS}:fleet"]["workers"][i]


# (id, change, key path, words of the message); each refusal's near miss follows it in ACCEPTED.
REFUSED = [
    # 11. GKE creates Autopilot clusters only in a region.
    ("Autopilot cluster in a zone", autopilot("us-central1-a"), f"{NS}:cluster.location", "GKE creates Autopilot clusters only in a region: set location to 'us-central1'"),
    # 12. Compute Engine names and references.
    ("reservation name with a space", lambda c: pools(c)[0].update(capacity="reservation", reservation="my res"), f"{NS}:nodePools[0].reservation", "'my res' is not a reservation reference"),
    ("reservation name of 64 characters", lambda c: pools(c)[0].update(capacity="reservation", reservation="r" * 64), f"{NS}:nodePools[0].reservation", "1 to 63 lowercase letters"),
    ("shared reservation of a non-project", lambda c: pools(c)[0].update(capacity="reservation", reservation="projects/Acme/reservations/r"), f"{NS}:nodePools[0].reservation", "PROJECT is a project id"),
    ("CPU machine type with a vCPU count GCE lacks", lambda c: pools(c)[0].update(machineType="n2-standard-7"), f"{NS}:nodePools[0].machineType", "unknown machine type 'n2-standard-7': n2-standard comes with 2, 4, 8"),
    ("CPU machine type of an unknown series", lambda c: pools(c)[0].update(machineType="n4d-standard-8"), f"{NS}:nodePools[0].machineType", "add it under gke-ai-batch:catalogue.machineTypes"),
    ("machine type that is not a name", lambda c: pools(c)[0].update(machineType="N2-STANDARD-8"), f"{NS}:nodePools[0].machineType", "is not a machine type name"),
    ("custom machine type beyond GCE's memory", lambda c: pools(c)[0].update(machineType="n2-custom-8-131072"), f"{NS}:nodePools[0].machineType", "exceeds n2's maximum"),
    ("network name with a space", lambda c: cluster(c).update(network="My VPC"), f"{NS}:cluster.network", "'My VPC' is not a network reference"),
    ("network path without global/networks", lambda c: cluster(c).update(network="projects/acme-ml/vpc"), f"{NS}:cluster.network", "projects/PROJECT/global/networks/NAME"),
    ("subnetwork name with an underscore", lambda c: cluster(c).update(subnetwork="gke_nodes"), f"{NS}:cluster.subnetwork", "'gke_nodes' is not a subnetwork reference"),
    ("subnetwork of a non-project", lambda c: cluster(c).update(subnetwork="projects/p/regions/us-central1/subnetworks/s"), f"{NS}:cluster.subnetwork", "PROJECT is a project id"),
    ("catalogue machine type that is not a name", lambda c: c.update({f"{NS}:catalogue": {"machineTypes": ["C4 Standard"]}}), f"{NS}:catalogue.machineTypes[0]", "is not a machine type name"),
    # 13. Teams sharing a namespace share its labels.
    ("teams of a namespace disagree on a label", lambda c: teams(c)[1].update(labels={"cost-center": "infra"}), f'{NS}:teams[1].labels["cost-center"]', "namespace 'team-a' gets label cost-center='ml' from teams[0] (local queue 'lq') and cost-center='infra' here (local queue 'lq2')"),
    # 19. The subnetwork's region, project ids, the system pool's machine type, KMS key paths.
    ("subnetwork of another region", lambda c: cluster(c).update(subnetwork="projects/acme-ml/regions/europe-west4/subnetworks/nodes"), f"{NS}:cluster.subnetwork", "the subnetwork is in 'europe-west4', and the cluster's nodes are in 'us-central1'"),
    ("subnetwork self link of another region", lambda c: cluster(c).update(subnetwork="https://www.googleapis.com/compute/v1/projects/acme-ml/regions/us-east1/subnetworks/nodes"), f"{NS}:cluster.subnetwork", "must be in its region"),
    ("subnetwork and network of two projects", lambda c: cluster(c).update(network="projects/acme-host/global/networks/vpc", subnetwork="projects/acme-other/regions/us-central1/subnetworks/nodes"), f"{NS}:cluster.subnetwork", "the subnetwork is in project 'acme-other' and the network in 'acme-host'"),
    ("system pool machine type GCE lacks", lambda c: cluster(c).update(systemPool={"machineType": "e2-standard-3"}), f"{NS}:cluster.systemPool.machineType", "unknown machine type 'e2-standard-3'"),
    ("KMS key of a non-project", lambda c: cluster(c).update(databaseEncryption={"keyName": "projects/------/locations/us-central1/keyRings/r/cryptoKeys/k"}), f"{NS}:cluster.databaseEncryption.keyName", "is not a Cloud KMS key name"),
    ("gcp:project with an uppercase letter", lambda c: c.update({"gcp:project": "Acme-ML"}), "gcp:project", "'Acme-ML' is not a Google Cloud project id: 6 to 30 lowercase letters"),
    ("gcp:project ending with a hyphen", lambda c: c.update({"gcp:project": "acme-ml-"}), "gcp:project", "not ending with '-'"),
]

ACCEPTED = [
    ("Autopilot cluster in a region", autopilot("us-central1")),
    ("reservation of 63 characters", lambda c: pools(c)[0].update(capacity="reservation", reservation="r" * 63)),
    ("shared reservation", lambda c: pools(c)[0].update(capacity="reservation", reservation="projects/acme-shared/reservations/h100-res")),
    ("CPU machine type GCE has", lambda c: pools(c)[0].update(machineType="n2-standard-128")),
    ("custom machine type within GCE's rules", lambda c: pools(c)[0].update(machineType="n2-custom-8-65536")),
    ("machine type newer than the catalogue, declared", lambda c: (pools(c)[0].update(machineType="n4d-standard-8"), c.update({f"{NS}:catalogue": {"machineTypes": ["n4d-standard-8"]}}))),
    ("machine type of a series the catalogue lists but does not size", lambda c: pools(c)[0].update(machineType="c4a-highmem-16-lssd")),
    ("system pool of a series the catalogue does not size", lambda c: cluster(c).update(systemPool={"machineType": "c4-standard-8"})),
    ("network name of 63 characters", lambda c: cluster(c).update(network="n" * 63)),
    ("network self link", lambda c: cluster(c).update(network="https://www.googleapis.com/compute/v1/projects/acme-host/global/networks/shared-vpc")),
    ("network partial path", lambda c: cluster(c).update(network="global/networks/vpc-ml")),
    ("subnetwork name", lambda c: cluster(c).update(subnetwork="gke-nodes")),
    ("subnetwork of the cluster's region", lambda c: cluster(c).update(subnetwork="projects/test-project/regions/us-central1/subnetworks/nodes")),
    ("subnetwork self link of the cluster's region", lambda c: cluster(c).update(network="projects/acme-host/global/networks/vpc", subnetwork="https://www.googleapis.com/compute/v1/projects/acme-host/regions/us-central1/subnetworks/nodes")),
    ("Shared VPC subnetwork and network of the host project", lambda c: cluster(c).update(network="projects/acme-host/global/networks/vpc", subnetwork="projects/acme-host/regions/us-central1/subnetworks/nodes")),
    ("subnetwork of the cluster's project and a network named without one", lambda c: cluster(c).update(network="vpc", subnetwork="projects/test-project/regions/us-central1/subnetworks/nodes")),
    ("subnetwork of a zonal cluster's region", lambda c: cluster(c).update(location="us-central1-a", subnetwork="regions/us-central1/subnetworks/nodes")),
    ("teams of a namespace agree on a label", lambda c: teams(c)[1].update(labels={"cost-center": "ml", "owner": "lq2"})),
    ("system pool machine type GCE has", lambda c: cluster(c).update(systemPool={"machineType": "e2-standard-2"})),
    ("gcp:project of 30 characters", lambda c: c.update({"gcp:project": "a" + "-0" * 14 + "z"})),
    ("domain-scoped gcp:project", lambda c: c.update({"gcp:project": "example.com:acme-ml"})),
]


@pytest.mark.parametrize("change, path, words", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_gcp_rule_refuses_at_the_key(tmp_path, change, path, words):
    config = valid()
    change(config)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    assert result.recording is None, "nothing may be registered"
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


@pytest.mark.parametrize("change", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_gcp_rule_near_miss_is_accepted(tmp_path, change):
    config = valid()
    change(config)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


def test_the_valid_base_really_is_valid(tmp_path):
    assert synth_config(tmp_path, valid()).exit_code == 0


def test_a_declared_machine_type_is_listed_in_the_report(tmp_path):
    config = valid()
    pools(config)[0]["machineType"] = "n4d-standard-8"
    config[f"{NS}:catalogue"] = {"machineTypes": ["n4d-standard-8"]}
    cfg = load({"cluster": cluster(config), "nodePools": pools(config), "catalogue": config[f"{NS}:catalogue"]}, region="us-central1")
    assert "adds machine type n4d-standard-8" in cfg.catalogue.summary()


def test_every_gcp_problem_is_listed_at_once():
    with pytest.raises(ConfigError) as err:
        load(
            {
                "cluster": {"name": "t", "network": "My VPC", "subnetwork": "sub net"},
                "nodePools": [{**CPU, "capacity": "reservation", "reservation": "my res"}],
                "catalogue": {"machineTypes": ["ok-type", "Bad Type"]},
            },
            region="us-central1",
        )
    assert sorted(p for p, _ in err.value.problems) == sorted(
        [
            f"{NS}:cluster.network",
            f"{NS}:cluster.subnetwork",
            f"{NS}:nodePools[0].reservation",
            f"{NS}:catalogue.machineTypes[1]",
        ]
    )


@pytest.mark.parametrize(
    "project, ok",
    [("acme-ml", True), ("a" * 6, True), ("a" * 30, True), ("a" * 5, False), ("a" * 31, False), ("1acme-ml", False), ("acme_ml", False), (None, False)],
)
def test_gcp_project_id_rule(project, ok):
    assert (gcp_project_problem(project) is None) is ok


# -- fleets: a worker's project, and every worker rule above under fleet.workers[i] ----------------------


@pytest.mark.parametrize(
    "change, path, words",
    [
        (lambda c: worker(c).update(project="Acme ML"), f"{NS}:fleet.workers[0].project", "'Acme ML' is not a Google Cloud project id"),
        (lambda c: worker(c).update(project="acme"), f"{NS}:fleet.workers[0].project", "6 to 30 lowercase letters"),
        (lambda c: worker(c, 1)["cluster"].update(systemPool={"machineType": "e2-standard-3"}), f"{NS}:fleet.workers[1].cluster.systemPool.machineType", "unknown machine type 'e2-standard-3'"),
        (lambda c: worker(c, 1)["cluster"].update(subnetwork="regions/us-east4/subnetworks/nodes"), f"{NS}:fleet.workers[1].cluster.subnetwork", "the subnetwork is in 'us-east4', and the cluster's nodes are in 'europe-west4'"),
        (lambda c: cluster(c).update(systemPool={"machineType": "e2-standard-3"}), f"{NS}:cluster.systemPool.machineType", "unknown machine type 'e2-standard-3'"),
    ],
    ids=["worker project with a space", "worker project too short", "worker system pool machine type", "worker subnetwork of another region", "manager system pool machine type"],
)
def test_fleet_gcp_rules(tmp_path, change, path, words):
    config = fleet_stack()
    change(config)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


def test_fleet_worker_in_another_project_is_accepted(tmp_path):
    config = fleet_stack()
    worker(config)["project"] = "acme-ml-us-east4"
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


@pytest.mark.parametrize(
    "worker_network, reachable",
    [("global/networks/vpc-ml", True), ("projects/acme-ml/global/networks/vpc-ml", False), ("other-vpc", False)],
)
def test_a_private_worker_is_reachable_in_the_managers_network_however_it_is_written(worker_network, reachable):
    # "vpc-ml" and "global/networks/vpc-ml" name one network of the project; a worker there, in
    # the manager's region, answers the manager at its private endpoint. A reference that names
    # a project may be another project's network: refused, as before.
    from test_fleet_config import FLEET, STACK

    stack, fleet = copy.deepcopy(STACK), copy.deepcopy(FLEET)
    stack["cluster"]["network"] = "vpc-ml"
    fleet["workers"][0]["cluster"].update(
        location="us-central1", nodeLocations=["us-central1-b"], privateNodes=True,
        controlPlane={"ipEndpoint": "private"}, network=worker_network,
    )
    at = f"{NS}:fleet.workers[0].cluster.controlPlane.ipEndpoint"
    try:
        load({**stack, "fleet": fleet}, project="acme-ml")
        found = {}
    except ConfigError as exc:
        found = dict(exc.problems)
    assert (at not in found) is reachable, found
