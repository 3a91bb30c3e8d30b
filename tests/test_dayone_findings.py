"""One finding type (gke_ai_batch/domain/findings.py): a config error, a component's refused
args, an admission refusal, a policy violation and synth's diagnostic are each a Finding with
its rule, severity, subject, path or URN and message, built through the code that finds them;
the shapes they had before (pairs, policy.json's entries, Diagnostic's fields) read the same."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import base_config, synth_config, synth_stack
from gke_ai_batch.config import ConfigError, load, split_namespace
from gke_ai_batch.config.errors import ArgsError
from gke_ai_batch.domain.findings import ADVISORY, ERROR, Finding
from gke_ai_batch.model.recorded import Judgement
from gke_ai_batch.plan import build_plan
from gke_ai_batch.plan.admission import Admission, registered
from gke_ai_batch.policy import rules
from gke_ai_batch.synth.diagnostics import Diagnostic
from gke_ai_batch.synth.report.sections import policy_findings

V6E = {"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}, "slices": 2}
TEAM = {"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}
# A queue of 16 chips and a JobSet of two 16-chip slices: Kueue's quota check refuses it.
SMALL_QUEUE = {"name": "cq", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"google.com/tpu": 16}}]}
TOO_BIG = {"kind": "jobset", "name": "train", "team": "team-a", "pool": "v6e", "slices": 2, "image": "i:1"}


def _config(config: dict):
    values, region = split_namespace(config)
    return load(values, region=region, project=config["gcp:project"])


def test_a_config_error_holds_findings_and_still_reads_as_pairs():
    bad = base_config(nodePools=[{"name": "v6e", "tpu": {"version": "v6e", "topology": "4x5"}}], teams=[{"namespace": "BAD"}])
    with pytest.raises(ConfigError) as caught:
        _config(bad)
    err = caught.value
    assert all(type(f) is Finding for f in err.findings)
    topology, namespace, *_ = err.findings
    assert (topology.rule, topology.severity, topology.subject, topology.urn) == ("config", ERROR, None, None)
    assert topology.path == "gke-ai-batch:nodePools[0].tpu.topology"
    assert topology.message.startswith("'4x5' is not a v6e topology")
    assert namespace.path == "gke-ai-batch:teams[0].namespace"
    # The pairs callers have always read stay, as a view of the findings.
    assert err.problems == [(f.path, f.message) for f in err.findings]
    again = ConfigError([*err.findings, Finding("quota", "too big", subject=("JobSet", "team-a", "train"))])
    assert [f.rule for f in again.findings] == ["config"] * len(err.findings) + ["quota"]
    assert again.problems[-1] == ("JobSet team-a/train", "too big")
    assert str(again).splitlines()[1:] == [f"  {path}: {message}" for path, message in again.problems]


def test_a_components_refused_args_are_findings_at_their_arg_paths():
    from gke_ai_batch.components.batch import KueueInstall

    with pytest.raises(ArgsError) as caught:
        KueueInstall("k", {"version": "0.14.0"})
    (finding,) = caught.value.findings
    assert type(finding) is Finding
    assert (finding.rule, finding.severity, finding.path) == ("args", ERROR, "args.version")
    assert caught.value.problems == [("args.version", finding.message)]
    assert str(caught.value) == f"KueueInstall k: args.version: {finding.message}"


def test_an_admission_refusal_is_a_finding_about_the_object_then_at_its_stack_key():
    config = _config(base_config(nodePools=[V6E], clusterQueues=[SMALL_QUEUE], teams=[TEAM], workloads=[TOO_BIG]))
    plan = build_plan(config, "test-project")
    # The judge of registered resources names the object...
    (judged,) = Judgement(registered(plan)).problems
    assert type(judged) is Finding
    assert (judged.rule, judged.severity, judged.subject, judged.path) == ("quota", ERROR, ("JobSet", "team-a", "train"), None)
    assert judged.where == "JobSet team-a/train"
    assert "insufficient quota for google.com/tpu" in judged.message
    # ...and the stack program places it at the key it came from.
    (placed,) = Admission(plan).problems()
    assert placed == dataclasses.replace(judged, subject=None, path="gke-ai-batch:workloads[0]")
    assert placed.render() == f"gke-ai-batch:workloads[0]: {judged.message}"


def test_a_queue_finding_keeps_its_field_below_the_queue(tmp_path):
    flavor = {"name": "fast", "nodeLabels": {"disk": "ssd"}}
    queue = {"name": "cq", "flavors": [{"name": "fast", "quotas": {"cpu": 10}}]}
    config = _config(base_config(flavors=[flavor], clusterQueues=[queue]))
    plan = build_plan(config, "test-project")
    (judged,) = Judgement(registered(plan)).problems
    assert (judged.rule, judged.subject, judged.path) == ("flavor-nodes", ("ClusterQueue", "", "cq"), "flavors[0]")
    assert judged.where == "ClusterQueue cq.flavors[0]"
    (placed,) = Admission(plan).problems()
    assert (placed.subject, placed.path) == (None, "gke-ai-batch:clusterQueues[0].flavors[0]")
    # synth places it in the stack file: a Diagnostic is a Finding with a file position.
    result = synth_config(tmp_path, base_config(flavors=[flavor], clusterQueues=[queue]))
    (diagnostic,) = result.diagnostics
    assert isinstance(diagnostic, Finding) and result.exit_code == 2
    assert (diagnostic.rule, diagnostic.path, diagnostic.message) == ("config", placed.path, placed.message)
    assert diagnostic.line is not None and diagnostic.file.endswith("Pulumi.test.yaml")


def test_a_policy_violation_is_a_finding_with_the_policy_level_and_urn():
    # fleet-dws's manager queue admits top-priority work on queued capacity alone: an advisory.
    result = synth_stack("fleet-dws")
    assert all(type(f) is Finding for f in result.policy_findings)
    (finding,) = [f for f in result.policy_findings if f.rule == "queue-interruptible-only"]
    (queue,) = [r.urn for r in result.recording.resources if r.type.startswith("kubernetes:") and r.type.endswith(":ClusterQueue") and r.name == "manager/gpu"]
    assert (finding.severity, finding.urn, finding.subject, finding.path) == (ADVISORY, queue, None, None)
    assert finding.message.startswith("ClusterQueue gpu admits JobSet llm-training/h100-smoke (high)")
    # policy.json keeps its keys; the pack's own entry point yields the same Finding.
    assert result.violations[result.policy_findings.index(finding)] == {
        "policy": "queue-interruptible-only", "enforcement": ADVISORY, "urn": queue, "message": finding.message}
    resources = [rules.Resource(r.urn, r.type, r.name, r.inputs) for r in result.recording.resources]
    assert finding in rules.findings(rules.by_name("queue-interruptible-only"), resources)
    # The report lists the findings, as it lists policy.json's entries.
    assert policy_findings(result.policy_findings) == policy_findings(result.violations)
    assert "`queue-interruptible-only`" in result.extra_files["report.md"]


def test_a_diagnostic_is_a_finding_placed_in_a_file():
    d = Diagnostic("no such stack file", "usage", "STACK", "stacks/Pulumi.x.yaml", 3, 7)
    assert isinstance(d, Finding) and (d.rule, d.severity, d.path, d.line, d.column) == ("usage", ERROR, "STACK", 3, 7)
    assert d.render() == "stacks/Pulumi.x.yaml:3:7: STACK: no such stack file"
    assert list(d.to_json()) == ["message", "rule", "path", "file", "line", "column", "severity"]
    assert dataclasses.replace(d, path="--out").render() == "stacks/Pulumi.x.yaml:3:7: --out: no such stack file"
    note = Diagnostic("not registered", "registration", file="f.yaml", severity="note")
    assert note.render() == "f.yaml: note: not registered"


def test_the_yaml_readers_problems_and_pod_security_violations_are_findings():
    from gke_ai_batch.model import podsecurity
    from gke_ai_batch.synth import yamlread

    # A problem in a file that parses, named by the reader's key path, placed in no file yet.
    [problem] = yamlread.load("config:\n  a: !!binary eA==\n").problems
    assert isinstance(problem, Diagnostic) and (problem.rule, problem.path, problem.line, problem.file) == (
        "yaml.tag", "config.a", 2, None)
    with pytest.raises(yamlread.YamlError) as refused:
        yamlread.load("a: [1\n")
    assert all(isinstance(p, Diagnostic) and p.rule == "yaml.syntax" for p in refused.value.problems)
    # The Pod Security control broken is the rule, the pod spec field the path.
    [violation] = podsecurity.violations({"hostPID": True, "containers": [{"name": "c"}]}, "baseline")
    assert isinstance(violation, Finding) and (violation.rule, violation.path, violation.severity) == (
        "Host Namespaces", "spec.hostPID", ERROR)
    assert violation.render() == "spec.hostPID: shares the node's namespace (baseline: Host Namespaces)"


def test_an_admission_verdict_is_a_frozen_mode_with_findings_as_reasons():
    from gke_ai_batch.model.outcome import Mode

    config = base_config(nodePools=[V6E], clusterQueues=[SMALL_QUEUE], teams=[TEAM], workloads=[TOO_BIG])
    [verdict] = Admission(build_plan(_config(config))).verdicts
    assert verdict.mode == Mode.NO_FIT and not verdict.admissible
    assert all(isinstance(r, Finding) for r in verdict.reasons) and verdict.refusal is verdict.reasons[0]
    assert (verdict.refusal.rule, verdict.refusal.severity) == ("quota", ERROR)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.mode = Mode.FIT  # type: ignore[misc]


def test_every_source_hands_its_problems_on_as_findings_of_its_rule(tmp_path):
    from gke_ai_batch.components.queues import ClusterQueue
    from gke_ai_batch.config import gcp_project_problem
    from gke_ai_batch.synth import crossstack

    # A nested arg refused deep in a component (a flavor's label key): rule "args", at its arg path.
    with pytest.raises(ArgsError) as caught:
        ClusterQueue("q", {"flavors": [{"name": "f", "node_labels": {"bad key!": "x"}}]})
    assert [(f.rule, f.path) for f in caught.value.findings] == [("args", 'args.flavors[0].node_labels["bad key!"]')]
    # A near-miss namespace and gcp:project: rule "config", at the key.
    with pytest.raises(ConfigError) as caught:
        split_namespace({"gke-ai-bach:nodePools": "[]"})
    assert [(f.rule, f.path) for f in caught.value.findings] == [("config", "gke-ai-bach:nodePools")]
    project = gcp_project_problem("")
    assert project is not None and (project.rule, project.path) == ("config", "gcp:project")
    # Two stack files deploying one cluster: rule "cross-stack", at the cluster's name.
    stack = "config:\n  gcp:project: acme\n  gke-ai-batch:cluster:\n    name: c\n    location: us-east5\n"
    for name in ("a", "b"):
        (tmp_path / f"Pulumi.{name}.yaml").write_text(stack)
    (clash,) = crossstack.collisions(tmp_path / "Pulumi.a.yaml", tmp_path)
    assert (clash.rule, clash.path) == ("cross-stack", "gke-ai-batch:cluster.name")
    assert "both deploy to project 'acme' with cluster 'c' in us-east5" in clash.message
