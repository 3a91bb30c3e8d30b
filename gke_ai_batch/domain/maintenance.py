"""GKE's maintenance policy: the exclusion scopes, the limits GKE puts on windows and exclusions,
and how much maintenance time a recurring window leaves. Standard library only: config checks
the limits, the report describes the windows, and both read them here.

Sources:
- GKE docs how-to/maintenance-window, "Considerations when configuring a maintenance window",
  as the page reads now (docs.cloud.google.com, read in its Korean edition): "You must allow at
  least 48 hours of maintenance availability in a 92-day rolling window. Only contiguous
  availability windows of at least four hours are considered." Earlier editions of the same
  page (cloud.google.com) said 32 days, when NO_UPGRADES exclusions were capped at 30 days:
  GKE moved both together (92 = 90 + 2 days, as 32 = 30 + 2), see NO_UPGRADES_MAX below. The
  current wording is followed: refusing a window GKE takes would leave a user no way through.
  "Day of the week recurrences are always based on UTC."
- GKE API, MaintenanceExclusionOptions.Scope (reference/rest/Shared.Types/Scope): what each
  scope excludes.
- GKE docs concepts/maintenance-windows-and-exclusions#limitations-maint-exclusions: at most 20
  exclusions per cluster (quoted in hashicorp/terraform-provider-google#15279; the provider's
  google/services/container/resource_container_cluster.go schema has maintenance_exclusion
  MaxItems: 20 since commit 33e3efe).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

# What each scope keeps GKE from doing (Scope enum of the GKE API).
EXCLUSION_SCOPES = {
    "NO_UPGRADES": "all upgrades: control plane and nodes, patch and minor",
    "NO_MINOR_UPGRADES": "minor upgrades of the control plane and nodes; patches still arrive",
    "NO_MINOR_OR_NODE_UPGRADES": "minor upgrades and every node upgrade; only control-plane patches arrive",
}
# Scopes under which GKE upgrades no node at all, so a running job's nodes stay as they are.
NODE_UPGRADES_EXCLUDED = frozenset({"NO_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"})
EXCLUSIONS_MAX = 20

# NO_UPGRADES also holds back security patches, so GKE bounds it: an exclusion of that scope may
# last at most 90 days, and at most three of them may fall in any 32 days. Sources disagree on the
# length, and GKE's concepts/maintenance-windows-and-exclusions page could not be read offline:
# Google's own sample for the GKE docs says "NO_UPGRADES exclusions are limited to 30 days"
# (terraform-google-modules/terraform-docs-samples
# gke/standard/zonal/no-channel-to-release-channel/main.tf, 2025); articles of June 2026
# (https://dev-ex.com/article/gke-per-node-pool-maintenance-exclusions-90-day-no-upgrade-window/)
# report that GKE now allows up to 90 days, and GKE's how-to/maintenance-window page now asks for
# 48 hours of availability in 92 days rather than 32, which a 90-day exclusion needs. Only what
# every reading refuses is refused here: longer than 90 days, or a fourth NO_UPGRADES exclusion
# reaching into one 32-day span (the three-in-32-days limit as guides state it; a Terraform
# module that reads it as three in all refuses that too).
NO_UPGRADES = "NO_UPGRADES"
NO_UPGRADES_MAX = timedelta(days=90)
NO_UPGRADES_PER_SPAN = 3
NO_UPGRADES_SPAN = timedelta(days=32)
AVAILABILITY_MIN = timedelta(hours=48)
AVAILABILITY_PERIOD = timedelta(days=92)
CONTIGUOUS_MIN = timedelta(hours=4)

# RFC 3339 in UTC ("Zulu"), to the second: pulumi-gcp's ClusterMaintenancePolicy asks for it,
# because "GKE may accept other formats, but will return values in UTC, causing a permanent
# diff" (and terraform-provider-google validates the fields with verify.ValidateRFC3339Date).
UTC_TIMESTAMP_RX = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", re.ASCII)
# dailyMaintenanceWindow.startTime: "HH:MM", HH 00-23 and MM 00-59, GMT (pulumi-gcp).
DAILY_START_RX = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]", re.ASCII)

# A Monday, 00:00 UTC.
_REFERENCE_MONDAY = datetime(2001, 1, 1, tzinfo=timezone.utc)

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
WEEKDAY_NAMES = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")


def parse_utc(value: str) -> datetime | None:
    """The instant a UTC RFC 3339 timestamp names, or None when it is not one (or no such date)."""
    if not UTC_TIMESTAMP_RX.fullmatch(value):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


@dataclass(frozen=True)
class Recurrence:
    """The RFC 5545 RRULEs this program reads: FREQ=DAILY, or FREQ=WEEKLY with BYDAY (the forms
    GKE's docs and gcloud's examples use). `days` are weekday numbers, Monday 0."""

    freq: str
    days: tuple[int, ...]


def parse_recurrence(text: str, start: datetime) -> Recurrence | str:
    """The recurrence, or why this program cannot read it."""
    parts: dict[str, str] = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if not sep or not key or key in parts:
            return f"{text!r} is not an RRULE of KEY=VALUE parts separated by ';' (e.g. FREQ=WEEKLY;BYDAY=SA,SU)"
        parts[key] = value
    freq = parts.pop("FREQ", None)
    byday = parts.pop("BYDAY", None)
    if freq not in ("DAILY", "WEEKLY") or parts or (byday is not None and freq != "WEEKLY"):
        return (
            f"{text!r}: this program reads FREQ=DAILY and FREQ=WEEKLY;BYDAY=<days> recurrences, the forms it can "
            "check GKE's 48-hours-in-92-days rule on; write the window in one of them"
        )
    if freq == "DAILY":
        return Recurrence("DAILY", tuple(range(7)))
    if byday is None:
        return Recurrence("WEEKLY", (start.weekday(),))
    days = byday.split(",")
    unknown = [d for d in days if d not in WEEKDAYS]
    if unknown or len(set(days)) != len(days):
        return f"BYDAY={byday}: list each day once, as {', '.join(WEEKDAYS)}"
    return Recurrence("WEEKLY", tuple(sorted(WEEKDAYS.index(d) for d in days)))


def _runs(start: datetime, length: timedelta, rule: Recurrence, days: int) -> list[tuple[datetime, datetime]]:
    """The window's occurrences over `days` days from its start, merged where they touch."""
    runs: list[tuple[datetime, datetime]] = []
    for k in range(days):
        begin = start + timedelta(days=k)
        if begin.weekday() not in rule.days:
            continue
        end = begin + length
        if runs and begin <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
        else:
            runs.append((begin, end))
    return runs


