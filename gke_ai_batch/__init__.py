"""gke-ai-batch: a GKE platform for AI/ML batch work on TPUs and GPUs, as a library.

    import gke_ai_batch as gab
    cluster = gab.GkeCluster("ml", {"name": "ml", "location": "us-central1", "project": "acme-ml"})
    gab.TpuSlices("slices", {"cluster": cluster.ref(), ...})   # docs/library.md has whole programs

Every public component and its typed args are importable from here, as from
`gke_ai_batch.components`, and load on first use: importing this package imports nothing else,
which the policy pack (domain and model only) relies on.

One direction of flow, each layer in its own package (docs/architecture.md):
domain (dependency-free facts) → config (the stack-file schema and its checks) → plan (config →
one spec per component) → model (the admission and placement model) → components (Pulumi
component resources)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gke_ai_batch.components import *  # noqa: F403  (the public names, for type checkers)


def __getattr__(name: str) -> object:
    # import_module, not `from gke_ai_batch import components`: that reads the attribute first,
    # which would land here again.
    components = importlib.import_module("gke_ai_batch.components")
    if name == "__all__" or name in components.__all__:
        value = components.__all__ if name == "__all__" else getattr(components, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    components = importlib.import_module("gke_ai_batch.components")
    return sorted({*globals(), *components.__all__})
