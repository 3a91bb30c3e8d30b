"""Programs a new consumer wrote from docs/library.md alone, kept where they caught the library
saying less (or other) than the docs promise: every mistake of a component's args at once, and
a program's report telling which queues use a flavor no pool of the program backs."""

from __future__ import annotations

import pytest

from support.programs import render_program

REF = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}


def test_a_camelcase_cluster_key_is_one_problem_and_the_rest_are_still_judged():
    """A typo'd arg, a ClusterRef key spelt as the stack file spells it, and a bad topology: the
    three mistakes, each once at its arg path (library.md: "every problem at once")."""
    from gke_ai_batch import ArgsError, TpuSlices

    ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "nodeLocations": ["us-east5-b"]}
    with pytest.raises(ArgsError) as caught:
        TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x5", "slice": 2})  # type: ignore[arg-type]
    paths = [path for path, _ in caught.value.problems]
    assert paths == ["args.slice", "args.cluster.nodeLocations", "args.topology"], caught.value.problems
    assert "did you mean 'node_locations'" in caught.value.problems[1][1]
    assert caught.value.problems[2][1].startswith("'4x5' is not a v6e topology")


PROGRAM = """
import pulumi_kubernetes as k8s
import pulumi
import gke_ai_batch as gab

p = k8s.Provider("ml", context="gke_acme-ml_us-east5_ml-shared")
cpu = gab.CpuPool("cpu", {"cluster": REF, "machine_type": "n2-standard-16", "max_nodes": 10})
# A ComputeClass's flavor: no pool of the program carries its label, GKE makes its nodes.
l4 = {"name": "l4-fallback", "node_labels": {"cloud.google.com/compute-class": "l4-fallback"}, "accelerator": "nvidia.com/gpu"}
on = pulumi.ResourceOptions(provider=p)
for f in (cpu.flavor, l4, {"name": "idle", "node_labels": {"pool": "none"}}):
    gab.ResourceFlavor(f["name"], f, opts=on)
gab.ClusterQueue("batch", {"flavors": [{**cpu.flavor, "quotas": {"cpu": 100, "memory": "400Gi"}}], "namespace_selector": {}}, opts=on)
gab.ClusterQueue("l4", {"flavors": [{**l4, "quotas": {"nvidia.com/gpu": 4, "cpu": 32, "memory": "128Gi"}}], "namespace_selector": {}},
                 opts=on)
"""


def test_the_report_says_which_flavors_queues_use_when_no_pool_holds_accelerators(tmp_path):
    _, files = render_program(tmp_path, PROGRAM, REF=REF)
    report = files["report.md"]
    section = report.split("### Capacity per flavor", 1)[1].split("###", 1)[0]
    rows = {line.split(" | ")[0].strip("| `"): line.split(" | ")[-1].strip(" |") for line in section.splitlines()
            if line.startswith("| `")}
    # A CPU flavor's quota is cpu and memory (the queue table has it), as a stack's report says.
    assert rows["cpu"] == "—", section
    # A ComputeClass's flavor shows the accelerator quota its queue gives, not "no queue uses it".
    assert rows["l4-fallback"] == "nvidia.com/gpu 4", section
    assert rows["idle"] == "no queue uses it", section


def test_an_unknown_queue_or_team_arg_does_not_hide_the_other_mistakes():
    from gke_ai_batch import ArgsError, ClusterQueue, Team

    with pytest.raises(ArgsError) as caught:
        Team("t", {"namespace": "Bad_NS", "local_queues": [{"name": "q", "cluster_queue": "x"}], "podSecurity": "privileged"})  # type: ignore[typeddict-unknown-key]
    assert [path for path, _ in caught.value.problems] == ["args.podSecurity", "args.namespace"], caught.value.problems

    flavor = {"name": "f", "node_labels": {"a": "b"}, "quotas": {"google.com/tpu": {"nominal": 8, "lending_limit": 16}}}
    with pytest.raises(ArgsError) as caught:
        ClusterQueue("q", {"flavors": [flavor], "cohort": "ml", "namespaceSelector": {}})  # type: ignore[typeddict-unknown-key]
    assert caught.value.problems == [
        ("args.namespaceSelector", caught.value.problems[0][1]),
        ('args.flavors[0].quotas["google.com/tpu"].lending_limit', "lendingLimit 16 exceeds nominal 8 (Kueue rejects it)"),
    ]
    assert "did you mean 'namespace_selector'" in caught.value.problems[0][1]
