"""One node pool entry on a declared cluster, checked as a stack of its own.

A component used from any Pulumi program (gke_ai_batch/components/nodepools.py) takes its
pool and the facts of its cluster as args, not as a stack file. Written as the stack keys they
mirror, they go through StackConfig's own validation: the rules and messages are the stack
file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import ValidationError

from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.stack import StackConfig


def pool_on_cluster(
    cluster: Mapping[str, Any], entry: Mapping[str, Any], catalogue: Mapping[str, Any] | None = None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    """The stack {cluster, nodePools: [entry], catalogue} validated, or None and every problem
    as (key path, message); paths are the stack's (("nodePools", 0, "tpu", "topology"))."""
    data: dict[str, Any] = {"cluster": dict(cluster), "nodePools": [dict(entry)]}
    if catalogue:
        data["catalogue"] = dict(catalogue)
    try:
        return StackConfig.model_validate(data), []
    except ValidationError as exc:
        return None, located_problems(exc, StackConfig)
