"""JobSetInstall, KueueInstall and Priorities from any Pulumi program: two of each side by side,
the provider from opts, depends_on=[kueue] waiting for the webhook probe, args checked as the
stack's keys (every problem at once, at its arg path, before anything registers), and the
stack program's args giving the plan's Kueue values."""

from __future__ import annotations

import json

import pytest

from conftest import by_name, component_schema_text, synth_stack
from support.programs import run_program

PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components.batch import JobSetInstall, KueueInstall
from gke_ai_batch.components.k8s import KubernetesObject
from gke_ai_batch.components.priorities import Priorities

p = k8s.Provider("ml-shared", kubeconfig="{}")
q = k8s.Provider("ml-other", kubeconfig="{}")
prios = {"priorities": [{"name": "high", "value": 1000}, {"name": "low", "value": -10, "description": "sweeps"}]}
for suffix, provider in (("", p), ("-b", q)):
    on = pulumi.ResourceOptions(provider=provider)
    jobset = JobSetInstall("jobset" + suffix, {}, on)
    kueue = KueueInstall("kueue" + suffix, {"version": "0.19.2", "wait_for_pods_ready": False},
                         pulumi.ResourceOptions(provider=provider, depends_on=[jobset]))
    Priorities("priorities" + suffix, prios, pulumi.ResourceOptions(provider=provider, depends_on=[kueue]))
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq" + suffix}, "spec": {}}
    KubernetesObject("cq" + suffix, cq, pulumi.ResourceOptions(provider=provider, depends_on=[kueue]))
pulumi.export("ns", kueue.namespace)
"""




def test_two_of_each_side_by_side_with_the_provider_from_opts(tmp_path):
    recording = run_program(tmp_path, PROGRAM)
    urns = [r.urn for r in recording.resources]
    assert len(urns) == len(set(urns))
    by = {(r.type, r.name): r for r in recording.resources}
    for suffix, provider in (("", "ml-shared"), ("-b", "ml-other")):
        for kind, name in (("JobSetInstall", "jobset"), ("KueueInstall", "kueue"), ("Priorities", "priorities")):
            assert (f"gke-ai-batch:index:{kind}", name + suffix) in by
        kueue = by[("gke-ai-batch:index:KueueInstall", "kueue" + suffix)]
        # Children are named from the component's name; the second install's differ.
        release = by[("kubernetes:helm.sh/v3:Release", "kueue" + ("-b-kueue" if suffix else ""))]
        assert release.parent == kueue.urn
        assert release.inputs["name"] == "kueue" and release.inputs["version"] == "0.19.2"
        assert provider in release.options["provider"]
        probe = by[("kubernetes:core/v1:Pod", ("kueue-b-" if suffix else "") + "kueue-system/webhook-probe")]
        assert provider in probe.options["provider"]
        # The release waits for JobSet's, which depends_on=[jobset] expanded to.
        jobset_release = by[("kubernetes:helm.sh/v3:Release", "jobset" + ("-b-jobset" if suffix else ""))]
        assert release.dependencies == [jobset_release.urn]
        # depends_on=[kueue] waits for every child of the install, the probe Pod included.
        cq = by[("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "cq" + suffix)]
        assert probe.urn in cq.dependencies and release.urn in cq.dependencies
        # Only the WorkloadPriorityClass waits for Kueue; the PriorityClass is core Kubernetes.
        low = "low" if not suffix else "priorities-b-low"
        assert probe.urn in by[("kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass", low)].dependencies
        assert by[("kubernetes:scheduling.k8s.io/v1:PriorityClass", low)].dependencies == []
    assert recording.outputs["ns"] == "kueue-system"


BAD = """
import pulumi
from gke_ai_batch.components.batch import JobSetInstall, KueueInstall
from gke_ai_batch.components.priorities import Priorities
from gke_ai_batch.config.errors import ArgsError

errors = []
for make in (
    lambda: JobSetInstall("jobset", {"version": "^0.12", "provider": "p"}),
    lambda: KueueInstall("kueue", {
        "version": "0.16.0",
        "integrations": ["ray.io/rayservice"],
        "wait_for_pods_ready": {"timeout": "soon", "blockAdmision": True},
        "multi_kueue": {"dispatcher": "Incremental", "incremental_step_size": 2},
        "provisioning_admission_check": "x",
    }),
    lambda: Priorities("prio", {"priorities": [
        {"name": "low", "value": 10}, {"name": "high", "value": 5}, {"name": "system-x", "value": 1}]}),
):
    try:
        make()
    except ArgsError as exc:
        errors.append(str(exc))
