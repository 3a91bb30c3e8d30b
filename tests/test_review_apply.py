"""What apply will do to a GKE cluster or node pool changed in place (gke_ai_batch/synth/diff.py over
gke_ai_batch/domain/gke_updates.py): in place, a control plane restart (the API down for
minutes on a zonal cluster), or every node recreated, each with GKE's page."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import synth_stack

CLUSTER = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"


@pytest.fixture(scope="module")
def base():
    from gke_ai_batch import synth
    return json.loads(synth.output_files(synth_stack("dev"))["resources.json"])


def _step(base, type_: str, edit, name: str | None = None) -> dict:
    from gke_ai_batch.synth import diff

    head = copy.deepcopy(base)
    target = next(r for r in head if r["type"] == type_ and (name is None or r["name"] == name))
    edit(target["inputs"])
    old, new = diff.Render(base, {}, [], []), diff.Render(head, {}, [], [])
    data = diff.compute(old, new)
    assert data["resources"]["changed"] == [target["urn"]], data["resources"]
    (step,) = [s for s in data["operations"] if s["urn"] == target["urn"]]
    assert "Traceback" not in diff.markdown("dev", data)
    return step


def test_a_control_plane_version_restarts_the_control_plane_and_a_zonal_one_loses_its_api(base):
    def upgrade(inputs):
        inputs["minMasterVersion"] = "1.99"

    step = _step(base, CLUSTER, upgrade)
    assert step["operation"] == "update"
    assert "the control plane restarts" in step["note"] and "regional" in step["note"]
    assert "`minMasterVersion`" in step["note"] and step["doc"].endswith("/concepts/cluster-upgrades")

    zonal_base = copy.deepcopy(base)
    next(r for r in zonal_base if r["type"] == CLUSTER)["inputs"]["location"] = "us-central1-a"
    step = _step(zonal_base, CLUSTER, upgrade)
    assert "**control plane restarts**" in step["note"] and "unavailable" in step["note"]


def test_shielded_nodes_on_the_cluster_recreate_every_node_of_every_pool(base):
    def flip(inputs):
        inputs["enableShieldedNodes"] = not inputs.get("enableShieldedNodes")

    step = _step(base, CLUSTER, flip)
    assert "recreates every node of every node pool" in step["note"] and "`enableShieldedNodes`" in step["note"]
    assert step["doc"].endswith("/how-to/shielded-gke-nodes")


def test_a_release_channel_change_is_in_place(base):
    def channel(inputs):
        inputs["releaseChannel"] = {"channel": "STABLE" if inputs["releaseChannel"]["channel"] != "STABLE" else "RAPID"}

    step = _step(base, CLUSTER, channel)
    assert step["note"].startswith("in place") and step["doc"] == ""


def test_a_node_pool_metadata_mode_recreates_its_nodes_and_its_size_does_not(base):
    from gke_ai_batch.synth import diff

    def metadata(inputs):
        inputs["nodeConfig"]["workloadMetadataConfig"] = {"mode": "GCE_METADATA"}

    step = _step(base, POOL, metadata, "system")
    assert "recreates every node of the pool" in step["note"] and "workloadMetadataConfig" in step["note"]
    assert step["doc"].endswith("/how-to/workload-identity")

    def grow(inputs):
        inputs["autoscaling"]["totalMaxNodeCount"] = inputs["autoscaling"]["totalMaxNodeCount"] + 1

    step = _step(base, POOL, grow, "system")
    assert step["note"].startswith("in place")
    # The property table names each field's class too.
    head = copy.deepcopy(base)
    metadata(next(r for r in head if r["type"] == POOL and r["name"] == "system")["inputs"])
    text = diff.markdown("dev", diff.compute(diff.Render(base, {}, [], []), diff.Render(head, {}, [], [])))
    assert "**recreates nodes** ([docs](https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity))" in text


def test_every_class_of_the_table_cites_a_gke_page():
    from gke_ai_batch.domain import gke_updates

    for table in gke_updates.UPDATES.values():
        for path, update in table.items():
            assert update.effect in gke_updates.SEVERITY[1:], path
            assert update.doc.startswith("https://cloud.google.com/kubernetes-engine/docs/"), path
