"""The cost table of the report and cost.json: what the recorded node pools cost at list price
(gke_ai_batch/domain/pricing.py), priced by the policy pack's own functions (policy/rules/cost.py),
so the report, the budget rule and a diff of two renders' cost.json agree."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.domain import price_table, pricing
from policy import rules
from policy.rules import cost

from .md import DASH, code, codes, table


def _usd(value: float | None) -> str:
    return DASH if value is None else f"${value:,.2f}"


def _unit_price(value: float) -> str:
    return f"${value:,.4f}"


def _flavor_usd(total: dict[str, Any], key: str) -> str:
    """A flavor whose pools are all unpriced (reserved) has no price, not $0."""
    return DASH if total[key] == 0 and total["unpriced"] else _usd(total[key])


def compute(result) -> dict[str, Any]:
    """cost.json: one entry per pool, totals per stack and per flavor, the table and overrides."""
    resources = [rules.Resource(r.urn, r.type, r.name, r.inputs, False) for r in result.recording.resources]
    config = result.config
    prices = dict(config.prices) if config is not None else {}
    budget = config.budget if config is not None else None
    costs = cost.stack_costs(resources, prices)
    return {
        "table": {"date": price_table.DATE, "source": price_table.SOURCE},
        "overrides": {k: prices[k] for k in sorted(prices)},
        "budget": budget,
        "hoursPer30Days": pricing.HOURS_PER_30_DAYS,
        "pools": [c.as_json() for c in costs],
        "total": pricing.total(costs).as_json(),
        "flavors": {name: t.as_json() for name, t in sorted(cost.flavor_costs(resources, costs).items())},
    }


def section(data: dict[str, Any]) -> list[str]:
    rows = []
    # A fleet has a pool of one name (system) in each cluster: name them by cluster then.
    several = len({p["cluster"] for p in data["pools"]}) > 1
    for p in data["pools"]:
        # A maximum not known before deploy (a pool with no size the recording tells) is a dash.
        size = DASH if p["maxNodes"] is None else (
            f"{p['minNodes']}-{p['maxNodes']}" if p["minNodes"] != p["maxNodes"] else str(p["maxNodes"]))
        note = p.get("reason") or p.get("basis") or ""
        if p.get("overrides"):
            note = (note + "; " if note else "") + f"override: {codes(p['overrides'])}"
        price = DASH if p["unitPrice"] is None else f"{_unit_price(p['unitPrice'])}/{p['unit']}"
        rows.append([code(f"{p['cluster']}/{p['pool']}" if several else p["pool"]), p["capacity"], price, size,
                     _usd(p["perHourMax"]), _usd(p["per30DaysMax"]), _usd(p["perHourMin"]), _usd(p["per30DaysMin"]), note])
    t = data["total"]
    rows.append(["**total**", "", "", "", _usd(t["perHourMax"]), _usd(t["per30DaysMax"]), _usd(t["perHourMin"]),
                 _usd(t["per30DaysMin"]), f"not priced: {codes(t['unpriced'])}" if t["unpriced"] else ""])
    lines = [
        f"List prices in USD of the price table of {data['table']['date']} ({data['table']['source']}), "
        f"{data['hoursPer30Days']} hours per 30 days; nodes only: no disks, network or cluster fee (docs/cost.md).",
        "", price_table.SPOT_NOTE,
    ]
    if data["overrides"]:
        lines += ["", "Overridden by `gke-ai-batch:prices`: "
                  + ", ".join(f"{code(k)} ${v:,.4f}" for k, v in data["overrides"].items()) + "."]
    if data["budget"] is not None:
        verdict = "over" if t["per30DaysMax"] > data["budget"] else "within"
        lines += ["", f"Budget: {_usd(data['budget'])} per 30 days at maximum size ({verdict} it)."]
    lines += ["", *table(
        ["pool", "capacity", "unit price", "nodes", "per hour (max)", "per 30 days (max)", "per hour (min)",
         "per 30 days (min)", "note"],
        rows, ["l", "l", "r", "r", "r", "r", "r", "r", "l"])]
    if data["flavors"]:
        lines += ["", *table(["flavor", "per hour (max)", "per 30 days (max)", "not priced"],
                             [[code(n), _flavor_usd(f, "perHourMax"), _flavor_usd(f, "per30DaysMax"), codes(f["unpriced"])]
                              for n, f in data["flavors"].items()], ["l", "r", "r", "l"])]
    return lines
