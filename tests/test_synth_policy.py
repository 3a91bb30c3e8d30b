"""synth runs the policy pack over its recording: policy.json, exit code 3 on a mandatory
violation, per-stack enforcement from policy/config/<stack>.json, and the same verdicts as the
CrossGuard pack gives the same resources through the policy SDK."""

from __future__ import annotations

import functools
import json

import pytest
import yaml
from conftest import ROOT, STACKS, base_config, synth_config, synth_stack
from google.protobuf import struct_pb2
from pulumi.runtime import proto
from pulumi_policy.policy import _PolicyAnalyzerServicer

from gke_ai_batch import synth
from gke_ai_batch.policy import levels, rules
from gke_ai_batch.policy.crossguard import PACK_ENFORCEMENT, PACK_NAME, policies
from gke_ai_batch.synth import policy as synth_policy

EXAMPLE = ROOT / "policy" / "examples" / "Pulumi.noncompliant.yaml"
KEYS = {"policy", "enforcement", "urn", "message"}


def privileged_gpu_job() -> dict:
    """Valid config whose workload breaks a mandatory rule: privileged, but not a TPU pod."""
    return base_config(
        nodePools=[
            {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}
        ],
        clusterQueues=[{"name": "cq"}],
        # A privileged namespace admits the pod; the policy pack is what refuses it.
        teams=[{"namespace": "ml", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}],
        workloads=[
            {"kind": "job", "name": "debug", "team": "ml", "pool": "l4", "image": "busybox:1.36", "privileged": True}
        ],
    )


@functools.cache
def example() -> synth.Result:
    return synth.synthesize(ROOT, synth.StackFile.locate(ROOT, None, EXAMPLE))


def mandatory(result: synth.Result) -> list[dict]:
    return [v for v in result.violations if v["enforcement"] == "mandatory"]


@pytest.mark.parametrize("stack", STACKS)
def test_committed_stacks_have_no_mandatory_violations(stack):
    result = synth_stack(stack)
    assert mandatory(result) == []
    assert result.exit_code == synth.EXIT_OK


def test_an_undecided_stack_reports_only_advisories_in_policy_json(tmp_path):
    result = synth_config(tmp_path, base_config())
    assert result.violations, "privateNodes unset: gke-private-nodes should advise"
    assert {v["enforcement"] for v in result.violations} == {"advisory"}
    assert json.loads(result.extra_files["policy.json"]) == result.violations
    assert result.extra_files["policy.json"] == json.dumps(result.violations, indent=2, sort_keys=True) + "\n"


def test_violations_are_well_formed_and_stably_sorted():
    result = example()
    urns = {r.urn for r in result.recording.resources}
    assert result.violations
    for v in result.violations:
        assert set(v) == KEYS
        assert v["policy"] in {r.name for r in rules.RULES}
        assert v["enforcement"] in ("advisory", "mandatory")
        assert v["urn"] in urns and v["message"]
    order = [(v["enforcement"] != "mandatory", v["policy"], v["urn"], v["message"]) for v in result.violations]
    assert order == sorted(order)
    assert synth_policy.evaluate(result) == result.violations


def test_a_mandatory_violation_exits_3(tmp_path):
    result = synth_config(tmp_path, privileged_gpu_job())
    assert result.error is None
    assert result.exit_code == synth.EXIT_POLICY_VIOLATION == 3
    [violation] = mandatory(result)
    assert violation["policy"] == "workload-privileged-tpu-only"
    assert violation["urn"].endswith("kubernetes:batch/v1:Job::ml/debug")


def test_production_is_per_stack_policy_config(tmp_path):
    cluster = {
        "name": "test",
        "nodeLocations": ["us-central1-a"],
        "privateNodes": True,
        # policy/config/prod.json requires both.
        "databaseEncryption": {"keyName": "projects/acme-kms/locations/us-central1/keyRings/r/cryptoKeys/k"},
        "binaryAuthorization": True,
    }
    unprotected = base_config(production=True, cluster={**cluster, "deletionProtection": False})
    assert synth_config(tmp_path, unprotected, stack="sandbox").exit_code == synth.EXIT_OK
    prod = synth_config(tmp_path, unprotected, stack="prod")  # policy/config/prod.json: production
    assert prod.exit_code == synth.EXIT_POLICY_VIOLATION
    assert [v["policy"] for v in mandatory(prod)] == ["gke-deletion-protection"]
    assert synth_config(tmp_path, base_config(production=True, cluster=cluster), stack="prod").exit_code == synth.EXIT_OK


def test_stack_config_overrides_and_disables_rules(tmp_path, monkeypatch):
    configs = tmp_path / "config"
    configs.mkdir()
    monkeypatch.setattr(levels, "CONFIG_DIR", configs)
    (configs / "test.json").write_text(json.dumps({"workload-privileged-tpu-only": "disabled"}))
    relaxed = synth_config(tmp_path, privileged_gpu_job())
    assert relaxed.exit_code == synth.EXIT_OK
    assert "workload-privileged-tpu-only" not in {v["policy"] for v in relaxed.violations}
    (configs / "test.json").write_text(json.dumps({"all": "mandatory", "workload-privileged-tpu-only": "advisory"}))
    strict = synth_config(tmp_path, privileged_gpu_job())
    assert strict.exit_code == synth.EXIT_POLICY_VIOLATION
    assert {v["policy"] for v in mandatory(strict)} == {"gke-private-nodes"}


