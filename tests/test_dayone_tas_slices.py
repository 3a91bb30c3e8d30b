"""Kueue TAS slices (kueue.x-k8s.io/podset-slice-required-topology and podset-slice-size): what
Kueue's job webhook refuses and what its scheduler never places is refused (exit 2, the key path,
Kueue's words); each has a near miss that renders and is admitted. The model judges the
annotations as a program registers them, too."""

from __future__ import annotations

import pytest

from conftest import synth_refused, synth_rendered
from gke_ai_batch.domain import topology
from gke_ai_batch.domain.podtemplates import PodSet, pod_templates
from gke_ai_batch.model import topology as model_topology
from gke_ai_batch.model.placement import Placement
from test_topology import HOSTNAME, NODEPOOL, _world, config, manifests, sample

W = "gke-ai-batch:workloads[0]"
BLOCK = "cloud.google.com/gce-topology-block"

# The v5e pool: three 2x4 slices (node pools) of two hosts each; a sample's slice job has one pod
# per host, so slices=1 is 2 pods and slices=2 is 4.
REFUSALS = [
    ("slice larger than the pod set", 1, {"required": NODEPOOL, "slice": {"level": HOSTNAME, "size": 3}},
     W, "kueue.x-k8s.io/podset-slice-size 3 \"must not be greater than pod set count 2\""),
    ("slice level the Topology lacks", 1, {"required": NODEPOOL, "slice": {"level": BLOCK, "size": 1}},
     f"{W}.topology.slice.level", f"Kueue places slices in {BLOCK} domains only on a flavor whose Topology has that level"),
    ("slice level wider than the required level", 1, {"required": HOSTNAME, "slice": {"level": NODEPOOL, "size": 1}},
     W, f"podset slice topology {NODEPOOL} is above the podset topology {HOSTNAME}"),
    ("a slice larger than any slice domain", 1, {"required": NODEPOOL, "slice": {"level": HOSTNAME, "size": 2}},
     W, f"its 2 pods make 1 slices of 2 (kueue.x-k8s.io/podset-slice-size), each in one {HOSTNAME} domain, and those of "
        "ResourceFlavor v5e hold 0 whole slices"),
    ("more slices than the required domain holds", 2, {"required": NODEPOOL, "slice": {"level": HOSTNAME, "size": 1}},
     W, f"it requires one {NODEPOOL} domain for its 4 slices of 1 pods, each in one {HOSTNAME} domain, and the largest "
        f"{NODEPOOL} domain of ResourceFlavor v5e holds 2"),
    ("slice size 0", 1, {"required": NODEPOOL, "slice": {"level": HOSTNAME, "size": 0}},
     f"{W}.topology.slice.size", "greater than or equal to 1"),
]


