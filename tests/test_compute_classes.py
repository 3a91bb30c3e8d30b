"""Capacity fallback with GKE custom ComputeClasses (docs/capacity-fallback.md): each rule has a
refusal (exit 2, the stack file's line and key path, the rule in the message) and a near miss
that GKE takes and synth renders; the rendered class is valid against its vendored schema; the
admission model knows the capacity a class's flavor stands for and refuses a workload no
priority can hold."""

from __future__ import annotations

import copy

import pytest

from conftest import base_config, by_name, synth_stack
from support import manifests as M
from gke_ai_batch.synth import report as report_md
from test_maintenance import refused, rendered

CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
FLAVOR_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
L4 = {"gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8"}
FALLBACK = {
    "name": "l4-fallback",
    "priorities": [{**L4, "capacity": "flexStart"}, {**L4, "capacity": "spot"}, dict(L4)],
}
C = "gke-ai-batch:computeClasses[0]"
AUTOPILOT = {"mode": "autopilot", "nodeLocations": []}
EXISTING = {
    "existing": True,
    "endpoint": "gke-0123abcd.us-central1.gke.goog",
    "nodeServiceAccount": "test-nodes@test-project.iam.gserviceaccount.com",
}


def config(classes=None, flavor=None, workloads=(), quotas=None, priorities=(), **cluster) -> dict:
    c = base_config(
        computeClasses=copy.deepcopy(classes if classes is not None else [FALLBACK]),
        flavors=[flavor if flavor is not None else {"name": "fallback", "computeClass": "l4-fallback"}],
        clusterQueues=[{"name": "cq", "flavors": [{"name": "fallback", "quotas": quotas or {"nvidia.com/gpu": 8, "cpu": 56, "memory": "224Gi"}}]}],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq"}],
        workloads=copy.deepcopy(list(workloads)),
        priorities=list(priorities),
    )
    c["gke-ai-batch:cluster"].update(minMasterVersion="1.34")
    c["gke-ai-batch:cluster"].update(cluster)
    if cluster.get("existing") or cluster.get("mode") == "autopilot":
        del c["gke-ai-batch:cluster"]["minMasterVersion"]
    return c


def job(name="burst", gpus=1, **extra) -> dict:
    return {
        "kind": "job", "name": name, "team": "team-a", "gpu": {"type": "nvidia-l4", "count": gpus},
        "image": "busybox:1.36", "command": ["true"], "resources": {"cpu": "2", "memory": "8Gi"}, **extra,
    }


def with_priority(**priority) -> list[dict]:
    return [{"name": "l4-fallback", "priorities": [priority]}]


