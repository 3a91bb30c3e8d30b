"""`gke-ai-batch:cluster.maintenance`: when GKE may disrupt nodes (a recurring or daily window)
and when it may not (exclusions, each with its scope). The facts and limits live in
gke_ai_batch/domain/maintenance.py; this module checks a stack's policy against them.

No rule here reads today's date: a stack that synthesizes today synthesizes next year. An
exclusion whose end has passed is GKE's to ignore, and the report lists every exclusion with its
dates so a reviewer sees the stale ones."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Iterator, Literal

from dateutil import rrule
from pydantic import AfterValidator, Field, model_validator

from gke_ai_batch.domain import maintenance as mx
from gke_ai_batch.config.base import Model, RuleError, duration_seconds, raise_all

Scope = Literal[tuple(mx.EXCLUSION_SCOPES)]  # type: ignore[valid-type]


def check_utc_timestamp(value: str) -> str:
    if mx.parse_utc(value) is None:
        raise ValueError(
            f"{value!r} is not a UTC RFC 3339 timestamp such as 2026-01-03T00:00:00Z; GKE stores maintenance "
            "times in UTC, so another form would show as a change on every preview"
        )
    return value


def check_daily_start(value: str) -> str:
    if not mx.DAILY_START_RX.fullmatch(value):
        raise ValueError(f"{value!r} is not a time of day HH:MM in UTC (00:00 to 23:59), e.g. 03:00")
    return value


UtcTimestamp = Annotated[str, AfterValidator(check_utc_timestamp)]


def _days(span) -> str:
    return f"{span.days} days" if span == timedelta(days=span.days) else str(span)


# The Gregorian calendar repeats every 400 years (146,097 days, a whole number of weeks), and so
# does every RRULE's pattern of occurrences. The window is expanded 400-year cycles later (or
# earlier), in the last cycle before datetime's year 9999: dateutil iterates a rule that matches
# nothing until that year, and from there it has at most a cycle to go.
_CYCLE_YEARS = 400
_LAST_START_YEAR = 9999 - 10  # room for the analysed span and a capped occurrence length


@dataclass(frozen=True)
class Availability:
    """How much maintenance time the window's occurrences leave: `least` in any 92 days of the
    analysed span (domain/maintenance.py ANALYSIS_SPAN)."""

    least: timedelta


def _shifted(moment: datetime, years: int) -> datetime:
    return moment.replace(year=moment.year + years)


# Remembered: expanding a daily rule takes ~20 ms, and one stack's window is judged again each
# time its config is validated (the stack's checks, the program's load, every edit of a stack
# that keeps the window). The answer is immutable (a frozen dataclass or a message).
@functools.lru_cache(maxsize=256)
def availability(text: str, start: datetime, end: datetime) -> Availability | str:
    """The window's occurrences (the RFC 5545 RRULE `text`, first from `start`, each `end - start`
    long) judged by GKE's availability rule, or why GKE would not take the RRULE."""
    if not text or any(c in text for c in ":\r\n") or text.upper().startswith(("RRULE", "DTSTART")):
        return f"{text!r} is not an RRULE value: write its parts alone, e.g. FREQ=WEEKLY;BYDAY=SA,SU (start gives DTSTART)"
    parts = {p.partition("=")[0].upper() for p in text.split(";")}
    freq = next((p.partition("=")[2].upper() for p in text.split(";") if p.partition("=")[0].upper() == "FREQ"), None)
    if freq in mx.UNSUPPORTED_FREQS:
        return f"FREQ={freq}: GKE takes no HOURLY, MINUTELY or SECONDLY recurrence (GKE API RecurringTimeWindow); use DAILY or longer"
    if "BYEASTER" in parts:
        return "BYEASTER is python-dateutil's extension, not an RFC 5545 rule part"
    if {"COUNT", "UNTIL"} <= parts:
        return "give COUNT or UNTIL, not both (RFC 5545: they \"MUST NOT occur in the same 'recur'\")"
    years = (_LAST_START_YEAR - start.year) // _CYCLE_YEARS * _CYCLE_YEARS
    try:
        rule = rrule.rrulestr(text, dtstart=start)
        until = getattr(rule, "_until", None)
        if until is not None:
            # An UNTIL past year 9999 once shifted ends nothing in the analysed span; one before
            # year 1 ended before the start.
            shifted_year = until.year + years
            until = None if shifted_year > 9999 else start if shifted_year < 1 else _shifted(until, years)
        rule = rule.replace(dtstart=_shifted(start, years), until=until)
    except (ValueError, TypeError, OverflowError, KeyError, IndexError) as e:
        return f"{text!r} is not an RFC 5545 RRULE: {e}"
    first = _shifted(start, years)
    span = mx.ANALYSIS_SPAN + mx.AVAILABILITY_PERIOD
    length = min(end - start, span)  # an occurrence longer than the span covers all of it
    starts = []
    try:
        for occurrence in rule:
            if occurrence >= first + span:
                break
            starts.append(occurrence)
            if len(starts) > mx.MAX_OCCURRENCES:
                return (
                    f"the RRULE opens the window more than {mx.MAX_OCCURRENCES:,} times in {mx.days(span)}, and GKE's "
                    "availability rule is checked here on at most that many: write it with fewer occurrences (one "
                    "longer window rather than many short ones)"
                )
    except (ValueError, OverflowError) as e:
        return f"{text!r} is not an RFC 5545 RRULE: {e}"
    runs = mx.merged_runs(starts, length)
    return Availability(mx.least_availability(runs, first, first + mx.ANALYSIS_SPAN))