def test_a_broken_policy_config_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(levels, "CONFIG_DIR", tmp_path)
    (tmp_path / "test.json").write_text(json.dumps({"gke-privat-nodes": "mandatory"}))
    with pytest.raises(ValueError, match="no policy of this pack"):
        synth_config(tmp_path, base_config())


def test_every_stack_says_in_its_policy_config_whether_it_is_production():
    """The stack file's `production: true` protects resources; the policy config is what makes
    the pack hold the stack to it. Every committed stack has one (the PR preview passes it to
    the pack), and the two agree."""
    rule = rules.by_name("gke-deletion-protection")
    for stack in STACKS:
        path = levels.config_path(stack)
        assert path.is_file(), f"missing {path.relative_to(ROOT)}: run python -m synth.add {stack}"
        config = levels.for_stack(stack)
        assert "production" in config.get(rule.name, {}), f"{path.name}: say production true or false"
        stack_file = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
        level, settings = levels.settings(rule, config)
        production = stack_file.get("gke-ai-batch:production", False)
        assert settings["production"] == production, f"{path.name} and Pulumi.{stack}.yaml disagree on production"
        if production:
            assert level == "mandatory", f"{path.name}: production stacks make {rule.name} mandatory"


def test_noncompliant_example_renders_with_exit_3(tmp_path, capsys):
    from gke_ai_batch.synth.__main__ import main

    assert main(["--config", str(EXAMPLE), "--out", str(tmp_path)]) == synth.EXIT_POLICY_VIOLATION
    assert "policy mandatory: workload-privileged-tpu-only" in capsys.readouterr().err
    written = json.loads((tmp_path / "policy.json").read_text())
    assert {v["policy"] for v in written} == {
        "workload-privileged-tpu-only",
        "gke-private-nodes",
        "kueue-quota-within-capacity",
        "queue-interruptible-only",
    }


# -- parity with the CrossGuard pack ----------------------------------------------------------

_LEVEL = {
    "advisory": proto.ADVISORY,
    "mandatory": proto.MANDATORY,
    "remediate": proto.REMEDIATE,
    "disabled": proto.DISABLED,
}


def _struct(values: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _options(r) -> proto.AnalyzerResourceOptions:
    # As the engine sends them: the pack reads `protect` (gke-protect-stateful) from here.
    return proto.AnalyzerResourceOptions(protect=bool(r.options.get("protect")))


def crossguard(result: synth.Result) -> list[dict]:
    """What the pack's analyzer reports for the recorded resources, configured as the CLI
    configures it from policy/config/<stack>.json."""
    servicer = _PolicyAnalyzerServicer(PACK_NAME, "0.1.0", policies(), PACK_ENFORCEMENT)
    config = levels.for_stack(result.stack)
    policy_config = {}
    for rule in rules.RULES:
        level, settings = levels.settings(rule, config)
        policy_config[rule.name] = proto.PolicyConfig(enforcementLevel=_LEVEL[level], properties=_struct(settings))
    servicer.Configure(proto.ConfigureAnalyzerRequest(policyConfig=policy_config), None)
    diagnostics = []  # (urn the engine attaches, diagnostic)
    for r in result.recording.resources:
        request = proto.AnalyzeRequest(
            type=r.type, properties=_struct(r.inputs), urn=r.urn, name=r.name, options=_options(r)
        )
        diagnostics += [(r.urn, d) for d in servicer.Analyze(request, None).diagnostics]
    # AnalyzeStack sends each resource's outputs: the root stack's are the program's exports.
    stack = [
        proto.AnalyzerResource(type=r.type, properties=_struct(result.recording.outputs if r.type == "pulumi:pulumi:Stack"
                                                               else r.inputs), urn=r.urn, name=r.name, options=_options(r))
        for r in result.recording.resources
    ]
    diagnostics += [
        (None, d) for d in servicer.AnalyzeStack(proto.AnalyzeStackRequest(resources=stack), None).diagnostics
    ]
    names = {v: k for k, v in _LEVEL.items()}
    return [
        {
            "policy": d.policyName,
            "enforcement": names[d.enforcementLevel],
            "urn": d.urn or urn,
            "message": d.message.removeprefix(d.description + "\n"),
        }
        for urn, d in diagnostics
    ]


def _key(v: dict) -> tuple:
    return v["policy"], v["enforcement"], v["urn"], v["message"]


@pytest.mark.parametrize("stack", ["dev", "prod", "noncompliant"])
def test_synth_and_the_crossguard_pack_agree(stack):
    result = example() if stack == "noncompliant" else synth_stack(stack)
    assert sorted(map(_key, crossguard(result))) == sorted(map(_key, result.violations))


def test_noncompliant_example_is_valid_stack_config():
    """The example breaks policy, not the config schema: every violation is the pack's to report."""
    import jsonschema

    schema = json.loads((ROOT / "schema" / "stack.schema.json").read_text())
    text = EXAMPLE.read_text()
    assert text.startswith("# yaml-language-server: $schema=../../schema/stack.schema.json\n")
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(text))) == []
    assert example().error is None
