"""Which registrations manifests.yaml lists: the Kubernetes objects a program declares itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine import Recording, Registration

# Kinds synth lists in manifests.yaml: objects the program declares itself, not the
# provider or the Helm releases (whose objects come from the charts), nor pulumi_kubernetes's
# components (yaml.ConfigFile and ConfigGroup, kustomize.Directory: their objects are their
# children, registered each with its own type).
NOT_MANIFESTS = ("kubernetes:helm.sh/", "kubernetes:yaml:", "kubernetes:yaml/", "kubernetes:kustomize:", "kubernetes:kustomize/")


def manifest_registrations(recording: Recording) -> list[Registration]:
    return [r for r in recording.resources if r.type.startswith("kubernetes:") and not r.type.startswith(NOT_MANIFESTS)]
