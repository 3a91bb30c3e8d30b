"""The PR diff a reviewer reads in one pass (`python -m synth STACK --base DIR`, gke_ai_batch/synth/diff.py),
on the pull requests platform engineers open against prod: the committed stack rendered as the
base, the stack file edited, rendered again, diffed. Each names the change where it is (a
nested field by its path and the names of the entries on it), says what `pulumi up` refuses
(only deletes and replaces of protected resources), shows each queue's largest admissible
workload as a short table without zeros, marks a pool that appears or goes, and has no empty
section."""

from __future__ import annotations

import copy
import functools
import json
import re

import pytest

from conftest import ROOT, synth_config, synth_stack

STACK = "prod"
POOL = "gcp:container/nodePool:NodePool"


@functools.lru_cache(maxsize=None)
def _prod() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]


def _edited(name: str) -> dict:
    config = copy.deepcopy(_prod())
    pools = config["gke-ai-batch:nodePools"]
    queues = {q["name"]: q for q in config["gke-ai-batch:clusterQueues"]}
    if name == "quota-bump":  # training lends all of its reserved v5p chips, research may borrow them
        queues["training"]["flavors"][0]["quotas"]["google.com/tpu"]["lendingLimit"] = 128
        queues["research"]["flavors"][2]["quotas"]["google.com/tpu"]["borrowingLimit"] = 128
    elif name == "new-pool":
        pools.append({"name": "v6e-small", "tpu": {"version": "v6e", "topology": "4x4"}, "slices": 1,
                      "capacity": "spot", "zones": ["us-central1-b"]})
        queues["research"]["flavors"].append({"name": "tpu-v6e-slice-4x4-spot"})
    elif name == "removed-pool":
        pools[:] = [p for p in pools if p["name"] != "v6e-spot"]
        queues["research"]["flavors"] = [f for f in queues["research"]["flavors"] if f["name"] != "tpu-v6e-slice-8x8-spot"]
    elif name == "replaced-pool":  # maxRunDuration is ForceNew: the protected H100 pool is replaced
        next(p for p in pools if p["name"] == "h100-dws")["maxRunDuration"] = "3d"
    elif name == "flavor-added":
        pools.append({"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1, "driverVersion": "latest"},
                      "machineType": "g2-standard-8", "capacity": "spot", "maxNodes": 4, "zones": ["us-central1-a"]})
        queues["research"]["flavors"].append({"name": "nvidia-l4-spot"})
    elif name == "in-place":  # the protected cluster and H100 pool are updated, not replaced
        config["gke-ai-batch:cluster"]["labels"]["team"] = "platform"
        next(p for p in pools if p["name"] == "h100-dws")["maxNodes"] = 16
    return config


@pytest.fixture(scope="module")
def diff_of(tmp_path_factory):
    from gke_ai_batch import synth
    from gke_ai_batch.synth import diff

    base = diff.Render.from_files(synth.output_files(synth_stack(STACK)))

    @functools.lru_cache(maxsize=None)
    def run(name: str) -> tuple[dict, str]:
        result = synth_config(tmp_path_factory.mktemp(name), _edited(name), STACK)
        assert result.exit_code == 0, result.error
        files = diff.files(STACK, base, diff.Render.from_files(synth.output_files(result)))
        return json.loads(files["diff.json"], parse_constant=_no_constant), files["diff.md"]

    return run


def _no_constant(name):
    raise AssertionError(f"diff.json holds {name}, which is no JSON")


def _names(urns: list[str]) -> list[str]:
    from gke_ai_batch.domain import urns as parser

    return [parser.parse(u).name for u in urns]


