"""The kubeconfig a manager uses to reach one worker, and the checks Kueue applies to it.

Kueue v0.19.2 refuses a MultiKueueCluster's kubeconfig (condition Active=False, reason
InsecureKubeConfig) by validateKubeconfig and validateRestConfig,
pkg/controller/admissionchecks/multikueue/multikueuecluster.go:958-1040
(https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L958-L1040).
The MultiKueueAllowInsecureKubeconfigs gate that once relaxed this is locked off in 0.19
(pkg/features/kube_features.go:773-777). `kubeconfig_problems` mirrors those checks, and adds
the few that would only fail later, when client-go connects, so that a bad kubeconfig stops the
deploy instead of leaving a worker silently disconnected.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

import yaml

from gke_ai_batch.domain.multikueue_worker import SERVICE_ACCOUNT

# apimachinery validation.IsDNS1123Subdomain, which isValidHostname applies to the host.
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", re.ASCII)
_PEM_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----")


def worker_kubeconfig(name: str, endpoint: str, ca_data: str, token: str) -> str:
    """A kubeconfig for the manager: server https://<endpoint> (a GKE cluster's `endpoint`, an
    IP or DNS name without scheme), the cluster CA inline as base64 PEM (GKE's
    masterAuth.clusterCaCertificate is already that), and the worker ServiceAccount's static
    token. The shape is upstream's create-multikueue-kubeconfig.sh (lines 334-353).

    Raises ValueError when Kueue would refuse the result: at deploy time that stops the update
    with the reason, where a stored bad kubeconfig would only show as an inactive cluster."""
    if not endpoint or any(c in endpoint for c in "/@ "):
        # Kueue only checks the host; "https://https://1.2.3.4" has host "https" and passes there,
        # then never connects.
        raise ValueError(f"worker {name}: endpoint {endpoint!r} must be a host name or IP, without scheme or path")
    user = f"{name}-{SERVICE_ACCOUNT}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca_data}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
        "current-context": name,
        "users": [{"name": user, "user": {"token": token}}],
        "preferences": {},
    }
    text = yaml.safe_dump(config, sort_keys=False)
    problems = kubeconfig_problems(text)
    if problems:
        raise ValueError(f"kubeconfig for worker {name}: " + "; ".join(problems))
    return text


def _named(config: dict[str, Any], key: str, inner: str, out: list[str]) -> dict[str, dict[str, Any]]:
    """clusters / contexts / users as name -> entry, as clientcmd converts them (a repeated name
    is a conversion error there)."""
    entries: dict[str, dict[str, Any]] = {}
    items = config.get(key) or []
    if not isinstance(items, list):
        out.append(f"{key}: must be a list")
        return entries
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get(inner) or {}, dict):
            out.append(f"{key}[{i}]: must be a mapping with name and {inner}")
            continue
        name = item.get("name", "")
        if name in entries:
            out.append(f"{key}[{i}]: duplicate name {name!r}")
        entries[name] = item.get(inner) or {}
    return entries


def _base64_problem(where: str, value: Any) -> str | None:
    # []byte fields are base64 in a kubeconfig; clientcmd.Load fails on anything else.
    if not isinstance(value, str):
        return f"{where}: must be a base64 string"
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return f"{where}: is not valid base64"
    return None


def _go_host(netloc: str) -> str:
    """The host isValidHostname checks: Go's url.URL.Host (userinfo dropped) through
    net.SplitHostPort, or the whole Host when that fails (no port, too many colons)."""
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end > 0 and hostport[end + 1 : end + 2] == ":":
            return hostport[1:end]
        return hostport
    host, colon, _ = hostport.rpartition(":")
    if colon and ":" not in host:
        return host
    return hostport


def _trusted_host(server: str) -> bool:
    """isValidHostname (multikueuecluster.go:1024-1040): an IP or a DNS-1123 subdomain."""
    try:
        netloc = urlsplit(server.lower()).netloc
    except ValueError:
        return False
    host = _go_host(netloc)
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    return len(host) <= 253 and bool(_DNS1123_SUBDOMAIN.fullmatch(host))


def kubeconfig_problems(text: str) -> list[str]:
    """Why Kueue (or client-go, when the manager connects) would refuse this kubeconfig; empty
    when it would connect. Unlike Kueue, which stops at the first, every problem is listed."""
    try:
        config = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        return [f"not YAML: {exc}"]
    if not isinstance(config, dict):
        return ["a kubeconfig is a mapping (kind: Config)"]
    out: list[str] = []
    clusters = _named(config, "clusters", "cluster", out)
    contexts = _named(config, "contexts", "context", out)
    users = _named(config, "users", "user", out)

    # validateKubeconfig, multikueuecluster.go:964-970: a token file is never allowed, whichever
    # user names it (the manager would read a file of its own pod's choosing).
    for name, user in users.items():
        if user.get("tokenFile"):
            out.append(f"user {name}: tokenFile is not allowed; put the token inline")
        for key in ("client-certificate-data", "client-key-data"):
            if key in user and (p := _base64_problem(f"user {name}: {key}", user[key])):
                out.append(p)
    # multikueuecluster.go:973-986, for every cluster.
    for name, cluster in clusters.items():
        if cluster.get("insecure-skip-tls-verify"):
            out.append(f"cluster {name}: insecure-skip-tls-verify is not allowed")
        if cluster.get("certificate-authority"):
            out.append(f"cluster {name}: certificate-authority file paths are not allowed; "
                       "use certificate-authority-data")
        if not cluster.get("server"):
            out.append(f"cluster {name}: server URL is required")
        if "certificate-authority-data" in cluster:
            p = _base64_problem(f"cluster {name}: certificate-authority-data", cluster["certificate-authority-data"])
            if p:
                out.append(p)
            elif not _PEM_CERT.search(base64.b64decode(cluster["certificate-authority-data"])):
                # Not Kueue's check: client-go fails to build the TLS config ("unable to load root
                # certificates") and the cluster stays disconnected.
                out.append(f"cluster {name}: certificate-authority-data is not a base64 PEM certificate")

    # clientcmd.RESTConfigFromKubeConfig (multikueuecluster.go:989) builds the connection from
    # the current context only; validateRestConfig (:1001-1021) then checks that.
    current = config.get("current-context") or ""
    if not current:
        out.append("current-context is not set: client-go finds no cluster to connect to")
        return out
    if current not in contexts:
        out.append(f"current-context {current!r} names no context")
        return out
    context = contexts[current]
    cluster = clusters.get(context.get("cluster", ""))
    if cluster is None:
        out.append(f"context {current}: cluster {context.get('cluster')!r} does not exist (no server to connect to)")
    elif isinstance(cluster.get("server"), str) and cluster["server"]:
        server = cluster["server"]
        if not _trusted_host(server):
            out.append(f"cluster {context['cluster']}: server {server!r} is not an IP or DNS name "
                       "(Kueue: untrusted server endpoint)")
        elif urlsplit(server).scheme != "https":
            # Not Kueue's check: over http the token would cross the network in clear, and a GKE
            # control plane only serves https.
            out.append(f"cluster {context['cluster']}: server {server!r} must be https")
    user = users.get(context.get("user", ""), {})
    if user.get("username") or user.get("password"):
        out.append(f"user {context.get('user')}: basic auth is not allowed")
    if user.get("exec"):
        out.append(f"user {context.get('user')}: exec plugins are not allowed")
    if user.get("auth-provider"):
        out.append(f"user {context.get('user')}: auth providers are not allowed")
    if not (user.get("token") or user.get("client-certificate-data")):
        # Not Kueue's check: without a credential the manager is anonymous on the worker and
        # every call is forbidden.
        out.append(f"context {current}: the user has no token (the manager would connect anonymously)")
    return out
