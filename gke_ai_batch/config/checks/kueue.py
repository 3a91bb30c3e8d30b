"""The Kueue and JobSet releases: what the program configures must exist in them."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import kueue_releases
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.batch import KueueConfig
from gke_ai_batch.config.checks import check
from gke_ai_batch.config.fleet import MultiKueueSettings


@check("kueue")
def kueue_release(cfg, ctx) -> Iterator[RuleError]:
    """Kueue's Configuration fields and integrations per release (gke_ai_batch/domain/kueue_releases.py),
    and `installed` only where something else installed the release (an existing cluster)."""
    yield from kueue_release_problems(cfg.kueue, cfg.fleet.multi_kueue if cfg.fleet is not None else None)
    for key, section in (("kueue", cfg.kueue), ("jobset", cfg.jobset)):
        if section.installed is not None and not cfg.cluster.existing:
            yield RuleError(
                (key, "installed"),
                "only on an existing cluster (cluster.existing): on a cluster this program creates, "
                "nothing else has installed it; remove installed (the program installs version)",
            )


def kueue_release_problems(
    kueue: KueueConfig, multi_kueue: MultiKueueSettings | None, multi_kueue_at: tuple = ("fleet", "multiKueue")
) -> Iterator[RuleError]:
    """What the program writes into Kueue's Configuration and flags must exist in the release
    the cluster runs (gke_ai_batch/domain/kueue_releases.py): the manager would not start. Also
    KueueInstall's rule (gke_ai_batch/components/batch.py), whose multi_kueue arg it passes as
    `multi_kueue_at`."""
    version = kueue.release
    for i, framework in enumerate(kueue.integrations):
        problem = kueue_releases.lacks(version, framework, kueue_releases.INTEGRATIONS[framework])
        if problem:
            yield RuleError(("kueue", "integrations", i), problem)
    if multi_kueue is not None and multi_kueue.incremental_step_size is not None:
        name = "multiKueue.incrementalDispatcherConfig"
        problem = kueue_releases.lacks(version, name, kueue_releases.CONFIG_FIELDS[name])
        if problem:
            yield RuleError(
                (*multi_kueue_at, "incrementalStepSize"),
                f"{problem}; before it the Incremental dispatcher adds 3 workers per round: remove "
                "incrementalStepSize, or raise kueue.version",
            )
