"""GKE's limits on NO_UPGRADES exclusions (gke_ai_batch/domain/maintenance.py says which sources
and why 90 days): a refusal names the exclusion's key path and the limit; the near miss renders."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conftest import synth_refused, synth_rendered
from gke_ai_batch.domain import maintenance as mx
from test_maintenance import WEEKENDS, config

M = "gke-ai-batch:cluster.maintenance"
T0 = datetime(2026, 12, 1, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def freeze(name: str, start: float, end: float, scope: str = "NO_UPGRADES") -> dict:
    return {"name": name, "scope": scope, "start": at(start), "end": at(end)}


REFUSALS = [
    ("NO_UPGRADES one second over 90 days", [freeze("freeze", 0, 90 + 1 / 86400)],
     f"{M}.exclusions[0].end", "a NO_UPGRADES exclusion of 90 days, 0:00:01; GKE allows at most 90 days of NO_UPGRADES"),
    ("NO_UPGRADES for half a year", [freeze("ok", 0, 1), freeze("freeze", 0, 181)],
     f"{M}.exclusions[1].end", "use NO_MINOR_OR_NODE_UPGRADES"),
    ("four NO_UPGRADES in 32 days", [freeze(f"f{i}", 10 * i, 10 * i + 1) for i in range(4)],
     f"{M}.exclusions[3].start", "'f3' is a NO_UPGRADES exclusion within 32 days of 'f0', 'f1', 'f2'; GKE allows at most 3"),
    # Listed out of order: the one named is the latest to start, wherever it is listed.
    ("four NO_UPGRADES, listed out of order", [freeze("late", 31, 32), *[freeze(f"f{i}", i, i + 1) for i in range(3)]],
     f"{M}.exclusions[0].start", "'late' is a NO_UPGRADES exclusion within 32 days of 'f0', 'f1', 'f2'"),
    # A long one reaches into the span of three short ones after it.
    ("a long one and three short ones", [freeze("long", 0, 60), *[freeze(f"s{i}", 80 + i, 81 + i) for i in range(3)]],
     f"{M}.exclusions[3].start", "'s2' is a NO_UPGRADES exclusion within 32 days of 'long', 's0', 's1'"),
]


@pytest.mark.parametrize("exclusions, path, words", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_no_upgrades_limits_are_refused(tmp_path, exclusions, path, words):
    synth_refused(tmp_path, config({"window": WEEKENDS, "exclusions": exclusions}), path, words)


NEAR_MISSES = [
    ("NO_UPGRADES of exactly 90 days", [freeze("freeze", 0, 90)]),
    # 30 < 90: GKE's earlier 30-day limit is not enforced (domain/maintenance.py says why).
    ("NO_UPGRADES of 45 days", [freeze("freeze", 0, 45)]),
    ("three NO_UPGRADES in 32 days", [freeze(f"f{i}", 10 * i, 10 * i + 1) for i in range(3)]),
    # The fourth starts 32 days after the first ended: no 32-day span holds all four.
    ("four NO_UPGRADES, the fourth 32 days after the first ends", [*[freeze(f"f{i}", i, i + 1) for i in range(3)], freeze("f3", 33, 34)]),
    # Other scopes count for neither limit.
    ("half a year of NO_MINOR_OR_NODE_UPGRADES", [freeze("campaign", 0, 181, "NO_MINOR_OR_NODE_UPGRADES")]),
    ("three NO_UPGRADES and a NO_MINOR_UPGRADES in 32 days",
     [*[freeze(f"f{i}", 10 * i, 10 * i + 1) for i in range(3)], freeze("minor", 5, 6, "NO_MINOR_UPGRADES")]),
    ("NO_UPGRADES until end of support (its end is GKE's)",
     [{"name": "eos", "scope": "NO_UPGRADES", "start": at(0), "untilEndOfSupport": True}, *[freeze(f"f{i}", i, i + 1) for i in range(3)]]),
]


@pytest.mark.parametrize("exclusions", [n[1] for n in NEAR_MISSES], ids=[n[0] for n in NEAR_MISSES])
def test_no_upgrades_near_misses_render(tmp_path, exclusions):
    synth_rendered(tmp_path, config({"window": WEEKENDS, "exclusions": exclusions}))


def test_crowding_is_found_whatever_the_order():
    spans = [(T0 + timedelta(days=d), T0 + timedelta(days=d + 1)) for d in (31, 0, 20, 10)]
    assert mx.crowded_no_upgrades(spans) == [1, 3, 2, 0]
    assert mx.crowded_no_upgrades(spans[:3]) is None
    assert mx.crowded_no_upgrades([]) is None
