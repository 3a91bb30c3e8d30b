"""A plausible edit never crashes synth: for every shipped stack, each optional block of each node
pool, flavor and ComputeClass is deleted in turn (deleting a pool's `tpu:` block once ended in
exit 70, an AttributeError), and synth ends in 0 (rendered) or 2 (refused, with its reasons),
never 70. One in-process synth run per edit; a refused edit costs milliseconds, a rendered one
about a tenth of a second."""

from __future__ import annotations

import copy

import yaml

from conftest import ROOT, STACKS
from gke_ai_batch.synth import yamlread
from gke_ai_batch.synth.__main__ import main

# The lists whose entries' blocks (a mapping or a list: tpu, gpu, reservation, upgrade, zones,
# labels, taints, pools, priorities...) a user deletes. A ClusterQueue's blocks were walked once too
# (no crash), but most of those edits render, ~0.3 s each: left out to keep this test under 5 s.
KEYS = ("gke-ai-batch:nodePools", "gke-ai-batch:flavors", "gke-ai-batch:computeClasses")


def edits(stack: str):
    """(what was deleted, the stack's config without it), one per block of each entry."""
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    for key in KEYS:
        for i, entry in enumerate(config.get(key) or ()):
            for field, value in entry.items():
                if not isinstance(value, (dict, list)):
                    continue  # a scalar: its schema default or its own refusal
                edited = copy.deepcopy(config)
                del edited[key][i][field]
                yield f"{key}[{i}].{field}", edited


def test_deleting_any_optional_block_of_a_pool_flavor_or_class_never_crashes(tmp_path, capsys):
    ran, crashed = 0, []
    for stack in STACKS:
        for what, config in edits(stack):
            path = tmp_path / f"Pulumi.{stack}.yaml"
            path.write_text(yamlread.dump({"config": config}))
            code = main(["--config", str(path), "--out", str(tmp_path / "out"), "--quiet"])
            err = capsys.readouterr().err
            ran += 1
            if code not in (0, 2):
                crashed.append(f"{stack}: without {what}: exit {code}: {err.strip().splitlines()[-1:]}")
    assert ran > 25  # the shipped stacks have that many blocks: the walk found them
    assert not crashed, "\n".join(crashed)


def test_a_tpu_pool_without_its_tpu_block_is_refused_with_the_one_reason(tmp_path, capsys):
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]
    del config["gke-ai-batch:nodePools"][0]["tpu"]  # a reservation pool: its rules read the machine type
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yamlread.dump({"config": config}))
    assert main(["--config", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "gke-ai-batch:nodePools[0]: say what the pool runs: tpu, gpu (with machineType) or a machineType" in err
    assert "internal error" not in err


def test_near_miss_the_stack_with_its_tpu_block_renders(tmp_path, capsys):
    assert main(["prod", "--out", str(tmp_path / "out"), "--quiet"]) == 0
