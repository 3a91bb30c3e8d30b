"""Property-based tests over the stack config (hypothesis): a stack file is edited by many
hands, and a typo must never cost running TPU slices. Strategies: tests/strategies.py.

1. Random VALID stacks (catalogue shapes, every capacity type, derived and declared flavors,
   queues with cohorts, quotas and preemption, teams, priorities, workloads of each kind)
   synthesize with exit 0 and no mandatory policy violated; the derived numbers hold (one GKE
   node pool per TPU slice and per GPU/CPU entry plus the system pool, each TPU slice sized to
   the catalogue's VMs, flavors and their accelerator quota, queues, teams, priorities,
   workloads); and every Kubernetes object validates (tests/support/manifests.py).
2. LENIENT stacks, which also use what the config rules let through but Kubernetes may
   refuse: synth either refuses them (exit 2) or emits objects the API server accepts.
3. Random MUTATIONS of valid stacks (unknown and misspelt keys, wrong types, missing keys,
   out-of-range numbers, bad names and values, duplicates, broken cross-references) exit 2
   with one message that starts with the stack file and names the mistaken key path, with
   no traceback and nothing registered; a few go through the CLI's main (exit 2, one message
   on stderr, nothing on stdout, no output folder; in this process: the CLI's exit 2 in a
   process of its own is tests/test_config_errors.py's).

How many cases ran is printed at the end of pytest's terminal summary, also under
`pytest -q -ra`, in a section "stack config fuzzing (tests/test_fuzz_config.py)". Examples
are derandomized and there is no example database: CI runs are reproducible.
"""

from __future__ import annotations

import functools
import re
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from gke_ai_batch.synth import yamlread
from hypothesis import HealthCheck, Phase, example, given, settings

import strategies as S
from gke_ai_batch import synth
from gke_ai_batch.domain import catalogue
from conftest import base_config, synth_config, synth_main
from support import diagnostics
from support.fuzz_report import REPORT

NODE_POOL = "gcp:container/nodePool:NodePool"
RESOURCE_POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"

# CI profile: reproducible (derandomized), no example database, no deadline (a synth of a big
# stack takes ~0.1 s, the first one in a process ~1 s). Example counts keep this file within
# ~15 s on two shared cores.
settings.register_profile(
    "stack-config-fuzz",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
FUZZ = settings.get_profile("stack-config-fuzz")
# A valid stack's synth takes ~0.1 s, a CLI run as much: those properties do not shrink (a
# failure prints the whole stack file instead; found bugs are pinned as minimal @examples).
# Rejected stacks cost ~5 ms, so the mutation property shrinks to a minimal mistake.
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]
VALID_EXAMPLES = {"standard": 30, "autopilot": 8}
LENIENT_EXAMPLES = 12
MUTATION_EXAMPLES = 40  # stacks, each given one mistake of every kind that applies (~10)
CLI_EXAMPLES = 3


# -- the count of cases, in the terminal summary (tests/support/fuzz_report.py) ----------------------


class _timed:
    def __init__(self, key: str):
        self.key = key

    def __enter__(self):
        self.start = time.perf_counter()

    def __exit__(self, *exc):
        REPORT.counts[self.key] += 1
        REPORT.seconds[self.key] += time.perf_counter() - self.start


@pytest.fixture(scope="module")
def stack_dir(tmp_path_factory) -> Path:
    """Where each case's Pulumi.test.yaml is written (and overwritten)."""
    directory = tmp_path_factory.mktemp("fuzz")
    # Warm up outside the properties: the first synth imports the program (~1 s), and
    # cel-python raises the recursion limit when first used, which hypothesis warns about
    # when it happens inside a test.
    result = synth_config(directory, _valid_base())
    assert result.error is None, result.error
    manifest_problems(result)
    return directory


def display(directory: Path) -> str:
    return synth.StackFile(directory / "Pulumi.test.yaml", "test").display()


def reported_paths(message: str, file: str) -> list[str]:
    """Key paths of synth's diagnostics (`file:line:column: path: message`, one per line; the
    CLI adds a last line `synth: file: N problems; nothing written`), all in `file`."""
    lines = message.splitlines()
    if lines and lines[-1].startswith("synth: "):
        assert lines[-1] == f"synth: {file}: {len(lines) - 1} problem{'s' if len(lines) > 2 else ''}; nothing written", message
        lines = lines[:-1]
    found = diagnostics.parse("\n".join(lines))
    assert found and all(d["file"] == str(file) for d in found), message
    return [d["path"] for d in found]


