"""The few lines synth prints: node pools with slices, VMs and chips."""

from __future__ import annotations


def summary(stack: str, plan, fleet=None) -> str:
    """`fleet`: a fleet's pools are its workers' (`plan` is the manager's, which has none): each
    is listed as <worker>/<pool>, and the totals are the workers'."""
    if plan is None:
        return f"{stack}: nothing synthesized"
    pools = [(p, f"{w.name}/{p.name}") for w in fleet.workers for p in w.plan.pools] if fleet else [
        (p, p.name) for p in plan.pools]
    plans = [w.plan for w in fleet.workers] if fleet else [plan]
    workers = f" on {len(fleet.workers)} workers" if fleet else ""
    lines = [
        f"{stack}: {len(pools)} node pools{workers}, {sum(p.slices for p in plans)} TPU slices, "
        f"{sum(p.vms for p in plans)} VMs at most, {sum(p.tpu_chips for p in plans)} TPU chips, "
        f"{sum(p.gpus for p in plans)} GPUs"
    ]
    if pools:
        lines.append(f"  {'pool':<28} {'capacity':<11} {'machine':<20} {'shape':<10} {'VMs':>5} {'chips':>6}")
    for p, name in pools:
        shape = p.tpu.topology if p.tpu else ("gpu" if p.kind == "gpu" else "cpu")
        vms = f"0-{p.nodes}" if p.autoscaled else str(p.nodes)
        lines.append(f"  {name:<28} {p.capacity:<11} {p.machine_type:<20} {shape:<10} {vms:>5} {p.chips:>6}")
    return "\n".join(lines)
