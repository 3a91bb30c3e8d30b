"""Every Kubernetes object a stack emits validates against the upstream CRD schemas (strict:
unknown fields rejected, CEL rules evaluated) or, for core kinds, kubernetes-validate's strict
schemas; plus tests of the validator itself (tests/support/manifests.py), proving each check
can fail."""

from __future__ import annotations

import copy
import glob
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate.utils as kv
import pytest
import yaml

from gke_ai_batch import synth
from conftest import STACKS, base_config, synth_config, synth_stack
from support import manifests as M

KUEUE = "kueue.x-k8s.io/v1beta2"


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def validator(shared_schemas) -> M.Validator:
    return M.Validator(shared_schemas)


ENGINES = ["celpy", "builtin"]


@pytest.fixture(scope="session", params=ENGINES)
def engine(request, shared_schemas) -> M.Validator:
    """The CEL rule tests run twice: with cel-python and with the built-in fallback."""
    if request.param == "celpy" and not M.CELPY_AVAILABLE:
        pytest.skip("cel-python is not installed (see test_cel_python_is_installed)")
    return M.Validator(shared_schemas, cel=request.param)


def rejected(v: M.Validator, manifest: dict[str, Any], *fragments: str) -> list[str]:
    """Assert the manifest is invalid and every fragment appears in the problems."""
    problems = v.validate(manifest)
    text = "\n".join(problems)
    assert problems, "expected problems, the validator found none"
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
    return problems


# -- the stacks --------------------------------------------------------------------------------


def test_there_are_stacks():
    assert STACKS, "no stacks/Pulumi.*.yaml: nothing to validate"


@pytest.mark.parametrize("stack", STACKS)
def test_stack_manifests_validate(stack, validator):
    result = synth_stack(stack)
    assert result.error is None, result.error
    manifests = synth.manifests(result.recording)
    assert manifests, f"{stack}: synth recorded no Kubernetes objects"
    # Each cluster on its own: a fleet's objects refer to what their own cluster has.
    problems = [p for docs in synth.manifests_by_cluster(result.recording).values() for p in M.problems(docs, validator)]
    assert not problems, f"{stack}: {len(problems)} problem(s):\n" + "\n".join(problems)


@pytest.mark.parametrize("stack", STACKS)
def test_stack_uses_current_apis_only(stack):
    """No kueue.x-k8s.io/v1beta1 (or autoscaling v1beta1), also inside ConfigMaps. Needs no schemas."""
    manifests = synth.manifests(synth_stack(stack).recording)
    docs = [*manifests, *(doc for m in manifests for _, doc in M.embedded_manifests(m))]
    kueue = sorted({d["apiVersion"] for d in docs if d["apiVersion"].startswith("kueue.x-k8s.io/")})
    assert kueue in ([], [KUEUE]), f"{stack}: Kueue API versions {kueue}; only {KUEUE} is allowed"
    old = [M._ident(d) for d in docs if d["apiVersion"] in M.REJECTED_API_VERSIONS]
    assert not old, f"{stack}: deprecated APIs: {old}"


# -- valid examples of every kind: the negative tests below start from these ---------------------


def cluster_queue(**spec: Any) -> dict[str, Any]:
    base = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["google.com/tpu", "cpu"],
                "flavors": [
                    {"name": "spot", "resources": [{"name": "google.com/tpu", "nominalQuota": 16},
                                                   {"name": "cpu", "nominalQuota": "100"}]},
                    {"name": "reserved", "resources": [{"name": "google.com/tpu", "nominalQuota": 8},
                                                       {"name": "cpu", "nominalQuota": "64"}]},
                ],
            },
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}],
            },
        ],
    }
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {**base, **spec}}


def resource_flavor(**spec: Any) -> dict[str, Any]:
    base = {
        "nodeLabels": {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice"},
        "tolerations": [{"key": "google.com/tpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}],
    }
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "spot"}, "spec": {**base, **spec}}


def pod_spec(**fields: Any) -> dict[str, Any]:
    return {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox",
                        "resources": {"requests": {"google.com/tpu": 4, "cpu": "1"},
                                      "limits": {"google.com/tpu": 4, "cpu": "2"}}}],
        **fields,
    }


def job(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "research"}},
        "spec": {"parallelism": 2, "completions": 2, "completionMode": "Indexed", "suspend": True,
                 "template": {"spec": pod_spec()}, **spec},
    }


def jobset(name: str = "smoke", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "research"},
                     "annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}},
        "spec": {
            "failurePolicy": {"maxRestarts": 2, "restartStrategy": "Recreate"},
            "replicatedJobs": [{"name": "slice", "replicas": 2, "template": {"spec": {
                "parallelism": 2, "completions": 2, "backoffLimit": 0,
                "template": {"metadata": {"labels": {"app": "smoke"}}, "spec": pod_spec(hostNetwork=True)}}}}],
            **spec,
        },
    }


