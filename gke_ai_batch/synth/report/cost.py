"""The cost table of the report and cost.json: what the recorded node pools cost at list price
(gke_ai_batch/domain/pricing.py), priced by the policy pack's own functions (gke_ai_batch/policy/rules/cost.py),
so the report, the budget rule and a diff of two renders' cost.json agree."""

from __future__ import annotations

from typing import Any

from gke_ai_batch.domain import price_table, pricing
from gke_ai_batch.policy.rules import cost

from .md import DASH, code, codes, table


def _usd(value: float | None) -> str:
    return DASH if value is None else f"${value:,.2f}"


def _unit_price(value: float) -> str:
    return f"${value:,.4f}"


def total_usd(total: dict[str, Any], key: str) -> str:
    """A sum that misses something unpriced is a floor ("≥"); with nothing priced at all (only
    unpriced or reserved items) it is no price, not $0."""
    if total[key] == 0 and (total["unpriced"] or total["reserved"]):
        return DASH
    return ("≥ " if total["unpriced"] else "") + _usd(total[key])


def _not_priced(total: dict[str, Any]) -> str:
    parts = []
    if total["unpriced"]:
        parts.append(f"not priced: {codes(total['unpriced'])}")
    if total["reserved"]:
        parts.append(f"paid by reservations: {codes(total['reserved'])}")
    return "; ".join(parts)


def _size(p: dict[str, Any]) -> str:
    if p.get("quota"):
        return ", ".join(f"{r} {v}" for r, v in p["quota"].items())
    # A maximum not known before deploy (a pool with no size the recording tells) is a dash.
    if p["maxNodes"] is None:
        return DASH
    return f"{p['minNodes']}-{p['maxNodes']}" if p["minNodes"] != p["maxNodes"] else str(p["maxNodes"])


# How the table names what is not a node pool.
_KIND = {pricing.COMPUTE_CLASS: "ComputeClass", pricing.AUTOPILOT: "Autopilot flavor"}


def compute(result) -> dict[str, Any]:
    """cost.json: one entry per pool, totals per stack and per flavor, the table and overrides."""
    # As the stack-budget policy sees them (outputs, providers, parents): an ExistingCluster's mode
    # is a registered output, and read from inputs its Autopilot flavors showed as $0.00.
    from gke_ai_batch.synth.policy import resources_of

    resources = resources_of(result.recording)
    config = result.config
    prices = dict(config.prices) if config is not None else {}
    budget = config.budget if config is not None else None
    costs = cost.stack_costs(resources, prices)
    total = pricing.total(costs)
    return {
        "table": {"date": price_table.DATE, "source": price_table.SOURCE},
        "overrides": {k: prices[k] for k in sorted(prices)},
        "budget": budget,
        "hoursPer30Days": pricing.HOURS_PER_30_DAYS,
        "pools": [c.as_json() for c in costs],
        "total": total.as_json(),
        "budgetVerdict": None if budget is None else pricing.judge_budget(total, budget).as_json(),
        "flavors": {name: t.as_json() for name, t in sorted(cost.flavor_costs(resources, costs).items())},
    }


def section(data: dict[str, Any]) -> list[str]:
    rows = []
    # A fleet has a pool of one name (system) in each cluster: name them by cluster then.
    several = len({p["cluster"] for p in data["pools"]}) > 1
    for p in data["pools"]:
        note = p.get("reason") or p.get("basis") or ""
        if p.get("overrides"):
            note = (note + "; " if note else "") + f"override: {codes(p['overrides'])}"
        price = DASH if p["unitPrice"] is None else f"{_unit_price(p['unitPrice'])}/{p['unit']}"
        name = f"{p['cluster']}/{p['pool']}" if several else p["pool"]
        kind = p.get("kind", pricing.NODE_POOL)
        label = code(name) + (f" ({_KIND[kind]})" if kind in _KIND else "")
        if kind == pricing.AUTO_PROVISIONING or (kind == pricing.AUTOPILOT and not p.get("flavors")):
            label = name  # not one object: node auto-provisioning, an Autopilot cluster's Pods
        rows.append([label, p["capacity"] or DASH, price, _size(p), _usd(p["perHourMax"]), _usd(p["per30DaysMax"]),
                     _usd(p["perHourMin"]), _usd(p["per30DaysMin"]), note])
    t = data["total"]
    rows.append(["**total**", "", "", "", total_usd(t, "perHourMax"), total_usd(t, "per30DaysMax"),
                 total_usd(t, "perHourMin"), total_usd(t, "per30DaysMin"), _not_priced(t)])
    lines = [
        f"List prices in USD of the price table of {data['table']['date']} ({data['table']['source']}), "
        f"{data['hoursPer30Days']} hours per 30 days; nodes only: no disks, network or cluster fee (docs/cost.md).",
        "", price_table.SPOT_NOTE,
    ]
    if data["overrides"]:
        lines += ["", "Overridden by `gke-ai-batch:prices`: "
                  + ", ".join(f"{code(k)} ${v:,.4f}" for k, v in data["overrides"].items()) + "."]
    if any(p.get("kind") == pricing.COMPUTE_CLASS and p["unitPrice"] is not None for p in data["pools"]):
        lines += ["", "A ComputeClass is priced at the class's limits (the nodes its flavors' queue quotas fill), "
                  "from its cheapest to its dearest priority: the totals and the budget take the dearest (its note "
                  "gives the cheapest)."]
    if any(p.get("kind") == pricing.AUTOPILOT for p in data["pools"]):
        lines += ["", "Autopilot bills the Pods that run: each flavor is priced with its queues' whole quota "
                  "requested; Pods outside Kueue's quotas (its and JobSet's controllers) are not counted."]
    if t["unpriced"]:
        lines += ["", f"**Not priced**: {codes(t['unpriced'])}. The totals miss them, so they are floors (≥); "
                  "each row's note says why."]
    verdict = data.get("budgetVerdict")
    if verdict is not None:
        state = verdict["verdict"]
        text = {pricing.OVER: "over it", pricing.WITHIN: "within it",
                pricing.UNKNOWN: "unknown: something that can create nodes is not priced; give its rates in "
                                 "`gke-ai-batch:prices`"}[state]
        lines += ["", f"Budget: {_usd(data['budget'])} per 30 days at maximum size ({text})."]
    lines += ["", *table(
        ["pool", "capacity", "unit price", "nodes", "per hour (max)", "per 30 days (max)", "per hour (min)",
         "per 30 days (min)", "note"],
        rows, ["l", "l", "r", "r", "r", "r", "r", "r", "l"])]
    if data["flavors"]:
        lines += ["", *table(["flavor", "per hour (max)", "per 30 days (max)", "not priced"],
                             [[code(n), total_usd(f, "perHourMax"), total_usd(f, "per30DaysMax"), _not_priced(f) or DASH]
                              for n, f in data["flavors"].items()], ["l", "r", "r", "l"])]
    return lines