# -- 1. valid stacks ----------------------------------------------------------------------------------------


def by_type(result, type_: str) -> dict[str, dict]:
    out = {}
    for r in result.recording.resources:
        if r.type == type_:
            assert r.name not in out, f"{type_} {r.name} registered twice"
            out[r.name] = r.inputs
    return out


def check_node_pools(config: dict, result) -> None:
    expected = S.expected_node_pools(config)
    pools = by_type(result, NODE_POOL)
    assert sorted(pools) == sorted(expected)
    entries = S.ours(config, "nodePools", [])
    slices = sum(p.get("slices", 1) for p in entries if "tpu" in p)
    others = sum(1 for p in entries if "tpu" not in p)
    assert len(pools) == slices + others + (1 if S.is_standard(config) else 0)

    cluster = S.ours(config, "cluster")
    for name, want in expected.items():
        got = pools[name]
        auto = got.get("autoscaling")
        if want["kind"] == "system":
            assert (auto["totalMinNodeCount"], auto["totalMaxNodeCount"]) == (want["min"], want["max"])
            continue
        entry, capacity = want["entry"], want["capacity"]
        node = got["nodeConfig"]
        if want["kind"] == "tpu":
            tpu = entry["tpu"]
            gen = catalogue.TPU_GENERATIONS[tpu["version"]]
            machine = tpu.get("machineType") or catalogue.default_tpu_machine_type(gen, tpu["topology"])
            assert node["machineType"] == machine
            if capacity in S.PROVISIONED:
                assert "nodeCount" not in got
                # Per-zone limits in the slice's one zone; no total ones (GKE rejects a slice
                # whose per-zone maximum the provider sends as 0).
                assert auto == {"minNodeCount": 0, "maxNodeCount": want["vms"], "locationPolicy": "ANY"}, (name, got)
                assert got["initialNodeCount"] == 0
            else:
                assert auto is None and got["nodeCount"] == want["vms"], (name, got)
            zones = entry.get("zones") or cluster.get("nodeLocations") or [cluster["location"]]
            assert got["nodeLocations"] == zones and len(zones) == 1
            placement = got.get("placementPolicy")
            if want["vms"] > 1:
                assert placement["tpuTopology"] == tpu["topology"]
                assert placement["type"] == ("" if gen.workload_policy else "COMPACT")
            else:
                assert placement is None
        else:
            assert (auto["totalMinNodeCount"], auto["totalMaxNodeCount"]) == (want["min"], want["max"]), (name, got)
            if "gpu" in entry:
                gpu = entry["gpu"]
                count = gpu.get("count", 1)
                machine = entry.get("machineType") or catalogue.default_gpu_machine_type(gpu["type"], count)
                assert node["machineType"] == machine
                assert node["guestAccelerators"][0]["type"] == gpu["type"]
                assert node["guestAccelerators"][0]["count"] == gpu.get("count", 1)
            else:
                assert node["machineType"] == entry["machineType"]
        assert node.get("spot", False) is (capacity == "spot")
        assert node.get("flexStart", False) is (capacity == "flexStart")
        assert got.get("queuedProvisioning", {}).get("enabled", False) is (capacity == "queued")
        affinity = node.get("reservationAffinity")
        if capacity == "reservation":
            assert affinity["values"] == [entry["reservation"]]
        elif capacity in S.PROVISIONED:
            assert affinity == {"consumeReservationType": "NO_RESERVATION"}
            assert got["management"]["autoRepair"] is False
        if "maxRunDuration" in entry:
            assert node["maxRunDuration"] == f"{S.seconds(entry['maxRunDuration'])}s"
        assert node["shieldedInstanceConfig"]["enableSecureBoot"] is True
        assert node["workloadMetadataConfig"]["mode"] == "GKE_METADATA"

    # One workload policy per multi-host tpu7x entry.
    policies = by_type(result, RESOURCE_POLICY)
    multi_tpu7x = [p for p in entries if "tpu" in p and p["tpu"]["version"] == "tpu7x" and S.vms_of(p["tpu"]) > 1]
    assert len(policies) == len(multi_tpu7x)