@pytest.mark.parametrize("slices, request_, path, words", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_slices_kueue_refuses_or_never_places_are_refused(tmp_path, slices, request_, path, words):
    synth_refused(tmp_path, config(workloads=[sample(slices=slices, **request_)]), path, words)


NEAR_MISSES = [
    ("one pod per host slice", 1, {"required": NODEPOOL, "slice": {"level": HOSTNAME, "size": 1}}),
    ("the slice is the pod set", 1, {"required": NODEPOOL, "slice": {"level": NODEPOOL, "size": 2}}),
    ("slice level equal to the pod set's level", 1, {"preferred": HOSTNAME, "slice": {"level": HOSTNAME, "size": 1}}),
    # No podset level: Kueue takes the Topology's highest, unconstrained; 4 host slices over 6 hosts.
    ("slices alone", 2, {"slice": {"level": HOSTNAME, "size": 1}}),
    ("preferred with slices of a node pool each", 2, {"preferred": NODEPOOL, "slice": {"level": NODEPOOL, "size": 2}}),
]


@pytest.mark.parametrize("slices, request_", [n[1:] for n in NEAR_MISSES], ids=[n[0] for n in NEAR_MISSES])
def test_slice_near_misses_render_and_are_admitted(tmp_path, slices, request_):
    result = synth_rendered(tmp_path, config(workloads=[sample(slices=slices, **request_)]))
    assert result.admission.at_once["train"] is None


def test_the_slice_annotations_are_on_every_pod_template(tmp_path):
    result = synth_rendered(tmp_path, config(workloads=[sample(required=NODEPOOL, slice={"level": HOSTNAME, "size": 1})]))
    [jobset] = manifests(result, "JobSet")
    templates = pod_templates("JobSet", jobset)
    assert templates
    for template in templates:
        annotations = template["metadata"]["annotations"]
        assert annotations[topology.SLICE_ANNOTATION] == HOSTNAME
        assert annotations[topology.SLICE_SIZE_ANNOTATION] == "1"
        assert annotations[topology.REQUIRED_ANNOTATION] == NODEPOOL


def test_a_topology_with_nothing_asked_is_refused(tmp_path):
    synth_refused(tmp_path, config(workloads=[sample(slice=None, required=None) | {"topology": {}}]), f"{W}.topology",
                  "give one of required or preferred")


# -- the model on annotations as a program registers them -------------------------------------------

ONE_POD_PER_HOST = Placement("main", ["pool-0"], {"pool-0": 1})


def _pod_set(count: int, **annotations: str) -> PodSet:
    keys = {"required": topology.REQUIRED_ANNOTATION, "slice": topology.SLICE_ANNOTATION, "size": topology.SLICE_SIZE_ANNOTATION}
    return PodSet("main", {}, 1, count, {keys[k]: v for k, v in annotations.items()})


@pytest.mark.parametrize("annotations, words", [
    ({"slice": HOSTNAME}, "\"must be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified\""),
    ({"size": "1"}, "\"may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not specified\""),
    ({"slice": HOSTNAME, "size": "one"}, "'one' \"must be a numeric value\""),
    ({"slice": HOSTNAME, "size": "2147483648"}, "\"must be a numeric value\""),
    ({"slice": HOSTNAME, "size": "0"}, "\"must be greater than or equal to 1\""),
    ({"slice": HOSTNAME, "size": "3"}, "\"must not be greater than pod set count 2\""),
])
def test_the_model_refuses_what_kueues_webhook_refuses(annotations, words):
    [found] = model_topology.judge(_world({"t": (NODEPOOL, HOSTNAME)}), _pod_set(2, required=NODEPOOL, **annotations), ["f"], ONE_POD_PER_HOST)
    never = found.message if found.severity == "error" else None
    assert never is not None and never.startswith("Kueue's webhook refuses its slice annotations") and words in never, never


@pytest.mark.parametrize("annotations", [
    {"slice": HOSTNAME, "size": "1"},
    {"slice": HOSTNAME, "size": "+1"},  # strconv.ParseInt takes a sign
    {"slice": NODEPOOL, "size": "2"},
])
def test_near_miss_the_model_admits_slices_the_webhook_takes(annotations):
    world = _world({"t": (NODEPOOL, HOSTNAME)})
    assert model_topology.judge(world, _pod_set(2, required=NODEPOOL, **annotations), ["f"], ONE_POD_PER_HOST) == ()


def test_the_model_refuses_a_slice_level_the_registered_topology_lacks():
    [found] = model_topology.judge(_world({"t": (NODEPOOL,)}), _pod_set(2, slice=HOSTNAME, size="1"), ["f"], ONE_POD_PER_HOST)
    never = found.message if found.severity == "error" else None
    assert never is not None and "no requested topology level for slices" in never


def test_a_host_domain_holds_only_its_own_slices():
    # Two pods per host on two hosts: one host holds 2 slices of 1, never the pool's 4.
    world = _world({"t": (NODEPOOL, HOSTNAME)})
    two_per_host = Placement("main", ["pool-0"], {"pool-0": 2})
    assert model_topology.judge(world, _pod_set(2, required=HOSTNAME, slice=HOSTNAME, size="1"), ["f"], two_per_host) == ()
    [found] = model_topology.judge(world, _pod_set(3, required=HOSTNAME, slice=HOSTNAME, size="1"), ["f"], two_per_host)
    never = found.message if found.severity == "error" else None
    assert never is not None and f"the largest {HOSTNAME} domain of ResourceFlavor f holds 2" in never, never
