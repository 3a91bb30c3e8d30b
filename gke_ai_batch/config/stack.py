"""StackConfig: every `gke-ai-batch:*` key of a stack. The rules that span keys are the checks
registered in gke_ai_batch/config/checks/, which its validator runs; `every_problem` runs those
that can run on a stack with shape errors."""

from __future__ import annotations

import difflib
import functools
from typing import Annotated, Any, Mapping

from pydantic import Field, ValidationError, ValidationInfo, create_model, model_validator

from gke_ai_batch.domain import naming, regions, versions
from gke_ai_batch.config import checks
from gke_ai_batch.config.base import Model, raise_all
from gke_ai_batch.config.batch import (
    ClusterQueueConfig,
    FlavorConfig,
    JobSetConfig,
    KueueConfig,
    PriorityConfig,
    TeamConfig,
)
from gke_ai_batch.config.catalogue import CatalogueOverride
from gke_ai_batch.config.computeclasses import MAX_CLASSES, ComputeClassConfig
from gke_ai_batch.config.errors import located_problems
from gke_ai_batch.config.checkpoints import CheckpointsConfig
from gke_ai_batch.config.cluster import ClusterConfig
from gke_ai_batch.config.fleet import FleetConfig, partial_fleet, worker_index
from gke_ai_batch.config.lookups import ClusterFacts, pool_zones
from gke_ai_batch.config.metrics import Collected, MetricsConfig, collected
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.config.topology import TopologyConfig
from gke_ai_batch.config.workloads import Workload

# Entries per list, checked before any rule walks them, so that a generated stack cannot make
# synth (or `pulumi up`) run for hours: far above any platform we know of (the largest seed
# stack has 4 pools, 9 teams), and each well within what one cluster's API server holds.
MAX_ENTRIES = {
    "nodePools": 500,
    "flavors": 500,
    "clusterQueues": 500,
    "teams": 1000,
    "priorities": 100,
    "workloads": 100,
    "prices": 500,
}


