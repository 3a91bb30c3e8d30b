"""Pod Security: the standards' checks one by one (gke_ai_batch/model/podsecurity.py), and
what a stack gets from them: labels on every team namespace, hardened pods in restricted
namespaces, and a workload its namespace would reject refused before deploy."""

from __future__ import annotations

import copy

import pytest

from gke_ai_batch import synth
from gke_ai_batch.model import podsecurity as ps
from conftest import base_config, synth_config, synth_stack

PLAIN = {"containers": [{"name": "main", "image": "i"}]}
RESTRICTED = {
    "securityContext": dict(ps.RESTRICTED_POD_CONTEXT),
    "containers": [{"name": "main", "image": "i", "securityContext": dict(ps.RESTRICTED_CONTAINER_CONTEXT)}],
}


def with_container(**fields) -> dict:
    spec = copy.deepcopy(PLAIN)
    spec["containers"][0].update(fields)
    return spec


# (id, pod spec, the lowest level that forbids it, the check, the field)
BREACHES = [
    ("hostNetwork", {**PLAIN, "hostNetwork": True}, "baseline", "Host Namespaces", "spec.hostNetwork"),
    ("hostPID", {**PLAIN, "hostPID": True}, "baseline", "Host Namespaces", "spec.hostPID"),
    ("hostIPC", {**PLAIN, "hostIPC": True}, "baseline", "Host Namespaces", "spec.hostIPC"),
    ("privileged", with_container(securityContext={"privileged": True}), "baseline", "Privileged Containers",
     "spec.containers[0].securityContext.privileged"),
    ("SYS_ADMIN", with_container(securityContext={"capabilities": {"add": ["SYS_ADMIN"]}}), "baseline",
     "Capabilities", "spec.containers[0].securityContext.capabilities.add"),
    ("hostPath", {**PLAIN, "volumes": [{"name": "dev", "hostPath": {"path": "/dev"}}]}, "baseline",
     "HostPath Volumes", "spec.volumes[0].hostPath"),
    ("hostPort", with_container(ports=[{"containerPort": 80, "hostPort": 80}]), "baseline", "Host Ports",
     "spec.containers[0].ports[0].hostPort"),
    ("procMount", with_container(securityContext={"procMount": "Unmasked"}), "baseline", "/proc Mount Type",
     "spec.containers[0].securityContext.procMount"),
    ("unconfined seccomp", {**PLAIN, "securityContext": {"seccompProfile": {"type": "Unconfined"}}}, "baseline",
     "Seccomp", "spec.securityContext.seccompProfile.type"),
    ("unsafe sysctl", {**PLAIN, "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}},
     "baseline", "Sysctls", "spec.securityContext.sysctls[0]"),
    ("init container", {**PLAIN, "initContainers": [{"name": "init", "image": "i", "securityContext": {"privileged": True}}]},
     "baseline", "Privileged Containers", "spec.initContainers[0].securityContext.privileged"),
    ("no hardening", PLAIN, "restricted", "Privilege Escalation", "spec.containers[0].securityContext.allowPrivilegeEscalation"),
    ("root user", {**RESTRICTED, "securityContext": {**RESTRICTED["securityContext"], "runAsUser": 0}}, "restricted",
     "Running as Non-root user", "spec.securityContext.runAsUser"),
    ("a gcePersistentDisk", {**RESTRICTED, "volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "d"}}]},
     "restricted", "Volume Types", "spec.volumes[0]"),
    ("CHOWN", {**RESTRICTED, "containers": [{"name": "main", "image": "i", "securityContext": {
        **ps.RESTRICTED_CONTAINER_CONTEXT, "capabilities": {"drop": ["ALL"], "add": ["CHOWN"]}}}]},
     "restricted", "Capabilities", "spec.containers[0].securityContext.capabilities.add"),
]


@pytest.mark.parametrize("spec, level, check, field", [b[1:] for b in BREACHES], ids=[b[0] for b in BREACHES])
def test_each_check_refuses_at_its_level_and_not_below(spec, level, check, field):
    found = ps.violations(spec, level)
    assert (check, field) in {(v.rule, v.path) for v in found}, found
    below = ps.LEVELS[ps.LEVELS.index(level) - 1]
    assert ps.lowest_level(spec) == below
    assert ps.violations(spec, "privileged") == []


def test_the_restricted_profile_passes_restricted():
    assert ps.violations(RESTRICTED, "restricted") == []
    assert ps.violations(PLAIN, "baseline") == []
    # Baseline's capabilities are allowed there; restricted wants them dropped.
    spec = with_container(securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN"]}})
    assert ps.violations(spec, "baseline") == []


def test_host_network_makes_container_ports_host_ports():
    """The API server defaults hostPort to containerPort under hostNetwork, before admission."""
    spec = {**with_container(ports=[{"containerPort": 8471}]), "hostNetwork": True}
    fields = {v.path for v in ps.violations(spec, "baseline")}
    assert fields == {"spec.hostNetwork", "spec.containers[0].ports[0].hostPort"}
    assert ps.violations(with_container(ports=[{"containerPort": 8471}]), "baseline") == []


def test_unknown_level_is_an_error():
    with pytest.raises(ValueError, match="unknown Pod Security level"):
        ps.violations(PLAIN, "strict")


# -- what stacks get ----------------------------------------------------------------------------


def labels(result, name: str) -> dict[str, str]:
    (ns,) = [m for m in synth.manifests(result.recording) if m["kind"] == "Namespace" and m["metadata"]["name"] == name]
    return ns["metadata"]["labels"]


def test_the_level_pins_the_clusters_minor_when_the_stack_gives_one():
    assert labels(synth_stack("dev"), "ml-research")["pod-security.kubernetes.io/enforce-version"] == "v1.34"
    assert labels(synth_stack("prod"), "evals") == {
        "team": "evals",
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "v1.34",
    }


GPU_POOL = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}


def gpu_stack(level: str, **workload) -> dict:
    return base_config(
        nodePools=[GPU_POOL],
        clusterQueues=[{"name": "cq"}],
        teams=[{"namespace": "ml", "localQueue": "lq", "clusterQueue": "cq", "podSecurity": level}],
        workloads=[{"kind": "job", "name": "eval", "team": "ml", "pool": "l4", "image": "i:1", **workload}],
    )


def test_a_restricted_namespace_gets_hardened_pods(tmp_path):
    result = synth_config(tmp_path, gpu_stack("restricted"))
    assert result.error is None, result.error
    (job,) = [m for m in synth.manifests(result.recording) if m["kind"] == "Job"]
    pod = job["spec"]["template"]["spec"]
    assert ps.violations(pod, "restricted") == []
    assert pod["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    assert labels(result, "ml")["pod-security.kubernetes.io/enforce"] == "restricted"


def test_a_baseline_namespace_gets_pods_as_written(tmp_path):
    result = synth_config(tmp_path, gpu_stack("baseline"))
    (job,) = [m for m in synth.manifests(result.recording) if m["kind"] == "Job"]
    assert "securityContext" not in job["spec"]["template"]["spec"]
