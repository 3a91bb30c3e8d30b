"""Register a planned Kubernetes manifest as a Pulumi resource.

Core kinds go through pulumi-kubernetes' typed classes. Custom resources go through one
generic class: `apiextensions.CustomResource` takes only `spec`, and Kueue's
WorkloadPriorityClass keeps `value` and `description` at the top level. Either way the
engine receives the manifest exactly as planned (camelCase, current API versions)."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes import _utilities as k8s_utilities

from gke_ai_batch.domain.naming import scoped

_TYPED = {
    ("v1", "Namespace"): lambda: k8s.core.v1.Namespace,
    # A Namespace that exists already (default): server-side apply of its labels only.
    ("v1", "NamespacePatch"): lambda: k8s.core.v1.NamespacePatch,
    ("v1", "ServiceAccount"): lambda: k8s.core.v1.ServiceAccount,
    ("v1", "Secret"): lambda: k8s.core.v1.Secret,
    ("v1", "ConfigMap"): lambda: k8s.core.v1.ConfigMap,
    ("v1", "Pod"): lambda: k8s.core.v1.Pod,
    ("v1", "Service"): lambda: k8s.core.v1.Service,
    ("v1", "PodTemplate"): lambda: k8s.core.v1.PodTemplate,
    ("batch/v1", "Job"): lambda: k8s.batch.v1.Job,
    ("scheduling.k8s.io/v1", "PriorityClass"): lambda: k8s.scheduling.v1.PriorityClass,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): lambda: k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): lambda: k8s.rbac.v1.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "Role"): lambda: k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): lambda: k8s.rbac.v1.RoleBinding,
    ("networking.k8s.io/v1", "NetworkPolicy"): lambda: k8s.networking.v1.NetworkPolicy,
}


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


class KubernetesObject(pulumi.CustomResource):
    """A custom resource registered under its own type token (kubernetes:<apiVersion>:<kind>),
    with every top-level field of the manifest as input."""

    def __init__(self, resource_name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions | None = None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=k8s_utilities.get_version()))
        super().__init__(f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}", resource_name, dict(manifest), opts)


def resource_name(manifest: dict[str, Any]) -> str:
    """Logical names are the object's own name, namespace-qualified, so URNs never collide
    across namespaces and a rename shows up as the replacement it is."""
    meta = manifest["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def apply(
    manifest: dict[str, Any],
    opts: pulumi.ResourceOptions,
    patch: bool = False,
    *,
    scope: str = "",
    name: str | None = None,
) -> pulumi.CustomResource:
    """`patch`: the object exists already; apply the manifest's fields to it (its <Kind>Patch
    class) instead of creating it. The recorded inputs stay the manifest (kind Namespace, not
    NamespacePatch): a patch is the partial object it applies. `scope`: the cluster's naming
    scope (gke_ai_batch.domain.naming.scoped); the object's own name does not change. `name`:
    the logical name, where a component derives it from its own (naming.child_name)."""
    if name is None:
        name = scoped(scope, resource_name(manifest))
    kind = manifest["kind"] + ("Patch" if patch else "")
    typed = _TYPED.get((manifest["apiVersion"], kind))
    if patch and typed is None:
        raise ValueError(f"no typed {kind} class registered for {manifest['apiVersion']}")
    if typed is None:
        return KubernetesObject(name, manifest, opts)
    fields = {_snake(k): v for k, v in manifest.items() if k not in ("apiVersion", "kind")}
    return typed()(name, opts=opts, **fields)
