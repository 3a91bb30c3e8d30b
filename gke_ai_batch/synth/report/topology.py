"""The report's Topology section: per TAS flavor, the levels of its Kueue Topology and the
domains its nodes make at each (how many, how many hosts each), and the samples that ask for a
domain. The domains are the admission model's (gke_ai_batch/model/topology.py), so the section
agrees with its verdicts."""

from __future__ import annotations

from gke_ai_batch.model import topology

from .md import code, table

GUIDE = "docs/batch-layer.md#topology-aware-scheduling"


def section(world, workloads) -> list[str]:
    rows = []
    for flavor in world.flavors.values():
        if flavor.topology_name is None:
            continue
        for i, d in enumerate(topology.domains(world, flavor)):
            count = "set by where GCE places the VMs" if d.count is None else str(d.count)
            hosts = f"at most {d.hosts}" if d.count is None else str(d.hosts)
            rows.append([code(flavor.name) if i == 0 else "", code(flavor.topology_name) if i == 0 else "", code(d.level), count, hosts])
    if not rows:
        return []
    asks = []
    for wl in workloads:
        for ps in wl.pod_sets:
            req = topology.request(ps)
            if req is not None:
                asks.append(f"- {code(wl.name)} ({ps.name}, {ps.count} pods): {req[0]} one {code(req[1])} domain.")
    return [
        *table(["flavor", "topology", "level", "domains", "hosts each"], rows, ["l", "l", "l", "r", "r"]),
        "",
        f"Kueue admits a pod set that requires a level only where one domain of it holds all its pods; a preferred "
        f"level is tried first, then the pods spread ({GUIDE}).",
        *([""] + asks if asks else []),
    ]