def check_batch(config: dict, result) -> None:
    flavors = S.expected_flavors(config)
    assert sorted(by_type(result, KUEUE + "ResourceFlavor")) == sorted(flavors)

    queues = by_type(result, KUEUE + "ClusterQueue")
    declared = S.ours(config, "clusterQueues", [])
    assert sorted(queues) == sorted(q["name"] for q in declared)
    for cq in declared:
        spec = queues[cq["name"]]["spec"]
        entries = cq.get("flavors") or list(flavors)
        listed = {}
        for group in spec["resourceGroups"]:
            for f in group["flavors"]:
                assert [r["name"] for r in f["resources"]] == group["coveredResources"]
                listed[f["name"]] = {r["name"]: r["nominalQuota"] for r in f["resources"]}
        assert sorted(listed) == sorted(e if isinstance(e, str) else e["name"] for e in entries)
        for e in entries:
            name, quotas = (e, {}) if isinstance(e, str) else (e["name"], e.get("quotas", {}))
            # The accelerator quota defaults to what the flavor's pools provide at their ceiling.
            for resource, amount in S.flavor_accelerators(flavors[name]).items():
                if resource not in quotas:
                    assert listed[name][resource] == amount, (cq["name"], name, listed[name])
            for resource, q in quotas.items():
                assert listed[name][resource] == (q["nominal"] if isinstance(q, dict) else q)
        if cq.get("cohort"):
            assert spec["cohortName"] == cq["cohort"]

    teams = S.ours(config, "teams", [])
    assert sorted(by_type(result, KUEUE + "LocalQueue")) == sorted(f"{t['namespace']}/{t['localQueue']}" for t in teams)
    namespaces = {t["namespace"] for t in teams} - set(S.BUILTIN_NAMESPACES)
    created = by_type(result, "kubernetes:core/v1:Namespace")
    assert sorted(created) == sorted(namespaces)
    # Every team namespace carries its level: created, or (default) patched; and its
    # NetworkPolicy unless its teams turned it off.
    labelled = {**created, **by_type(result, "kubernetes:core/v1:NamespacePatch")}
    policies = by_type(result, "kubernetes:networking.k8s.io/v1:NetworkPolicy")
    for t in teams:
        labels = labelled[t["namespace"]]["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == t.get("podSecurity", "baseline")
        assert (f"{t['namespace']}/same-namespace-only" in policies) == t.get("networkPolicy", True)

    priorities = {p["name"]: p["value"] for p in S.ours(config, "priorities", [])}
    wpcs = by_type(result, KUEUE + "WorkloadPriorityClass")
    assert {n: m["value"] for n, m in wpcs.items()} == priorities
    pcs = by_type(result, "kubernetes:scheduling.k8s.io/v1:PriorityClass")
    assert {n: m["value"] for n, m in pcs.items()} == priorities


def check_workloads(config: dict, result) -> None:
    workloads = S.ours(config, "workloads", [])
    pools = {p["name"]: p for p in S.ours(config, "nodePools", [])}
    teams = S.ours(config, "teams", [])
    jobsets = by_type(result, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    jobs = by_type(result, "kubernetes:batch/v1:Job")
    requests = by_type(result, "kubernetes:autoscaling.x-k8s.io/v1:ProvisioningRequest")
    kinds = Counter(w["kind"] for w in workloads)
    assert (len(jobsets), len(jobs), len(requests)) == (
        kinds["jobset"],
        kinds["job"] + kinds["provisioningRequest"],
        kinds["provisioningRequest"],
    )
    for wl in workloads:
        key = f"{wl['team']}/{wl['name']}"
        tpu = pools[wl["pool"]].get("tpu") if "pool" in wl else wl.get("tpu")
        vms = S.vms_of(tpu) if tpu else 1
        if wl["kind"] == "provisioningRequest":
            assert requests[key]["spec"]["podSets"][0]["count"] == wl.get("count", 1)
            continue
        queue = wl.get("localQueue") or next(t["localQueue"] for t in teams if t["namespace"] == wl["team"])
        manifest = jobsets[key] if wl["kind"] == "jobset" else jobs[key]
        assert manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == queue
        if "priority" in wl:
            assert manifest["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == wl["priority"]
        if wl["kind"] == "jobset":
            rj = manifest["spec"]["replicatedJobs"][0]
            assert rj["replicas"] == wl.get("slices", 1)
            assert rj["template"]["spec"]["parallelism"] == vms
        elif "parallelism" not in wl:
            assert manifest["spec"]["parallelism"] == vms


@functools.lru_cache(maxsize=None)
def manifest_validator():
    """The CRD and core-kind validator of tests/support/manifests.py (vendored schemas)."""
    from support import manifests as M

    return M.Validator(M.SCHEMAS_DIR)


def manifest_problems(result) -> list[str]:
    from support import manifests as M

    return M.problems(synth.manifests(result.recording), manifest_validator())


# The admission model's refusals (gke_ai_batch/plan/admission.py), one line each.
_UNRUNNABLE = re.compile(
    r"gke-ai-batch:(workloads\[\d+\]: .* can never run: "
    r"|clusterQueues\[\d+\]\.namespaceSelector: .*Kueue never admits its workloads"
    r"|clusterQueues\[\d+\]\.flavors(\[\d+\])?: ResourceFlavor .* never schedules)"
)


def _only_unrunnable(error: str) -> bool:
    found = diagnostics.parse(error)
    return bool(found) and all(_UNRUNNABLE.match(f"{d['path']}: {d['message']}") for d in found)


@pytest.mark.parametrize("mode, examples", list(VALID_EXAMPLES.items()))
def test_valid_stacks_synthesize(stack_dir, mode, examples):
    """Valid stacks synthesize (exit 0, no mandatory policy violated), every derived number
    holds, and every Kubernetes object is one the API server and webhooks accept."""

    @settings(FUZZ, max_examples=examples, phases=NO_SHRINK)
    @given(config=S.valid_stacks(mode=mode))
    def check(config):
        with _timed("valid"):
            result = synth_config(stack_dir, config)
        if result.error is not None and _only_unrunnable(result.error):
            # Valid config that Kueue or kube-scheduler would never run (the admission model);
            # the generator draws quotas, labels and requests independently of each other.
            REPORT.counts["valid:unrunnable"] += 1
            return
        assert result.error is None, f"{result.error}\n{yaml.safe_dump(config, sort_keys=False)}"
        mandatory = [v for v in result.violations if v["enforcement"] == "mandatory"]
        assert result.exit_code == 0 and not mandatory, mandatory
        check_node_pools(config, result)
        check_batch(config, result)
        check_workloads(config, result)
        plan = result.plan
        entries = S.ours(config, "nodePools", [])
        assert plan.slices == sum(p.get("slices", 1) for p in entries if "tpu" in p)
        assert plan.tpu_chips == sum(S.chips_of(p["tpu"]) * p.get("slices", 1) for p in entries if "tpu" in p)
        assert plan.gpus == sum(p["gpu"].get("count", 1) * p["maxNodes"] for p in entries if "gpu" in p)
        problems = manifest_problems(result)
        assert not problems, "\n".join(problems)

    check()


# What the config rules let through but Kubernetes would refuse at `pulumi up`, half-way
# through a deploy. Minimal reproductions of what test_accepted_stacks_deploy found.
CPU_POOL = {"name": "cpu", "machineType": "n2-standard-8", "maxNodes": 2}
TPU_2X2 = {"name": "v6e", "tpu": {"version": "v6e", "topology": "2x2"}}
UNDEPLOYABLE = {
    # A queue flavor whose pools have no accelerator, listed without quotas: a resource
    # group with no coveredResources (Kueue requires at least one).
    "queue flavor of CPU pools without quotas": base_config(
        nodePools=[CPU_POOL],
        flavors=[{"name": "cpu", "pools": ["cpu"]}],
        clusterQueues=[{"name": "cq", "flavors": ["cpu"]}],
    ),
    # A queue that lists no flavors takes every flavor with its derived quota, also a
    # declared flavor without pools, which has none (when listed, its quotas are required).
    "queue of all flavors, one without pools": base_config(flavors=[{"name": "f"}], clusterQueues=[{"name": "cq"}]),
    # Kueue's webhook: lendingLimit must not exceed nominalQuota.
    "lendingLimit above nominal": base_config(
        nodePools=[TPU_2X2],
        clusterQueues=[
            {
                "name": "cq",
                "cohort": "c",
                "flavors": [{"name": "tpu-v6e-slice-2x2", "quotas": {"cpu": {"nominal": 1, "lendingLimit": 2}}}],
            }
        ],
    ),
    # The Kueue release creates kueue-system (createNamespace); a team there makes the program
    # declare it too: a create conflict, and removing the team would delete Kueue's namespace.
    "team in the Kueue release's namespace": base_config(
        nodePools=[TPU_2X2],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "kueue-system", "localQueue": "lq", "clusterQueue": "cq"}],
    ),
}


def check_accepted_or_refused(directory: Path, config: dict) -> None:
    with _timed("lenient"):
        result = synth_config(directory, config)
    if result.exit_code == 2:
        assert result.recording is None and "Traceback" not in result.error
        paths = reported_paths(result.error, display(directory))
        assert all(p.startswith(f"{S.NS}:") for p in paths), result.error
        return
    assert result.error is None and result.exit_code == 0, (result.exit_code, result.error, result.violations)
    problems = manifest_problems(result)
    namespaces = by_type(result, "kubernetes:core/v1:Namespace")
    helm = [ns for ns in S.HELM_NAMESPACES if ns in namespaces]
    problems += [f"Namespace {ns} is also the Helm release's (createNamespace)" for ns in helm]
    assert not problems, "accepted, but Kubernetes would refuse it:\n" + "\n".join(problems)


@settings(FUZZ, max_examples=LENIENT_EXAMPLES, phases=NO_SHRINK)
@given(config=S.valid_stacks(lenient=True))
@example(config=UNDEPLOYABLE["queue flavor of CPU pools without quotas"])
@example(config=UNDEPLOYABLE["queue of all flavors, one without pools"])
@example(config=UNDEPLOYABLE["lendingLimit above nominal"])
@example(config=UNDEPLOYABLE["team in the Kueue release's namespace"])
def test_accepted_stacks_deploy(stack_dir, config):
    """What synth accepts (exit 0), Kubernetes accepts too; anything else is refused with
    exit 2 and a key path, before a deploy starts."""
    check_accepted_or_refused(stack_dir, config)


# -- 2. mutated stacks --------------------------------------------------------------------------------------


def check_paths(paths: list[str], mutation: S.Mutation, context: str) -> None:
    assert all(p.startswith(f"{S.NS}:") or p in ("gcp:project", "gcp:region") for p in paths), context
    if mutation.exact and mutation.every_path:
        assert sorted(paths) == sorted(mutation.paths), f"expected each of {mutation.paths}, no other\n{context}"
    elif mutation.exact:
        assert len(paths) == 1 and paths[0] in mutation.paths, f"expected exactly one of {mutation.paths}\n{context}"
    else:
        assert set(paths) & set(mutation.paths), f"expected {mutation.paths} among the problems\n{context}"


def check_rejected(directory: Path, config: dict, mutation: S.Mutation, counter: str | None = None) -> None:
    with _timed(counter or f"mutation:{mutation.kind}"):
        try:
            result = synth_config(directory, config)
        except Exception as exc:  # a traceback where one message belongs
            raise AssertionError(f"synth crashed on a bad stack ({mutation.description}): {exc!r}") from exc
    context = f"mutation: {mutation.description}\nexit code: {result.exit_code}\nerror: {result.error}"
    exit_code, registered = result.exit_code, result.recording is not None
    assert exit_code == 2, context
    assert not registered, "nothing may be registered: " + context
    assert result.error is not None and "Traceback" not in result.error, context
    paths = reported_paths(result.error, display(directory))
    check_paths(paths, mutation, context)


def _valid_base() -> dict:
    """The stack of test_config_errors.py, for minimal examples."""
    return base_config(
        nodePools=[
            {"name": "v6e", "tpu": {"version": "v6e", "topology": "4x4"}, "slices": 2},
            {"name": "h100", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "capacity": "queued", "maxNodes": 2},
        ],
        clusterQueues=[
            {"name": "cq", "cohort": "shared", "flavors": [{"name": "tpu-v6e-slice-4x4", "quotas": {"cpu": 8}}]}
        ],
        teams=[{"namespace": "team-a", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": "privileged"}],
        priorities=[{"name": "high", "value": 1000}],
        workloads=[{"kind": "jobset", "name": "train", "team": "team-a", "pool": "v6e", "slices": 2, "image": "i:1"}],
        kueue={"waitForPodsReady": {"timeout": "10m"}},
    )


def _with(change) -> dict:
    config = _valid_base()
    change(config)
    return config


# Minimal reproductions of what the mutation property found.
EXAMPLES = [
    # A misspelt key inside an optional mapping (tpu, gpu, systemPool, autoProvisioning, a
    # quota's limits, a queue's flavor entry, waitForPodsReady) is reported at the parent, with
    # the parent's own name as the unknown key: "nodePools[0].tpu: unknown key 'tpu'".
    (
        _with(lambda c: c[f"{S.NS}:nodePools"][0]["tpu"].update(topolgy="4x4")),
        S.Mutation("unknown_key", "add nodePools[0].tpu.topolgy", [f"{S.NS}:nodePools[0].tpu.topolgy"]),
    ),
    # A malformed zone crashes synth: RuleError(i, ...) in check_zones (config/cluster.py) is
    # given an int path, and RuleError.__init__ raises TypeError: a traceback, not exit 2.
    (
        base_config(cluster={"name": "test", "nodeLocations": ["us-central1b"]}),
        S.Mutation("bad_value", "cluster.nodeLocations[0]: 'us-central1b'", [f"{S.NS}:cluster.nodeLocations[0]"]),
    ),
]


@settings(FUZZ, max_examples=MUTATION_EXAMPLES)
@given(cases=S.mutation_batches())
@example(cases=[EXAMPLES[0]])
@example(cases=[EXAMPLES[1]])
def test_mutated_stacks_are_rejected(stack_dir, cases):
    """Any one mistake: exit 2, one message naming the stack file and the mistaken key path,
    no traceback, nothing registered."""
    for config, mutation in cases:
        check_rejected(stack_dir, config, mutation)


# Booleans are no numbers: `maxRunDuration: yes` must not mean one second, nor `cpu: true`
# one CPU. base.duration_seconds and base._check_quantity reject bool, but pydantic has
# already turned it into 1 by the time they run.
BOOL_AS_NUMBER = [
    (lambda c: c[f"{S.NS}:nodePools"][1].update(maxRunDuration=True), f"{S.NS}:nodePools[1].maxRunDuration"),
    (
        lambda c: c[f"{S.NS}:clusterQueues"][0]["flavors"][0]["quotas"].update(cpu=True),
        f"{S.NS}:clusterQueues[0].flavors[0].quotas.cpu",
    ),
    (lambda c: c[f"{S.NS}:workloads"][0].update(resources={"memory": False}), f"{S.NS}:workloads[0].resources.memory"),
    (lambda c: c[f"{S.NS}:kueue"]["waitForPodsReady"].update(timeout=True), f"{S.NS}:kueue.waitForPodsReady.timeout"),
]


@pytest.mark.parametrize("change, path", BOOL_AS_NUMBER, ids=["maxRunDuration", "quota", "resources", "timeout"])
def test_bool_is_no_duration_or_quantity(stack_dir, change, path):
    mutation = S.Mutation("wrong_type", f"{path}: true", [path])
    check_rejected(stack_dir, _with(change), mutation, "mutation:bool_as_number")


# -- the CLI, for a few mutated stacks ------------------------------------------------------------------------


@settings(FUZZ, max_examples=CLI_EXAMPLES, phases=NO_SHRINK)
@given(case=S.mutations())
def test_cli_rejects_mutated_stacks(tmp_path_factory, case):
    """`python -m synth --config FILE --out DIR` (its main, in this process) on a bad stack:
    exit 2, the one message on stderr, nothing on stdout, and no output folder."""
    config, mutation = case
    directory = tmp_path_factory.mktemp("cli")
    stack = directory / "Pulumi.fuzz.yaml"
    stack.write_text(yamlread.dump({"config": config}))
    out = directory / "out"
    with _timed("cli"):
        proc = synth_main("--config", str(stack), "--out", str(out))
    context = f"mutation: {mutation.description}\nstderr: {proc.stderr}"
    assert proc.returncode == 2, context
    assert proc.stdout == "", context
    assert "Traceback" not in proc.stderr, context
    message = proc.stderr.rstrip("\n")
    paths = reported_paths(message, str(stack))
    check_paths(paths, mutation, context)
    assert not out.exists(), "nothing may be written for an invalid stack"