def admission_check(kind: str = "ProvisioningRequestConfig") -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                     "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": kind, "name": "dws-config"}}}


def multikueue_cluster(source: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "MultiKueueCluster", "metadata": {"name": "worker-1"},
            "spec": {"clusterSource": source}}


ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "team", "namespace": "ml"},
        "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get"]},
                  {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"]}]}


def role_binding(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "team", "namespace": "ml"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "team"},
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "ml@example.com"},
                         {"kind": "ServiceAccount", "name": "probe", "namespace": "ml"}],
            **fields}


def workload(**pod_set: Any) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "Workload", "metadata": {"name": "probe", "namespace": "ml"},
            "spec": {"queueName": "research",
                     "podSets": [{"name": "main", "count": 2, "template": {"spec": pod_spec()}, **pod_set}]}}


def valid_examples() -> list[dict[str, Any]]:
    return [
        cluster_queue(),
        cluster_queue(
            cohortName="org",
            preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority",
                        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
            flavorFungibility={"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor",
                               "preference": "BorrowingOverPreemption"},
            admissionChecksStrategy={"admissionChecks": [{"name": "dws-prov", "onFlavors": ["l4"]}]},
            fairSharing={"weight": "1.5"},
            resourceGroups=[{"coveredResources": ["nvidia.com/gpu", "memory"], "flavors": [
                {"name": "l4", "resources": [
                    {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4, "lendingLimit": 2},
                    {"name": "memory", "nominalQuota": "400Gi"}]}]}],
        ),
        resource_flavor(),
        resource_flavor(tolerations=[{"operator": "Exists"}],
                        nodeTaints=[{"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}]),
        {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "research", "namespace": "ml"},
         "spec": {"clusterQueue": "cq"}},
        {"apiVersion": KUEUE, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000,
         "description": "d"},
        admission_check(),
        multikueue_cluster({"kubeConfig": {"location": "worker-1-kubeconfig"}}),
        multikueue_cluster({"clusterProfileRef": {"name": "worker-1"}}),
        {"apiVersion": KUEUE, "kind": "MultiKueueConfig", "metadata": {"name": "fleet"},
         "spec": {"clusters": ["worker-1", "worker-2"]}},
        {"apiVersion": KUEUE, "kind": "ProvisioningRequestConfig", "metadata": {"name": "dws-config"},
         "spec": {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": ["nvidia.com/gpu"]}},
        jobset(),
        {"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
         "metadata": {"name": "pr", "namespace": "ml"},
         "spec": {"provisioningClassName": "queued-provisioning.gke.io",
                  "podSets": [{"count": 2, "podTemplateRef": {"name": "pr-pods"}}],
                  "parameters": {"maxRunDurationSeconds": "3600"}}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "ml"}}},
        # A NamespacePatch records as the partial Namespace it applies.
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "default", "annotations": {"pulumi.com/patchForce": "true"},
                      "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "same-namespace-only", "namespace": "ml"},
         "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}]}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "probe", "namespace": "ml"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": "ml"},
         "data": {"a.yaml": "x: 1\n"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "multikueue-w1", "namespace": "kueue-system"},
         "type": "Opaque", "data": {"kubeconfig": "a2luZDogQ29uZmlnCg=="}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": "ml"},
         "spec": pod_spec(restartPolicy="OnFailure")},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hosts", "namespace": "ml"},
         "spec": {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": "train"}}},
        {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pr-pods", "namespace": "ml"},
         "template": {"spec": pod_spec()}},
        job(),
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
         "value": 1000, "globalDefault": False},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": "gke-ai-batch:probe"},
         "rules": [{"apiGroups": ["kueue.x-k8s.io"], "resources": ["resourceflavors"], "verbs": ["create"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "probe"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gke-ai-batch:probe"},
         "subjects": [{"kind": "ServiceAccount", "name": "probe", "namespace": "ml"}]},
        ROLE,
        role_binding(),
        workload(),
    ]


@pytest.mark.parametrize("manifest", valid_examples(), ids=lambda m: m["kind"])
def test_valid_examples_pass(manifest, engine):
    assert engine.validate(manifest) == []


def test_examples_cover_every_kind_the_program_emits():
    kinds = {(m["apiVersion"], m["kind"]) for m in valid_examples()}
    program = set(M.CORE_KINDS) | {(KUEUE, k) for k in ("ResourceFlavor", "ClusterQueue", "LocalQueue",
                                                        "WorkloadPriorityClass", "AdmissionCheck",
                                                        "ProvisioningRequestConfig")}
    program |= {("jobset.x-k8s.io/v1alpha2", "JobSet"), ("autoscaling.x-k8s.io/v1", "ProvisioningRequest")}
    program.add((KUEUE, "Workload"))  # the webhook probe's dry-run payload
    assert program <= kinds, program - kinds


# -- strict schemas ----------------------------------------------------------------------------


def test_unknown_field_deep_in_cluster_queue_is_rejected(validator):
    cq = cluster_queue()
    cq["spec"]["resourceGroups"][0]["flavors"][1]["resources"][0]["bogus"] = 1
    rejected(validator, cq, "spec.resourceGroups[0].flavors[1].resources[0]", "'bogus' was unexpected")


def test_v1beta1_field_name_is_rejected_in_v1beta2(validator):
    # v1beta1's spec.cohort became spec.cohortName: the old name is an unknown field now.
    rejected(validator, cluster_queue(cohort="org"), "'cohort' was unexpected")


def test_unknown_top_level_field_is_rejected(validator):
    rejected(validator, {**cluster_queue(), "extra": {}}, "'extra' was unexpected")


def test_unknown_metadata_field_of_a_custom_resource_is_rejected(validator):
    cq = cluster_queue()
    cq["metadata"]["lables"] = {"a": "b"}
    rejected(validator, cq, "metadata: Additional properties are not allowed ('lables' was unexpected)")


@pytest.mark.parametrize(
    "api_version, kind, fragment",
    [
        ("kueue.x-k8s.io/v1beta1", "ClusterQueue", "emit kueue.x-k8s.io/v1beta2"),
        ("kueue.x-k8s.io/v1beta1", "MultiKueueConfig", "emit kueue.x-k8s.io/v1beta2"),
        ("autoscaling.x-k8s.io/v1beta1", "ProvisioningRequest", "emit autoscaling.x-k8s.io/v1"),
    ],
)
def test_deprecated_api_versions_are_rejected(validator, api_version, kind, fragment):
    # Valid v1beta1 content; the apiVersion alone is the problem.
    manifest = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": {}}
    rejected(validator, manifest, fragment)


@pytest.mark.parametrize(
    "manifest",
    [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "ml"}},
        {"apiVersion": KUEUE, "kind": "Topology2", "metadata": {"name": "x"}},
        {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort", "metadata": {"name": "x"}},
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "x", "namespace": "ml"}},
    ],
    ids=lambda m: f"{m['apiVersion']}:{m['kind']}",
)
def test_kinds_without_a_schema_fail(validator, manifest):
    rejected(validator, manifest, "is not covered")


