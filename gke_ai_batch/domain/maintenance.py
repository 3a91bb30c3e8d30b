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

import bisect
import re
from collections.abc import Iterable
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

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
WEEKDAY_NAMES = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")

# RecurringTimeWindow.recurrence is an RFC 5545 RRULE ("how frequently the window starts", e.g.
# FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR, or FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA,SU for the first weekend of
# every month): "The FREQ values of HOURLY, MINUTELY, and SECONDLY are not supported" (GKE API
# reference, RecurringTimeWindow). config/maintenance.py expands it (python-dateutil's rrule).
UNSUPPORTED_FREQS = ("HOURLY", "MINUTELY", "SECONDLY")
# The availability rule is judged on the occurrences of a bounded stretch, so that no RRULE (a
# huge COUNT, an UNTIL in year 9999, a rule that matches every minute or never) costs more than
# that: every 92-day span starting in the first ANALYSIS_SPAN of the window (four years, a whole
# leap-year cycle, in which monthly and yearly patterns show their widest gaps), with at most
# MAX_OCCURRENCES occurrences in it.
ANALYSIS_SPAN = timedelta(days=4 * 365 + 1)
MAX_OCCURRENCES = 50_000


def parse_utc(value: str) -> datetime | None:
    """The instant a UTC RFC 3339 timestamp names, or None when it is not one (or no such date)."""
    if not UTC_TIMESTAMP_RX.fullmatch(value):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def merged_runs(starts: Iterable[datetime], length: timedelta) -> list[tuple[datetime, datetime]]:
    """The stretches of maintenance time that occurrences starting at `starts` (ascending), each
    `length` long, make: occurrences that touch or overlap are one stretch."""
    runs: list[tuple[datetime, datetime]] = []
    for begin in starts:
        end = begin + length
        if runs and begin <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
        else:
            runs.append((begin, end))
    return runs


def least_availability(runs: list[tuple[datetime, datetime]], first: datetime, last: datetime) -> timedelta:
    """The least maintenance time any AVAILABILITY_PERIOD starting from `first` to `last` gives,
    counting only contiguous stretches of at least 4 hours (GKE's rule); `runs` are merged_runs,
    all that reach into those periods. The total is piecewise linear in the period's start, so its
    least value is at a period edge meeting a stretch's edge: those starts are tried."""
    period = AVAILABILITY_PERIOD
    runs = [r for r in runs if r[1] - r[0] >= CONTIGUOUS_MIN]
    begins = [s for s, _ in runs]
    ends = [e for _, e in runs]
    prefix = [timedelta()]
    for s, e in runs:
        prefix.append(prefix[-1] + (e - s))

    def total(t: datetime) -> timedelta:
        stop = t + period
        i = bisect.bisect_right(ends, t)  # the first stretch ending after t
        j = bisect.bisect_left(begins, stop)  # stretches from i to j-1 start before the period ends
        if i >= j:
            return timedelta()
        covered = prefix[j] - prefix[i]
        covered -= max(timedelta(), t - begins[i])
        covered -= max(timedelta(), ends[j - 1] - stop)
        return covered

    candidates = {first, last}
    for edge in (t for run in runs for t in run):
        for t in (edge, edge - period):
            if first <= t <= last:
                candidates.add(t)
    return min(total(t) for t in candidates)


def describe_recurrence(text: str) -> str | None:
    """The RRULE in words, for its common forms (FREQ=DAILY, FREQ=WEEKLY;BYDAY=...); None for
    another, which is shown as written."""
    parts = dict(p.partition("=")[::2] for p in text.split(";"))
    if parts == {"FREQ": "DAILY"}:
        return "every day"
    days = parts.pop("BYDAY", "").split(",")
    if parts == {"FREQ": "WEEKLY"} and days and all(d in WEEKDAYS for d in days) and len(set(days)) == len(days):
        return "every day" if len(days) == 7 else ", ".join(WEEKDAY_NAMES[WEEKDAYS.index(d)] for d in sorted(days, key=WEEKDAYS.index))
    return None


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
