"""The admission model (gke_ai_batch/model) applied to the derived plan: the world a stack
builds (node pools as GKE labels and taints them, flavors, queues, teams) and a verdict for
every sample workload. `problems()` lists what could never run, as config errors with the key
path of the workload, queue or flavor to change."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import naming
from gke_ai_batch.model import NodeGroup, Verdict, World, judge, queue_problems, simulate, workload_from_manifests
from gke_ai_batch.model import selection
from gke_ai_batch.model.objects import ClusterQueue, Flavor
from gke_ai_batch.model.placement import checked_keys
from gke_ai_batch.config.stack import BUILTIN_NAMESPACES
from gke_ai_batch.plan import podsecurity
from gke_ai_batch.plan.flavors import allocatable


def node_groups(plan) -> list[NodeGroup]:
    cfg = plan.config
    groups = []
    entries = {e.name: e for e in cfg.node_pools}
    for p in plan.pools:
        entry = entries[p.entry]
        labels = naming.node_labels(entry, p.name)
        alloc = allocatable(p.machine_type, entry.gpu.count if entry.gpu is not None else 0)
        if p.tpu is not None:
            alloc[catalogue.TPU_RESOURCE] = p.tpu.chips_per_vm
        elif entry.gpu is not None:
            alloc[catalogue.GPU_RESOURCE] = entry.gpu.count
        groups.append(
            NodeGroup(
                name=p.name,
                labels=labels,
                taints=tuple(naming.pool_taints(entry)),
                allocatable=alloc,
                nodes=p.nodes,
                machine_type=p.machine_type,
                capacity=p.capacity,
                slice_hosts=p.tpu.vms if p.tpu is not None else None,
                zones=p.zones,
            )
        )
    if plan.system_pool is not None:
        node = plan.system_pool["node_config"]
        groups.append(
            NodeGroup(
                name=plan.system_pool["name"],
                labels={**node.get("labels", {}), catalogue.NODEPOOL_LABEL: plan.system_pool["name"]},
                taints=(),
                allocatable=allocatable(node["machine_type"]),
                nodes=plan.system_pool["autoscaling"]["total_max_node_count"],
                machine_type=node["machine_type"],
                capacity="onDemand",
            )
        )
    return groups


def world(plan) -> World:
    cfg = plan.config
    namespaces: dict[str, dict[str, str]] = {ns: {} for ns in BUILTIN_NAMESPACES}
    for m in [*plan.namespaces, *plan.namespace_patches]:
        namespaces[m["metadata"]["name"]] = dict(m["metadata"].get("labels") or {})
    return World(
        flavors={f.name: Flavor.from_manifest(f.manifest()) for f in plan.flavors},
        queues={q.name: ClusterQueue.from_manifest(q.manifest) for q in plan.queues},
        local_queues={(t.namespace, t.local_queue): t.cluster_queue for t in plan.teams},
        namespaces=namespaces,
        node_groups=tuple(node_groups(plan)),
        autopilot=not cfg.cluster.standard,
        auto_provisioning=cfg.cluster.auto_provisioning is not None,
        wait_for_pods_ready=bool(cfg.kueue.wait_for_pods_ready),
        priorities={p.name: p.value for p in plan.priorities},
    )


class Admission:
    """The model's answers for one plan, computed once and shared by the program's check and
    synth's report."""

    def __init__(self, plan):
        self.plan = plan
        self.world = world(plan)

    @cached_property
    def capacity_types(self) -> dict[str, set[str]]:
        entries = {e.name: e for e in self.plan.config.node_pools}
        return {f.name: {entries[e].capacity for e in f.entries} for f in self.plan.flavors}

    @cached_property
    def verdicts(self) -> list[Verdict]:
        out = []
        for w in self.plan.workloads:
            wl = workload_from_manifests(w.manifests)
            if wl is not None:
                out.append(judge(self.world, wl, self.capacity_types))
        return out

    @cached_property
    def at_once(self) -> dict[str, str]:
        return simulate(self.world, self.verdicts)

    def problems(self) -> list[tuple[str, str]]:
        return self._problems

    @cached_property
    def _problems(self) -> list[tuple[str, str]]:
        cfg = self.plan.config
        out: list[tuple[str, str]] = []
        index = {w.name: i for i, w in enumerate(cfg.workloads)}
        for v in self.verdicts:
            if v.admissible:
                continue
            wl = v.workload
            where = f"{wl.kind} {wl.namespace}/{wl.name}"
            if v.cluster_queue:
                where += f" (LocalQueue {wl.local_queue} → ClusterQueue {v.cluster_queue})"
            out.append((f"gke-ai-batch:workloads[{index[wl.name]}]", f"{where} can never run: {v.never}"))
        queues = {q.name: i for i, q in enumerate(cfg.cluster_queues)}
        for cq, key, reason in queue_problems(self.world):
            out.append((f"gke-ai-batch:clusterQueues[{queues[cq]}].{key}", reason))
        out += self._flavors_without_nodes()
        out += podsecurity.problems(self.plan)
        return out

    def _flavors_without_nodes(self) -> list[tuple[str, str]]:
        """A queue's flavor whose nodeLabels no node carries: Kueue admits onto it and the pods
        never schedule (only where GKE makes no nodes of its own)."""
        w = self.world
        if w.autopilot or w.auto_provisioning:
            return []
        out = []
        cfg = self.plan.config
        modelled = {k for g in w.node_groups for k in g.labels}
        # Per flavor, not per queue's use of it: many queues share a few flavors.
        has_nodes: dict[str, bool] = {}
        for i, cq in enumerate(cfg.cluster_queues):
            for j, name in enumerate(w.queues[cq.name].flavor_names):
                flavor = w.flavors.get(name)
                if flavor is None:
                    continue
                if name not in has_nodes:
                    spec = {"nodeSelector": dict(flavor.node_labels)}
                    keys = checked_keys(spec, modelled)
                    has_nodes[name] = any(selection.matches(spec, g.labels, keys=keys) for g in w.node_groups)
                if not has_nodes[name]:
                    labels = ", ".join(f"{k}={v}" for k, v in sorted(flavor.node_labels.items()))
                    out.append((
                        f"gke-ai-batch:clusterQueues[{i}].flavors[{j}]",
                        f"ResourceFlavor {name} selects nodes labelled {labels}, and no node pool's nodes carry "
                        "them: Kueue would admit work there that never schedules",
                    ))
        return out