def test_workload_is_covered_by_the_extra_folder_only(shared_schemas):
    # schema/upstream (the shared copy) has no Workload; schema/upstream-extra supplies it.
    rejected(M.Validator(shared_schemas, extra_dirs=()), workload(), "is not covered")
    assert M.Validator(shared_schemas).validate(workload()) == []


@pytest.mark.parametrize(
    "manifest, fragment",
    [
        (cluster_queue(resourceGroups=[{"flavors": [{"name": "f",
                                                     "resources": [{"name": "cpu", "nominalQuota": 1}]}]}]),
         "'coveredResources' is a required property"),
        ({"apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": "a"}, "spec": {}},
         "'controllerName' is a required property"),
        ({"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
          "metadata": {"name": "pr", "namespace": "ml"}, "spec": {"podSets": [{"count": 1, "podTemplateRef": {}}]}},
         "'provisioningClassName' is a required property"),
        ({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "j", "namespace": "ml"},
          "spec": {"replicatedJobs": [{"name": "a"}]}}, "'template' is a required property"),
    ],
    ids=["ClusterQueue", "AdmissionCheck", "ProvisioningRequest", "JobSet"],
)
def test_missing_required_field_is_rejected(validator, manifest, fragment):
    rejected(validator, manifest, fragment)


def test_int_or_string_quantities(validator):
    cq = cluster_queue()
    resources = cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    resources[1]["nominalQuota"] = "100Gi"
    assert validator.validate(cq) == []
    resources[1]["nominalQuota"] = "ten"
    rejected(validator, cq, "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota", "does not match")
    resources[1]["nominalQuota"] = [1]
    rejected(validator, cq, "is not valid under any of the given schemas")


def test_int32_range_is_checked(validator):
    wpc = {"apiVersion": KUEUE, "kind": "WorkloadPriorityClass", "metadata": {"name": "w"}, "value": 2**31}
    rejected(validator, wpc, "value: 2147483648 is not a 'int32'")


def test_list_map_keys_are_unique(validator):
    cq = cluster_queue()
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    flavors[1]["name"] = "spot"
    rejected(validator, cq, "spec.resourceGroups[0].flavors[1]: Duplicate value", "x-kubernetes-list-type: map")