def _section(text: str, title: str) -> list[str]:
    """The lines of the section `### title` (up to the next heading)."""
    lines = text.splitlines()
    start = lines.index(f"### {title}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start + 1 : end]


def _rows(lines: list[str]) -> list[list[str]]:
    rows = [line for line in lines if line.startswith("| ")][2:]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


SCENARIOS = ("quota-bump", "new-pool", "removed-pool", "replaced-pool", "flavor-added", "in-place")


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_section_has_content_and_no_change_reads_the_same_before_and_after(diff_of, name):
    data, text = diff_of(name)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("### "):
            following = next((x for x in lines[i + 1 :] if x.strip()), "")
            assert following and not following.startswith("#"), f"empty section {line!r}"
    if "### Properties that change" in text:
        for row in _rows(_section(text, "Properties that change")):
            assert row[2] != row[3], row
    if "### Largest workload a cluster queue can admit" in text:
        for row in _rows(_section(text, "Largest workload a cluster queue can admit")):
            assert all(len(cell) < 100 for cell in row), row
            assert not any(re.fullmatch(r"0(\.0)?( → .*)?|.* → 0(\.0)?", cell) for cell in row[2:]), row


def test_a_quota_bump_is_named_by_its_path_and_entries(diff_of):
    data, text = diff_of("quota-bump")
    r = data["resources"]
    assert sorted(_names(r["changed"])) == ["research", "training"] and not (r["added"] or r["replaced"] or r["deleted"])
    research = next(u for u in r["changed"] if u.endswith("::research"))
    assert r["details"][research] == [{
        "path": "spec.resourceGroups[0].flavors[2].resources[0].borrowingLimit", "before": 64, "after": 128,
        "replaces": False, "names": ["tpu-v5p-slice-4x4x4-reserved", "google.com/tpu"]}]
    assert ("| `research (kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue)` | `spec.resourceGroups[0].flavors[2]"
            ".resources[0].borrowingLimit` (`tpu-v5p-slice-4x4x4-reserved`, `google.com/tpu`) | `64` | `128` |") in text
    assert "Protected" not in text
    assert _rows(_section(text, "Largest workload a cluster queue can admit")) == [
        ["`research`", "`tpu-v5p-slice-4x4x4-reserved`", "64 → 128", "6620.992", "13.26Ti"]]
    assert "`nvidia.com/gpu`" not in "\n".join(_section(text, "Largest workload a cluster queue can admit"))
    assert "### Admission verdicts that change" not in text  # no sample's verdict changes


def test_a_new_pool_is_created_and_marked_new_without_a_protection_banner(diff_of):
    data, text = diff_of("new-pool")
    assert "Protected" not in text and "refused" not in text and not data["resources"]["protected"]
    assert [(s["operation"], s["name"]) for s in data["operations"] if s["type"] == POOL] == [("create", "v6e-small-0")]
    assert ["`ml-prod/v6e-small-0`", "—", "$6,269.26", "new"] in _rows(_section(text, "Cost per 30 days at maximum size (USD, list price)"))
    assert "`spec.resourceGroups[0].flavors[3]` (`tpu-v6e-slice-4x4-spot`) | — | " in text
    # The new flavor's nominal quota of 0 GPUs is no row of the queue's changes.
    assert "tpu-v6e-slice-4x4-spot/nvidia.com/gpu" not in text


def test_a_removed_protected_pool_is_refused_and_marked_removed(diff_of):
    data, text = diff_of("removed-pool")
    assert sorted(_names(data["resources"]["protected"])) == ["v6e-spot", "v6e-spot-0", "v6e-spot-1"]
    assert text.count("**Protected resources deleted or replaced:**") == 1 and "`cluster (" not in text.split("###")[0]
    for pool in ("v6e-spot-0", "v6e-spot-1"):
        step = next(s for s in data["operations"] if s["name"] == pool)
        assert step["operation"] == "delete" and step["note"].startswith("**refused while protected**; once lifted, ")
        assert [f"`ml-prod/{pool}`", "$25,077.02", "—", "removed"] in _rows(
            _section(text, "Cost per 30 days at maximum size (USD, list price)"))
    # The removed flavor is one change, named, not a shift of every flavor after it.
    removed = [c for c in data["resources"]["details"][data["resources"]["changed"][-1]] if c["after"] is None]
    assert [(c["path"], c["names"]) for c in removed] == [("spec.resourceGroups[0].flavors[0]", ["tpu-v6e-slice-8x8-spot"])]


def test_a_protected_pool_replaced_is_the_only_resource_the_banner_names(diff_of):
    data, text = diff_of("replaced-pool")
    assert _names(data["resources"]["replaced"]) == ["h100-dws"] and _names(data["resources"]["protected"]) == ["h100-dws"]
    banner = next(line for line in text.splitlines() if line.startswith("**Protected"))
    assert banner.startswith("**Protected resources deleted or replaced:** `h100-dws (gcp:container/nodePool:NodePool)`: ")
    step = data["operations"][0]
    assert step["operation"] == "replace" and "refused while protected" in step["note"] and "capacity gap" in step["note"]


def test_a_flavor_added_shows_its_gpus_and_no_zero_tpus(diff_of):
    data, text = diff_of("flavor-added")
    largest = _section(text, "Largest workload a cluster queue can admit")
    assert _rows(largest) == [["`research`", "`nvidia-l4-spot`", "— → 4", "— → 29.624", "— → 107.67Gi"]]
    assert "| cluster queue | flavor | `nvidia.com/gpu` | `cpu` | `memory` |" in largest
    # The new pool's row shows the after render's price (diff.json's figure, from cost.json) as new.
    added = data["cost"]["pools"]["ml-prod/l4"]
    assert added["before"] is None and added["after"] > 0 and added["change"] == "new"
    assert ["`ml-prod/l4`", "—", f"${added['after']:,.2f}", "new"] in _rows(
        _section(text, "Cost per 30 days at maximum size (USD, list price)"))


def test_in_place_updates_of_protected_resources_raise_no_banner(diff_of):
    data, text = diff_of("in-place")
    assert set(_names(data["resources"]["changed"])) == {"cluster", "h100-dws", "research"}
    assert not data["resources"]["protected"] and "Protected" not in text and "refused" not in text
    assert next(s for s in data["operations"] if s["name"] == "cluster")["note"] == "in place: nodes and the control plane keep running"


def test_two_long_values_are_shown_from_where_they_differ():
    from gke_ai_batch.synth import diff

    before = json.dumps({"tiles": [{"title": f"tile {i}"} for i in range(40)]})
    after = before.replace("tile 30", "tile 30 (v6e)")
    b, a = diff._cells(before, after)
    assert b != a and b.startswith("`…") and "tile 30\"" in b and "tile 30 (v6e)" in a
    assert diff._cells(1, "1") == ("`1`", '`"1"`')
    assert diff._cells(None, "x" * 200) == ("—", "`" + "x" * 79 + "…`")


def test_a_total_that_misses_unpriced_items_is_never_shown_as_zero_in_the_diff():
    # batch-autopilot prices nothing it can run on (cost.json's total is 0 with its unpriced
    # items listed): its diff row shows no price, as the report does, not $0.00.
    import json as _json

    from gke_ai_batch import synth
    from gke_ai_batch.synth import diff

    files = synth.output_files(synth_stack("batch-autopilot"))
    head = diff.Render.from_files(files)
    cost = _json.loads(files["cost.json"])
    assert cost["total"]["per30DaysMax"] == 0 and cost["total"]["unpriced"]
    cost["total"]["per30DaysMax"] = 100.0
    cost["total"]["unpriced"] = []
    base = diff.Render.from_files({**files, "cost.json": _json.dumps(cost)})
    text = diff.files("batch-autopilot", base, head)["diff.md"]
    (row,) = [r for r in _rows(_section(text, "Cost per 30 days at maximum size (USD, list price)")) if r[0] == "**total**"]
    assert row[1] == "$100.00" and row[2] == "—", row
