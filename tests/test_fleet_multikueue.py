"""The MultiKueue fleet's building blocks (gke_ai_batch/components/fleet): every object they emit is one the
API server and Kueue accept, the manager's names lead from the AdmissionCheck to each worker's
kubeconfig, the workers' RBAC is upstream's narrowed to the stack's job kinds, and what Kueue
refuses (kubeconfigs, ClusterQueues, Kubernetes too old for Job managedBy) is refused first.
No synth runs: these are pure functions."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pydantic
import pytest
import yaml

from gke_ai_batch.config.batch import KUEUE_FRAMEWORKS
from gke_ai_batch.config.errors import from_validation_error
from gke_ai_batch.plan import kubeconfig as kc
from gke_ai_batch.plan import multikueue as mk
from gke_ai_batch.domain import multikueue_worker as wk
from support import manifests as M

KUEUE = "kueue.x-k8s.io/v1beta2"
BOTH = {"batch/job", "jobset.x-k8s.io/jobset"}
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIQ\n-----END CERTIFICATE-----\n").decode()


@pytest.fixture(scope="module")
def validator(shared_schemas) -> M.Validator:
    return M.Validator(shared_schemas)


def workers(n: int) -> list[str]:
    return [f"worker-{i}" for i in range(n)]


def by_kind(manifests: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in manifests if m["kind"] == kind]


# -- every emitted object is valid ---------------------------------------------------------------


TEAMS = ["llm", "research"]
NAMESPACES = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in TEAMS]
FLEETS = {
    "one worker": mk.multikueue_manifests("fleet", workers(1)),
    "twenty workers": mk.multikueue_manifests("fleet", workers(20)),
    "worker, jobs and jobsets": [*NAMESPACES, *wk.worker_rbac_manifests(BOTH, TEAMS)],
    "worker, jobs only": [*NAMESPACES, *wk.worker_rbac_manifests({"batch/job"}, TEAMS[:1])],
}


@pytest.mark.parametrize("name", FLEETS)
def test_every_emitted_manifest_validates(name, validator):
    problems = M.problems(FLEETS[name], validator)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("breakage, fragment", [
    (lambda s: s["metadata"]["annotations"].clear(), "kubernetes.io/service-account.name"),
    (lambda s: s.update(data={"token": "not base64!"}), "illegal base64"),
    (lambda s: s.update(data={"bad/key": ""}), "config key"),
])
def test_secret_validation_can_fail(breakage, fragment, validator):
    """The Secret checks the fleet relies on are live: the token Secret broken three ways."""
    secret = copy.deepcopy(wk.token_secret())
    breakage(secret)
    assert fragment in "\n".join(validator.validate(secret))


# -- the manager: names agree from the AdmissionCheck to each kubeconfig -------------------------


def test_names_lead_from_the_admission_check_to_every_kubeconfig():
    names = ["us-east5", "europe-west4", "asia-northeast1"]
    manifests = mk.multikueue_manifests("fleet", names)
    [check] = by_kind(manifests, "AdmissionCheck")
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue"
    params = check["spec"]["parameters"]
    assert (params["apiGroup"], params["kind"]) == ("kueue.x-k8s.io", "MultiKueueConfig")
    [config] = [m for m in by_kind(manifests, "MultiKueueConfig") if m["metadata"]["name"] == params["name"]]
    # Order is preference (the Incremental dispatcher follows it): kept as given.
    assert config["spec"]["clusters"] == names
    clusters = {m["metadata"]["name"]: m for m in by_kind(manifests, "MultiKueueCluster")}
    secrets = {(m["metadata"]["namespace"], m["metadata"]["name"]): m for m in by_kind(manifests, "Secret")}
    assert set(clusters) == set(names)
    for name in names:
        source = clusters[name]["spec"]["clusterSource"]["kubeConfig"]
        assert source["locationType"] == "Secret"
        secret = secrets[("kueue-system", source["location"])]  # Kueue looks only in its namespace
        assert set(secret["data"]) == {"kubeconfig"}
    assert len(secrets) == len(names)


def test_each_worker_kubeconfig_lands_in_its_own_secret():
    texts = {w: kc.worker_kubeconfig(w, f"10.0.0.{i}", CA, f"token-{w}") for i, w in enumerate(workers(3))}
    manifests = mk.multikueue_manifests("fleet", list(texts), {w: mk.encode_kubeconfig(t) for w, t in texts.items()})
    location = {m["metadata"]["name"]: m["spec"]["clusterSource"]["kubeConfig"]["location"]
                for m in by_kind(manifests, "MultiKueueCluster")}
    data = {m["metadata"]["name"]: m["data"]["kubeconfig"] for m in by_kind(manifests, "Secret")}
    for w, text in texts.items():
        assert base64.b64decode(data[location[w]]).decode() == text


def test_max_workers_is_the_schemas(shared_schemas):
    schema = json.loads((shared_schemas / "kueue.x-k8s.io/v1beta2/MultiKueueConfig.json").read_text())
    clusters = schema["properties"]["spec"]["properties"]["clusters"]
    assert (mk.MIN_WORKERS, mk.MAX_WORKERS) == (clusters["minItems"], clusters["maxItems"])


@pytest.mark.parametrize("fleet, names, fragment", [
    ("fleet", [], "0 workers"),
    ("fleet", workers(21), "21 workers"),
    ("fleet", ["a", "b", "a"], "more than once: a"),
    ("fleet", ["Worker_1"], "worker name"),
    ("Fleet", ["a"], "fleet name"),
])
def test_bad_fleets_are_refused(fleet, names, fragment):
    with pytest.raises(ValueError, match=fragment):
        mk.multikueue_manifests(fleet, names)


# -- the Configuration's multiKueue block ---------------------------------------------------------


def test_defaults_are_kueues_written_out():
    # apis/config/v1beta2/defaults.go:47-50, 134-138 at v0.19.2
    assert mk.multikueue_configuration(mk.MultiKueueSettings(), "0.19.2") == {
        "gcInterval": "1m",
        "origin": "multikueue",
        "workerLostTimeout": "15m",
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    }


@pytest.mark.parametrize("stack, expected", [
    ({"dispatcher": "Incremental"},
     {"dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental", "incrementalDispatcherConfig": {"stepSize": 3}}),
    ({"dispatcher": "Incremental", "incrementalStepSize": 5}, {"incrementalDispatcherConfig": {"stepSize": 5}}),
    ({"gcInterval": "90s", "workerLostTimeout": 7200, "origin": "fleet-prod"},
     {"gcInterval": "90s", "workerLostTimeout": "2h", "origin": "fleet-prod"}),
])
def test_settings_reach_the_configuration(stack, expected):
    block = mk.multikueue_configuration(mk.MultiKueueSettings.model_validate(stack), "0.19.2")
    assert {k: block.get(k) for k in expected} == expected


@pytest.mark.parametrize("stack, path", [
    ({"incrementalStepSize": 2}, "incrementalStepSize"),  # AllAtOnce: Kueue refuses the Configuration
    ({"dispatcher": "Incremental", "incrementalStepSize": 0}, "incrementalStepSize"),
    ({"origin": "not a label value"}, "origin"),
    ({"gcInterval": "0s"}, "gcInterval"),
    ({"dispatcher": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"}, "dispatcher"),
    ({"gc_interval": "1m"}, "gc_interval"),  # camelCase keys only, unknown keys refused
])
def test_bad_settings_are_refused_at_their_key(stack, path):
    with pytest.raises(pydantic.ValidationError) as err:
        mk.MultiKueueSettings.model_validate(stack)
    paths = [p for p, _ in from_validation_error(err.value, mk.MultiKueueSettings).problems]
    assert any(p.endswith(path) for p in paths), paths


# -- a manager ClusterQueue -----------------------------------------------------------------------


def admission_check(name: str, controller: str) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": name},
            "spec": {"controllerName": controller}}


CHECKS = [admission_check("fleet", "kueue.x-k8s.io/multikueue"),
          admission_check("fleet-2", "kueue.x-k8s.io/multikueue"),
          admission_check("dws-prov", "kueue.x-k8s.io/provisioning-request")]


def queue(*rules: dict[str, Any]) -> dict[str, Any]:
    flavors = [{"name": f, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]} for f in ("h100", "l4")]
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "research"},
            "spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": flavors}],
                     "admissionChecksStrategy": {"admissionChecks": list(rules)}}}


@pytest.mark.parametrize("rules, fragment", [
    ([{"name": "fleet"}], None),
    ([{"name": "fleet", "onFlavors": ["h100", "l4"]}], None),  # every flavor, spelt out
    ([{"name": "fleet"}, {"name": "dws-prov", "onFlavors": ["h100"]}], "MultiKueueWithProvisioningRequest"),
    ([{"name": "fleet", "onFlavors": ["h100"]}], "MultiKueueAdmissionCheckAppliedPerFlavor"),
    ([{"name": "fleet"}, {"name": "fleet-2"}], "MultipleMultiKueueAdmissionChecks"),
    ([{"name": "nowhere"}], "AdmissionCheckNotFound"),
])
def test_cluster_queue_rules(rules, fragment, validator):
    cq = queue(*rules)
    assert validator.validate(cq) == []  # each is a valid object: only Kueue's controller objects
    problems = mk.cluster_queue_problems(cq, CHECKS)
    if fragment is None:
        assert problems == []
    else:
        [problem] = problems
        assert problem.rule == fragment and problem.subject == ("ClusterQueue", "", "research"), problem
        assert problem.render().startswith("ClusterQueue research: ") and fragment in problem.message


def test_a_queue_without_multikueue_may_keep_its_provisioning_check():
    assert mk.cluster_queue_problems(queue({"name": "dws-prov", "onFlavors": ["h100"]}), CHECKS) == []


# -- the workers' RBAC ----------------------------------------------------------------------------

# create-multikueue-kubeconfig.sh at Kueue v0.19.2, lines 38-53 (batch), 96-111 (jobset) and
# 112-140 (kueue), transcribed: what upstream grants for the job kinds this project runs.
UPSTREAM = {
    "batch/job": [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "delete", "get", "list", "watch"]},
        {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get"]},
    ],
    "jobset.x-k8s.io/jobset": [
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["create", "delete", "get", "list", "watch"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"], "verbs": ["get"]},
    ],
    "kueue": [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"],
         "verbs": ["create", "delete", "get", "list", "watch", "update", "patch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
    ],
}
READ = {"get", "list", "watch"}


def triples(rules) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def access(kinds: set[str], namespaces=TEAMS) -> dict[str, Any]:
    """What the manager holds on a worker: the cluster-wide rights and the rights per namespace."""
    manifests = wk.worker_rbac_manifests(kinds, namespaces)
    roles = {m["metadata"]["name"]: m["rules"] for m in by_kind(manifests, "ClusterRole")}
    sa = ("ServiceAccount", wk.SERVICE_ACCOUNT, "kueue-system")
    bound = lambda b: [(s["kind"], s["name"], s["namespace"]) for s in b["subjects"]] == [sa]  # noqa: E731
    cluster = [triples(roles[b["roleRef"]["name"]]) for b in by_kind(manifests, "ClusterRoleBinding") if bound(b)]
    spaces = {b["metadata"]["namespace"]: triples(roles[b["roleRef"]["name"]])
              for b in by_kind(manifests, "RoleBinding") if bound(b)}
    return {"cluster": set().union(*cluster), "namespaces": spaces}


@pytest.mark.parametrize("kinds", [{"batch/job"}, {"jobset.x-k8s.io/jobset"}, BOTH], ids=sorted)
def test_the_manager_reads_cluster_wide_and_writes_only_in_the_mirrored_namespaces(kinds):
    got = access(kinds)
    assert {v for _, _, v in got["cluster"]} <= READ, got["cluster"]
    assert sorted(got["namespaces"]) == TEAMS
    writes = {t for ts in got["namespaces"].values() for t in ts}
    assert writes and not {v for _, _, v in writes} & READ  # reads come from the cluster-wide role
    # Kueue GETs a Workload and its job on every worker, mirrored namespace or not: that must
    # answer NotFound, not Forbidden (workload.go:351-357, jobframework/utils.go:302-306).
    groups = {wk.JOB_RESOURCES[k] for k in kinds} | {("kueue.x-k8s.io", "workloads")}
    assert {(g, r, "get") for g, r in groups} <= got["cluster"]
    assert {(g, r, "watch") for g, r in groups} <= got["cluster"]  # the remote watchers, cluster-wide


@pytest.mark.parametrize("kinds", [{"batch/job"}, {"jobset.x-k8s.io/jobset"}, BOTH], ids=sorted)
def test_rbac_is_upstreams_narrowed(kinds):
    got = access(kinds)
    granted = got["cluster"] | {t for ts in got["namespaces"].values() for t in ts}
    upstream = triples(r for k in [*sorted(kinds), "kueue"] for r in UPSTREAM[k])
    # One addition: an elastic Job's parallelism is patched on the worker (job_multikueue_adapter.go:278).
    extra = {("batch", "jobs", "patch")} if "batch/job" in kinds else set()
    assert granted <= upstream | extra, granted - upstream - extra
    # What Kueue does not call with this project's feature gates (worker.py's docstring).
    dropped = {("kueue.x-k8s.io", "workloads", "patch"), ("kueue.x-k8s.io", "workloads/status", "update"),
               ("kueue.x-k8s.io", "clusterqueues", "list"), ("batch", "jobs", "list"), ("batch", "jobs/status", "get")}
    assert not granted & dropped


def test_rbac_kinds_are_kueue_framework_names():
    assert set(wk.JOB_RESOURCES) <= set(KUEUE_FRAMEWORKS)


def test_no_jobset_or_pod_rights_without_jobset():
    got = access({"batch/job"})
    groups = {g for g, _, _ in got["cluster"] | {t for ts in got["namespaces"].values() for t in ts}}
    assert not groups & {"jobset.x-k8s.io", "", "apps"}, groups


@pytest.mark.parametrize("kinds, namespaces, fragment", [
    ({"batch/job", "ray.io/rayjob"}, TEAMS, "ray.io/rayjob"),
    (set(), TEAMS, "at least one"),
    ({"batch/job"}, [], "no team namespace"),
])
def test_unsupported_or_no_kinds_or_namespaces_are_refused(kinds, namespaces, fragment):
    with pytest.raises(ValueError, match=fragment):
        wk.worker_rbac_manifests(kinds, namespaces)


def test_the_token_belongs_to_the_bound_service_account():
    from gke_ai_batch.plan.kueue import KUEUE_NAMESPACE

    manifests = wk.worker_rbac_manifests(BOTH, TEAMS)
    sa, token = manifests[0], manifests[-1]  # creation order: the SA first, the token last
    assert sa["kind"] == "ServiceAccount" and token["kind"] == "Secret"
    who = (sa["metadata"]["namespace"], sa["metadata"]["name"])
    assert who == (KUEUE_NAMESPACE, "multikueue-sa")
    for binding in by_kind(manifests, "ClusterRoleBinding") + by_kind(manifests, "RoleBinding"):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": who[1], "namespace": who[0]}]
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["namespace"] == who[0]
    assert token["metadata"]["annotations"] == {"kubernetes.io/service-account.name": who[1]}


# -- the kubeconfig -------------------------------------------------------------------------------


def assembled() -> dict[str, Any]:
    return yaml.safe_load(kc.worker_kubeconfig("us-east5", "34.118.0.9", CA, "eyJhbGciOi.token"))


def test_the_assembled_kubeconfig_passes():
    text = kc.worker_kubeconfig("us-east5", "34.118.0.9", CA, "eyJhbGciOi.token")
    assert kc.kubeconfig_problems(text) == []
    config = yaml.safe_load(text)
    [cluster] = config["clusters"]
    assert cluster["cluster"] == {"server": "https://34.118.0.9", "certificate-authority-data": CA}
    [user] = config["users"]
    assert user["user"] == {"token": "eyJhbGciOi.token"}
    assert config["current-context"] == config["contexts"][0]["name"]


@pytest.mark.parametrize("endpoint", ["gke-0123456789abcdef.us-east5.gke.goog", "[2600:1900::1]:443"])
def test_dns_and_ipv6_endpoints_pass(endpoint):
    assert kc.kubeconfig_problems(kc.worker_kubeconfig("w", endpoint, CA, "t")) == []


def _user(c):
    return c["users"][0]["user"]


def _cluster(c):
    return c["clusters"][0]["cluster"]


# Each form Kueue refuses (multikueuecluster.go:958-1040 at v0.19.2), then the ones that would
# only fail when client-go connects.
REFUSED = {
    "exec plugin": (lambda c: _user(c).update(exec={"apiVersion": "client.authentication.k8s.io/v1",
                                                     "command": "gke-gcloud-auth-plugin"}), "exec plugins"),
    "token file": (lambda c: _user(c).update(tokenFile="/var/run/secrets/token"), "tokenFile"),
    "token file of another user": (lambda c: c["users"].append({"name": "x", "user": {"tokenFile": "/t"}}), "tokenFile"),
    "CA file": (lambda c: _cluster(c).update({"certificate-authority": "/etc/ca.crt"}), "certificate-authority file"),
    "insecure TLS": (lambda c: _cluster(c).update({"insecure-skip-tls-verify": True}), "insecure-skip-tls-verify"),
    "auth provider": (lambda c: _user(c).update({"auth-provider": {"name": "gcp"}}), "auth providers"),
    "basic auth": (lambda c: _user(c).update(username="admin", password="pw"), "basic auth"),
    "no server": (lambda c: _cluster(c).pop("server"), "server URL is required"),
    "server without scheme": (lambda c: _cluster(c).update(server="34.118.0.9"), "untrusted server endpoint"),
    "server not a host": (lambda c: _cluster(c).update(server="https://bad_host!"), "untrusted server endpoint"),
    "no current context": (lambda c: c.pop("current-context"), "current-context is not set"),
    "unknown current context": (lambda c: c.update({"current-context": "other"}), "names no context"),
    "CA not base64": (lambda c: _cluster(c).update({"certificate-authority-data": "not base64!"}), "not valid base64"),
    # client-go: the TLS config cannot be built, the token would go in clear, or nobody logs in.
    "CA not PEM": (lambda c: _cluster(c).update({"certificate-authority-data": "aGVsbG8="}), "PEM"),
    "plain http": (lambda c: _cluster(c).update(server="http://34.118.0.9"), "must be https"),
    "no credential": (lambda c: _user(c).pop("token"), "no token"),
}


@pytest.mark.parametrize("form", REFUSED)
def test_each_refused_form_is_refused(form):
    breakage, fragment = REFUSED[form]
    config = assembled()
    breakage(config)
    problems = kc.kubeconfig_problems(yaml.safe_dump(config))
    assert len(problems) == 1 and fragment in problems[0], problems


@pytest.mark.parametrize("text, fragment", [
    ("", "current-context is not set"),
    ("clusters: [unclosed", "not YAML"),
    ("- a list", "mapping"),
])
def test_unusable_text_is_refused(text, fragment):
    assert fragment in "\n".join(kc.kubeconfig_problems(text))


@pytest.mark.parametrize("endpoint", ["https://34.118.0.9", "34.118.0.9/api", ""])
def test_assembly_refuses_an_endpoint_that_is_not_a_host(endpoint):
    with pytest.raises(ValueError, match="endpoint"):
        kc.worker_kubeconfig("w", endpoint, CA, "t")


def test_assembly_refuses_what_kueue_would():
    with pytest.raises(ValueError, match="not valid base64"):
        kc.worker_kubeconfig("w", "34.118.0.9", "-----BEGIN CERTIFICATE-----", "t")


# -- Job managedBy --------------------------------------------------------------------------------


@pytest.mark.parametrize("version, refused", [
    ("1.30", True), ("1.31", True), ("1.31.9-gke.1000000", True),
    ("1.32", False), ("1.35", False), ("1.36.4-gke.1082000", False),
])
def test_managed_by_needs_kubernetes_1_32(version, refused):
    problem = mk.managed_by_problem(version)
    assert (problem is not None) == refused
    if refused:
        assert "managedBy" in problem and "1.32" in problem


def test_managed_by_refuses_a_non_version():
    with pytest.raises(ValueError):
        mk.managed_by_problem("latest")
