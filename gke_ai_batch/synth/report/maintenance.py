"""The report's Maintenance section: when GKE may disrupt nodes (the window), when it may not
(the exclusions and what each excludes), and per pool how an upgrade replaces nodes and whether
GKE repairs them. Read from the config and the planned NodePool arguments; no date is compared
with today, so the section is the same on every run."""

from __future__ import annotations

from gke_ai_batch.domain import maintenance as mx

from .md import DASH, code, table

GUIDE = "docs/maintenance.md"


def section(plan) -> list[str]:
    c = plan.config.cluster
    if c.existing:
        return [
            f"Existing cluster `{c.name}`: its maintenance window and exclusions are set where the cluster is "
            "managed, and this stack does not change them.",
            *_pools(plan),
        ]
    policy = c.maintenance
    if policy is None:
        lines = [
            "⚠️ No maintenance window or exclusion: GKE may upgrade the control plane and every node at any time "
            "(node auto-upgrade stays on in a release channel), and an upgrade kills the multi-host TPU or GPU job "
            f"on the node. Set `cluster.maintenance` ({GUIDE})."
        ]
    else:
        lines = [_window(policy), "", *_exclusions(policy)]
    lines += [
        "",
        "Outside GKE's policy: Compute Engine host maintenance of TPU and GPU VMs (they do not live-migrate), "
        "auto-repair, and upgrades GKE forces at a version's end of support.",
    ]
    return lines + _pools(plan)


def _window(policy) -> str:
    if policy.window is None:
        return (
            f"GKE may upgrade, and so disrupt nodes, daily from {policy.daily_start} UTC, for a length GKE "
            "chooses, and at no other time."
        )
    w = policy.window
    found = w.availability
    assert not isinstance(found, str), found  # a window whose RRULE is refused never renders
    words = mx.describe_recurrence(w.recurrence)
    when = (
        f"{words} from {w.starts:%H:%M} UTC for {mx.hours(w.ends - w.starts)} (`{w.recurrence}`, first {w.start})"
        if words is not None
        else f"each occurrence of `{w.recurrence}` (first {w.start}, UTC), for {mx.hours(w.ends - w.starts)}"
    )
    return (
        f"GKE may upgrade, and so disrupt nodes, only in the window: {when}; at least "
        f"{mx.hours(found.least)} in any {mx.days(mx.AVAILABILITY_PERIOD)} (GKE requires {mx.hours(mx.AVAILABILITY_MIN)})."
    )


def _exclusions(policy) -> list[str]:
    if not policy.exclusions:
        return ["No exclusion: every window is open to every upgrade."]
    rows = [
        [
            code(e.name),
            e.start,
            e.end or "end of support of the cluster's minor version",
            code(e.scope),
            mx.EXCLUSION_SCOPES[e.scope],
            "no" if e.scope in mx.NODE_UPGRADES_EXCLUDED else "yes (patch upgrades)",
        ]
        for e in sorted(policy.exclusions, key=lambda e: (e.start, e.name))
    ]
    return [
        "Exclusions (dates in UTC; an exclusion whose end has passed protects nothing: renew it):",
        "",
        *table(["exclusion", "from", "until", "scope", "GKE does not do", "nodes upgraded in it"], rows),
    ]


def _pools(plan) -> list[str]:
    if not plan.pools:
        return []
    rows = [[code(p.name), p.capacity, _strategy(p), _on(p.args["management"]["auto_upgrade"]),
             _on(p.args["management"]["auto_repair"])] for p in plan.pools]
    return ["", *table(["pool", "capacity", "node upgrade", "auto-upgrade", "auto-repair"], rows)]


def _strategy(pool) -> str:
    settings = pool.args.get("upgrade_settings")
    if pool.args.get("queued_provisioning") or pool.args["node_config"].get("flex_start"):
        # GKE docs concepts/node-pool-upgrade-strategies: flex-start and queued nodes get GKE's
        # short-lived upgrades.
        return "short-lived (GKE's: nodes are not upgraded in place)"
    if settings is None:
        return "surge, 1 extra node, 0 unavailable (GKE's default)"
    if settings["strategy"] == "SURGE":
        return f"surge, {settings['max_surge']} extra, {settings['max_unavailable']} unavailable"
    soak = settings["blue_green_settings"].get("node_pool_soak_duration")
    return f"blue-green, old nodes kept {soak or 'for GKE’s default soak'}"


def _on(value: bool) -> str:
    return "on" if value else "off" if value is False else DASH
