"""Dependency-free facts: the TPU/GPU catalogue, machine shapes, regions and zones, versions and
feature floors, Kueue releases, GKE's names and labels, Kubernetes quantities. Nothing here
imports pydantic, Pulumi or another layer of this package."""
