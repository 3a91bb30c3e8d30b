"""Bad stack config: one message naming the file and key path, exit 2, nothing registered
or written."""

from __future__ import annotations

import copy
import pulumi
import pytest
import yaml
from gke_ai_batch.synth import yamlread


from gke_ai_batch.config import ConfigError, load
from conftest import ROOT, base_config, synth_cli, synth_config, synth_main
from support import diagnostics
from support.diagnostics import assert_names

TPU = {"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}, "slices": 2}
GPU = {"name": "h100", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "capacity": "queued", "maxNodes": 2}


def valid() -> dict:
    return base_config(
        nodePools=[copy.deepcopy(TPU), copy.deepcopy(GPU)],
        clusterQueues=[{"name": "cq"}],
        # The multi-host v6e JobSet's pods use the host network.
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}],
        priorities=[{"name": "high", "value": 1000}],
        workloads=[
            {"kind": "jobset", "name": "train", "team": "team-a", "pool": "v6e", "slices": 2, "image": "i:1", "priority": "high"}
        ],
    )


def pools(config):
    return config["gke-ai-batch:nodePools"]


CASES = [
    # (id, mutate(config), key path, words the message must contain)
    ("unknown top-level key", lambda c: c.update({"gke-ai-batch:nodepools": []}), "gke-ai-batch:nodepools", "did you mean 'nodePools'"),
    ("misspelt namespace", lambda c: c.update({"gke-ai-bach:nodePools": []}), "gke-ai-bach:nodePools", "unknown namespace 'gke-ai-bach' (did you mean 'gke-ai-batch'?)"),
    ("misspelt nested key", lambda c: pools(c)[0]["tpu"].update(topolgy="4x4"), "gke-ai-batch:nodePools[0].tpu.topolgy", "did you mean 'topology'"),
    ("bad zone", lambda c: c["gke-ai-batch:cluster"].update(nodeLocations=["us-central1b"]), "gke-ai-batch:cluster.nodeLocations[0]", "is not a zone"),
    ("true as a duration", lambda c: pools(c)[1].update(maxRunDuration=True), "gke-ai-batch:nodePools[1].maxRunDuration", "got True"),
    ("true as a count", lambda c: pools(c)[0].update(slices=True), "gke-ai-batch:nodePools[0].slices", "valid integer"),
    ("unknown pool key", lambda c: pools(c)[0].update(slice=3), "gke-ai-batch:nodePools[0].slice", "did you mean 'slices'"),
    ("unknown cluster key", lambda c: c["gke-ai-batch:cluster"].update(zone="x"), "gke-ai-batch:cluster.zone", "unknown key"),
    ("topology not of the generation", lambda c: pools(c)[0]["tpu"].update(topology="4x4x4"), "gke-ai-batch:nodePools[0].tpu.topology", "not a v6e topology; allowed: 1x1, 2x2"),
    ("topology not of the machine type", lambda c: pools(c)[0]["tpu"].update(machineType="ct6e-standard-8t"), "gke-ai-batch:nodePools[0].tpu.machineType", "allowed with it: 2x4"),
    ("unknown TPU version", lambda c: pools(c)[0]["tpu"].update(version="v7"), "gke-ai-batch:nodePools[0].tpu.version", "'v4', 'v5e', 'v5p', 'v6e' or 'tpu7x'"),
    ("missing reservation", lambda c: pools(c)[0].update(capacity="reservation"), "gke-ai-batch:nodePools[0].reservation", "required with capacity reservation"),
    ("superfluous reservation", lambda c: pools(c)[0].update(reservation="r"), "gke-ai-batch:nodePools[0].reservation", "only with capacity reservation, not onDemand"),
    ("queued with a reservation", lambda c: pools(c)[1].update(reservation="r"), "gke-ai-batch:nodePools[1].reservation", "NO_RESERVATION"),
    ("flexStart with a reservation", lambda c: pools(c)[0].update(capacity="flexStart", reservation="r"), "gke-ai-batch:nodePools[0].reservation", "flexStart pools cannot consume a reservation"),
    ("flexStart below 1.33.0-gke.1712000", lambda c: (pools(c)[0].update(capacity="flexStart"), c.update({"gke-ai-batch:catalogue": {"channels": {"REGULAR": {"minors": ["1.32"]}}}}), c["gke-ai-batch:cluster"].update(minMasterVersion="1.32")), "gke-ai-batch:nodePools[0].capacity", "need GKE 1.33.0-gke.1712000 or later"),
    ("maxRunDuration over 7 days", lambda c: pools(c)[1].update(maxRunDuration="8d"), "gke-ai-batch:nodePools[1].maxRunDuration", "8d exceeds GKE's limit of 7d (7 days)"),
    ("maxRunDuration on demand", lambda c: pools(c)[0].update(maxRunDuration="1h"), "gke-ai-batch:nodePools[0].maxRunDuration", "only flexStart and queued"),
    ("node pools on Autopilot", lambda c: c["gke-ai-batch:cluster"].update(mode="autopilot"), "gke-ai-batch:nodePools[0]", "Autopilot clusters have no node pools"),
    ("duplicate pool names", lambda c: pools(c).append(copy.deepcopy(GPU)), "gke-ai-batch:nodePools[2].name", "'h100' is also made by nodePools[1]"),
    ("slice pool name collides", lambda c: pools(c).append({"name": "v6e-1", "machineType": "n2-standard-4", "maxNodes": 1}), "gke-ai-batch:nodePools[2].name", "is also made by nodePools[0]"),
    ("system pool name taken", lambda c: pools(c).append({"name": "system", "machineType": "n2-standard-4", "maxNodes": 1}), "gke-ai-batch:nodePools[2].name", "also made by the system pool"),
    ("slices below 1", lambda c: pools(c)[0].update(slices=0), "gke-ai-batch:nodePools[0].slices", "greater than or equal to 1"),
    ("name GKE rejects", lambda c: pools(c)[0].update(name="V6E_pool"), "gke-ai-batch:nodePools[0].name", "not a valid GKE name"),
    ("name too long for its slices", lambda c: pools(c)[0].update(name="a" * 39), "gke-ai-batch:nodePools[0].name", "named"),
    ("cluster name GKE rejects", lambda c: c["gke-ai-batch:cluster"].update(name="9lives"), "gke-ai-batch:cluster.name", "starting with a letter"),
    ("node counts on a TPU pool", lambda c: pools(c)[0].update(maxNodes=4), "gke-ai-batch:nodePools[0].maxNodes", "derive from tpu.topology"),
    ("TPU slice across zones", lambda c: c["gke-ai-batch:cluster"].update(nodeLocations=["us-central1-a", "us-central1-b"]), "gke-ai-batch:nodePools[0].zones", "exactly one zone"),
    ("zone outside the region", lambda c: pools(c)[1].update(zones=["europe-west4-a"]), "gke-ai-batch:nodePools[1].zones[0]", "not in the cluster's region us-central1"),
    ("GPU machine type that cannot carry it", lambda c: pools(c)[1].update(machineType="a3-highgpu-4g"), "gke-ai-batch:nodePools[1].machineType", "carries exactly 4"),
    ("tpu7x below its version", lambda c: (pools(c)[0]["tpu"].update(version="tpu7x", topology="2x2x2"), pools(c)[0].update(zones=["us-central1-c"]), c.update({"gke-ai-batch:catalogue": {"channels": {"REGULAR": {"minors": ["1.33"]}}}}), c["gke-ai-batch:cluster"].update(minMasterVersion="1.33")), "gke-ai-batch:nodePools[0].tpu.version", "tpu7x pools need GKE 1.34.0-gke.2201000"),
    ("wrong type", lambda c: pools(c)[1].update(maxNodes="lots"), "gke-ai-batch:nodePools[1].maxNodes", "valid integer"),
    ("unknown capacity", lambda c: pools(c)[0].update(capacity="preemptible"), "gke-ai-batch:nodePools[0].capacity", "'onDemand', 'spot', 'reservation', 'flexStart' or 'queued'"),
    # batch layer cross-references
    ("unknown flavor in a queue", lambda c: c["gke-ai-batch:clusterQueues"][0].update(flavors=["nope"]), "gke-ai-batch:clusterQueues[0].flavors[0].name", "unknown flavor 'nope'; known: tpu-v6e-slice-4x4, nvidia-h100-80gb-queued"),
    ("unknown pool in a flavor", lambda c: c.update({"gke-ai-batch:flavors": [{"name": "f", "pools": ["v5e"]}]}), "gke-ai-batch:flavors[0].pools[0]", "unknown node pool 'v5e'; known: v6e, h100"),
    ("unknown queue of a team", lambda c: c["gke-ai-batch:teams"][0].update(clusterQueue="other"), "gke-ai-batch:teams[0].clusterQueue", "unknown cluster queue 'other'; known: cq"),
    ("unknown team of a workload", lambda c: c["gke-ai-batch:workloads"][0].update(team="team-z"), "gke-ai-batch:workloads[0].team", "unknown team 'team-z'; known: team-a"),
    ("unknown pool of a workload", lambda c: c["gke-ai-batch:workloads"][0].update(pool="v5e"), "gke-ai-batch:workloads[0].pool", "unknown node pool 'v5e'"),
    ("unknown priority", lambda c: c["gke-ai-batch:workloads"][0].update(priority="urgent"), "gke-ai-batch:workloads[0].priority", "unknown priority 'urgent'; known: high"),
    ("more slices than the pool", lambda c: c["gke-ai-batch:workloads"][0].update(slices=3), "gke-ai-batch:workloads[0].slices", "3 slices never fit pool 'v6e', which has 2"),
    ("TPU pod asking for part of a VM", lambda c: c["gke-ai-batch:workloads"][0].update(resources={"google.com/tpu": 2}), 'gke-ai-batch:workloads[0].resources["google.com/tpu"]', "takes all 4 chips of its ct6e-standard-4t VM"),
    ("missing gcp:project", lambda c: c.pop("gcp:project"), "gcp:project", "required"),
    ("Job TTL", lambda c: c["gke-ai-batch:workloads"].append({"kind": "job", "name": "j", "team": "team-a", "pool": "v6e", "image": "i:1", "ttlSecondsAfterFinished": 60}), "gke-ai-batch:workloads[1].ttlSecondsAfterFinished", "unknown key 'ttlSecondsAfterFinished': Pulumi manages these workloads, and a Job that deletes itself after finishing is created again by the next `pulumi up` after a refresh"),
    ("JobSet TTL", lambda c: c["gke-ai-batch:workloads"][0].update(ttlSecondsAfterFinished=60), "gke-ai-batch:workloads[0].ttlSecondsAfterFinished", "Remove the key: a finished Job stays"),
    ("unknown workload kind", lambda c: c["gke-ai-batch:workloads"][0].update(kind="cronjob"), "gke-ai-batch:workloads[0].kind", "unknown kind 'cronjob'"),
    ("kueue older than 0.15", lambda c: c.update({"gke-ai-batch:kueue": {"version": "0.14.2"}}), "gke-ai-batch:kueue.version", "too old"),
    ("unpinned chart version", lambda c: c.update({"gke-ai-batch:jobset": {"version": "^0.12"}}), "gke-ai-batch:jobset.version", "no 'v', no ranges"),
    ("unknown integration", lambda c: c.update({"gke-ai-batch:kueue": {"integrations": ["batch/job", "argo"]}}), "gke-ai-batch:kueue.integrations[1]", "Input should be"),
    ("jobset without its integration", lambda c: c.update({"gke-ai-batch:kueue": {"integrations": ["batch/job"]}}), "gke-ai-batch:workloads[0].kind", "'jobset.x-k8s.io/jobset' integration"),
    ("borrowing without a cohort", lambda c: c["gke-ai-batch:clusterQueues"][0].update(flavors=[{"name": "tpu-v6e-slice-4x4", "quotas": {"google.com/tpu": {"nominal": 8, "borrowingLimit": 8}}}]), 'gke-ai-batch:clusterQueues[0].flavors[0].quotas["google.com/tpu"]', "need a cohort"),
    ("borrowWithinCohort with fair sharing", lambda c: (c.update({"gke-ai-batch:kueue": {"fairSharing": True}}), c["gke-ai-batch:clusterQueues"].append({"name": "cq2", "cohort": "ml"}), c["gke-ai-batch:clusterQueues"][0].update(cohort="ml", preemption={"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}})), "gke-ai-batch:clusterQueues[0].preemption.borrowWithinCohort", "ignores borrowWithinCohort when fair sharing is on"),
    ("fair sharing without a cohort", lambda c: c.update({"gke-ai-batch:kueue": {"fairSharing": True}}), "gke-ai-batch:kueue.fairSharing", "fair sharing divides a cohort's unused quota between its cluster queues, and no cohort here has two or more ('cq' in no cohort), so it would do nothing"),
    ("fair sharing in a cohort of one", lambda c: (c.update({"gke-ai-batch:kueue": {"fairSharing": {}}}), c["gke-ai-batch:clusterQueues"][0].update(cohort="ml"), c["gke-ai-batch:clusterQueues"].append({"name": "cq2", "cohort": "other"})), "gke-ai-batch:kueue.fairSharing", "no cohort here has two or more ('cq' alone in cohort 'ml'; 'cq2' alone in cohort 'other')"),
    ("JobSet name too long for its pods", lambda c: c["gke-ai-batch:workloads"][0].update(name="x" * 50), "gke-ai-batch:workloads[0].name", "at most 47 here"),
    ("workload pool outside its queue", lambda c: c["gke-ai-batch:clusterQueues"][0].update(flavors=["nvidia-h100-80gb-queued"]), "gke-ai-batch:workloads[0].pool", "pool 'v6e' is flavor 'tpu-v6e-slice-4x4', which cluster queue 'cq' of team 'team-a' does not offer"),
    ("bad quantity", lambda c: c["gke-ai-batch:clusterQueues"][0].update(flavors=[{"name": "tpu-v6e-slice-4x4", "quotas": {"memory": "10 GB"}}]), "gke-ai-batch:clusterQueues[0].flavors[0].quotas.memory", "not a Kubernetes quantity"),
    ("low priority above unprioritised work", lambda c: (c["gke-ai-batch:priorities"].append({"name": "batch-low", "value": 10}), c["gke-ai-batch:workloads"][0].pop("priority")), "gke-ai-batch:priorities[1].value", "priority 'batch-low' (value 10) outranks the workloads that set no priority (priority 0: train), though its name says low"),
    ("low not below high", lambda c: c["gke-ai-batch:priorities"].append({"name": "low", "value": 1000}), "gke-ai-batch:priorities[1].value", "priority 'low' (value 1000) is not below 'high' (value 1000)"),
    ("best-effort above highest", lambda c: c["gke-ai-batch:priorities"].extend([{"name": "best-effort", "value": 5000}, {"name": "highest", "value": 2000}]), "gke-ai-batch:priorities[1].value", "priority 'best-effort' (value 5000) is not below 'high' (value 1000)"),
    ("priority above the user range", lambda c: c["gke-ai-batch:priorities"][0].update(value=2_000_000_000), "gke-ai-batch:priorities[0].value", "less than or equal to 1000000000"),
    # images and team RBAC
    ("untagged image", lambda c: c["gke-ai-batch:workloads"][0].update(image="perl"), "gke-ai-batch:workloads[0].image", "'perl' has no tag, which means :latest; pin a version tag (e.g. perl:5.40) or a digest"),
    ("latest image", lambda c: c["gke-ai-batch:workloads"][0].update(image="us-docker.pkg.dev/p/r/img:latest"), "gke-ai-batch:workloads[0].image", "uses :latest, which moves"),
    ("latest probe image", lambda c: c.update({"gke-ai-batch:kueue": {"probeImage": "registry.k8s.io/kubectl:latest"}}), "gke-ai-batch:kueue.probeImage", "uses :latest"),
    ("team Role while Kueue lets unqueued Jobs run", lambda c: (c["gke-ai-batch:cluster"].update(securityGroup="gke-security-groups@acme.com"), c["gke-ai-batch:teams"][0].update(group="ml@acme.com"), c.update({"gke-ai-batch:kueue": {"manageJobsWithoutQueueName": False}})), "gke-ai-batch:teams[0].group", "kueue.manageJobsWithoutQueueName is false: a Job without a queue name would run outside every quota"),
    ("team Role for a kind Kueue does not manage", lambda c: (c["gke-ai-batch:cluster"].update(securityGroup="gke-security-groups@acme.com"), c["gke-ai-batch:teams"][0].update(group="ml@acme.com"), c.update({"gke-ai-batch:kueue": {"integrations": ["jobset.x-k8s.io/jobset"]}})), "gke-ai-batch:teams[0].group", "kueue.integrations lacks batch/job"),
    ("NetworkPolicy without Dataplane V2", lambda c: c["gke-ai-batch:cluster"].update(dataplaneV2=False), "gke-ai-batch:teams[0].networkPolicy", "enforced only with Dataplane V2"),
    ("team group without Google Groups for RBAC", lambda c: c["gke-ai-batch:teams"][0].update(group="ml@acme.com"), "gke-ai-batch:teams[0].group", "needs Google Groups for RBAC on the cluster: set cluster.securityGroup to gke-security-groups@<your domain>"),
    ("security group not named gke-security-groups", lambda c: c["gke-ai-batch:cluster"].update(securityGroup="admins@acme.com"), "gke-ai-batch:cluster.securityGroup", "only through a group named gke-security-groups@<your domain> (e.g. gke-security-groups@acme.com)"),
    ("team group not an email", lambda c: (c["gke-ai-batch:cluster"].update(securityGroup="gke-security-groups@acme.com"), c["gke-ai-batch:teams"][0].update(group="ML Research")), "gke-ai-batch:teams[0].group", "is not a Google Group email address"),
    # Pod Security: a namespace has one level, and admits its workloads' pods
    ("teams of a namespace disagree on its level", lambda c: c["gke-ai-batch:teams"].append({"namespace": "team-a", "localQueue": "lq2", "clusterQueue": "cq", "podSecurity": "baseline"}), "gke-ai-batch:teams[1].podSecurity", "namespace 'team-a' has podSecurity privileged from teams[0], and baseline here"),
    ("teams of a namespace disagree on its NetworkPolicy", lambda c: c["gke-ai-batch:teams"].extend([{"namespace": "team-b", "localQueue": "lq", "clusterQueue": "cq"}, {"namespace": "team-b", "localQueue": "lq2", "clusterQueue": "cq", "networkPolicy": False}]), "gke-ai-batch:teams[2].networkPolicy", "has networkPolicy true from teams[1], and false here"),
    ("a Pod Security label by hand", lambda c: c["gke-ai-batch:teams"][0].update(labels={"pod-security.kubernetes.io/warn": "restricted"}), 'gke-ai-batch:teams[0].labels["pod-security.kubernetes.io/warn"]', "is set from teams[0].podSecurity"),
    ("host network in a baseline namespace", lambda c: c["gke-ai-batch:teams"][0].pop("podSecurity"), "gke-ai-batch:workloads[0].pool", "JobSet team-a/train: its pods set spec.hostNetwork (Host Namespaces), which Pod Security level baseline of namespace team-a rejects at pod creation, so the JobSet would wait forever; set teams[0].podSecurity: privileged (multi-host TPU pods on Standard use the host network)"),
    ("privileged in a restricted namespace", lambda c: (c["gke-ai-batch:teams"][0].update(podSecurity="restricted"), c["gke-ai-batch:workloads"].append({"kind": "job", "name": "eval", "team": "team-a", "pool": "h100", "image": "i:1", "privileged": True})), "gke-ai-batch:workloads[1].privileged", "Job team-a/eval: its pods set spec.containers[0].securityContext.privileged (Privileged Containers)"),
    ("Autopilot without flavors", lambda c: (c.pop("gke-ai-batch:nodePools"), c.pop("gke-ai-batch:workloads"), c["gke-ai-batch:cluster"].update(mode="autopilot")), "gke-ai-batch:flavors", "Autopilot stacks declare their flavors"),
]


@pytest.mark.parametrize("mutate, path, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_config_names_the_key(tmp_path, mutate, path, words):
    config = valid()
    mutate(config)
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2
    assert result.recording is None, "nothing may be registered"
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


def test_the_valid_base_really_is_valid(tmp_path):
    assert synth_config(tmp_path, valid()).exit_code == 0


def test_fair_sharing_between_two_queues_of_a_cohort(tmp_path):
    config = valid()
    config["gke-ai-batch:kueue"] = {"fairSharing": True}
    config["gke-ai-batch:clusterQueues"] = [{"name": "cq", "cohort": "ml"}, {"name": "cq2", "cohort": "ml"}, {"name": "solo"}]
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


@pytest.mark.parametrize(
    "priorities, unprioritised",
    [
        # Names that claim no rank, or a rank qualified by what the work needs, may be anything.
        ([{"name": "low-latency", "value": 5000}, {"name": "high", "value": 1000}], True),
        ([{"name": "high-memory", "value": -5}, {"name": "high", "value": 1000}], True),
        ([{"name": "slow-lane", "value": 10}, {"name": "high", "value": 1000}], True),
        # A low class above 0 is fine while every workload names a priority...
        ([{"name": "high", "value": 1000}, {"name": "dev-low", "value": 100}], False),
        # ... and below 0 it is fine either way.
        ([{"name": "high", "value": 1000}, {"name": "low-priority", "value": -100}], True),
    ],
)
def test_priority_order_rule_has_no_false_positives(tmp_path, priorities, unprioritised):
    config = valid()
    config["gke-ai-batch:priorities"] = priorities
    if unprioritised:
        config["gke-ai-batch:workloads"][0].pop("priority")
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error


def test_several_problems_are_listed_together():
    config = {"cluster": {"name": "Bad"}, "nodePools": [{"name": "x", "tpu": {"version": "v6e", "topology": "3x3"}}]}
    with pytest.raises(ConfigError) as err:
        load(config, region="us-central1")
    paths = [p for p, _ in err.value.problems]
    assert paths == ["gke-ai-batch:cluster.name", "gke-ai-batch:nodePools[0].tpu.topology"]
    assert str(err.value).splitlines()[0] == "invalid stack config (2 problems):"


def test_config_error_is_a_run_error():
    # `pulumi up` prints a RunError's message without a traceback.
    assert issubclass(ConfigError, pulumi.RunError)


def test_cli_exit_2_one_message_nothing_written(tmp_path):
    config = valid()
    pools(config)[0]["tpu"]["topology"] = "4x5"
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(yamlread.dump({"config": config}))
    out = tmp_path / "out"
    proc = synth_cli("--config", str(stack), "--out", str(out))
    assert proc.returncode == 2
    assert proc.stdout == ""
    line = next(i for i, text in enumerate(stack.read_text().splitlines(), 1) if "topology: 4x5" in text)
    column = stack.read_text().splitlines()[line - 1].index("topology") + 1
    assert proc.stderr.splitlines() == [
        f"{stack}:{line}:{column}: gke-ai-batch:nodePools[0].tpu.topology: "
        "'4x5' is not a v6e topology; allowed: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16",
        f"synth: {stack}: 1 problem; nothing written",
    ]
    assert not out.exists()


def test_cli_rejects_a_file_not_named_like_a_stack(tmp_path):
    path = tmp_path / "stack.yaml"
    path.write_text("config: {}\n")
    proc = synth_main("--config", str(path))
    assert proc.returncode == 2
    assert "stack files are named Pulumi.<stack>.yaml" in proc.stderr


# -- every problem at once -----------------------------------------------------------------------


def problems_of(config: dict) -> list[tuple[str, str]]:
    """The (key path, message) pairs load() reports for a stack file's `config:` mapping."""
    ours = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gke-ai-batch:")}
    with pytest.raises(ConfigError) as err:
        load(ours, region=config["gcp:region"])
    return err.value.problems


def test_every_cross_key_mistake_is_reported_at_its_own_key():
    config = valid()
    c = lambda key: config[f"gke-ai-batch:{key}"]  # noqa: E731
    c("cluster")["minMasterVersion"] = "1.20"  # a minor the channel no longer offers
    pools(config)[1]["zones"] = ["europe-west4-a"]  # a zone outside the cluster's region
    config["gke-ai-batch:flavors"] = [{"name": "accel", "pools": ["v6e"]}, {"name": "accel", "pools": ["h100"]}]
    c("teams").append({"namespace": "team-b", "localQueue": "lq", "clusterQueue": "nope"})  # unknown queue
    c("priorities").append({"name": "high", "value": 500})  # declared twice
    c("workloads")[0].update(slices=3)  # more slices than pool v6e has
    c("workloads").append({"kind": "job", "name": "eval", "team": "team-z", "pool": "v6e", "image": "i:1"})
    c("workloads").append({"kind": "job", "name": "bench", "team": "team-a", "pool": "v5e", "image": "i:1"})

    problems = problems_of(config)

    # In the order of the stack's keys, one line each; before, only the first was reported.
    assert [path for path, _ in problems] == [
        "gke-ai-batch:cluster.minMasterVersion",
        "gke-ai-batch:nodePools[1].zones[0]",
        "gke-ai-batch:flavors[1].name",
        "gke-ai-batch:teams[1].clusterQueue",
        "gke-ai-batch:priorities[1].name",
        "gke-ai-batch:workloads[0].slices",
        "gke-ai-batch:workloads[1].team",
        "gke-ai-batch:workloads[2].pool",
    ], problems
    messages = dict(problems)
    assert "the REGULAR channel does not offer 1.20 any more" in messages["gke-ai-batch:cluster.minMasterVersion"]
    assert messages["gke-ai-batch:nodePools[1].zones[0]"] == "europe-west4-a is not in the cluster's region us-central1"
    assert messages["gke-ai-batch:flavors[1].name"] == "flavor 'accel' is declared twice"
    assert messages["gke-ai-batch:teams[1].clusterQueue"] == "unknown cluster queue 'nope'; known: cq"
    assert messages["gke-ai-batch:priorities[1].name"] == "priority 'high' is declared twice"
    assert messages["gke-ai-batch:workloads[0].slices"] == "3 slices never fit pool 'v6e', which has 2"
    assert messages["gke-ai-batch:workloads[1].team"] == "unknown team 'team-z'; known: team-a, team-b"
    assert messages["gke-ai-batch:workloads[2].pool"] == "unknown node pool 'v5e'; known: v6e, h100"


def test_the_cli_prints_every_problem_as_the_readme_shows(tmp_path):
    config = valid()
    pools(config)[1]["zones"] = ["europe-west4-a"]
    config["gke-ai-batch:teams"][0]["clusterQueue"] = "batch"
    config["gke-ai-batch:workloads"][0]["pool"] = "v5e"
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2 and result.recording is None
    file = tmp_path / "Pulumi.test.yaml"
    assert [(d["path"], d["message"]) for d in diagnostics.parse(result.error)] == [
        ("gke-ai-batch:nodePools[1].zones[0]", "europe-west4-a is not in the cluster's region us-central1"),
        ("gke-ai-batch:teams[0].clusterQueue", "unknown cluster queue 'batch'; known: cq"),
        ("gke-ai-batch:workloads[0].pool", "unknown node pool 'v5e'; known: v6e, h100"),
    ]
    shown = result.error.replace(str(file), "bad/Pulumi.dev.yaml") + "\nsynth: bad/Pulumi.dev.yaml: 3 problems; nothing written"
    page = (ROOT / "docs" / "synth.md").read_text()
    assert f"$ python -m synth --config bad/Pulumi.dev.yaml\n{shown}\n" in page


def _job(**keys) -> dict:
    return {"kind": "job", "name": "eval", "team": "team-a", "image": "i:1", **keys}


CASCADES = [
    # (id, mutate(config), the one key path reported, how its message starts and ends): a rule
    # that needs another to hold stays quiet about what that other rule already refused. A second
    # message at the same key would be joined to the first with "; ", so the end is checked too.
    (
        # not also "maxRunDurationSeconds: only for workloads on a queued pool"
        "unknown pool of a job",
        lambda c: c["gke-ai-batch:workloads"].append(_job(pool="h10", maxRunDurationSeconds=600)),
        "gke-ai-batch:workloads[1].pool",
        ("unknown node pool 'h10'; known: v6e, h100",) * 2,
    ),
    (
        # not also "a ProvisioningRequest needs a queued pool (or a gpu or tpu shape)"
        "unknown pool of a ProvisioningRequest",
        lambda c: c["gke-ai-batch:workloads"].append(_job(kind="provisioningRequest", pool="h10")),
        "gke-ai-batch:workloads[1].pool",
        ("unknown node pool 'h10'; known: v6e, h100",) * 2,
    ),
    (
        # not also "GKE offers nvidia-h100-80gb in us-central1 only in ..., not in us-central1-z"
        "pool zone the catalogue lacks",
        lambda c: pools(c)[1].update(zones=["us-central1-z"]),
        "gke-ai-batch:nodePools[1].zones[0]",
        ("'us-central1-z' is not a zone of us-central1", "(a newer one: add it under gke-ai-batch:catalogue.zones)"),
    ),
    (
        # nor what the pools (which take the cluster's zones) and a bare GPU shape are offered there
        "cluster zone the catalogue lacks",
        lambda c: (
            c["gke-ai-batch:cluster"].update(nodeLocations=["us-central1-z"]),
            c["gke-ai-batch:workloads"].append(_job(gpu={"type": "nvidia-l4"})),
        ),
        "gke-ai-batch:cluster.nodeLocations[0]",
        ("'us-central1-z' is not a zone of us-central1", "(a newer one: add it under gke-ai-batch:catalogue.zones)"),
    ),
    (
        # nor what the cluster's zones offer: the region is wrong, not the pools
        "region the catalogue lacks",
        lambda c: (c.update({"gcp:region": "mars-north1"}), c["gke-ai-batch:cluster"].update(nodeLocations=["mars-north1-a"])),
        "gcp:region",  # where the user wrote it: cluster.location comes from it
        ("'mars-north1' is not a Google Cloud region", "(a newer one: add its zones under gke-ai-batch:catalogue.zones)"),
    ),
    (
        # not also "nodePools[0].capacity: flexStart TPU pools need GKE 1.33.0-gke.1712000 or later"
        "version the channel lacks",
        lambda c: (pools(c)[0].update(capacity="flexStart"), c["gke-ai-batch:cluster"].update(minMasterVersion="1.20")),
        "gke-ai-batch:cluster.minMasterVersion",
        ("the REGULAR channel does not offer 1.20 any more", ")"),
    ),
    (
        # not also "workloads[0].pool: pool 'v6e' is flavor ..., which cluster queue 'cq' does not offer (nope)"
        "unknown flavor of a queue",
        lambda c: c["gke-ai-batch:clusterQueues"][0].update(flavors=["nope"]),
        "gke-ai-batch:clusterQueues[0].flavors[0].name",
        ("unknown flavor 'nope'; known: tpu-v6e-slice-4x4, nvidia-h100-80gb-queued",) * 2,
    ),
    (
        # not also "workloads[0].pool: no flavor covers pool 'v6e'", nor "clusterQueues[0].flavors:
        # list this queue's flavors with quotas: accel offer no accelerator capacity"
        "unknown pool of a flavor",
        lambda c: c.update({"gke-ai-batch:flavors": [{"name": "accel", "pools": ["v6"]}, {"name": "gpu", "pools": ["h100"]}]}),
        "gke-ai-batch:flavors[0].pools[0]",
        ("unknown node pool 'v6'; known: v6e, h100",) * 2,
    ),
    (
        # not also "workloads[0].localQueue: team 'team-a' has several local queues (lq, lq)"
        "team declared twice",
        lambda c: c["gke-ai-batch:teams"].append(dict(c["gke-ai-batch:teams"][0])),
        "gke-ai-batch:teams[1].localQueue",
        ("namespace 'team-a' already has a local queue 'lq'",) * 2,
    ),
    (
        # not also "nodePools: the pools can grow to 15006 nodes ..."
        "pool over the per-zone limit",
        lambda c: pools(c).append({"name": "cpu", "machineType": "n2-standard-4", "maxNodes": 15000}),
        "gke-ai-batch:nodePools[2].maxNodes",
        ("maxNodes 15000 over 1 zone exceeds GKE's 1000 nodes per node pool per zone (at most 1000 here)",) * 2,
    ),
    (
        # not also "priority 'low' (value 2000) is not below 'high' (value 1000)": one value to change
        "low priority above unprioritised work and above high",
        lambda c: (c["gke-ai-batch:priorities"].append({"name": "low", "value": 2000}), c["gke-ai-batch:workloads"][0].pop("priority")),
        "gke-ai-batch:priorities[1].value",
        ("priority 'low' (value 2000) outranks the workloads that set no priority", "a priority above it"),
    ),
]


@pytest.mark.parametrize("mutate, path, message", [c[1:] for c in CASCADES], ids=[c[0] for c in CASCADES])
def test_a_dependent_rule_does_not_repeat_a_mistake(mutate, path, message):
    config = valid()
    mutate(config)
    problems = problems_of(config)
    assert [p for p, _ in problems] == [path], problems
    start, end = message
    assert problems[0][1].startswith(start) and problems[0][1].endswith(end), problems


def test_every_rule_of_one_entry_is_reported():
    config = valid()
    pools(config)[0].update(machineType="ct6e-standard-4t", minNodes=1, maxNodes=4, reservation="r")
    pools(config)[1].update(labels={"Bad Key": "x", "example.com/ok": "no spaces"})
    config["gke-ai-batch:clusterQueues"][0]["flavors"] = [
        "tpu-v6e-slice-4x4",
        {"name": "tpu-v6e-slice-4x4", "quotas": {"google.com/tpu": {"nominal": 8, "borrowingLimit": 8}}},
    ]
    config["gke-ai-batch:workloads"][0]["ports"] = [0, 8080, 70000]
    problems = problems_of(config)
    assert [p for p, _ in problems] == [
        "gke-ai-batch:nodePools[0].machineType",
        "gke-ai-batch:nodePools[0].minNodes",
        "gke-ai-batch:nodePools[0].maxNodes",
        "gke-ai-batch:nodePools[0].reservation",
        'gke-ai-batch:nodePools[1].labels["Bad Key"]',
        'gke-ai-batch:nodePools[1].labels["example.com/ok"]',
        "gke-ai-batch:clusterQueues[0].flavors[1].name",
        'gke-ai-batch:clusterQueues[0].flavors[1].quotas["google.com/tpu"]',
        "gke-ai-batch:workloads[0].ports[0]",
        "gke-ai-batch:workloads[0].ports[2]",
    ], problems
    assert dict(problems)["gke-ai-batch:nodePools[0].reservation"] == "only with capacity reservation, not onDemand"
    assert dict(problems)["gke-ai-batch:workloads[0].ports[2]"] == "70000 is not a port number"


def test_one_mistake_in_an_entry_is_one_message():
    # A reservation on a flexStart pool is refused as that, not also as "not reservation
    # capacity"; a pool both tpu and gpu is that one mistake, not also the rules of each kind.
    config = valid()
    pools(config)[0].update(capacity="flexStart", reservation="r")
    pools(config)[1].update(tpu={"version": "v6e", "topology": "4x4"})
    assert problems_of(config) == [
        (
            "gke-ai-batch:nodePools[0].reservation",
            "flexStart pools cannot consume a reservation (GKE requires reservation affinity NO_RESERVATION)",
        ),
        ("gke-ai-batch:nodePools[1]", "a pool is either tpu or gpu (or a plain machineType for CPU), not both"),
    ]


def test_cross_key_rules_wait_until_every_key_is_valid_on_its_own():
    # Two rounds (docs/synth.md, "Diagnostics"): pydantic runs a model's rules across keys only
    # once each key has validated, so the unknown team shows after the topology is fixed.
    config = valid()
    pools(config)[0]["tpu"]["topology"] = "4x5"
    config["gke-ai-batch:workloads"][0]["team"] = "team-z"
    assert [p for p, _ in problems_of(config)] == ["gke-ai-batch:nodePools[0].tpu.topology"]
    pools(config)[0]["tpu"]["topology"] = "4x4"
    assert [p for p, _ in problems_of(config)] == ["gke-ai-batch:workloads[0].team"]


def test_a_copied_entry_is_reported_once_not_with_every_problem_of_its_original():
    config = valid()
    pools(config)[1]["zones"] = ["europe-west4-a"]
    pools(config).append(copy.deepcopy(pools(config)[1]))
    queues = config["gke-ai-batch:clusterQueues"]
    queues[0]["flavors"] = ["nope"]
    queues.append(copy.deepcopy(queues[0]))
    workloads = config["gke-ai-batch:workloads"]
    workloads[0]["team"] = "team-z"
    workloads.append(copy.deepcopy(workloads[0]))
    assert problems_of(config) == [
        ("gke-ai-batch:nodePools[1].zones[0]", "europe-west4-a is not in the cluster's region us-central1"),
        ("gke-ai-batch:nodePools[2].name", "node pool 'h100' is also made by nodePools[1]"),
        (
            "gke-ai-batch:clusterQueues[0].flavors[0].name",
            "unknown flavor 'nope'; known: tpu-v6e-slice-4x4, nvidia-h100-80gb-queued",
        ),
        ("gke-ai-batch:clusterQueues[1].name", "cluster queue 'cq' is declared twice"),
        ("gke-ai-batch:workloads[0].team", "unknown team 'team-z'; known: team-a"),
        ("gke-ai-batch:workloads[1].name", "workload 'train' is declared twice"),
    ]


# -- a newcomer's mistakes, each answered with what to do --------------------------------------


def test_a_quoted_number_says_remove_the_quotes(tmp_path):
    config = valid()
    pools(config)[1]["maxNodes"] = "4"
    synth_refused_with(tmp_path, config, "gke-ai-batch:nodePools[1].maxNodes", 'remove the quotes (write 4, not "4")')
    config = valid()
    pools(config)[1]["maxNodes"] = "four"  # not a number either way: no such hint
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2 and "remove the quotes" not in result.error


def test_a_value_in_the_wrong_case_gets_the_right_one(tmp_path):
    config = valid()
    pools(config)[1]["capacity"] = "Spot"
    synth_refused_with(tmp_path, config, "gke-ai-batch:nodePools[1].capacity", "got 'Spot' (did you mean 'spot'? values are case-sensitive)")
    pools(config)[1]["capacity"] = "flexstrat"
    synth_refused_with(tmp_path, config, "gke-ai-batch:nodePools[1].capacity", "(did you mean 'flexStart'?)")


def test_config_keys_without_the_config_line_get_one_hint(tmp_path):
    path = tmp_path / "Pulumi.test.yaml"
    path.write_text(yamlread.dump(valid()))  # the keys at the top, no `config:` above them
    result = synth_main("--config", str(path), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    problems = [line for line in result.stderr.splitlines() if line.startswith(str(path))]
    assert len(problems) == 1 and "at the top level: a stack file holds them under `config:`" in problems[0], result.stderr
    assert f"{len(valid())} config keys ('gcp:project', " in problems[0]


def test_a_bad_region_is_named_where_it_was_written(tmp_path):
    config = valid()
    config["gcp:region"] = "us-central"
    synth_refused_with(tmp_path, config, "gcp:region", "'us-central' is not a region (us-central1)")
    # cluster.location written: the problem is there.
    config = valid()
    config["gke-ai-batch:cluster"]["location"] = "us-central"
    synth_refused_with(tmp_path, config, "gke-ai-batch:cluster.location", "'us-central' is not a region")


def synth_refused_with(tmp_path, config, path, words):
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)