# (id, config, key path, words): each a refusal of GKE's (or of what the model needs to judge).
REFUSALS = [
    ("name GKE keeps for its own classes", config([{**FALLBACK, "name": "gke-fast"}], {"name": "fallback", "computeClass": "gke-fast"}),
     f"{C}.name", "GKE refuses ComputeClass names starting with 'gke'"),
    ("autopilot prefix", config([{**FALLBACK, "name": "autopilot-x"}], {"name": "fallback", "computeClass": "autopilot-x"}),
     f"{C}.name", "starting with 'autopilot'"),
    ("class declared twice", config([FALLBACK, FALLBACK]), "gke-ai-batch:computeClasses[1].name", "declared twice"),
    ("tpu and gpu in one priority", config(with_priority(**L4, tpu={"version": "v6e", "topology": "2x4"})),
     f"{C}.priorities[0]", "either tpu or gpu"),
    ("GPU on a machine type that does not carry it", config(with_priority(gpu={"type": "nvidia-l4", "count": 1}, machineType="a3-highgpu-8g")),
     f"{C}.priorities[0].machineType", "a3-highgpu-8g"),
    ("GPU count with no machine type to carry it", config(with_priority(gpu={"type": "nvidia-l4", "count": 3})),
     f"{C}.priorities[0].machineType", "required for 3 x nvidia-l4"),
    ("TPU topology the generation does not offer", config(with_priority(tpu={"version": "v6e", "topology": "3x3"})),
     f"{C}.priorities[0].tpu.topology", "3x3"),
    ("CPU machine type Compute Engine does not have", config(with_priority(machineType="n2-standard-7")),
     f"{C}.priorities[0].machineType", "n2-standard-7"),
    ("priority with no node shape", config(with_priority(capacity="spot")), f"{C}.priorities[0]", "say what the priority's nodes are"),
    ("reservation capacity without a reservation", config(with_priority(**L4, capacity="reservation")),
     f"{C}.priorities[0].reservation", "names the reservation its nodes consume"),
    ("a reservation on spot", config(with_priority(**L4, capacity="spot", reservation="r")),
     f"{C}.priorities[0].reservation", "only with capacity reservation"),
    ("no priorities", config([{"name": "l4-fallback", "priorities": []}]), f"{C}.priorities", "at least 1"),
    ("no auto-creation and no auto-provisioning on Standard", config([{**FALLBACK, "autoCreate": False}]),
     f"{C}.autoCreate", "no node pool would serve this class"),
    ("auto-creation before GKE has it", config(version="1.33.2-gke.1000000", **EXISTING),
     f"{C}.autoCreate", "need GKE 1.33.3-gke.1136000 or later"),
    # An existing Autopilot cluster: GKE makes its nodes, so auto-creation's own floor does not apply.
    ("custom classes before GKE has them", config(version="1.30.2-gke.1000000", **AUTOPILOT, **EXISTING),
     f"{C}.name", "custom ComputeClasses need GKE 1.30.3-gke.1451000 or later"),
    ("flex-start GPUs before GKE has them", config(version="1.32.1-gke.1000000", **AUTOPILOT, **EXISTING),
     f"{C}.priorities[0].capacity", "flex-start GPU nodes need GKE 1.32.2-gke.1652000 or later"),
    ("accelerator none of the cluster's zones offers", config(with_priority(tpu={"version": "v5e", "topology": "2x4"}), quotas={"google.com/tpu": 8}, nodeLocations=["us-central1-b"]),
     f"{C}.priorities[0].tpu.version", "GKE offers v5e in us-central1 only in us-central1-a, none of them in the cluster's zones (us-central1-b)"),
    ("flavor naming no class", config(flavor={"name": "fallback", "computeClass": "nope"}),
     "gke-ai-batch:flavors[0].computeClass", "unknown compute class 'nope'; known: l4-fallback"),
    ("flavor with both pools and a class", config(flavor={"name": "fallback", "computeClass": "l4-fallback", "pools": ["p"]})
     | {"gke-ai-batch:nodePools": [{"name": "p", **L4, "maxNodes": 1}]},
     "gke-ai-batch:flavors[0].pools", "either node pools or a compute class"),
    ("flavor with a class and its own labels", config(flavor={"name": "fallback", "computeClass": "l4-fallback", "nodeLabels": {"a": "b"}}),
     "gke-ai-batch:flavors[0].nodeLabels", "remove nodeLabels"),
    # A VM consumes a reservation only with its properties, Local SSDs included, and an A3 High 8g
    # comes with 16 attached (Compute Engine accelerator-optimized machines).
    ("a reservation on a machine with Local SSDs attached, their count unstated",
     config(with_priority(gpu={"type": "nvidia-h100-80gb", "count": 8}, capacity="reservation", reservation="h100-res")),
     f"{C}.priorities[0].localSSDCount", "a3-highgpu-8g node comes with 16 Local SSDs attached"),
    ("a Local SSD count the machine does not come with",
     config(with_priority(gpu={"type": "nvidia-h100-80gb", "count": 8}, localSSDCount=8)),
     f"{C}.priorities[0].localSSDCount", "no more and no fewer: write 16"),
    ("workload no priority's node holds", config(workloads=[job(gpus=2)]),
     "gke-ai-batch:workloads[0]", "no priority of ComputeClass l4-fallback can run its pods"),
    ("workload asking more cpu than the class's machine has", config(workloads=[job(resources={"cpu": "16", "memory": "8Gi"})]),
     "gke-ai-batch:workloads[0]", "a g2-standard-8 node has"),
]


