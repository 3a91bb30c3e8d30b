"""A component's args on a declared cluster, checked as a stack of their own.

A component used from any Pulumi program (gke_ai_batch/components/nodepools.py, cluster.py)
takes its pool or cluster and the facts it stands on as args, not as a stack file. Written as
the stack keys they mirror, they go through StackConfig's own validation: the rules and
messages are the stack file's, never a second copy of them."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import ValidationError

from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.stack import StackConfig

# What a component validates in place of a node service account given as an Output (an account
# the same program creates): one is given, and its email is known only at deploy time. The
# rules need only that one is given (an existing cluster's nodes run as some account); its form
# is then the IAM API's to check.
OUTPUT_ACCOUNT = "output-account@output-project.iam.gserviceaccount.com"


def pool_on_cluster(
    cluster: Mapping[str, Any], entry: Mapping[str, Any], catalogue: Mapping[str, Any] | None = None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    """The stack {cluster, nodePools: [entry], catalogue} validated, or None and every problem
    as (key path, message); paths are the stack's (("nodePools", 0, "tpu", "topology"))."""
    return _validated({"cluster": dict(cluster), "nodePools": [dict(entry)]}, catalogue, None)


def cluster_alone(
    cluster: Mapping[str, Any], catalogue: Mapping[str, Any] | None = None, project: str | None = None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    """The stack {cluster, catalogue} validated as gcp:project `project` would have it (a network
    named without its project is the cluster's project's), or None and every problem."""
    return _validated({"cluster": dict(cluster)}, catalogue, project)


def _validated(
    data: dict[str, Any], catalogue: Mapping[str, Any] | None, project: str | None
) -> tuple[StackConfig | None, list[tuple[tuple, str]]]:
    if catalogue:
        data["catalogue"] = dict(catalogue)
    try:
        return StackConfig.model_validate(data, context={"project": project} if project else None), []
    except ValidationError as exc:
        return None, located_problems(exc, StackConfig)
