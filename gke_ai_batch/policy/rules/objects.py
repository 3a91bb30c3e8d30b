"""Kubernetes objects as a cluster holds them, whichever components registered them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .base import EMPTY, Resource, as_dict, clusters_in, kind_of


def _object_key(r: Resource, cluster: str) -> tuple[str, str, str, str, str] | None:
    """(cluster, API group, kind, namespace, name) of the object `r` applies, `cluster` the one
    its provider reaches (base.clusters_in: two providers of one cluster hold one set of
    objects). None where it names no one object: a Helm
    release or YAML group (no metadata.name), a *Patch resource (it edits an object it does not
    own), a name left to Pulumi's auto-naming or not known at preview."""
    if not r.type.startswith("kubernetes:") or r.type.endswith("Patch") or r.type.endswith("List"):
        return None
    meta = as_dict(r.props.get("metadata"))
    name, namespace = meta.get("name"), meta.get("namespace", "")
    if not isinstance(name, str) or not isinstance(namespace, str):
        return None
    # kubernetes:<group>/<version>:<Kind>: one object whichever version a resource writes it at.
    group = r.type.split(":", 2)[1].split("/", 1)[0]
    return cluster, group, kind_of(r.type), namespace, name


def unique_objects(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str | None, str]]:
    """One object, one resource, per cluster: a name is unique for its kind within a namespace
    (kubernetes.io docs concepts/overview/working-with-objects/names, "Names"), so the API
    server refuses to create a second (409 AlreadyExists, k8s.io/apimachinery
    pkg/api/errors/errors.go NewAlreadyExists). Under server-side apply the Kubernetes provider
    upserts instead, and two resources then fight over one object's fields, and deleting either
    deletes the other's object. Two library components on one cluster (two MultiKueueWorkers
    for two managers, each with ServiceAccount kueue-system/multikueue-sa) do this, which
    neither sees alone. The cluster is the one the resource's provider reaches."""
    seen: dict[tuple[str, ...], str] = {}
    cluster_of = clusters_in(resources)
    for r in resources:
        key = _object_key(r, cluster_of(r))
        if key is None:
            continue
        if key in seen:
            *_, group, kind, namespace, name = key
            where = f"{namespace}/{name}" if namespace else name
            yield r.urn, (
                f"{kind} {where} ({group}) is also {seen[key]} on the same cluster (provider): Kubernetes holds one object "
                "of a kind and name per namespace, so the second create fails (AlreadyExists) or, under server-side "
                "apply, two resources own one object; register it once and share it"
            )
        else:
            seen[key] = r.urn