def test_strict_transform_reaches_items_and_any_of():
    schema = {"type": "object", "properties": {
        "a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "string"}}}},
        "c": {"anyOf": [{"type": "object", "properties": {"d": {"type": "string"}}}, {"type": "string"}]},
        "e": {"type": "object"},
        "f": {"type": "object", "additionalProperties": {"type": "string"}},
    }}
    strict = M.strict_schema(schema, root=False)
    assert strict["additionalProperties"] is False
    assert strict["properties"]["a"]["items"]["additionalProperties"] is False
    assert strict["properties"]["c"]["anyOf"][0]["additionalProperties"] is False
    assert strict["properties"]["e"]["additionalProperties"] is False  # prunes everything
    assert strict["properties"]["f"]["additionalProperties"] == {"type": "string"}
    assert "additionalProperties" not in schema  # the loaded copy only


def test_shared_schemas_are_not_modified(shared_schemas):
    # The transform works on copies: the files still hold the RE2 pattern and no additionalProperties: false.
    text = (shared_schemas / "kueue.x-k8s.io" / "v1beta2" / "AdmissionCheck.json").read_text()
    assert "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$" in text
    assert '"additionalProperties": false' not in text


# -- the RE2 pattern ---------------------------------------------------------------------------


def test_re2_inline_flag_is_moved_for_python():
    raw = "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"
    with pytest.raises(re.error):
        re.compile(raw)
    assert M.python_pattern(raw) == "(?i)^[a-z]([-a-z0-9]*[a-z0-9])?$"
    assert M.python_pattern("^[a-z]+$") == "^[a-z]+$"


@pytest.mark.parametrize("kind", ["ProvisioningRequestConfig", "provisioningrequestconfig", "MultiKueueConfig"])
def test_admission_check_parameters_kind_valid(validator, kind):
    assert validator.validate(admission_check(kind)) == []


@pytest.mark.parametrize("kind", ["Provisioning_Request", "9Config", "Config-", "a.b"])
def test_admission_check_parameters_kind_invalid(validator, kind):
    rejected(validator, admission_check(kind), "spec.parameters.kind", "does not match")


# -- core kinds: kubernetes-validate strict ----------------------------------------------------


def test_job_with_unknown_pod_spec_field_fails(validator):
    bad = job()
    bad["spec"]["template"]["spec"]["containers"][0]["bogus"] = True
    rejected(validator, bad, "spec.template.spec.containers[0]", "'bogus' was unexpected")
    # The same verdict as the library's own entry point, strict mode.
    kv.validate(job(), M.KUBERNETES_VERSION, strict=True)
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, M.KUBERNETES_VERSION, strict=True)


def test_core_kind_unknown_pod_level_field_fails(validator):
    bad = job()
    bad["spec"]["template"]["spec"]["restartPolicyy"] = "Never"
    rejected(validator, bad, "'restartPolicyy' was unexpected")


def test_kubernetes_version_resolves_to_a_bundled_schema_set():
    assert M._kubernetes_validate_version(M.KUBERNETES_VERSION).startswith(M.KUBERNETES_VERSION)


# -- CEL rules (x-kubernetes-validations): each fires, with both engines -------------------------


def test_cel_python_is_installed():
    assert M.CELPY_AVAILABLE, (
        "cel-python is not installed: add `cel-python==0.5.0` to requirements-dev.txt "
        "(the built-in fallback covers only the rules in BUILTIN_CEL_RULES)"
    )


def _bl_without_cohort():
    cq = cluster_queue()
    cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["borrowingLimit"] = 2
    return cq


def _short_flavor():
    cq = cluster_queue()
    cq["spec"]["resourceGroups"][0]["flavors"][1]["resources"].pop()
    return cq


