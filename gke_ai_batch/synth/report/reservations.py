"""The report's Reservations section: per pool entry that consumes a reservation, which one and
how GKE consumes it, what happens when it has no room, and what the owner of a shared
reservation must grant before `pulumi up`. Read from the config (gke_ai_batch/config/reservations.py)
and the planned NodePool arguments; docs/capacity-types.md cites the sources."""

from __future__ import annotations

from gke_ai_batch.config.gcpnames import reservation_reference
from gke_ai_batch.config.reservations import spec_of

from .md import DASH, code, codes, table

GUIDE = "docs/capacity-types.md#reservations"


def section(plan) -> list[str]:
    """Nothing when no pool consumes a reservation."""
    cfg = plan.config
    entries = [e for e in cfg.node_pools if e.capacity == "reservation" and e.reservation is not None]
    if not entries:
        return []
    pools = {e.name: [p.name for p in plan.pools if p.entry == e.name] for e in entries}
    affinity = {p.entry: p.args["node_config"]["reservation_affinity"] for p in plan.pools if p.entry in pools}
    rows, notes = [], []
    for e in entries:
        spec = spec_of(e.reservation)
        args = affinity[e.name]
        declared = [f"{k} {v}" for k, v in (("zone", spec.zone), ("count", spec.count), ("machine type", spec.machine_type)) if v]
        rows.append(
            [
                code(e.name),
                codes(pools[e.name]),
                code(args["consume_reservation_type"]),
                code(args["values"][0]) if args.get("values") else DASH,
                _owner(spec, plan.project),
                "calendar mode" if spec.calendar else DASH,
                ", ".join(declared) or DASH,
                _when_full(spec),
            ]
        )
        if spec.affinity != "any" and spec.project is not None and spec.project != plan.project:
            notes.append(_sharing(spec, plan.project))
        if spec.calendar:
            notes.append(
                f"- {code(e.name)}: a future reservation in calendar mode ends on its own date: Compute Engine then "
                "deletes the reservation and the VMs consuming it, so a run must checkpoint before then."
            )
    lines = [
        f"Which reservation each pool's nodes consume and what GKE does when it has no room ({GUIDE}). "
        "A reservation is paid for whether or not a pool uses it and holds its own quota; a pool with "
        "ANY_RESERVATION pays on-demand prices and draws on-demand quota for the nodes no reservation has room for.",
        "",
        *table(
            ["entry", "pools", "affinity", "compute.googleapis.com/reservation-name", "owner project", "mode",
             "declared", "when it has no room"],
            rows,
        ),
    ]
    if notes:
        lines += ["", "**Before `pulumi up`:**", "", *notes]
    return lines


def _owner(spec, project: str) -> str:
    if spec.affinity == "any":
        return "any project that shares a matching one"
    if spec.project is None or spec.project == project:
        return f"{code(project)} (the cluster's)"
    return f"{code(spec.project)} (shared)"


def _when_full(spec) -> str:
    if spec.affinity == "any":
        return "on-demand VMs (on-demand price and quota)"
    where = "the block" if spec.block is not None else "the reservation"
    if spec.sub_block is not None:
        where = "the sub-block"
    return f"no node: {where} only, no on-demand fallback"


def _sharing(spec, project: str) -> str:
    ref = reservation_reference(spec.ref)
    zone = code(spec.zone) if spec.zone else "its zone"
    return (
        f"- {code(ref)}: project {code(spec.project)} must share reservation {code(spec.name)} ({zone}) with "
        f"{code(project)}: shareSettings shareType SPECIFIC_PROJECTS with {code(project)} among its projects "
        f"(`gcloud compute reservations update {spec.name} --project={spec.project} --zone={spec.zone or 'ZONE'} "
        f"--add-share-with={project}`), and {code(spec.project)} must be allowed to own shared reservations "
        "(organization policy `compute.sharedReservationsOwnerProjects`)."
    )
