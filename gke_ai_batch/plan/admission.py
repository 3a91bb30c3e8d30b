"""The admission model applied to a plan: the plan's objects, in the shape the program
registers them, go through the one judge of registered resources
(gke_ai_batch/model/recorded.py), and each finding is placed at the stack-file key path of the
object it is about.

The stack program judges before anything is registered (a real `pulumi up` cannot record first
and refuse later), so it feeds the model what it is about to register: the NodePool arguments
as the provider receives them, the Cluster's, the Kueue release's values and every manifest.
synth's report reads this judgement; the policy pack's `kueue-admissible` runs the same judge
over what was recorded, for programs that have no stack file."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

from gke_ai_batch.domain import regions
from gke_ai_batch.domain.findings import Finding
from gke_ai_batch.domain.registered import CLUSTER, NODE_POOL, Registered
from gke_ai_batch.model import Verdict, World
from gke_ai_batch.model.facts import ClusterFacts
from gke_ai_batch.model.recorded import Judgement, Subject
from gke_ai_batch.plan import podsecurity
from gke_ai_batch.plan.kueue import KUEUE_CHART

KEY = "gke-ai-batch:"
# Map keys the provider passes through as they are (label keys, VM metadata), not property names.
_VERBATIM = ("labels", "metadata", "resource_labels")


@functools.cache
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def recorded_args(args: Any) -> Any:
    """snake_case resource arguments as the engine records them (camelCase property names)."""
    if isinstance(args, dict):
        return {_camel(k): (v if k in _VERBATIM else recorded_args(v)) for k, v in args.items()}
    if isinstance(args, list):
        return [recorded_args(v) for v in args]
    return args


def _k8s(manifest: dict[str, Any]) -> Registered:
    api, kind = manifest["apiVersion"], manifest["kind"]
    group_version = api if "/" in api else f"core/{api}"
    return Registered("", f"kubernetes:{group_version}:{kind}", manifest["metadata"]["name"], manifest)


def registered(plan, objects: Sequence[dict[str, Any]] = ()) -> list[Registered]:
    """What the stack program registers for the plan's cluster, as far as judging needs it;
    `objects`: manifests it registers beside the plan's (a fleet manager's MultiKueue objects)."""
    cfg = plan.config
    cluster = [] if cfg.cluster.existing else [Registered("", CLUSTER, cfg.cluster.name, recorded_args(plan.cluster_args))]
    where = {"cluster": cfg.cluster.name, "location": cfg.cluster.location, "project": plan.project}
    # In the order they are registered: the cluster's system pool with the cluster, then the groups.
    system = [] if plan.system_pool is None else [plan.system_pool]
    pools = [Registered("", NODE_POOL, p["name"], recorded_args({**where, **p})) for p in [*system, *(p.args for p in plan.pools)]]
    kueue = Registered("", "kubernetes:helm.sh/v3:Release", "kueue", {
        "chart": KUEUE_CHART, "version": cfg.kueue.version, "values": plan.kueue_values,
    })
    manifests = [
        *plan.compute_classes,
        *plan.topologies,
        *(f.manifest() for f in plan.flavors),
        *plan.provisioning,
        *objects,
        *(q.manifest for q in plan.queues),
        *plan.namespaces,
        *plan.namespace_patches,
        *(t.manifest for t in plan.teams),
        *(p.workload_priority_class for p in plan.priorities),
        *(m for w in plan.workloads for m in w.manifests),
    ]
    return [*cluster, *pools, kueue, *map(_k8s, manifests)]


def declared_cluster(plan) -> ClusterFacts | None:
    """An existing cluster's facts as the stack file declares them; None when the plan creates it."""
    c = plan.config.cluster
    if not c.existing:
        return None
    autopilot = not c.standard
    zones = len(c.node_locations) or (1 if regions.ZONE_RX.fullmatch(c.location) else regions.DEFAULT_ZONES_PER_REGION)
    return ClusterFacts(autopilot, autopilot or c.auto_provisioning is not None, zones)


def provenance(plan) -> dict[Subject, str]:
    """(kind, namespace, name) of each object a finding can be about -> the stack key it came from."""
    cfg = plan.config
    out: dict[Subject, str] = {}
    for i, w in enumerate(plan.workloads):
        for m in w.manifests:
            meta = m["metadata"]
            out[(m["kind"], meta.get("namespace") or "default", meta["name"])] = f"{KEY}workloads[{i}]"
    for i, q in enumerate(cfg.cluster_queues):
        out[("ClusterQueue", "", q.name)] = f"{KEY}clusterQueues[{i}]"
    return out


class Admission:
    """The model's answers for one plan, computed once and shared by the program's check and
    synth's report."""

    def __init__(self, plan, objects: Sequence[dict[str, Any]] = ()):
        self.plan = plan
        self.judgement = Judgement(registered(plan, objects), declared_cluster(plan))

    @property
    def world(self) -> World:
        return self.judgement.world

    @property
    def capacity_types(self) -> dict[str, set[str]]:
        return self.judgement.capacity_types

    @property
    def verdicts(self) -> list[Verdict]:
        return self.judgement.verdicts

    @property
    def at_once(self) -> dict[str, Finding | None]:
        return self.judgement.at_once

    def problems(self) -> list[Finding]:
        return self._problems

    @cached_property
    def _problems(self) -> list[Finding]:
        """The judgement's findings placed at the stack key of their object (the object itself
        when no key made it), then Pod Security admission's on the plan."""
        paths = provenance(self.plan)
        out = []
        for p in self.judgement.problems:
            path = paths.get(p.subject)
            out.append(p if path is None else replace(p, subject=None, path=path + (f".{p.path}" if p.path else "")))
        return out + podsecurity.problems(self.plan)