CEL_CASES = {
    "borrowingLimit needs cohortName": (_bl_without_cohort, "spec: Invalid value: borrowingLimit must be nil when "
                                        "cohort is empty"),
    "flavor lists every covered resource": (_short_flavor, "spec.resourceGroups[0]: Invalid value: flavors must have "
                                            "the same number of resources as the coveredResources"),
    "reclaimWithinCohort Never forbids borrowWithinCohort": (
        lambda: cluster_queue(cohortName="org", preemption={"reclaimWithinCohort": "Never",
                                                            "borrowWithinCohort": {"policy": "LowerPriority"}}),
        "spec.preemption: Invalid value: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"),
    "reclaimWithinCohort defaults to Never": (
        lambda: cluster_queue(cohortName="org", preemption={"borrowWithinCohort": {"policy": "LowerPriority"}}),
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"),
    "flavorFungibility preference needs TryNextFlavor": (
        lambda: cluster_queue(flavorFungibility={"preference": "PreemptionOverBorrowing"}),
        "spec.flavorFungibility: Invalid value: preference can only be set when both whenCanBorrow and "
        "whenCanPreempt are TryNextFlavor"),
    "toleration without key needs Exists": (
        lambda: resource_flavor(tolerations=[{"operator": "Equal", "value": "x", "effect": "NoSchedule"}]),
        "spec.tolerations: Invalid value: operator must be Exists when 'key' is empty"),
    "toleration Exists takes no value": (
        lambda: resource_flavor(tolerations=[{"key": "k", "operator": "Exists", "value": "x"}]),
        "spec.tolerations: Invalid value: a value must be empty when 'operator' is 'Exists'"),
    "tolerationSeconds needs NoExecute": (
        lambda: resource_flavor(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                              "tolerationSeconds": 5}]),
        "effect must be 'NoExecute' when 'tolerationSeconds' is set"),
    "topologyName needs a node label": (
        lambda: resource_flavor(topologyName="gke", nodeLabels={}),
        "spec: Invalid value: at least one nodeLabel is required when topology is set"),
    "topologyName without nodeLabels cannot even evaluate": (
        lambda: {**resource_flavor(topologyName="gke"), "spec": {"topologyName": "gke"}},
        "spec: CEL rule could not be evaluated"),
    "MultiKueueCluster needs a cluster source": (
        lambda: multikueue_cluster({}),
        "spec.clusterSource: Invalid value: exactly one of the fields in [kubeConfig clusterProfileRef] must be set"),
    "MultiKueueCluster takes one cluster source, not both": (
        lambda: multikueue_cluster({"kubeConfig": {"location": "worker-1"}, "clusterProfileRef": {"name": "w1"}}),
        "exactly one of the fields in [kubeConfig clusterProfileRef] must be set"),
    "JobSet InOrder startup excludes dependsOn": (
        lambda: jobset(startupPolicy={"startupPolicyOrder": "InOrder"}, replicatedJobs=[
            {**jobset()["spec"]["replicatedJobs"][0], "name": "a"},
            {**jobset()["spec"]["replicatedJobs"][0], "name": "b",
             "dependsOn": [{"name": "a", "status": "Ready"}]}]),
        "spec: Invalid value: StartupPolicy and DependsOn APIs are mutually exclusive"),
}


@pytest.mark.parametrize("case", CEL_CASES, ids=list(CEL_CASES))
def test_cel_rule_fires(engine, case):
    build, fragment = CEL_CASES[case]
    rejected(engine, build(), fragment)


def test_transition_rules_are_skipped_on_create(engine):
    # LocalQueue.spec.clusterQueue and AdmissionCheck.spec.controllerName carry `self == oldSelf`.
    lq = {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "ml"},
          "spec": {"clusterQueue": "cq"}}
    assert engine.validate(lq) == []
    assert engine.validate(admission_check()) == []


def test_builtin_rules_cover_every_rule_in_the_schemas(shared_schemas):
    rules = set()
    paths = [p for d in (shared_schemas, *M.EXTRA_SCHEMAS_DIRS) for p in glob.glob(str(d / "*" / "*" / "*.json"))]
    assert any(p.endswith("Workload.json") for p in paths)
    for path in paths:
        if "v1beta1" in path or path.endswith("versions.json"):
            continue
        stack = [json.loads(Path(path).read_text())]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                rules |= {r["rule"] for r in node.get("x-kubernetes-validations", ()) if not M.is_transition_rule(r)}
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    assert rules - set(M.BUILTIN_CEL_RULES) == set()


# -- admission webhook rules, by hand ----------------------------------------------------------


def _swapped_order():
    cq = cluster_queue()
    res = cq["spec"]["resourceGroups"][0]["flavors"][1]["resources"]
    res.reverse()
    return cq


def _resource_in_two_groups():
    cq = cluster_queue()
    cq["spec"]["resourceGroups"][1]["coveredResources"] = ["cpu"]
    cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["name"] = "cpu"
    return cq


def _flavor_in_two_groups():
    cq = cluster_queue()
    cq["spec"]["resourceGroups"][1]["flavors"][0]["name"] = "spot"
    return cq


def _lending(limit: Any, cohort: str | None):
    cq = cluster_queue(**({"cohortName": cohort} if cohort else {}))
    cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["lendingLimit"] = limit
    return cq


def _negative_quota():
    cq = cluster_queue()
    cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["nominalQuota"] = "-1"
    return cq


