"""The few lines synth prints: node pools with slices, VMs and chips."""

from __future__ import annotations


def summary(stack: str, plan) -> str:
    if plan is None:
        return f"{stack}: nothing synthesized"
    lines = [
        f"{stack}: {len(plan.pools)} node pools, {plan.slices} TPU slices, "
        f"{plan.vms} VMs at most, {plan.tpu_chips} TPU chips, {plan.gpus} GPUs"
    ]
    if plan.pools:
        lines.append(f"  {'pool':<28} {'capacity':<11} {'machine':<20} {'shape':<10} {'VMs':>5} {'chips':>6}")
    for p in plan.pools:
        shape = p.tpu.topology if p.tpu else ("gpu" if p.kind == "gpu" else "cpu")
        vms = f"0-{p.nodes}" if p.autoscaled else str(p.nodes)
        lines.append(f"  {p.name:<28} {p.capacity:<11} {p.machine_type:<20} {shape:<10} {vms:>5} {p.chips:>6}")
    return "\n".join(lines)
