"""The few lines synth prints: node pools with slices, VMs and accelerators."""

from __future__ import annotations

from .report.md import plural


def summary(stack: str, plan, fleet=None) -> str:
    """`fleet`: a fleet's pools are its workers' (`plan` is the manager's, which has none): each
    is listed as <worker>/<pool>, and the totals are the workers'."""
    if plan is None:
        return f"{stack}: nothing synthesized"
    pools = [(p, f"{w.name}/{p.name}") for w in fleet.workers for p in w.plan.pools] if fleet else [
        (p, p.name) for p in plan.pools]
    plans = [w.plan for w in fleet.workers] if fleet else [plan]
    workers = f" on {plural(len(fleet.workers), 'worker')}" if fleet else ""
    lines = [
        f"{stack}: {plural(len(pools), 'node pool')}{workers}, {plural(sum(p.slices for p in plans), 'TPU slice')}, "
        f"{plural(sum(p.vms for p in plans), 'VM')} at most, {plural(sum(p.tpu_chips for p in plans), 'TPU chip')}, "
        f"{plural(sum(p.gpus for p in plans), 'GPU')}"
    ]
    if pools:
        lines.append(f"  {'pool':<28} {'capacity':<11} {'machine':<20} {'shape':<10} {'VMs':>5} {'accelerators':>13}")
    for p, name in pools:
        shape = p.tpu.topology if p.tpu else ("gpu" if p.kind == "gpu" else "cpu")
        # An autoscaled pool keeps its floor (minNodes) even when idle: the report's "1..2".
        vms = f"{p.floor}-{p.nodes}" if p.autoscaled and p.floor != p.nodes else str(p.nodes)
        # PoolPlan.chips counts TPU chips of a TPU pool and GPUs of a GPU pool: say which.
        accelerators = plural(p.chips, "TPU chip") if p.tpu else plural(p.chips, "GPU") if p.kind == "gpu" else "-"
        lines.append(f"  {name:<28} {p.capacity:<11} {p.machine_type:<20} {shape:<10} {vms:>5} {accelerators:>13}")
    return "\n".join(lines)


def program_summary(stack: str, program: str, recording) -> str:
    """A program without a stack file (gke_ai_batch/synth/program.py): what it registered."""
    from gke_ai_batch.policy.rules.base import NODE_POOL

    pools = sum(1 for r in recording.resources if r.type == NODE_POOL)
    return f"{stack}: program {program}: {plural(len(recording.resources), 'resource')}, {plural(pools, 'node pool')}"