@pytest.mark.parametrize("cfg, path, words", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_what_gke_refuses_or_never_runs_is_refused(tmp_path, cfg, path, words):
    refused(tmp_path, cfg, path, words)


# (id, config): just inside each rule above, which GKE takes and synth renders.
NEAR_MISSES = [
    ("a name that merely contains gke", config([{**FALLBACK, "name": "fast-gke"}], {"name": "fallback", "computeClass": "fast-gke"})),
    ("two classes of different names", config([FALLBACK, {**FALLBACK, "name": "other"}])),
    ("a TPU priority", config(with_priority(tpu={"version": "v6e", "topology": "2x4"}), quotas={"google.com/tpu": 8})),
    ("the GPU's own machine type, derived", config(with_priority(gpu={"type": "nvidia-h100-80gb", "count": 8}))),
    ("a reservation on A3 High 8g with its 16 Local SSDs stated",
     config(with_priority(gpu={"type": "nvidia-h100-80gb", "count": 8}, capacity="reservation", reservation="h100-res",
                          localSSDCount=16))),
    ("an accelerator one of the cluster's zones offers", config(with_priority(tpu={"version": "v5e", "topology": "2x4"}), quotas={"google.com/tpu": 8}, nodeLocations=["us-central1-b", "us-central1-a"])),
    ("a CPU machine type", config(with_priority(machineType="n2-standard-8"), quotas={"cpu": 8})),
    # A block of an accelerator whose reservations have blocks (catalogue.RESERVATION_FEATURES).
    ("a shared reservation's block", config(with_priority(gpu={"type": "nvidia-h100-mega-80gb", "count": 8}, capacity="reservation",
                                                          reservation="projects/shared-proj/reservations/h100-res/reservationBlocks/b1",
                                                          localSSDCount=16),
                                            nodeLocations=["us-central1-c"])),
    ("no auto-creation with cluster auto-provisioning", config([{**FALLBACK, "autoCreate": False}], autoProvisioning={"cpu": {"max": 64}, "memoryGb": {"max": 256}})),
    ("auto-creation at its first version", config(version="1.33.3-gke.1136000", **EXISTING)),
    ("flex-start GPUs at their first version", config(version="1.32.2-gke.1652000", **AUTOPILOT, **EXISTING)),
    ("a workload the class's node holds", config(workloads=[job(resources={"cpu": "7", "memory": "8Gi"})])),
    ("ScaleUpAnyway lets GKE go outside the priorities", config([{**FALLBACK, "whenUnsatisfiable": "ScaleUpAnyway"}], workloads=[job(gpus=2)])),
]


@pytest.mark.parametrize("cfg", [n[1] for n in NEAR_MISSES], ids=[n[0] for n in NEAR_MISSES])
def test_near_misses_render(tmp_path, cfg):
    result = rendered(tmp_path, cfg)
    for r in result.recording.resources:
        if r.type == CLASS_TYPE:
            assert M.validate(r.inputs) == [], r.inputs


def test_the_class_and_its_flavor_render(tmp_path):
    reserved = {**L4, "capacity": "reservation", "reservation": "projects/shared-proj/reservations/l4-res"}
    result = rendered(tmp_path, config([{**FALLBACK, "priorities": [reserved, *FALLBACK["priorities"]]}], workloads=[job()]))
    cc = by_name(result, CLASS_TYPE, "l4-fallback")["inputs"]
    gpu = {"type": "nvidia-l4", "count": 1, "driverVersion": "default"}
    assert cc["spec"] == {
        "priorities": [
            {"machineType": "g2-standard-8", "gpu": gpu, "reservations": {
                "affinity": "Specific",
                "specific": [{"name": "l4-res", "project": "shared-proj"}]}},
            {"machineType": "g2-standard-8", "gpu": gpu, "flexStart": {"enabled": True}},
            {"machineType": "g2-standard-8", "gpu": gpu, "spot": True},
            {"machineType": "g2-standard-8", "gpu": gpu, "spot": False},
        ],
        "nodePoolAutoCreation": {"enabled": True},
        "whenUnsatisfiable": "DoNotScaleUp",
    }
    assert M.validate(cc) == []
    flavor = by_name(result, FLAVOR_TYPE, "fallback")["inputs"]["spec"]
    # Standard: the class's label, and the toleration of GKE's taint on the class's nodes.
    assert flavor == {
        "nodeLabels": {"cloud.google.com/compute-class": "l4-fallback"},
        "tolerations": [{"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "l4-fallback", "effect": "NoSchedule"}],
    }
    report = report_md.render(result, result.violations)
    assert "### Compute classes: capacity in priority order" in report
    assert "| `l4-fallback` | 1 | 1 × nvidia-l4 on g2-standard-8 | reservation (`projects/shared-proj/reservations/l4-res`) | `fallback` |" in report
    assert "reservation → flexStart → spot → onDemand (ComputeClass `l4-fallback`)" in report


def test_the_schema_refuses_what_the_crd_refuses():
    """The vendored schema carries the CRD's rules: flex-start with spot, an unknown field,
    a Specific reservation without one are refused."""
    base = {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "c"},
            "spec": {"priorities": [{"machineType": "n2-standard-8"}], "whenUnsatisfiable": "DoNotScaleUp"}}
    assert M.validate(base) == []
    for priority, words in (
        ({"machineType": "n2-standard-8", "spot": True, "flexStart": {"enabled": True}}, "incompatible with Spot"),
        ({"machineType": "n2-standard-8", "machineFamily": "n2"}, "cannot be set together"),
        ({"machineType": "n2-standard-8", "reservations": {"affinity": "Specific"}}, "At least 1 specific reservation"),
        ({"machineType": "n2-standard-8", "spotty": True}, "spotty"),
    ):
        bad = copy.deepcopy(base)
        bad["spec"]["priorities"] = [priority]
        assert any(words in p for p in M.validate(bad)), (priority, M.validate(bad))
    bad = copy.deepcopy(base)
    bad["spec"]["whenUnsatisfiable"] = "Wait"
    assert M.validate(bad) != []


def test_a_flavors_capacity_is_its_priorities(tmp_path):
    """The model's capacity types for the class's flavor are its priorities': the report's waits
    say flex-start and spot; the interruptible-only advisory counts the on-demand priority as a
    home, and fires when every priority is interruptible."""
    top = [{"name": "top", "value": 100}]
    result = rendered(tmp_path, config(workloads=[job(priority="top")], priorities=top))
    [verdict] = result.admission.verdicts
    assert any("fallback is flex-start capacity" in w.message for w in verdict.waits), verdict.waits
    assert any("fallback is spot capacity" in w.message for w in verdict.waits), verdict.waits
    assert result.admission.capacity_types["fallback"] == {"flexStart", "spot", "onDemand"}
    assert not [v for v in result.violations if v["policy"] == "queue-interruptible-only"]
    interruptible = [{**FALLBACK, "priorities": FALLBACK["priorities"][:2]}]
    result = rendered(tmp_path, config(interruptible, workloads=[job(priority="top")], priorities=top))
    [v] = [v for v in result.violations if v["policy"] == "queue-interruptible-only"]
    assert "fallback (flex-start/spot)" in v["message"]


def class_job(gpus=1) -> dict:
    """A sample that leaves the accelerator to the class: GPUs by request, no gpu shape (whose
    cloud.google.com/gke-accelerator selector GKE would reject next to the class's)."""
    wl = job()
    del wl["gpu"]
    wl["resources"]["nvidia.com/gpu"] = gpus
    return wl


def test_autopilot_judges_pods_of_a_custom_class_against_its_priorities(tmp_path):
    result = rendered(tmp_path, config(workloads=[class_job()], **AUTOPILOT))
    # Autopilot: no taint to tolerate, the class's label alone.
    assert by_name(result, FLAVOR_TYPE, "fallback")["inputs"]["spec"] == {"nodeLabels": {"cloud.google.com/compute-class": "l4-fallback"}}
    refused(tmp_path, config(workloads=[class_job(gpus=2)], **AUTOPILOT),
            "gke-ai-batch:workloads[0]", "no priority of ComputeClass l4-fallback can run its pods")


def test_an_autopilot_gpu_pod_selecting_the_accelerator_on_a_class_flavor_is_refused(tmp_path):
    # GKE rejects a Pod that selects a custom ComputeClass and a system node label the class has a
    # field for (about-custom-compute-classes, "Node selectors for system node labels"): a gpu
    # shape renders cloud.google.com/gke-accelerator, Kueue injects cloud.google.com/compute-class.
    refused(tmp_path, config(workloads=[job()], **AUTOPILOT), "gke-ai-batch:workloads[0]",
            "select ComputeClass l4-fallback and the system node label cloud.google.com/gke-accelerator (gpu.type)")


def test_the_dev_stack_falls_back_through_a_class():
    result = synth_stack("dev")
    cc = by_name(result, CLASS_TYPE, "l4-fallback")["inputs"]
    assert [next(k for k in ("flexStart", "spot") if k in p and p[k] not in (False,)) if ("flexStart" in p or p.get("spot")) else "onDemand"
            for p in cc["spec"]["priorities"]] == ["flexStart", "spot", "onDemand"]
    assert M.validate(cc) == []
    [queue] = [q for q in result.plan.queues if q.name == "dev"]
    # The class's flavor after the flex-start pool's: Kueue tries it when the pool's GPUs are taken.
    order = [f["name"] for g in queue.manifest["spec"]["resourceGroups"] for f in g["flavors"]]
    assert order.index("nvidia-l4-flex") < order.index("l4-fallback")


def test_the_component_refuses_bad_args_at_their_paths():
    from gke_ai_batch.components.computeclasses import ComputeClasses
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        ComputeClasses("cc", {"classes": [
            {"name": "gke-x", "priorities": [{"machine_type": "n2-standard-8"}]},
            {"name": "ok", "priorities": [{"gpu": {"type": "nvidia-l4"}, "machine_type": "g2-standard-8", "capacity": "reservation"}]},
        ]})
    lines = str(caught.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("ComputeClasses cc: args.classes[0].name: 'gke-x': GKE refuses ComputeClass names"), lines
    assert lines[1] == "ComputeClasses cc: args.classes[1].priorities[0].reservation: capacity reservation names the reservation its nodes consume"
    once = {"name": "ok", "priorities": [{"machine_type": "n2-standard-8"}]}
    with pytest.raises(ArgsError, match=r"ComputeClasses cc: args.classes\[1\].name: compute class 'ok' is declared twice"):
        ComputeClasses("cc", {"classes": [once, once]})
    with pytest.raises(ArgsError, match=r"ComputeClasses cc: args.classes: required"):
        ComputeClasses("cc", {})


def test_the_component_from_any_program(tmp_path):
    from support.programs import run_program

    recording = run_program(tmp_path, """
        import pulumi
        import pulumi_kubernetes as k8s
        from gke_ai_batch.components.computeclasses import ComputeClasses

        p = k8s.Provider("ml-shared", kubeconfig="{}")
        args = {"classes": [{"name": "h100", "priorities": [
            {"gpu": {"type": "nvidia-h100-80gb", "count": 8}, "capacity": "flexStart"},
            {"gpu": {"type": "nvidia-h100-80gb", "count": 8}}]}]}
        for suffix in ("", "-b"):
            ComputeClasses("classes" + suffix, args, pulumi.ResourceOptions(provider=p))
        """)
    made = [r for r in recording.resources if r.type == CLASS_TYPE]
    assert sorted(r.name for r in made) == ["classes-b-h100", "classes-h100"]
    assert all(M.validate(r.inputs) == [] for r in made)
    assert made[0].inputs["spec"]["priorities"][0]["machineType"] == "a3-highgpu-8g"


def test_a_fleet_manager_takes_no_compute_class(tmp_path):
    import yaml

    from conftest import ROOT

    fleet = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-dws.yaml").read_text())["config"]
    fleet["gke-ai-batch:computeClasses"] = [FALLBACK]
    refused(tmp_path, fleet, "gke-ai-batch:computeClasses", "a fleet's manager runs no pods")


def test_a_class_mixing_cpu_and_gpu_priorities_keeps_its_place_after_the_pool(tmp_path):
    # A CPU last resort made the class "without accelerators", which queues put first: Kueue then
    # tried the fallback before the pool, and dev's job pinned to the pool could never run (exit 2).
    import yaml
    from conftest import ROOT, synth_config

    cfg = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    cfg["gke-ai-batch:computeClasses"][0]["priorities"].append({"machineType": "n2-standard-8"})
    result = synth_config(tmp_path, cfg)
    assert result.exit_code == 0, result.error
    [queue] = [q for q in result.plan.queues if q.name == "dev"]
    order = [f["name"] for g in queue.manifest["spec"]["resourceGroups"] for f in g["flavors"]]
    assert order.index("nvidia-l4-flex") < order.index("l4-fallback")