WEBHOOK_CASES = {
    "resources in coveredResources order": (
        _swapped_order, "spec.resourceGroups[0].flavors[1].resources[0].name: Invalid value: 'cpu': must match "
                        "the name in coveredResources"),
    "a resource in one group only": (
        _resource_in_two_groups, "spec.resourceGroups[1].coveredResources[0]: Duplicate value: 'cpu'"),
    "a flavor once across groups": (
        _flavor_in_two_groups, "spec.resourceGroups[1].flavors[0].name: Duplicate value: 'spot'"),
    "onFlavors names a flavor of the queue": (
        lambda: cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "dws", "onFlavors": ["h100"]}]}),
        "onFlavors[0]: Invalid value: 'h100': not a flavor of this ClusterQueue"),
    "lendingLimit needs a cohort": (lambda: _lending(1, None),
                                    "lendingLimit: Invalid value: 1: must be nil when cohort"),
    "lendingLimit at most nominal": (lambda: _lending(5, "org"), "must be less than or equal to the nominalQuota"),
    "quotas are non-negative": (_negative_quota,
                                "nominalQuota: Invalid value: '-1': must be greater than or equal to 0"),
    "selector In needs values": (
        lambda: cluster_queue(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In"}]}),
        "spec.namespaceSelector.matchExpressions[0].values: Required value"),
    "flavor node labels are labels": (
        lambda: resource_flavor(nodeLabels={"cloud.google.com/gke-tpu-topology": "2x4 "}),
        "spec.nodeLabels[cloud.google.com/gke-tpu-topology]: Invalid value"),
    "flavor taints unique by key and effect": (
        lambda: resource_flavor(nodeTaints=[{"key": "k", "value": "a", "effect": "NoSchedule"},
                                            {"key": "k", "value": "b", "effect": "NoSchedule"}]),
        "spec.nodeTaints[1]: Duplicate value"),
    "JobSet generated pod names fit 63 characters": (
        lambda: jobset(name="a" * 50), "JobSet name is too long, pod names generated for this JobSet will exceed 63"),
    "JobSet generated job names fit 63 characters": (
        lambda: jobset(name="a" * 60), "JobSet name is too long, job names generated for this JobSet will exceed 63"),
    "JobSet names start with a letter": (lambda: jobset(name="1st"), "generated Job name '1st-slice-1'"),
    "JobSet failure policy targets exist": (
        lambda: jobset(failurePolicy={"maxRestarts": 1, "rules": [{"action": "FailJobSet",
                                                                   "targetReplicatedJobs": ["nope"]}]}),
        "invalid replicatedJob name 'nope' in failure policy"),
    "Workload resource 'pods' is Kueue's": (
        lambda: workload(template={"spec": {"containers": [{"name": "c", "image": "i:1",
                                                             "resources": {"requests": {"pods": 1}}}]}}),
        "resources.requests[pods]: Invalid value: the key is reserved for internal kueue use"),
    "Workload minCount at most count": (lambda: workload(minCount=3), "minCount should be positive and less or equal"),
    "Role rules name verbs": (
        lambda: {**ROLE, "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": []}]},
        "rules[0].verbs: Required value"),
    "RoleBinding Group subject in the RBAC group": (
        lambda: role_binding(subjects=[{"kind": "Group", "name": "ml@example.com"}]),
        "subjects[0].apiGroup: Unsupported value: ''"),
    "ClusterRoleBinding binds no Role": (
        lambda: {**role_binding(roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}),
                 "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
                 "subjects": [{"kind": "ServiceAccount", "name": "probe"}]},
        "roleRef.kind: Unsupported value: 'Role'"),
    "ClusterRoleBinding service accounts have a namespace": (
        lambda: {**role_binding(roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}),
                 "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
                 "subjects": [{"kind": "ServiceAccount", "name": "probe"}]},
        "subjects[0].namespace: Required value"),
}


@pytest.mark.parametrize("case", WEBHOOK_CASES, ids=list(WEBHOOK_CASES))
def test_webhook_rule_fires(validator, case):
    build, fragment = WEBHOOK_CASES[case]
    rejected(validator, build(), fragment)


# -- core API server rules, by hand ------------------------------------------------------------


def _with_pod(**fields: Any) -> dict[str, Any]:
    return job(template={"spec": pod_spec(**fields)})


def _container_resources(requests: dict, limits: dict) -> dict[str, Any]:
    spec = pod_spec()
    spec["containers"][0]["resources"] = {"requests": requests, "limits": limits}
    return job(template={"spec": spec})


def _indexed_without_completions() -> dict[str, Any]:
    out = job()
    del out["spec"]["completions"]  # parallelism is set, so completions is not defaulted
    return out