class RecurringWindow(Model):
    """When GKE may upgrade and repair-by-upgrade: one recurring window (RFC 5545 RRULE, in UTC)."""

    start: UtcTimestamp
    """First occurrence's start, e.g. 2026-01-03T00:00:00Z; its time of day starts every occurrence."""
    end: UtcTimestamp
    """First occurrence's end; end - start is every occurrence's length."""
    recurrence: str
    """An RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=SA,SU or FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA,SU (days in
    UTC; not HOURLY, MINUTELY or SECONDLY)."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        start, end = mx.parse_utc(self.start), mx.parse_utc(self.end)
        if end <= start:
            yield RuleError("end", f"{self.end} is not after start {self.start}: the window would never open")
            return
        found = self.availability
        if isinstance(found, str):
            yield RuleError("recurrence", found)
            return
        if found.least < mx.AVAILABILITY_MIN:
            # GKE refuses a window that gives less than its availability rule (the source and
            # why 92 days rather than the 32 of earlier docs: gke_ai_batch/domain/maintenance.py).
            period = mx.days(mx.AVAILABILITY_PERIOD)
            yield RuleError(
                "recurrence",
                f"{mx.describe_recurrence(self.recurrence) or self.recurrence} for {mx.hours(end - start)} leaves "
                f"{mx.hours(found.least)} of maintenance in some {period}; GKE requires at least "
                f"{mx.hours(mx.AVAILABILITY_MIN)} in any {period}, counting only stretches of "
                f"{mx.hours(mx.CONTIGUOUS_MIN)} or more",
            )

    @property
    def availability(self) -> Availability | str:
        """The occurrences judged (or why the RRULE is refused); start and end are valid here."""
        return availability(self.recurrence, self.starts, self.ends)

    @property
    def starts(self) -> datetime:
        return mx.parse_utc(self.start)

    @property
    def ends(self) -> datetime:
        return mx.parse_utc(self.end)


class Exclusion(Model):
    """A one-off span in which GKE does not upgrade what `scope` names."""

    name: str = Field(min_length=1)
    """Unique among the exclusions (GKE keys them by name)."""
    scope: Scope
    """NO_UPGRADES, NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES (nodes stay as they are)."""
    start: UtcTimestamp
    end: UtcTimestamp | None = None
    """Exactly one of end and untilEndOfSupport."""
    until_end_of_support: bool = False
    """The exclusion lasts until the cluster's minor version leaves support, and renews with each minor."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        # "Exactly one of end_time and exclusion_options.end_time_behavior should be specified"
        # (pulumi-gcp ClusterMaintenancePolicyMaintenanceExclusion; GoogleCloudPlatform/
        # cluster-toolkit#4992 validates the same in modules/scheduler/gke-cluster).
        if (self.end is None) == (not self.until_end_of_support):
            yield RuleError(
                "end" if self.end is not None else (),
                "give exactly one of end and untilEndOfSupport: true (an exclusion ends at a time, or when the "
                "cluster's minor version leaves support)",
            )
        elif self.end is not None and mx.parse_utc(self.end) <= mx.parse_utc(self.start):
            yield RuleError("end", f"{self.end} is not after start {self.start}: the exclusion would exclude nothing")
        elif self.scope == mx.NO_UPGRADES and self.end is not None and self.ends - self.starts > mx.NO_UPGRADES_MAX:
            # gke_ai_batch/domain/maintenance.py NO_UPGRADES_MAX: the sources, and why 90 days.
            yield RuleError(
                "end",
                f"a NO_UPGRADES exclusion of {_days(self.ends - self.starts)}; GKE allows at most "
                f"{mx.NO_UPGRADES_MAX.days} days of NO_UPGRADES (it holds back security patches): end it sooner, or use "
                "NO_MINOR_OR_NODE_UPGRADES, which keeps the nodes as they are for longer and still patches the control plane",
            )

    @property
    def starts(self) -> datetime:
        return mx.parse_utc(self.start)

    @property
    def ends(self) -> datetime | None:
        return None if self.end is None else mx.parse_utc(self.end)


