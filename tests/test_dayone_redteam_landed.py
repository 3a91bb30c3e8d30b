"""Red-team of what landed on day one, as a hostile user would try it: the deployer's bucket
condition between two stacks of one project, and NO_UPGRADES exclusions at the edge of the dates
a stack can hold."""

from __future__ import annotations

import copy

import json

import pytest
from gke_ai_batch.synth import EXIT_POLICY_VIOLATION, yamlread
from gke_ai_batch.synth.stackfile import StackFile

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


# -- two components that apply one Kubernetes object to one cluster -------------------------------

TWO_WORKERS = """
import pulumi
from gke_ai_batch.components.cluster import GkeCluster
from gke_ai_batch.components.multikueue import MultiKueueManager, MultiKueueWorker

w = GkeCluster("w", {"name": "w", "location": "us-east5", "project": "acme-ml"})
shared = None
for m in ("m1", "m2"):
    if shared is None or not ONE_WORKER:
        worker = MultiKueueWorker(WORKER_NAME.format(m=m), {"namespaces": ["team-a"], "frameworks": ["batch/job"], "endpoint": w.endpoint,
                                               "ca_certificate": w.cluster_ca_certificate, "worker": "w"},
                                  pulumi.ResourceOptions(provider=w.provider))
        shared = worker
    c = GkeCluster(m, {"name": m, "location": "us-central1", "project": "acme-ml"})
    MultiKueueManager(f"{m}-mk", {"workers": [{"name": "w", "kubeconfig": shared.kubeconfig}], "admission_check": f"fleet-{m}"},
                      pulumi.ResourceOptions(provider=c.provider))
"""


def _two_workers(tmp_path, one_worker: bool, worker_name: str):
    from gke_ai_batch.synth.program import read_project, synthesize_program

    (tmp_path / "Pulumi.yaml").write_text("name: lib\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(f"ONE_WORKER = {one_worker}\nWORKER_NAME = {worker_name!r}\n{TWO_WORKERS}")
    stack = tmp_path / "Pulumi.test.yaml"
    stack.write_text("config:\n  gcp:project: acme-ml\n")
    result = synthesize_program(read_project(tmp_path), StackFile.locate(ROOT, None, stack))
    assert result.recording is not None, result.error
    return result


def _unique_object_findings(tmp_path, one_worker: bool, worker_name: str = "w-for-{m}") -> list[str]:
    from gke_ai_batch.synth import policy

    result = _two_workers(tmp_path, one_worker, worker_name)
    return [f.message for f in policy.findings(result) if f.rule == "k8s-unique-objects"]


def test_a_program_on_several_clusters_renders_each_cluster_alone_instead_of_crashing(tmp_path):
    # Objects on three clusters' providers: each cluster is judged alone, and admission.json
    # keys each queue by its cluster rather than synth failing.
    result = _two_workers(tmp_path, one_worker=True, worker_name="{m}/multikueue")
    # Exit 3: the pack's findings on this bare program (no RBAC, no MultiKueue names), not 70.
    assert result.exit_code == EXIT_POLICY_VIOLATION, result.error
    assert isinstance(result.admission, dict) and len(result.admission) > 1, result.admission
    assert json.loads(result.extra_files["admission.json"]) == {"workloads": {}, "queues": {}}  # no queue, no sample


def test_two_multikueue_workers_on_one_cluster_are_refused_by_the_pack(tmp_path):
    # Two managers sharing a worker, each with a MultiKueueWorker of its own: both apply
    # ServiceAccount kueue-system/multikueue-sa (and its roles and token) to cluster w.
    found = _unique_object_findings(tmp_path, one_worker=False)
    assert any(m.startswith("cluster w: ServiceAccount kueue-system/multikueue-sa (core) is also ") for m in found), found
    assert any(m.startswith("cluster w: ClusterRole multikueue-sa-read (rbac.authorization.k8s.io) is also ") for m in found), found


def test_two_workers_named_in_two_scopes_on_one_cluster_are_refused_by_the_pack(tmp_path):
    # Named "<scope>/multikueue", each names its objects in its own scope ("m1/kueue-system/
    # multikueue-sa"), but both apply them through cluster w's provider: still one object.
    found = _unique_object_findings(tmp_path, one_worker=False, worker_name="{m}/multikueue")
    assert any(m.startswith("cluster w: ServiceAccount kueue-system/multikueue-sa (core) is also ") for m in found), found


def test_one_worker_handed_to_two_managers_is_clean(tmp_path):
    assert _unique_object_findings(tmp_path, one_worker=True) == []