pulumi.export("errors", errors)
"""


def test_bad_args_are_refused_at_their_arg_paths_before_anything_registers(tmp_path):
    recording = run_program(tmp_path, BAD)
    assert [r for r in recording.resources if r.type != "pulumi:pulumi:Stack"] == []
    jobset, kueue, prios = (e.splitlines() for e in recording.outputs["errors"])
    assert jobset[0].startswith("JobSetInstall jobset: args.provider: unknown arg; known: version"), jobset
    assert jobset[1].startswith("JobSetInstall jobset: args.version: '^0.12' is not a pinned JobSet chart version"), jobset
    assert len(jobset) == 2, jobset
    assert kueue[0].startswith("KueueInstall kueue: args.provisioning_admission_check: unknown arg"), kueue
    assert kueue[1].startswith(
        # An unknown key of a mapping typed Any is named as written (camelCase from the package).
        "KueueInstall kueue: args.wait_for_pods_ready.blockAdmision: unknown arg (did you mean 'block_admission'?)"), kueue
    assert kueue[2].startswith("KueueInstall kueue: args.wait_for_pods_ready.timeout: 'soon' is not a duration"), kueue
    assert len(kueue) == 3, kueue
    assert prios == ["Priorities prio: args.priorities[2].name: 'system-x': PriorityClass names starting with 'system-' "
                     "are reserved by Kubernetes"], prios


def test_the_stack_rules_that_read_a_release_apply_to_the_args():
    from gke_ai_batch.components.batch import KueueInstall
    from gke_ai_batch.components.priorities import Priorities
    from gke_ai_batch.config.errors import ArgsError

    with pytest.raises(ArgsError) as caught:
        KueueInstall("k", {"version": "0.16.0", "integrations": ["ray.io/rayservice"],
                           "multi_kueue": {"dispatcher": "Incremental", "incremental_step_size": 2}})
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("KueueInstall k: args.integrations[0]: Kueue 0.16.0 has no integration ray.io/rayservice"), lines
    assert lines[1].startswith("KueueInstall k: args.multi_kueue.incremental_step_size: Kueue 0.16.0 has no Configuration field"), lines
    assert len(lines) == 2
    with pytest.raises(ArgsError, match=r"KueueInstall k: args.version: Kueue 0.14.0 is too old: .*v1beta2, served from 0.15.0 on"):
        KueueInstall("k", {"version": "0.14.0"})
    with pytest.raises(ArgsError) as caught:
        Priorities("p", {"priorities": [{"name": "low", "value": 10}, {"name": "high", "value": 5}, {"name": "high", "value": 7}]})
    assert str(caught.value).splitlines() == [
        "Priorities p: args.priorities[2].name: priority 'high' is declared twice",
        "Priorities p: args.priorities[0].value: priority 'low' (value 10) is not below 'high' (value 5), though "
        "their names say it should be; Kueue and kube-scheduler compare only the values",
    ]
    with pytest.raises(ArgsError, match=r"Priorities p: args.priorities: required"):
        Priorities("p", {})


def test_camel_case_keys_of_a_mapping_arg_are_read_as_the_package_passes_them(tmp_path):
    # Through the component package, fair_sharing and wait_for_pods_ready (typed Any: a mapping
    # or a boolean) arrive as a YAML or TypeScript program wrote them.
    recording = run_program(tmp_path, """
        import pulumi
        from gke_ai_batch.components.batch import KueueInstall
        KueueInstall("kueue", {"wait_for_pods_ready": {"timeout": "1h", "blockAdmission": True}, "fair_sharing": True})
    """)
    release = next(r for r in recording.resources if r.type == "kubernetes:helm.sh/v3:Release")
    text = release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    assert "blockAdmission: true" in text and "timeout: 1h" in text and "fairSharing:" in text


@pytest.mark.parametrize("stack", ["dev", "fleet-dws"])
def test_the_stack_programs_args_give_the_plans_kueue_values(stack):
    # The stack program passes its kueue key (and a fleet manager's multiKueue) as args; the
    # release KueueInstall registers carries the values the plan, the report and the policy
    # pack read.
    result = synth_stack(stack)
    plans = {"": result.plan} if result.fleet is None else {
        "manager/": result.fleet.manager, **{f"{w.name}/": w.plan for w in result.fleet.workers}}
    for scope, plan in plans.items():
        release = by_name(result, "kubernetes:helm.sh/v3:Release", f"{scope}kueue")
        assert release["inputs"]["values"] == plan.kueue_values, scope
    manager = plans.get("manager/")
    assert manager is None or "multiKueue" in manager.kueue_values["managerConfig"]["controllerManagerConfigYaml"]


def test_the_package_hosts_them_with_their_inputs_and_outputs():
    schema = json.loads(component_schema_text())
    resources = schema["resources"]
    jobset, kueue, prios = (resources[f"gke-ai-batch:index:{k}"] for k in ("JobSetInstall", "KueueInstall", "Priorities"))
    assert set(jobset["inputProperties"]) == {"version"} and set(jobset["properties"]) == {"version", "namespace"}
    assert {"version", "integrations", "waitForPodsReady", "fairSharing", "manageJobsWithoutQueueName", "webhookGate",
            "probeImage", "multiKueue", "resourceMetrics"} == set(kueue["inputProperties"])
    assert set(kueue["properties"]) == {"version", "namespace"}
    assert prios["requiredInputs"] == ["priorities"] and set(prios["properties"]) == {"priorities"}
    assert set(schema["types"]["gke-ai-batch:index:PriorityArgs"]["required"]) == {"name", "value"}


def test_a_deployed_stack_keeps_its_installs_through_aliases_to_the_old_tokens():
    resources = synth_stack("gpu-dws").recording.resources
    old = {
        "gke-ai-batch:index:JobSetInstall": "gke-ai-batch:batch:JobSet",
        "gke-ai-batch:index:KueueInstall": "gke-ai-batch:batch:Kueue",
        "gke-ai-batch:index:Priorities": "gke-ai-batch:priorities:Priorities",
    }
    found = {r.type: r.options.get("aliases") for r in resources if r.type in old}
    assert found == {token: [{"type": was}] for token, was in old.items()}


def test_kueue_install_keeps_kueues_own_default_for_jobs_without_a_queue(tmp_path):
    # On a cluster other teams share, true would suspend their Jobs that name no queue: the
    # library takes Kueue's default unless told (issue 29); the stack program states its own.
    recording = run_program(tmp_path, """
        from gke_ai_batch import KueueInstall
        KueueInstall("kueue", {})
        KueueInstall("owned", {"manage_jobs_without_queue_name": True})
    """)
    texts = {r.name: r.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
             for r in recording.resources if r.type == "kubernetes:helm.sh/v3:Release"}
    assert "manageJobsWithoutQueueName: false" in texts["kueue"]
    assert "manageJobsWithoutQueueName: true" in texts["owned-kueue"]
