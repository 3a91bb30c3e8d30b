"""Which cluster each registered resource is on, so that every judge (the admission model, the
policy pack, synth's report and manifests) looks at one cluster at a time.

A Kubernetes object is on the cluster its Kubernetes provider reaches, never the one its name
suggests: under `pulumi up` CrossGuard hands a stack policy every resource with the provider it
is applied through (pulumi/pulumi pkg/resource/deploy/step_generator.go, AnalyzeResources:
`res.Provider`, the provider's URN and inputs; pulumi_policy PolicyResource.provider), and synth
records the same (its `provider` option). A provider reaches:
- the cluster of the library's cluster component it was created under (GkeCluster and
  ExistingCluster parent their provider, and register the cluster's name, location, project and
  mode as outputs, which a stack policy reads as the component's properties);
- else the cluster its `cluster` or `context` input names: the kubeconfig names that
  `gcloud container clusters get-credentials` writes, gke_PROJECT_LOCATION_NAME (GKE docs,
  how-to/cluster-access-for-kubectl), or a cluster's bare name;
- else the one GKE cluster its inputs depend on: a kubeconfig built from a cluster's outputs
  (the library's `cluster.kubeconfig`, a secret whose text no judge reads) carries the
  dependency on that Cluster resource, which the engine records and CrossGuard passes on;
- else, when the program has one such provider and node pools of one cluster no other provider
  reaches, that cluster; else a cluster of its own, of which nothing else is known.

A GKE cluster or node pool is on the cluster its inputs name (project, location, name; a pool
whose inputs are only known after deploy, on the Cluster resource it depends on); any other
resource on the cluster of the cluster component it was created under, or on none.

Groups are labelled as the stack program scopes its names (gke_ai_batch/domain/naming.py
`scoped`: a fleet's worker or "manager", the label of manifests/<label>.yaml and of the
"cluster X:" of a finding), else by the cluster's GKE name; a program of one cluster has the one
label "", which also holds the resources of no cluster."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gke_ai_batch.domain import naming
from gke_ai_batch.domain.registered import CLUSTER, NODE_POOL, UNKNOWN, as_list

K8S_PROVIDER = "pulumi:providers:kubernetes"
# The library's cluster components (gke_ai_batch/components/cluster.py): their registered outputs
# name the cluster their provider reaches.
GKE_CLUSTER = "gke-ai-batch:index:GkeCluster"
EXISTING_CLUSTER = "gke-ai-batch:index:ExistingCluster"
CLUSTER_COMPONENTS = (GKE_CLUSTER, EXISTING_CLUSTER)
# The kubeconfig context and cluster gcloud writes for a GKE cluster: gke_<project>_<location>_<name>.
_GCLOUD_NAME = re.compile(
    r"gke_(?P<project>[^_]+(?:_[^_]+)*?)_(?P<location>[a-z]+-[a-z]+[0-9]+(?:-[a-z])?)_(?P<name>[a-z](?:[-a-z0-9]*[a-z0-9])?)"
)
_GKE_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")


@dataclass(frozen=True)
class Key:
    """A GKE cluster as the API names it; location and project None where not known."""

    name: str
    location: str | None = None
    project: str | None = None

    def same(self, other: "Key") -> bool:
        return self.name == other.name and all(
            a is None or b is None or a == b for a, b in ((self.location, other.location), (self.project, other.project))
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != UNKNOWN else None


def key_of(props: Mapping[str, Any], name_key: str = "name") -> Key | None:
    """The cluster a GKE Cluster (`name`), a node pool (`cluster`) or a cluster component's
    outputs (`name`) name; None where the name is not known before deploy."""
    name = _text(props.get(name_key))
    if name is None:
        return None
    # A node pool's cluster may be given as projects/P/locations/L/clusters/N (the GKE API's id).
    parts = name.split("/")
    if len(parts) == 6 and parts[0] == "projects" and parts[2] == "locations" and parts[4] == "clusters":
        return Key(parts[5], parts[3], parts[1])
    return Key(name, _text(props.get("location")), _text(props.get("project")))


def named_by_kubeconfig(props: Mapping[str, Any]) -> Key | None:
    """The cluster a Kubernetes provider's `cluster` or `context` input names: gcloud's
    gke_PROJECT_LOCATION_NAME, or a bare GKE name."""
    for k in ("cluster", "context"):
        value = _text(props.get(k))
        if value is None:
            continue
        match = _GCLOUD_NAME.fullmatch(value)
        if match:
            return Key(match["name"], match["location"], match["project"])
        if _GKE_NAME.fullmatch(value):
            return Key(value)
    return None


def _depended_on(provider: Any, by_urn: Mapping[str, Any]) -> Key | None:
    """The cluster of the one GKE Cluster resource a provider depends on (None with none or
    several: a kubeconfig merged from two clusters reaches neither for certain)."""
    keys = {
        key_of(by_urn[d].props)
        for d in as_list(getattr(provider, "dependencies", None))
        if d in by_urn and by_urn[d].type == CLUSTER
    }
    return keys.pop() if len(keys) == 1 else None


def provider_of(r: Any) -> str:
    """The URN of the Kubernetes provider an object is applied through; "" for the default one."""
    return str(getattr(r, "provider", "") or "")


def _parent(r: Any) -> str:
    return str(getattr(r, "parent", "") or "")


@dataclass
class _Cluster:
    key: Key | None
    label: str | None = None  # the naming scope of its provider, where the stack program named it
    fallback: str = ""  # a label where the cluster's name is unknown
    providers: set[str] = field(default_factory=set)
    components: set[str] = field(default_factory=set)


def partition(resources: Sequence[Any]) -> dict[str, list[Any]]:
    """label -> the resources on that cluster, in registration order; "" also holds the
    resources of no cluster (and is the only label when there is one cluster)."""
    if not any(provider_of(r) for r in resources if r.type.startswith("kubernetes:")):
        return _by_scope(resources)
    by_urn = {r.urn: r for r in resources}

    def component_of(r: Any | None) -> Any | None:
        seen = set()
        while r is not None and r.urn not in seen:
            if r.type in CLUSTER_COMPONENTS:
                return r
            seen.add(r.urn)
            r = by_urn.get(_parent(r))
        return None

    def component_key(c: Any) -> Key | None:
        found = key_of(c.props)
        if found is None:  # a GkeCluster's outputs not known before deploy: its Cluster's inputs
            child = next((r for r in resources if r.type == CLUSTER and _parent(r) == c.urn), None)
            found = key_of(child.props) if child is not None else None
        return found

    clusters: list[_Cluster] = []

    def find(key: Key | None, component: str | None = None) -> _Cluster | None:
        for c in clusters:
            if component is not None and component in c.components:
                return c
            if key is not None and c.key is not None and c.key.same(key):
                return c
        return None

    def add(key: Key | None, component: str | None = None) -> _Cluster:
        found = find(key, component)
        if found is None:
            found = _Cluster(key)
            clusters.append(found)
        elif found.key is None or (key is not None and found.key.location is None):
            found.key = key or found.key
        if component is not None:
            found.components.add(component)
        return found

    # 1. The providers that apply Kubernetes objects, in order of first use.
    unreached: list[_Cluster] = []
    for urn in dict.fromkeys(provider_of(r) for r in resources if r.type.startswith("kubernetes:")):
        provider = by_urn.get(urn)
        component = component_of(provider)
        if component is not None:
            cluster = add(component_key(component), component.urn)
        else:
            key = named_by_kubeconfig(provider.props) if provider is not None else None
            if key is None and provider is not None:
                key = _depended_on(provider, by_urn)
            cluster = add(key) if key is not None else _Cluster(None)
            if key is None:
                clusters.append(cluster)
                unreached.append(cluster)
        cluster.providers.add(urn)
        scope = naming.scope_of(provider.name, naming.KUBERNETES_PROVIDER) if provider is not None else None
        if scope is not None and cluster.label is None:
            cluster.label = scope
        if provider is not None:
            cluster.fallback = cluster.fallback or provider.name
    # 2. Clusters the program creates or pools it adds, which no provider reaches yet.
    pooled: list[_Cluster] = []
    for r in resources:
        if r.type == CLUSTER:
            component = component_of(r)
            add(key_of(r.props), component.urn if component is not None else None)
        elif r.type == NODE_POOL:
            key = key_of(r.props, "cluster")
            if key is not None and find(key) is None:
                pooled.append(add(key))
    # A program's one provider of unknown reach, beside pools of one cluster nothing else reaches.
    orphans = [c for c in pooled if not c.providers]
    if len(unreached) == 1 and len(orphans) == 1:
        clusters.remove(unreached[0])
        orphans[0].providers |= unreached[0].providers
        orphans[0].fallback = unreached[0].fallback
    labels = _labels(clusters)

    def label_of(r: Any) -> str:
        if r.type.startswith("kubernetes:"):
            return next((labels[id(c)] for c in clusters if provider_of(r) in c.providers), "")
        if r.type == K8S_PROVIDER:
            found = next((c for c in clusters if r.urn in c.providers), None)
            if found is not None:
                return labels[id(found)]
        key = None
        if r.type == CLUSTER:
            key = key_of(r.props)
        elif r.type == NODE_POOL:
            key = key_of(r.props, "cluster")
            if key is None:  # known after deploy: the Cluster it waits for
                on = [by_urn[d] for d in as_list(getattr(r, "dependencies", None)) if d in by_urn and by_urn[d].type == CLUSTER]
                key = key_of(on[0].props) if on else None
        found = find(key) if key is not None else None
        if found is None:
            component = component_of(r)
            found = find(None, component.urn) if component is not None else None
        return labels[id(found)] if found is not None else ""

    out: dict[str, list[Any]] = {}
    for r in resources:
        out.setdefault(label_of(r), []).append(r)
    return out


def _name_scope(r: Any) -> str:
    """The naming scope a Kubernetes object's logical name carries (naming.scoped(scope,
    <namespace>/<name>)): "" in a stack of one cluster, a fleet's worker or "manager"."""
    meta = r.props.get("metadata") if isinstance(r.props, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    if not isinstance(name, str):
        return ""
    return naming.scope_of(r.name, f"{ns}/{name}" if isinstance(ns, str) and ns else name) or ""


def _by_scope(resources: Sequence[Any]) -> dict[str, list[Any]]:
    """Where no object names its provider, all go through the default one, the ambient
    kubeconfig's cluster: one cluster, unless the resources are a record that leaves providers
    out and scopes its names as the stack program does (naming.scoped), which then tell the
    clusters apart. A Kubernetes object is in the scope of its own name; any other resource in
    the scope its name starts with, when some Kubernetes object has that scope, else in ""."""

    scope_of = _name_scope
    scopes = {scope_of(r) for r in resources if r.type.startswith("kubernetes:")}
    out: dict[str, list[Any]] = {}
    for r in resources:
        if r.type.startswith("kubernetes:"):
            scope = scope_of(r)
        else:
            head, sep, _ = r.name.partition(naming.SCOPE_SEPARATOR)
            scope = head if sep and head in scopes else ""
        out.setdefault(scope, []).append(r)
    return out


def _labels(clusters: list[_Cluster]) -> dict[int, str]:
    """id(cluster) -> its label: "" for a program's one cluster; else its provider's naming
    scope, or its GKE name, made unique, each a valid scope (it names manifests/<label>.yaml)."""
    if len(clusters) <= 1:
        return {id(c): "" for c in clusters}
    out: dict[int, str] = {}
    taken: set[str] = set()
    for i, c in enumerate(clusters, 1):
        wanted = c.label or (c.key.name if c.key is not None else _as_scope(c.fallback)) or f"cluster-{i}"
        label, n = wanted, 1
        while label in taken:
            n += 1
            label = f"{wanted[:36]}-{n}"
        taken.add(label)
        out[id(c)] = label
    return out


def _as_scope(name: str) -> str:
    text = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
    text = re.sub(r"^[^a-z]+", "", text)[:40].rstrip("-")
    return text if _GKE_NAME.fullmatch(text) else ""


def several(resources: Sequence[Any]) -> bool:
    """Whether the resources are on more than one cluster."""
    return len([label for label in partition(resources) if label]) > 1