def least_availability(start: datetime, end: datetime, rule: Recurrence) -> timedelta:
    """The least maintenance time any AVAILABILITY_PERIOD gives, counting only contiguous stretches
    of at least 4 hours (GKE's rule). The pattern repeats weekly, so spans starting in one week
    (after the first, away from the start's edge) cover every case; the total is piecewise
    linear in the span's start, so its least value is at a span edge meeting a stretch's edge."""
    period = AVAILABILITY_PERIOD
    # Only the weekday, the time of day and the length matter: move the start to a week far from
    # datetime's year 1 and 9999 edges, and cap the length where it covers every span anyway
    # (occurrences are at most 7 days apart), so no date a stack can hold overflows.
    length = min(end - start, period + timedelta(days=8))
    start = _REFERENCE_MONDAY + timedelta(days=start.weekday(), hours=start.hour, minutes=start.minute, seconds=start.second)
    end = start + length
    runs = [r for r in _runs(start, end - start, rule, 7 + period.days + 14) if r[1] - r[0] >= CONTIGUOUS_MIN]
    first, last = start + timedelta(days=7), start + timedelta(days=14)
    candidates = {first, last}
    for edge in (t for run in runs for t in run):
        for t in (edge, edge - period):
            if first <= t <= last:
                candidates.add(t)

    def total(t: datetime) -> timedelta:
        stop = t + period
        return sum((min(e, stop) - max(s, t) for s, e in runs if s < stop and e > t), timedelta())

    return min(total(t) for t in candidates)


def describe_recurrence(rule: Recurrence) -> str:
    if rule.freq == "DAILY" or len(rule.days) == 7:
        return "every day"
    return ", ".join(WEEKDAY_NAMES[d] for d in rule.days)


def days(span: timedelta) -> str:
    return f"{span.days} days"


def hours(span: timedelta) -> str:
    h = span.total_seconds() / 3600
    return f"{h:g} h"


def crowded_no_upgrades(spans: list[tuple[datetime, datetime]]) -> list[int] | None:
    """The indexes (into `spans`, each a NO_UPGRADES exclusion's start and end) of more than
    NO_UPGRADES_PER_SPAN exclusions that all reach into one 32-day span, or None. A span holding
    the most can be slid right until its start meets the earliest end among them, so it is enough
    to try the spans that start at each exclusion's end. Differences, not sums: an exclusion may
    end in datetime's last month (9999-12), where end + 32 days overflows."""
    for end in sorted({e for _, e in spans}):
        inside = [i for i, (s, e) in enumerate(spans) if e >= end and s - end < NO_UPGRADES_SPAN]
        if len(inside) > NO_UPGRADES_PER_SPAN:
            return sorted(inside, key=lambda i: (spans[i][0], i))
    return None
