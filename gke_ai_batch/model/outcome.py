"""The shape of every admission answer: an ordered mode and the reasons for it.

Kueue's flavor assigner answers each pod set with a FlavorAssignmentMode, ordered from least
to most preferred (NoFit < Preempt < DeferredFit < Fit), and a Status holding its reasons; a
workload's mode is the worst of its pod sets' (kubernetes-sigs/kueue v0.19.2
pkg/scheduler/flavorassigner/flavorassigner.go: FlavorAssignmentMode, Status,
PodSetAssignment.RepresentativeMode, Assignment.RepresentativeMode). The model judges each
workload on an empty cluster, where NoFit means never: no amount of waiting fixes it. It has no
DeferredFit (that is one scheduling cycle waiting for preemptions to finish).

A reason is a Finding (gke_ai_batch/domain/findings.py): `rule` the model's rule that decided
("quota", "placement", "topology", ...), `message` why; an error Finding refuses (NoFit), a
WAIT one is something the workload may wait for though it can run. Values are built once by
the model's pure functions and never changed after. Standard library only."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from gke_ai_batch.domain.findings import ERROR, Finding

WAIT = "wait"
"""The severity of a reason a workload may wait for (borrowing, an admission check, capacity
GKE provisions on request), though it can run."""


class Mode(IntEnum):
    """Kueue's FlavorAssignmentMode, in its order: a lower mode is a worse answer."""

    NO_FIT = 0
    """Not admitted: on the model's empty cluster, never."""
    PREEMPT = 1
    """Admitted once running work finishes or is preempted."""
    FIT = 3
    """Admitted (Kueue's DeferredFit, 2, is a scheduling cycle's state the model has not)."""


def worst(modes: Iterable[Mode]) -> Mode:
    """The representative mode of several answers: the worst, FIT when there are none."""
    return min(modes, default=Mode.FIT)


def refusal(reasons: Iterable[Finding]) -> Finding | None:
    """The first reason that refuses (an error), or None."""
    return next((r for r in reasons if r.severity == ERROR), None)


def waits(reasons: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(r for r in reasons if r.severity == WAIT)
