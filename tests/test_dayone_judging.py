"""One seam for judging: the admission model judges what a program registers
(gke_ai_batch/model/recorded.py). The stack program judges its plan's objects in the shape it
registers them (gke_ai_batch/plan/admission.py); synth's recording of the same stack, fed to the
same judge, must give the same world, verdicts and problems, or a program that uses the library
without a stack file (judged by the policy pack) would hear something else."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import STACKS, synth_stack
from gke_ai_batch.model.recorded import Judgement
from gke_ai_batch.plan.admission import Admission, declared_cluster
from policy import rules
from policy.rules.base import by_cluster


def _world(w) -> dict:
    d = dataclasses.asdict(w)
    # GKE's own taints are listed before the pool's in the plan, and after its GPU taint in the
    # NodePool's arguments; the order means nothing to the scheduler.
    for g in d["node_groups"]:
        g["taints"] = sorted(tuple(sorted(t.items())) for t in g["taints"])
    return d


def _verdict(v) -> tuple:
    return (v.workload, v.cluster_queue, v.never, v.rule, v.waits, v.flavors, [dataclasses.asdict(p) for p in v.placements])


def _clusters(result) -> list[tuple[str, object]]:
    """(naming scope, plan) of each cluster of a rendered stack."""
    if result.fleet is None:
        return [("", result.plan)]
    return [("manager", result.fleet.manager), *((w.name, w.plan) for w in result.fleet.workers)]


@pytest.mark.parametrize("stack", STACKS)
def test_the_recorded_resources_are_judged_as_the_plan_is(stack):
    result = synth_stack(stack)
    recorded = by_cluster([rules.Resource(r.urn, r.type, r.name, r.inputs) for r in result.recording.resources])
    for scope, plan in _clusters(result):
        planned = Admission(plan)
        judged = Judgement(recorded[scope], declared_cluster(plan))
        assert _world(judged.world) == _world(planned.world), scope
        assert [_verdict(v) for v in judged.verdicts] == [_verdict(v) for v in planned.verdicts], scope
        assert judged.at_once == planned.at_once
        assert [(p.where, p.message) for p in judged.problems] == [
            (p.where, p.message) for p in planned.judgement.problems
        ]
