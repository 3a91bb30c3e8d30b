"""Red-team of what landed on day one, as a hostile user would try it: the deployer's bucket
condition between two stacks of one project, and NO_UPGRADES exclusions at the edge of the dates
a stack can hold."""

from __future__ import annotations

import copy

import pytest
from synth import yamlread
from synth.stackfile import StackFile

from bootstrap import synth as bsynth
from bootstrap.resources import checkpoint_buckets_condition
from conftest import ROOT, base_config, synth_refused, synth_rendered
from test_dayone_deployer_iam import _allows as evaluates_true

EXAMPLE = ROOT / "bootstrap" / "Pulumi.example.yaml"
NS = "gke-ai-batch-bootstrap"


def _bootstrap(tmp_path, prefixes: list[str], project: str | None = "acme-ml-dev"):
    """The example bootstrap with these checkpoint bucket prefixes, its stacks in `project`."""
    config = copy.deepcopy(yamlread.load(EXAMPLE.read_text()).data["config"])
    for stack, prefix in zip(config[f"{NS}:stacks"], prefixes):
        stack["project"] = project or stack["project"]
        stack["checkpointBucketPrefix"] = prefix
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yamlread.dump({"config": config}))
    return bsynth.render(StackFile.locate(ROOT, None, path))


def _allows(prefix: str, bucket: str) -> bool:
    return evaluates_true(checkpoint_buckets_condition(prefix)["expression"], f"projects/_/buckets/{bucket}")


@pytest.mark.parametrize("prefixes", [["acme-ml", "acme-ml-prod"], ["acme-ml-prod", "acme-ml"], ["acme-ml", "acme-ml"]])
def test_two_stacks_of_one_project_whose_bucket_conditions_overlap_are_refused(tmp_path, prefixes):
    # The main stack's default prefix is <project>-<cluster>: clusters ml and ml-prod of one
    # project give exactly this, and dev's deployer could then delete prod's checkpoints.
    first, second = prefixes
    victim = f"{max(prefixes, key=len)}-team-a-ckpt"
    assert _allows(first, victim) and _allows(second, victim)
    recording, problems = _bootstrap(tmp_path, prefixes)
    assert recording is None
    [problem] = problems
    assert problem.path == f"{NS}:stacks[1].checkpointBucketPrefix" and problem.line
    assert f"stacks[0]'s {first!r} share project acme-ml-dev" in problem.message
    assert "could delete the other's checkpoints" in problem.message


@pytest.mark.parametrize("prefixes, project", [(["acme-ml", "acme-ml2"], "acme-ml-dev"), (["acme-ml", "acme-ml-prod"], None)])
def test_prefixes_whose_conditions_are_disjoint_or_in_other_projects_are_taken(tmp_path, prefixes, project):
    # acme-ml- does not start acme-ml2-; and a grant on a project reaches only that project's
    # buckets (None: the example's two projects).
    recording, problems = _bootstrap(tmp_path, prefixes, project)
    assert not problems, [d.render() for d in problems]
    assert recording is not None


# -- NO_UPGRADES exclusions at datetime's edges ---------------------------------------------------

M = "gke-ai-batch:cluster.maintenance"


def _exclusions(*spans: tuple[str, str]) -> dict:
    exclusions = [{"name": f"x{i}", "scope": "NO_UPGRADES", "start": s, "end": e} for i, (s, e) in enumerate(spans)]
    return base_config(cluster={"name": "test", "nodeLocations": ["us-central1-a"],
                                "maintenance": {"dailyStart": "03:00", "exclusions": exclusions}})


def test_a_no_upgrades_exclusion_ending_in_the_last_month_a_timestamp_can_hold_renders(tmp_path):
    # The 32-day crowding check added 32 days to the end: 9999-12-31 overflowed (exit 70).
    synth_rendered(tmp_path, _exclusions(("9999-12-01T00:00:00Z", "9999-12-31T23:59:59Z")))


def test_four_no_upgrades_exclusions_in_the_last_month_are_refused_not_a_crash(tmp_path):
    spans = [(f"9999-12-{10 + i}T00:00:00Z", f"9999-12-{11 + i}T00:00:00Z") for i in range(4)]
    synth_refused(tmp_path, _exclusions(*spans), f"{M}.exclusions[3].start",
                  "GKE allows at most 3 NO_UPGRADES exclusions in any 32 days")


# -- GkeCluster's monitoring.dcgm, checked by the stack's metrics rules ------------------------------


def test_dcgm_without_managed_collection_names_the_components_own_key():
    from gke_ai_batch.components.cluster import GkeCluster
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        GkeCluster("c", {"name": "ml", "location": "us-central1", "project": "acme-ml", "monitoring": {"dcgm": True}})
    [line] = str(caught.value).splitlines()
    # The stack's key (metrics.managedPrometheus) is no arg of GkeCluster.
    assert line.startswith("GkeCluster c: args.monitoring.dcgm: ") and "monitoring.managed_prometheus is false" in line, line