class MaintenancePolicy(Model):
    """GKE's maintenance policy for a cluster this program creates."""

    window: RecurringWindow | None = None
    """A recurring window; or dailyStart for GKE's daily window."""
    daily_start: Annotated[str, AfterValidator(check_daily_start)] | None = None
    """HH:MM UTC: a daily window of GKE's chosen length starting then."""
    exclusions: list[Exclusion] = []
    """Spans in which GKE upgrades nothing of the exclusion's scope (at most 20)."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        # One window, of one kind: terraform-provider-google's maintenance_policy has
        # ExactlyOneOf daily_maintenance_window / recurring_window
        # (google/services/container/resource_container_cluster.go).
        if (self.window is None) == (self.daily_start is None):
            yield RuleError(
                "window" if self.window is not None else (),
                "give exactly one of window (recurring) and dailyStart: GKE keeps one maintenance window per cluster",
            )
        if len(self.exclusions) > mx.EXCLUSIONS_MAX:
            yield RuleError("exclusions", f"{len(self.exclusions)} exclusions; GKE allows at most {mx.EXCLUSIONS_MAX} per cluster")
        seen: dict[str, int] = {}
        for i, exclusion in enumerate(self.exclusions):
            # The API's maintenanceExclusions is a map from name to time window (MaintenanceWindow
            # in the GKE REST reference): a second exclusion of one name would replace the first.
            if exclusion.name in seen:
                yield RuleError(
                    ("exclusions", i, "name"),
                    f"{exclusion.name!r} is also exclusions[{seen[exclusion.name]}]'s name; GKE keys exclusions by name",
                )
            seen.setdefault(exclusion.name, i)
        # gke_ai_batch/domain/maintenance.py NO_UPGRADES_PER_SPAN: at most three NO_UPGRADES
        # exclusions in any 32 days. One that lasts until end of support has no end this program
        # knows, and is left out.
        bounded = [
            (i, e) for i, e in enumerate(self.exclusions)
            if e.scope == mx.NO_UPGRADES and e.end is not None and e.ends > e.starts
        ]
        crowded = mx.crowded_no_upgrades([(e.starts, e.ends) for _, e in bounded])
        if crowded is not None:
            *earlier, last = [bounded[k] for k in crowded]
            yield RuleError(
                ("exclusions", last[0], "start"),
                f"{last[1].name!r} is a NO_UPGRADES exclusion within {mx.NO_UPGRADES_SPAN.days} days of "
                f"{', '.join(repr(e.name) for _, e in earlier)}; GKE allows at most {mx.NO_UPGRADES_PER_SPAN} "
                f"NO_UPGRADES exclusions in any {mx.NO_UPGRADES_SPAN.days} days",
            )


class UpgradeSettings(Model):
    """How GKE replaces a pool's nodes when it upgrades them (GKE docs
    concepts/node-pool-upgrade-strategies)."""

    strategy: Literal["surge", "blueGreen"] = "surge"
    """surge: a few nodes at a time; blueGreen: a second pool of new nodes, the old kept until soak ends."""
    max_surge: int | None = Field(None, ge=0)
    """surge: extra nodes GKE may create during the upgrade (each needs capacity: quota or reservation)."""
    max_unavailable: int | None = Field(None, ge=0)
    """surge: nodes that may be down at once."""
    soak: Annotated[int | str, AfterValidator(lambda v: duration_seconds(v))] | None = None
    """blueGreen: how long the old nodes stay after draining, e.g. '1h' (nodePoolSoakDuration)."""

    @model_validator(mode="after")
    def _rules(self):
        raise_all(self._problems())
        return self

    def _problems(self) -> Iterator[RuleError]:
        if self.strategy == "surge":
            if self.soak is not None:
                yield RuleError("soak", "soak is a blue-green setting; with strategy surge there is no old pool to keep")
            # pulumi-gcp NodePoolUpgradeSettings: "max_surge and max_unavailable must not be
            # negative and at least one of them must be greater than zero."
            if sum(self.surge) == 0:
                yield RuleError(
                    "maxSurge",
                    "maxSurge and maxUnavailable are both 0: GKE needs one of them above 0 to upgrade any node",
                )
        else:
            # The API's UpgradeSettings: "If the strategy is BLUE_GREEN, use blue_green_settings";
            # maxSurge and maxUnavailable are the surge strategy's (NodePool.UpgradeSettings).
            for key, alias in (("max_surge", "maxSurge"), ("max_unavailable", "maxUnavailable")):
                if getattr(self, key) is not None:
                    yield RuleError(alias, f"{alias} is a surge setting; blueGreen replaces the whole pool (use soak)")

    @property
    def surge(self) -> tuple[int, int]:
        """maxSurge and maxUnavailable as GKE applies them, unset ones at GKE's defaults (1 and 0:
        concepts/node-pool-upgrade-strategies, "Surge upgrades")."""
        return (1 if self.max_surge is None else self.max_surge, 0 if self.max_unavailable is None else self.max_unavailable)