CORE_CASES = {
    "Job restartPolicy is required": (
        lambda: job(template={"spec": {k: v for k, v in pod_spec().items() if k != "restartPolicy"}}),
        "spec.template.spec.restartPolicy: Required value"),
    "Job restartPolicy Always is rejected": (lambda: _with_pod(restartPolicy="Always"), "Unsupported value: 'Always'"),
    "Indexed Job needs completions": (_indexed_without_completions,
                                      "spec.completions: Required value: when completion mode is Indexed"),
    "extended resource request equals limit": (
        lambda: _container_resources({"google.com/tpu": 4}, {"google.com/tpu": 8}),
        "must be equal to google.com/tpu limit"),
    "extended resource needs a limit": (
        lambda: _container_resources({"nvidia.com/gpu": 1}, {}), "Limit must be set for non overcommitable resources"),
    "extended resources are integers": (
        lambda: _container_resources({"nvidia.com/gpu": "500m"}, {"nvidia.com/gpu": "500m"}), "must be an integer"),
    "request at most limit": (
        lambda: _container_resources({"cpu": "4"}, {"cpu": "2"}), "must be less than or equal to cpu limit"),
    "node selector values are label values": (
        lambda: _with_pod(nodeSelector={"cloud.google.com/gke-tpu-topology": "2x4/"}), "nodeSelector"),
    "pod toleration rules": (
        lambda: _with_pod(tolerations=[{"operator": "Equal", "value": "x"}]), "operator must be Exists"),
    "volume mounts name volumes": (
        lambda: _with_pod(containers=[{"name": "c", "image": "i", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]),
        "volumeMounts[0].name: Not found: 'v'"),
    "PriorityClass value limit": (
        lambda: {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"},
                 "value": 2_000_000_000}, "must be no greater than 1000000000"),
}


@pytest.mark.parametrize("case", CORE_CASES, ids=list(CORE_CASES))
def test_core_rule_fires(validator, case):
    build, fragment = CORE_CASES[case]
    rejected(validator, build(), fragment)


# -- metadata ----------------------------------------------------------------------------------


def _meta(manifest: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    out["metadata"] = {k: v for k, v in {**out["metadata"], **meta}.items() if v is not None}
    return out


LQ = {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "ml"},
      "spec": {"clusterQueue": "cq"}}
NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
SVC = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hosts", "namespace": "ml"}, "spec": {}}

METADATA_CASES = {
    "name required": (lambda: _meta(LQ, name=None), "metadata.name: Required value"),
    "name is a DNS subdomain": (lambda: _meta(cluster_queue(), name="Research_Q"), "RFC 1123 subdomain"),
    "Namespace name is a DNS label": (lambda: _meta(NS, name="ml.team"), "RFC 1123 label"),
    "Service name is a DNS-1035 label": (lambda: _meta(SVC, name="1hosts"), "DNS-1035 label"),
    "Job name fits a label value": (lambda: _meta(job(), name="j" * 64), "batch.kubernetes.io/job-name"),
    "namespaced CRD needs a namespace": (lambda: _meta(LQ, namespace=None), "metadata.namespace: Required value"),
    "namespaced core kind needs a namespace": (lambda: _meta(SVC, namespace=None), "metadata.namespace: Required"),
    "cluster-scoped CRD takes no namespace": (
        lambda: _meta(cluster_queue(), namespace="ml"), "metadata.namespace: must not be set: ClusterQueue is cluster"),
    "cluster-scoped core kind takes no namespace": (lambda: _meta(NS, namespace="ml"), "must not be set"),
    "label keys are qualified names": (lambda: _meta(LQ, labels={"team/": "x"}), "name part must be non-empty"),
    "label values are strings": (lambda: _meta(cluster_queue(), labels={"tier": 1}), "must be a string, not int"),
    "label values are label values": (lambda: _meta(LQ, labels={"tier": "a b"}), "a valid label must be"),
    "annotation values are strings": (
        lambda: _meta(cluster_queue(), annotations={"pulumi.com/skipAwait": True}), "must be a string, not bool"),
    "annotation keys are qualified names": (lambda: _meta(LQ, annotations={"-bad": "x"}), "metadata.annotations"),
    "server fields are not sent": (lambda: _meta(LQ, uid="123"), "metadata.uid: set by the API server"),
    "template labels too": (
        lambda: job(template={"metadata": {"labels": {"a": "b c"}}, "spec": pod_spec()}),
        "spec.template.metadata.labels[a]: Invalid value"),
    "status is not sent": (lambda: {**LQ, "status": {}}, "status: set by controllers"),
}


@pytest.mark.parametrize("case", METADATA_CASES, ids=list(METADATA_CASES))
def test_metadata_rule_fires(validator, case):
    build, fragment = METADATA_CASES[case]
    rejected(validator, build(), fragment)


def test_scopes_come_from_the_schemas_readme(shared_schemas):
    scopes = M.crd_scopes(shared_schemas)
    assert scopes[(KUEUE, "LocalQueue")] == M.NAMESPACED
    assert scopes[(KUEUE, "ClusterQueue")] == M.CLUSTER
    assert scopes[("jobset.x-k8s.io/v1alpha2", "JobSet")] == M.NAMESPACED
    assert scopes[("autoscaling.x-k8s.io/v1", "ProvisioningRequest")] == M.NAMESPACED
    (extra,) = M.EXTRA_SCHEMAS_DIRS
    assert M.crd_scopes(extra) == {
        (KUEUE, "Workload"): M.NAMESPACED,
        ("cloud.google.com/v1", "ComputeClass"): M.CLUSTER,
        ("monitoring.googleapis.com/v1", "PodMonitoring"): M.NAMESPACED,
    }


def test_the_schemas_are_those_of_the_charts_the_program_installs(shared_schemas):
    # Refreshing the vendored schemas (schema/upstream/VENDORED.md) and bumping the default
    # chart versions go together: objects are checked against the CRDs the charts install.
    from gke_ai_batch.config.batch import JobSetConfig, KueueConfig

    pinned = json.loads((shared_schemas / "versions.json").read_text())
    assert (pinned["kueue"], pinned["jobset"]) == (f"v{KueueConfig().version}", f"v{JobSetConfig().version}")


# -- embedded manifests and references ---------------------------------------------------------


def test_embedded_manifests_are_found_and_validated(validator):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": "kueue-system"},
          "data": {"flavor.yaml": yaml.safe_dump({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
                                                  "metadata": {"name": "p"}}),
                   "notes.txt": "apiVersion: v1\nkind: Namespace\n"}}
    found = list(M.embedded_manifests(cm))
    assert [where.split(": ")[-1] for where, _ in found] == ["data[flavor.yaml] document 0"]
    problems = M.problems([cm], validator)
    assert len(problems) == 1 and "emit kueue.x-k8s.io/v1beta2" in problems[0], problems


