"""The Pod Security Standards as Pod Security admission enforces them: would a namespace at
a given level admit this pod?

Pod Security admission judges Pods, not the Jobs or JobSets that make them: a JobSet whose
pods break its namespace's `enforce` level is created, admitted by Kueue, and then every pod
create fails, so the workload waits forever holding its quota. Hence the program refuses such
a workload before deploy (gke_ai_batch/plan/podsecurity.py), and this is the decision it uses.

`violations(pod_spec, level)` returns a Finding (a Violation) for every check the pod fails,
like Kueue's flavor assigner returns why each flavor was passed over. The checks follow the Pod Security
Standards page (https://kubernetes.io/docs/concepts/security/pod-security-standards/) and
their implementation, k8s.io/pod-security-admission/policy (check_*.go), as of v1.34:

baseline
  - Host Namespaces: spec.hostNetwork, spec.hostPID, spec.hostIPC unset or false
  - Privileged Containers: securityContext.privileged unset or false
  - Capabilities: capabilities.add only from BASELINE_CAPABILITIES
  - HostPath Volumes: no spec.volumes[*].hostPath
  - Host Ports: ports[*].hostPort unset or 0. The API server defaults hostPort to
    containerPort for pods on the host network (k8s.io/kubernetes pkg/apis/core/v1/defaults.go,
    SetDefaults_PodSpec: defaultHostNetworkPorts), before admission sees the pod
  - /proc Mount Type: securityContext.procMount unset or Default
  - Seccomp: seccompProfile.type not Unconfined
  - Sysctls: only the safe set (SAFE_SYSCTLS)
restricted (everything in baseline, and)
  - Volume Types: only RESTRICTED_VOLUMES
  - Privilege Escalation: allowPrivilegeEscalation false in every container
  - Running as Non-root: runAsNonRoot true, on the pod or on every container
  - Running as Non-root user: runAsUser not 0
  - Seccomp: seccompProfile.type RuntimeDefault or Localhost, on the pod or on every container
  - Capabilities: drop includes ALL; add only NET_BIND_SERVICE

Not modelled: AppArmor, SELinux and Windows HostProcess options, which the program never
emits. Containers are containers, initContainers and ephemeralContainers alike.

Standard library only: the policy pack imports it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.domain.findings import Finding

SOURCE = "https://kubernetes.io/docs/concepts/security/pod-security-standards/"
LEVELS = ("privileged", "baseline", "restricted")  # least to most strict
LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE_LABEL = LABEL_PREFIX + "enforce"
WARN_LABEL = LABEL_PREFIX + "warn"
AUDIT_LABEL = LABEL_PREFIX + "audit"

BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})
RESTRICTED_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})
RESTRICTED_VOLUMES = frozenset({
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
})
SAFE_SYSCTLS = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
})
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class Violation(Finding):
    """A check a pod fails, as a Finding: `rule` the Pod Security Standards control it breaks
    ("Host Namespaces"), `path` where in the pod spec (spec.hostNetwork), `message` what is
    wrong; `level` the lowest level that forbids it, baseline or restricted."""

    level: str = "baseline"

    def render(self) -> str:
        return f"{super().render()} ({self.level}: {self.rule})"


def stricter(a: str, b: str) -> bool:
    return LEVELS.index(a) > LEVELS.index(b)


def violations(spec: Mapping[str, Any], level: str) -> list[Violation]:
    """Every check of `level` that a pod with this spec fails; [] if the namespace admits it."""
    if level not in LEVELS:
        raise ValueError(f"unknown Pod Security level {level!r}; one of {', '.join(LEVELS)}")
    if level == "privileged":
        return []
    found = list(_baseline(spec))
    if level == "restricted":
        found += _restricted(spec)
    return found


def lowest_level(spec: Mapping[str, Any]) -> str:
    """The strictest level that admits this pod."""
    if not violations(spec, "baseline"):
        return "restricted" if not violations(spec, "restricted") else "baseline"
    return "privileged"


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for key in _CONTAINER_LISTS:
        for i, c in enumerate(spec.get(key) or []):
            if isinstance(c, Mapping):
                yield f"spec.{key}[{i}]", c


def _sc(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    sc = obj.get("securityContext")
    return sc if isinstance(sc, Mapping) else {}


def _baseline(spec: Mapping[str, Any]) -> Iterator[Violation]:
    def v(check: str, field: str, detail: str) -> Violation:
        return Violation(check, detail, path=field, level="baseline")

    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key) is True:
            yield v("Host Namespaces", f"spec.{key}", "shares the node's namespace")
    pod_sc = _sc(spec)
    if dig_str(pod_sc, "seccompProfile", "type") == "Unconfined":
        yield v("Seccomp", "spec.securityContext.seccompProfile.type", "Unconfined")
    for i, sysctl in enumerate(pod_sc.get("sysctls") or []):
        name = sysctl.get("name") if isinstance(sysctl, Mapping) else None
        if name not in SAFE_SYSCTLS:
            yield v("Sysctls", f"spec.securityContext.sysctls[{i}]", f"{name} is not a safe sysctl")
    for i, vol in enumerate(spec.get("volumes") or []):
        if isinstance(vol, Mapping) and "hostPath" in vol:
            yield v("HostPath Volumes", f"spec.volumes[{i}].hostPath", f"volume {vol.get('name')} mounts a node path")
    host_network = spec.get("hostNetwork") is True
    for where, c in _containers(spec):
        sc = _sc(c)
        name = c.get("name", "?")
        if sc.get("privileged") is True:
            yield v("Privileged Containers", f"{where}.securityContext.privileged", f"container {name} is privileged")
        added = [a for a in dig_list(sc, "capabilities", "add") if a not in BASELINE_CAPABILITIES]
        if added:
            yield v("Capabilities", f"{where}.securityContext.capabilities.add", f"container {name} adds {', '.join(map(str, added))}")
        for j, port in enumerate(c.get("ports") or []):
            if not isinstance(port, Mapping):
                continue
            host_port = port.get("hostPort") or (port.get("containerPort") if host_network else None)
            if host_port:
                how = "" if port.get("hostPort") else " (hostNetwork defaults hostPort to containerPort)"
                yield v("Host Ports", f"{where}.ports[{j}].hostPort", f"container {name} binds node port {host_port}{how}")
        if sc.get("procMount") not in (None, "Default"):
            yield v("/proc Mount Type", f"{where}.securityContext.procMount", str(sc.get("procMount")))
        if dig_str(sc, "seccompProfile", "type") == "Unconfined":
            yield v("Seccomp", f"{where}.securityContext.seccompProfile.type", "Unconfined")


def _restricted(spec: Mapping[str, Any]) -> Iterator[Violation]:
    def v(check: str, field: str, detail: str) -> Violation:
        return Violation(check, detail, path=field, level="restricted")

    for i, vol in enumerate(spec.get("volumes") or []):
        if not isinstance(vol, Mapping):
            continue
        kinds = [k for k in vol if k != "name"]
        bad = [k for k in kinds if k not in RESTRICTED_VOLUMES and k != "hostPath"]  # hostPath: baseline's
        if bad:
            yield v("Volume Types", f"spec.volumes[{i}]", f"volume {vol.get('name')} is {', '.join(bad)}")
    pod_sc = _sc(spec)
    pod_non_root = pod_sc.get("runAsNonRoot") is True
    pod_seccomp = dig_str(pod_sc, "seccompProfile", "type")
    if pod_sc.get("runAsUser") == 0:
        yield v("Running as Non-root user", "spec.securityContext.runAsUser", "0 (root)")
    for where, c in _containers(spec):
        sc = _sc(c)
        name = c.get("name", "?")
        if sc.get("allowPrivilegeEscalation") is not False:
            yield v("Privilege Escalation", f"{where}.securityContext.allowPrivilegeEscalation",
                    f"container {name} must set it to false")
        non_root = sc.get("runAsNonRoot")
        if non_root is False or (non_root is None and not pod_non_root):
            yield v("Running as Non-root", f"{where}.securityContext.runAsNonRoot",
                    f"container {name} must run as non-root (runAsNonRoot: true here or on the pod)")
        if sc.get("runAsUser") == 0:
            yield v("Running as Non-root user", f"{where}.securityContext.runAsUser", f"container {name} runs as 0 (root)")
        seccomp = dig_str(sc, "seccompProfile", "type") or pod_seccomp
        if seccomp not in ("RuntimeDefault", "Localhost"):
            yield v("Seccomp", f"{where}.securityContext.seccompProfile.type",
                    f"container {name} needs RuntimeDefault or Localhost (here or on the pod)")
        caps = sc.get("capabilities") if isinstance(sc.get("capabilities"), Mapping) else {}
        if "ALL" not in dig_list(caps, "drop"):
            yield v("Capabilities", f"{where}.securityContext.capabilities.drop", f"container {name} must drop ALL")
        added = [a for a in dig_list(caps, "add") if a in BASELINE_CAPABILITIES and a not in RESTRICTED_CAPABILITIES]
        if added:
            yield v("Capabilities", f"{where}.securityContext.capabilities.add",
                    f"container {name} adds {', '.join(map(str, added))}; only NET_BIND_SERVICE")


# obj is any value read off a manifest: a step through a non-mapping gives None, then the default.
def dig_str(obj: Any, *path: str) -> str | None:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, str) else None


def dig_list(obj: Any, *path: str) -> list[Any]:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return list(obj) if isinstance(obj, list) else []


# What the program puts on the pods of a `restricted` namespace: the restricted profile's
# fields the workload config has no say in. The image must run as a non-root user: the
# kubelet refuses to start a container whose image runs as root under runAsNonRoot
# (https://kubernetes.io/docs/tasks/configure-pod-container/security-context/).
RESTRICTED_POD_CONTEXT = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER_CONTEXT = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
