"""Priorities: declared once, and ranked as their names say."""

from __future__ import annotations

import re
from typing import Iterator

from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.batch import PriorityConfig
from gke_ai_batch.config.checks import check, valid


@check("priorities", on_manager=False)
def priorities(cfg, ctx) -> Iterator[RuleError]:
    """A priority is declared once, and one named low ranks low: kube-scheduler and Kueue
    compare only values (Kubernetes docs pod-priority-preemption; _priority_order)."""
    yield from _declared_twice(cfg.priorities)
    # After the names: the workloads are read only here, so an invalid one leaves those said.
    yield from _priority_order(cfg.priorities, [wl.name for wl in cfg.workloads if wl.priority is None])


# Rank words in priority names, lowest first. A word followed by what it qualifies is no
# rank: "low-latency" or "high-memory" say what the work needs, not where it stands.
_RANK_WORDS = {"lowest": 0, "low": 1, "background": 1, "besteffort": 1, "high": 2, "highest": 3}
_LOW = 1
_QUALIFIED = {"latency", "throughput", "memory", "mem", "cpu", "gpu", "tpu", "bandwidth", "cost", "power"}


def _rank(name: str) -> int | None:
    """The rank a priority's name claims, or None when it claims none (or contradicts itself)."""
    words = [w for w in re.split(r"[-._]", name) if w]
    words = [  # "best-effort" and "best_effort" are one word
        "besteffort" if (w, nxt) == ("best", "effort") else w for w, nxt in zip(words, [*words[1:], ""])
    ]
    ranks = {
        _RANK_WORDS[w]
        for w, nxt in zip(words, [*words[1:], ""])
        if w in _RANK_WORDS and nxt not in _QUALIFIED
    }
    return ranks.pop() if len(ranks) == 1 else None


def priority_problems(priorities: list[PriorityConfig], unranked: list[str]) -> Iterator[RuleError]:
    """A name declared twice, and the order check below; `unranked`: the workloads that name no
    priority. Also Priorities' rule (gke_ai_batch/components/priorities.py), where none is known."""
    yield from _declared_twice(priorities)
    yield from _priority_order(priorities, unranked)


def _declared_twice(priorities: list[PriorityConfig]) -> Iterator[RuleError]:
    seen: set[str] = set()
    for i, prio in valid(priorities):
        if prio.name in seen:
            yield RuleError(("priorities", i, "name"), f"priority {prio.name!r} is declared twice")
        seen.add(prio.name)


def _priority_order(priorities: list[PriorityConfig], unranked: list[str]) -> Iterator[RuleError]:
    """A priority named low must rank low. Its value is all kube-scheduler and Kueue
    compare: a workload with no priority class ranks 0 (Kubernetes docs, pod-priority-
    preemption: "pods without a priorityClassName ... priority zero" when no class is the
    global default; Kueue takes a Workload's priority from its WorkloadPriorityClass, else
    its pods' PriorityClass, else 0). So a "low" class above 0 outranks every workload that
    names none, and one named low must sit below one named high.

    A name declared twice is refused already; only its first declaration is ranked here,
    and each priority gets one message (one value to change). Past an invalid entry, the
    valid ones are ranked among themselves."""
    first_at: dict[str, int] = {}
    for i, prio in valid(priorities):
        first_at.setdefault(prio.name, i)
    ranked = [(i, p, _rank(p.name)) for i, p in valid(priorities) if first_at[p.name] == i]
    first = [p for _, p, _ in ranked]
    for i, prio, rank in ranked:
        if rank is None or rank > _LOW:
            continue
        if prio.value > 0 and unranked:
            yield RuleError(
                ("priorities", i, "value"),
                f"priority {prio.name!r} (value {prio.value}) outranks the workloads that set no "
                f"priority (priority 0: {', '.join(unranked)}), though its name says low; give it "
                "a negative value, or give those workloads a priority above it",
            )
            continue
        for other in first:
            other_rank = _rank(other.name)
            if other_rank is not None and other_rank > rank and other.value <= prio.value:
                yield RuleError(
                    ("priorities", i, "value"),
                    f"priority {prio.name!r} (value {prio.value}) is not below {other.name!r} "
                    f"(value {other.value}), though their names say it should be; Kueue and "
                    "kube-scheduler compare only the values",
                )
                break
