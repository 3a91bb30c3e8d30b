"""A fleet's diff keys capacity by cluster: the workers' flavors share names (and the manager
has them too), so growing one worker's pool changes that worker's flavor alone."""

from __future__ import annotations

import copy
import json

from conftest import synth_stack


def test_growing_one_workers_pool_changes_that_workers_flavor_only():
    from gke_ai_batch import synth
    from gke_ai_batch.synth import diff

    base = json.loads(synth.output_files(synth_stack("fleet-dws"))["resources.json"])
    head = copy.deepcopy(base)
    pool = next(r for r in head if r["name"] == "us-east4/h100-dws" and r["type"].endswith(":NodePool"))
    pool["inputs"]["autoscaling"]["totalMaxNodeCount"] += 2
    data = diff.compute(diff.Render(base, {}, [], []), diff.Render(head, {}, [], []))
    assert data["capacity"] == {
        "us-east4/nvidia-h100-80gb-queued": {
            "before": {"pools": 1, "slices": 0, "vms": 4, "accelerators": 32},
            "after": {"pools": 1, "slices": 0, "vms": 6, "accelerators": 48},
        }
    }


def test_a_fleets_flavors_of_one_name_are_one_row_per_cluster():
    from gke_ai_batch import synth
    from gke_ai_batch.synth import diff

    files = synth.output_files(synth_stack("fleet-dws"))
    data = diff.compute(diff.Render.empty(), diff.Render.from_files(files))
    h100 = {k: v["after"]["accelerators"] for k, v in data["capacity"].items() if k.endswith("/nvidia-h100-80gb-queued")}
    # Each worker's own pool, and none on the manager (it runs nothing).
    assert h100 == {"europe-west4/nvidia-h100-80gb-queued": 32, "manager/nvidia-h100-80gb-queued": 0,
                    "us-east4/nvidia-h100-80gb-queued": 32, "us-west1/nvidia-h100-80gb-queued": 32}