class StackConfig(Model):
    production: bool = False
    """Production stacks protect the cluster, every node pool and the node service account from deletion, and need private nodes and the control plane's DNS endpoint."""
    cluster: ClusterConfig
    node_pools: list[NodePoolConfig] = Field([], max_length=MAX_ENTRIES["nodePools"])
    compute_classes: list[ComputeClassConfig] = Field([], max_length=MAX_CLASSES)
    """GKE custom ComputeClasses: node shapes and capacity types tried in priority order
    (docs/capacity-fallback.md); a declared flavor selects one with computeClass."""
    topologies: list[TopologyConfig] = Field([], max_length=MAX_ENTRIES["flavors"])
    """Kueue Topologies for Topology-Aware Scheduling: node labels, widest domain first; a declared
    flavor names one with topologyName (docs/batch-layer.md, "Topology-aware scheduling")."""
    kueue: KueueConfig = KueueConfig()
    jobset: JobSetConfig = JobSetConfig()
    flavors: list[FlavorConfig] | None = Field(None, max_length=MAX_ENTRIES["flavors"])
    """Omit to derive one flavor per accelerator shape and capacity from the node pools."""
    cluster_queues: list[ClusterQueueConfig] = Field([], max_length=MAX_ENTRIES["clusterQueues"])
    teams: list[TeamConfig] = Field([], max_length=MAX_ENTRIES["teams"])
    priorities: list[PriorityConfig] = Field([], max_length=MAX_ENTRIES["priorities"])
    workloads: list[Workload] = Field([], max_length=MAX_ENTRIES["workloads"])
    fleet: FleetConfig | None = None
    """A MultiKueue fleet: `cluster` is then its manager (no nodePools) and the workers have the
    pools; teams, queues and priorities are declared once and mirrored on every cluster."""
    checkpoints: CheckpointsConfig | None = None
    """A checkpoint bucket per team namespace with Workload Identity access for the team's service account, and the
    Cloud Storage FUSE (and Managed Lustre) CSI drivers (docs/checkpoints.md)."""
    catalogue: CatalogueOverride = CatalogueOverride()
    """Zones, accelerators and GKE versions newer than the built-in catalogues
    (gke_ai_batch/domain/regions.py, gke_ai_batch/domain/versions.py); synth's report lists them."""
    budget: float | None = Field(None, gt=0, allow_inf_nan=False)
    """USD per 30 days with everything that can create nodes at its maximum size; the stack-budget policy reports a stack priced above it, or one with anything unpriced as unknown (docs/cost.md)."""
    prices: dict[str, Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field({}, max_length=MAX_ENTRIES["prices"])
    """Negotiated or missing list prices in USD, replacing the vendored table's for every capacity type: a TPU generation per chip-hour, a GPU type per GPU-hour, a machine type per node-hour without its GPUs, autopilot:RESOURCE per unit-hour of an Autopilot Pod request (docs/cost.md)."""
    metrics: MetricsConfig | None = None
    """Managed Prometheus collection of Kueue's and JobSet's metrics, GKE's DCGM (GPU) and TPU metrics and a Cloud Monitoring dashboard (docs/metrics.md). Unset: none."""

    @model_validator(mode="after")
    def _cross_references(self, info: ValidationInfo):
        # Every rule is checked and every broken one reported at once, in the order of the
        # stack's keys. A rule that needs another to hold (an offer check needs known zones, a
        # workload's pool checks need a known pool) skips the items that other rule refused,
        # so one mistake gives one message.
        raise_all(checks.stack_problems(self, checks.Context(project=(info.context or {}).get("project"))))
        return self

    # -- what the plan (and the checks) look up ----------------------------------------------

    @property
    def regions(self) -> regions.Catalogue:
        """The zone catalogue with this stack's override applied."""
        return self.catalogue.region_catalogue()

    @property
    def versions(self) -> versions.Versions:
        """The version catalogue with this stack's override applied."""
        return self.catalogue.version_catalogue()

    @property
    def facts(self) -> ClusterFacts:
        """What the rules about one entry need to know of the cluster (config/lookups.py)."""
        return ClusterFacts.of(self.cluster, self.catalogue)

    @property
    def collected(self) -> Collected | None:
        """The metrics key with its defaults resolved against the pools (None: no metrics)."""
        if self.metrics is None:
            return None
        kinds = {p.kind for p in self.node_pools}
        return collected(self.metrics, gpu_pools="gpu" in kinds, tpu_pools="tpu" in kinds, existing=self.cluster.existing)

    @property
    def manages_unqueued_jobs(self) -> bool:
        """kueue.manageJobsWithoutQueueName with its default resolved: on unless the cluster is
        an existing one, which other teams may share (docs/stacks.md, Existing clusters)."""
        stated = self.kueue.manage_jobs_without_queue_name
        return (not self.cluster.existing) if stated is None else stated

    def pool(self, name: str) -> NodePoolConfig:
        return next(p for p in self.node_pools if p.name == name)

    def team_queue(self, wl) -> TeamConfig:
        return next(
            t for t in self.teams if t.namespace == wl.team and (wl.local_queue in (None, t.local_queue))
        )

    def pool_zones(self, pool: NodePoolConfig) -> list[str]:
        """Zones a pool's nodes go to, where the stack says; [] means GKE's default."""
        return pool_zones(pool, self.facts)

    def pool_zone_count(self, pool: NodePoolConfig) -> int:
        """How many zones the pool's nodes spread over (GKE's default for a regional cluster
        without node locations: regions.DEFAULT_ZONES_PER_REGION)."""
        return len(self.pool_zones(pool)) or regions.DEFAULT_ZONES_PER_REGION

    def pool_max_nodes(self, pool: NodePoolConfig) -> int:
        """The most nodes an entry's pools can have: slices x VMs per slice, or maxNodes."""
        if pool.tpu is not None:
            return pool.slice_count * pool.tpu.slice.vms
        return pool.max_nodes or 0

    def flavor_names(self) -> list[str]:
        """Every flavor the stack has: declared, or derived from the node pools."""
        if self.flavors is not None:
            return [f.name for f in self.flavors]
        names: list[str] = []
        for pool in self.node_pools:
            name = naming.derived_flavor_name(pool)
            if name is not None and name not in names:
                names.append(name)
        return names

    def pool_flavor(self, pool: NodePoolConfig) -> str | None:
        """The flavor a pool's nodes belong to, declared or derived."""
        if self.flavors is None:
            return naming.derived_flavor_name(pool)
        return next((f.name for f in self.flavors if pool.name in f.pools), None)

    def uses_host_network(self, wl) -> bool:
        """Whether the workload's pods run on the host network: multi-host TPU slices on
        Standard, whose hosts talk over it (TPU runtime ports 8471/8431). Autopilot forbids
        hostNetwork, and GKE wires multi-host slices there itself."""
        if wl.pool is not None:
            tpu = self.pool(wl.pool).tpu
            return tpu is not None and tpu.slice.multi_host
        return wl.tpu is not None and wl.tpu.slice.multi_host and self.cluster.standard


def every_problem(exc: ValidationError, data: Mapping[str, Any], project: str | None) -> list[tuple[tuple, str]]:
    """Every problem of a stack StackConfig refused (`exc`), as (key path, message): its shape
    errors and, if it has any (the cross-key rules did not run), every rule that still can on
    the valid part (checks.partial_problems), each once, in the order of the stack's keys
    (within an entry, its own errors first)."""
    shape = located_problems(exc, StackConfig)
    if not any(err["loc"] for err in exc.errors()):
        return shape  # the rules ran: every key was valid
    cfg, holed = _valid_part(data, [loc for loc, _ in shape], {"project": project})
    found = shape + [(p.path, p.message) for p in checks.partial_problems(cfg, checks.Context(project=project), holed)]
    order = checks.stack_order(StackConfig)
    return sorted(dict.fromkeys(found), key=lambda problem: order(problem[0]))


def _valid_part(data: Mapping[str, Any], invalid: list[tuple], context: dict) -> tuple[StackConfig, dict[str, str]]:
    """The stack with each key that failed validation, and each invalid entry of a list, as
    checks.Unknown; and the lists with invalid entries (alias -> field name). A misspelt
    top-level key leaves the key it was meant to be unknown, if the stack leaves that out: the
    closest name, as the message's "did you mean" finds it (with none close, the key is taken
    as one the stack does not use, which the message says it is). A fleet's invalid workers
    are unknown each on its own (config/fleet.py partial_fleet)."""
    fields = {field.alias or name: name for name, field in StackConfig.model_fields.items()}
    unknown: set[str] = set()
    holes: dict[str, set[int]] = {}
    workers: set[int] = set()  # the fleet's invalid workers: each its own hole
    for loc in invalid:
        head = loc[0] if loc else None
        if head in fields:
            if len(loc) > 1 and isinstance(loc[1], int) and isinstance(data.get(head), list):
                holes.setdefault(head, set()).add(loc[1])
            elif head == "fleet" and (k := worker_index(loc, data.get(head))) is not None:
                workers.add(k)
            else:
                unknown.add(head)
        else:
            # The key it is closest to, as the message's "did you mean" finds it.
            meant = difflib.get_close_matches(str(head), list(fields), n=1)
            unknown.update(key for key in meant if key not in data)
    values: dict[str, Any] = {}
    for alias, name in fields.items():
        if alias in unknown:
            values[name] = checks.Unknown((alias,))
        elif alias == "fleet" and workers:
            values[name] = partial_fleet(data[alias], workers, context)
        elif alias in holes:
            values[name] = [
                checks.Unknown((alias, i)) if i in holes[alias] else _valid(name, e, context, (alias, i), entry=True)
                for i, e in enumerate(data[alias])
            ]
        else:
            values[name] = _valid(name, data.get(alias), context, (alias,))
    holed = {alias: fields[alias] for alias in holes if alias not in unknown}
    return StackConfig.model_construct(**values), holed


def _valid(name: str, value: Any, context: dict, where: tuple, entry: bool = False) -> Any:
    """One key's value (or, `entry`, one entry of its list) validated on its own, as
    StackConfig's field; None: the key is left out (or null), its default."""
    alias = StackConfig.model_fields[name].alias or name
    given = {alias: [value]} if entry else {} if value is None else {alias: value}
    try:
        valid = getattr(_key_model(name).model_validate(given, context=context), name)
    except ValidationError:
        return checks.Unknown(where)  # refused in the stack already
    return valid[0] if entry else valid


@functools.cache
def _key_model(name: str) -> type[Model]:
    """A model of StackConfig's one field `name`: the same type, constraints and default."""
    field = StackConfig.model_fields[name]
    definition: dict[str, Any] = {name: (field.annotation, field)}
    return create_model(f"StackConfig_{name}", __base__=Model, **definition)
