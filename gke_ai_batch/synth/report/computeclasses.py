"""The report's Compute classes section: each custom ComputeClass's priorities in the order GKE
tries them, what a node of each holds and its capacity type, and the flavors that select the
class. Read from the config and the plan; the capacity a flavor stands for is the model's
(gke_ai_batch/model/computeclass.py), so the waits and advisories agree with it."""

from __future__ import annotations

from .md import code, codes, table

GUIDE = "docs/capacity-fallback.md"


def section(plan) -> list[str]:
    cfg = plan.config
    flavors = {}
    for f in cfg.flavors or []:
        if f.compute_class is not None:
            flavors.setdefault(f.compute_class, []).append(f.name)
    rows = []
    for cc in cfg.compute_classes:
        for i, p in enumerate(cc.priorities):
            rows.append([
                code(cc.name) if i == 0 else "",
                i + 1,
                _shape(p),
                p.capacity + (f" ({code(p.reservation)})" if p.reservation else ""),
                codes(flavors.get(cc.name, [])) if i == 0 else "",
            ])
    mode = "GKE creates node pools for each class" if cfg.cluster.standard else "Autopilot creates nodes for each class"
    notes = [
        f"{mode} in priority order: when it cannot get a priority's capacity it tries the next "
        f"({GUIDE}). A flavor's capacity types are those of its class's priorities.",
    ]
    for cc in cfg.compute_classes:
        if cc.when_unsatisfiable == "ScaleUpAnyway":
            notes.append(f"{code(cc.name)}: whenUnsatisfiable ScaleUpAnyway, so GKE may create nodes outside its priorities.")
    return [*table(["class", "priority", "nodes", "capacity", "flavors"], rows, ["l", "r", "l", "l", "l"]), "", *notes]


def _shape(p) -> str:
    if p.tpu is not None:
        s = p.tpu.slice
        return f"TPU {s.accelerator} {s.topology} ({s.machine_type}, {s.vms} VM{'s' if s.vms > 1 else ''})"
    if p.gpu is not None:
        return f"{p.gpu.count} × {p.gpu.type} on {p.node_machine_type}"
    return str(p.machine_type)