def test_references_resolve():
    cq = cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "dws-prov"}]})
    lq = copy.deepcopy(LQ)
    lq["spec"]["clusterQueue"] = "missing"
    js = jobset()
    js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["priorityClassName"] = "high"
    elsewhere = role_binding(metadata={"name": "team", "namespace": "other"})
    problems = "\n".join(M.check_references([cq, lq, js, copy.deepcopy(lq), ROLE, role_binding(), elsewhere]))
    assert "RoleBinding ml/team: roleRef" not in problems  # its Role is in its namespace
    for fragment in (
        "no ResourceFlavor 'spot' is declared",
        "no AdmissionCheck 'dws-prov' is declared",
        "spec.clusterQueue: no ClusterQueue 'missing' is declared",
        "no LocalQueue ml/research is declared",
        "no WorkloadPriorityClass 'high' is declared",
        "priorityClassName: no PriorityClass 'high' is declared",
        "LocalQueue ml/lq: declared twice",
        "metadata.namespace: no Namespace 'ml' is declared",
        "RoleBinding other/team: roleRef: no Role other/team is declared",
    ):
        assert fragment in problems, f"{fragment!r} not in:\n{problems}"


def test_complete_set_has_no_reference_problems():
    examples = valid_examples()
    # valid_examples() name a LocalQueue "research" in ml, flavors spot/reserved/l4, check dws-prov.
    extra = [resource_flavor(), _meta(resource_flavor(), name="reserved"), _meta(resource_flavor(), name="l4")]
    found = [p for p in M.check_references(examples + extra) if "declared twice" not in p]
    assert found == []


# -- what the config accepts, the cluster must accept ------------------------------------------


def test_jobset_names_the_config_accepts_pass_the_jobset_webhook(tmp_path, validator):
    """A 50-character workload name is a valid Kubernetes name, but the JobSet webhook refuses a
    JobSet whose generated pod names (<name>-slice-<job>-<pod>-<5 chars>) exceed 63 characters.
    The stack config must refuse such a name up front, or the program must emit a valid JobSet."""
    config = base_config(
        nodePools=[{"name": "v5e-spot", "tpu": {"version": "v5e", "topology": "2x4"}, "slices": 2,
                    "capacity": "spot"}],
        clusterQueues=[{"name": "q"}],
        teams=[{"namespace": "ml", "localQueue": "lq", "clusterQueue": "q"}],
        workloads=[{"kind": "jobset", "name": "x" * 50, "team": "ml", "pool": "v5e-spot", "slices": 2,
                    "image": "busybox:1.36"}],
    )
    result = synth_config(tmp_path, config)
    if result.error is not None:
        assert "workloads" in result.error, result.error  # refused up front, with a pointer
        return
    problems = M.problems(synth.manifests(result.recording), validator)
    assert not problems, "the config accepted a workload the cluster refuses:\n" + "\n".join(problems)


def test_a_secret_whose_content_is_a_pulumi_secret_is_checked_in_full(validator):
    # A fleet's kubeconfig Secret, as synth records it: the typed class makes `data` one secret,
    # which synth masks key by key (gke_ai_batch/synth/engine.py), so the Secret stays one the API server takes.
    from gke_ai_batch.synth.engine import SECRET_DATA_MASK, SECRET_MASK

    masked = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": {"kubeconfig": SECRET_DATA_MASK},
              "metadata": {"name": "multikueue-us-east4", "namespace": "kueue-system"}}
    assert validator.validate(masked) == []
    rejected(validator, {**masked, "metadata": {"name": "Bad_Name", "namespace": "kueue-system"}}, "metadata.name")
    rejected(validator, {**masked, "data": SECRET_MASK}, "data")  # the shape synth wrote before
    rejected(validator, {**masked, "data": {"kubeconfig": SECRET_MASK}}, "illegal base64")
