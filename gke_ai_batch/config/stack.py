"""StackConfig: every `gke-ai-batch:*` key of a stack, and the rules that span keys."""

from __future__ import annotations

import math
import re
from typing import Annotated, Iterator

from pydantic import Field, ValidationInfo, model_validator

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import kueue_releases

from gke_ai_batch.domain import naming

from gke_ai_batch.domain import quantity

from gke_ai_batch.domain import regions

from gke_ai_batch.domain import versions
from gke_ai_batch.config.base import Model, RuleError, raise_all
from gke_ai_batch.config.batch import (
    ClusterQueueConfig,
    FlavorConfig,
    JobSetConfig,
    KueueConfig,
    PriorityConfig,
    QuotaLimits,
    TeamConfig,
)
from gke_ai_batch.config.catalogue import CatalogueOverride
from gke_ai_batch.config.computeclasses import MAX_CLASSES, ComputeClassConfig, compute_class_problems
from gke_ai_batch.config.checkpoints import CheckpointsConfig, checkpoint_problems
from gke_ai_batch.config.cluster import ClusterConfig, region_of
from gke_ai_batch.config.fleet import FleetConfig, MultiKueueSettings, fleet_problems
from gke_ai_batch.config.gcpnames import is_project_id
from gke_ai_batch.config.metrics import Collected, MetricsConfig, collected, metrics_problems
from gke_ai_batch.config.pools import NodePoolConfig
from gke_ai_batch.config.reservations import zone_problems as reservation_zone_problems
from gke_ai_batch.config.topology import TopologyConfig, topology_problems
from gke_ai_batch.config.workloads import JobSetWorkload, JobWorkload, ProvisioningRequestWorkload, Workload

# GKE limits per cluster (https://cloud.google.com/kubernetes-engine/quotas, "Limits per
# cluster"): 1,000 nodes per node pool per zone; 15,000 nodes per Standard cluster (beyond 5,000
# needs a quota raise from support, which config cannot tell, so only 15,000 is refused).
NODES_PER_POOL_ZONE = 1000
NODES_PER_STANDARD_CLUSTER = 15000
# Kubernetes reserves these for itself: PriorityClass names starting with "system-"
# (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/#priorityclass),
# namespaces starting with "kube-"
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces).
# GKE owns gke-* and gmp-* namespaces (gke-managed-*, gke-gmp-system, gmp-system, gmp-public),
# and on Autopilot they and kube-system are managed namespaces in which GKE Warden denies
# users' writes (https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-security,
# "managed namespaces"; error "GKE Warden authz [denied by managed-namespaces-limitation]").
RESERVED_PRIORITY_PREFIX = "system-"
RESERVED_NAMESPACE_PREFIXES = {"kube-": "Kubernetes", "gke-": "GKE", "gmp-": "GKE (Managed Service for Prometheus)"}
# ResourceFlavor CRD (kueue.x-k8s.io_resourceflavors.yaml): nodeLabels maxProperties 8,
# tolerations maxItems 8.
KUEUE_FLAVOR_MAX_LABELS = 8
KUEUE_FLAVOR_MAX_TOLERATIONS = 8
RESOURCE_POLICY_NAME_MAX = 63
# The Pod Security admission labels (https://kubernetes.io/docs/concepts/security/pod-security-admission/).
POD_SECURITY_LABEL_PREFIX = "pod-security.kubernetes.io/"
# Namespaces the Helm releases create and own.
INSTALL_NAMESPACES = ("kueue-system", "jobset-system")
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


# The Kueue integrations behind the kinds the team Role may create (batch Jobs, JobSets).
TEAM_ROLE_FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset")


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
    """USD per 30 days with every pool at its maximum size; the stack-budget policy fails a stack priced above it (docs/cost.md)."""
    prices: dict[str, Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field({}, max_length=MAX_ENTRIES["prices"])
    """Negotiated or missing list prices in USD, replacing the vendored table's for every capacity type: a TPU generation per chip-hour, a GPU type per GPU-hour, a machine type per node-hour without its GPUs (docs/cost.md)."""
    metrics: MetricsConfig | None = None
    """Managed Prometheus collection of Kueue's and JobSet's metrics, GKE's DCGM (GPU) and TPU metrics and a Cloud Monitoring dashboard (docs/metrics.md). Unset: none."""

    @model_validator(mode="after")
    def _cross_references(self, info: ValidationInfo):
        # Every rule is checked and every broken one reported at once, in the order of the
        # stack's keys. A rule that needs another to hold (an offer check needs known zones, a
        # workload's pool checks need a known pool) skips the items that other rule refused,
        # so one mistake gives one message.
        project = (info.context or {}).get("project")
        raise_all(sorted(
            [*self._problems(), *self._check_networks(project), *checkpoint_problems(self, project)], key=_stack_order
        ))
        return self

    def _problems(self) -> Iterator[RuleError]:
        yield from self._check_production()
        yield from self._check_locations()
        yield from self._check_version()
        yield from self._check_kueue_release()
        yield from self._check_system_pool()
        yield from self._check_prices()
        yield from self._check_metrics()
        if self.fleet is not None and self.cluster.existing:
            # A fleet's manager is made with the kubeconfig Secrets and MultiKueue objects that
            # wait for its workers (gke_ai_batch/components/fleet): this program creates it.
            yield RuleError(("cluster", "existing"), "a fleet's manager is a cluster this program creates; remove existing")
        if self.fleet is not None:
            # Pools, flavors, queues and teams are checked per worker, each as a stack of its own.
            yield from fleet_problems(self, self.fleet)
            if self.compute_classes:
                # The manager creates and mirrors jobs; their pods run on the workers' nodes.
                yield RuleError("computeClasses", "a fleet's manager runs no pods, so no node of a compute class; remove computeClasses")
            return
        yield from self._check_pools()
        yield from self._check_node_limits()
        yield from compute_class_problems(self)
        yield from self._check_flavors()
        yield from self._check_queues()
        yield from self._check_teams()
        yield from self._check_priorities()
        yield from self._check_workloads()
        yield from topology_problems(self)

    # -- prices ------------------------------------------------------------------------------

    def _check_prices(self) -> Iterator[RuleError]:
        """A price names what the pricing prices (gke_ai_batch/domain/pricing.py): a rate for
        anything else would silently price nothing."""
        for name in self.prices:
            if name in catalogue.TPU_GENERATIONS or name in catalogue.GPU_TYPES:
                continue
            problem = self.catalogue.machine_type_problem(name)
            if problem:
                yield RuleError(
                    ("prices", name),
                    f"{name!r} is neither a TPU generation ({', '.join(catalogue.TPU_GENERATIONS)}), a GPU type "
                    f"({', '.join(catalogue.GPU_TYPES)}) nor a machine type: {problem}",
                )

    # -- metrics ------------------------------------------------------------------------------

    @property
    def collected(self) -> Collected | None:
        """The metrics key with its defaults resolved against the pools (None: no metrics)."""
        if self.metrics is None:
            return None
        kinds = {p.kind for p in self.node_pools}
        return collected(self.metrics, gpu_pools="gpu" in kinds, tpu_pools="tpu" in kinds, existing=self.cluster.existing)

    def _check_metrics(self) -> Iterator[RuleError]:
        if self.metrics is not None:
            yield from metrics_problems(self.metrics, self.collected, self._version_floor)

    def _check_networks(self, project: str | None) -> Iterator[RuleError]:
        """A network or subnetwork named without a project is one of the cluster's project:
        gcp:project, or a fleet worker's own (config.load passes gcp:project as the context). A
        project that is not a project id is refused on its own, so it implies nothing here."""
        project = project if is_project_id(project) else None
        problem = self.cluster.implied_project_problem(project)
        if problem:
            yield RuleError(("cluster", "subnetwork"), problem)
        for i, w in enumerate(self.fleet.workers if self.fleet else []):
            problem = w.cluster.implied_project_problem(w.project if is_project_id(w.project) else project)
            if problem:
                yield RuleError(("fleet", "workers", i, "cluster", "subnetwork"), f"worker {w.name}: {problem}")

    # -- production -------------------------------------------------------------------------

    def _check_production(self) -> Iterator[RuleError]:
        """Production clusters: nodes without public addresses, and the program (and people)
        reach the control plane through the IAM-authorized DNS endpoint (GKE docs
        concepts/network-isolation: "Use only the DNS-based endpoint to access your control
        plane"; CIS GKE Benchmark 5.6.4 and 5.6.5)."""
        if not self.production:
            return
        if not self.cluster.control_plane.dns_endpoint:
            yield RuleError(
                ("cluster", "controlPlane", "dnsEndpoint"),
                "a production cluster is reached through its DNS endpoint (IAM-authorized); set it true",
            )
        if not self.cluster.private_nodes:
            yield RuleError(
                ("cluster", "privateNodes"),
                "a production cluster's nodes have no public IP addresses; set privateNodes true (with Cloud NAT for egress)",
            )

    # -- catalogues ---------------------------------------------------------------------------

    @property
    def regions(self) -> regions.Catalogue:
        """The zone catalogue with this stack's override applied."""
        return self.catalogue.region_catalogue()

    @property
    def versions(self) -> versions.Versions:
        """The version catalogue with this stack's override applied."""
        return self.catalogue.version_catalogue()

    # -- locations ----------------------------------------------------------------------------

    def _check_locations(self) -> Iterator[RuleError]:
        """Regions and zones must exist (gke_ai_batch/domain/regions.py, or the stack's catalogue override)."""
        cat = self.regions
        location = self.cluster.location
        region = region_of(location)
        if not cat.has_region(region):
            yield RuleError(
                ("cluster", "location"),
                f"{region!r} is not a Google Cloud region this catalogue knows; known: "
                f"{', '.join(sorted(cat.regions))} (a newer one: add its zones under gke-ai-batch:catalogue.zones)",
            )
        yield from self._check_zone(("cluster", "location"), location)
        for i, zone in enumerate(self.cluster.node_locations):
            yield from self._check_zone(("cluster", "nodeLocations", i), zone)
        for i, zone in enumerate(self.cluster.auto_provisioning.locations if self.cluster.auto_provisioning else []):
            yield from self._check_zone(("cluster", "autoProvisioning", "locations", i), zone)
        copies = _copies(self.node_pools)
        for i, pool in enumerate(self.node_pools):
            for j, zone in enumerate(pool.zones if i not in copies else []):
                if region_of(zone) == region:
                    yield from self._check_zone(("nodePools", i, "zones", j), zone)

    def _check_zone(self, at: tuple, location: str) -> Iterator[RuleError]:
        cat = self.regions
        region = region_of(location)
        if region == location or region not in cat.regions:
            return  # a region (checked above), or a zone of another region (refused elsewhere)
        if cat.zone(location) is None:
            yield RuleError(
                at,
                f"{location!r} is not a zone of {region}; its zones: {', '.join(cat.zones_of(region))} "
                "(a newer one: add it under gke-ai-batch:catalogue.zones)",
            )

    def _cluster_zones(self) -> list[str]:
        """The zones the cluster names for its nodes ([] for a regional cluster without node
        locations: GKE picks them)."""
        if self.cluster.node_locations:
            return list(self.cluster.node_locations)
        location = self.cluster.location
        return [location] if region_of(location) != location else []

    def _zones_known(self, zones: list[str]) -> bool:
        """Whether the cluster's region and these zones passed _check_locations and the region
        check, so that what they offer can be looked up (else the offer checks stay quiet: the
        location is reported already)."""
        cat = self.regions
        region = region_of(self.cluster.location)
        return cat.has_region(region) and all(region_of(z) == region and cat.zone(z) is not None for z in zones)

    # -- versions -----------------------------------------------------------------------------

    def _check_version(self) -> Iterator[RuleError]:
        """minMasterVersion must be a minor the cluster's release channel offers."""
        version = self.cluster.min_master_version
        if version is None:
            return
        vers = self.versions
        channel = self.cluster.release_channel
        offered = vers.minors(channel)
        every = vers.all_minors()
        have = versions.minor_of(version)
        at = ("cluster", "minMasterVersion")
        if have > versions.minor_of(every[-1]):
            yield RuleError(
                at,
                f"GKE offers no {version} (newest minor as of {versions.CATALOGUE_DATE}: {every[-1]}, "
                f"{versions.SOURCE}); if it is newer than this catalogue, add it under "
                f"gke-ai-batch:catalogue.channels.{channel}.minors",
            )
        elif version not in offered:
            older = have < versions.minor_of(offered[0])
            yield RuleError(
                at,
                f"the {channel} channel does not offer {version}"
                + (" any more (below its oldest supported minor)" if older else "")
                + f"; it offers {', '.join(offered)} (as of {versions.CATALOGUE_DATE}, {versions.SOURCE})",
            )

    def _version_floor(self, at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
        if self.cluster.existing:
            yield from self._existing_version_floor(at, minimum, what)
            return
        if any(self._check_version()):
            return  # minMasterVersion is refused already; what it resolves to is moot
        version = self.cluster.min_master_version
        channel = self.cluster.release_channel
        vers = self.versions
        if vers.resolves_at_least(channel, version, minimum):
            return
        given = f"cluster.minMasterVersion {version!r} gives {vers.resolved_text(channel, version)}" if version else (
            f"without cluster.minMasterVersion the cluster gets {vers.resolved_text(channel, None)}"
        )
        later = [m for m in vers.minors(channel) if versions.minor_of(m) > versions.minor_of(minimum)]
        hint = f"set minMasterVersion to {later[0]!r}" if later else f"use a channel that offers a minor above {minimum}"
        yield RuleError(at, f"{what} need GKE {minimum} or later; {given}; {hint}")

    def _existing_version_floor(self, at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
        """An existing cluster's control plane runs the one patch it declares (cluster.version);
        GKE refuses a pool whose feature needs a later one (a pool's nodes take the control
        plane's version: REST NodePool.version, "If unspecified, it defaults" to it)."""
        version = self.cluster.version
        if version is None or not versions.PATCH_RX.fullmatch(version):
            return  # required, or refused as no exact version (ClusterConfig)
        if versions.patch_key(version) >= versions.patch_key(minimum):
            return
        yield RuleError(
            at,
            f"{what} need GKE {minimum} or later; the existing cluster runs {version} (cluster.version): "
            "upgrade its control plane first, then update cluster.version",
        )

    # -- the Kueue release ----------------------------------------------------------------------

    def _check_kueue_release(self) -> Iterator[RuleError]:
        yield from kueue_release_problems(self.kueue, self.fleet.multi_kueue if self.fleet is not None else None)
        for key, section in (("kueue", self.kueue), ("jobset", self.jobset)):
            if section.installed is not None and not self.cluster.existing:
                yield RuleError(
                    (key, "installed"),
                    "only on an existing cluster (cluster.existing): on a cluster this program creates, "
                    "nothing else has installed it; remove installed (the program installs version)",
                )

    # -- machine types ----------------------------------------------------------------------

    def _check_system_pool(self) -> Iterator[RuleError]:
        """Compute Engine creates no VM of a machine type it does not have; GKE refuses the pool."""
        system = self.cluster.system_pool
        if system is not None and self.cluster.standard:  # Autopilot's is refused as such
            problem = self.catalogue.machine_type_problem(system.machine_type)
            if problem:
                yield RuleError(("cluster", "systemPool", "machineType"), problem)

    # -- node pools -------------------------------------------------------------------------

    def _check_pools(self) -> Iterator[RuleError]:
        cluster = self.cluster
        if not cluster.standard and self.node_pools:
            yield RuleError(
                ("nodePools", 0),
                "Autopilot clusters have no node pools: GKE creates nodes for each workload's "
                "nodeSelector; remove nodePools or use mode standard",
            )
            return  # the pools' own rules are moot
        seen: dict[str, int] = {naming.SYSTEM_POOL: -1}
        copies = _copies(self.node_pools)
        for i, pool in enumerate(self.node_pools):
            for gke_name in pool.pool_names:
                if gke_name in seen:
                    other = "the system pool" if seen[gke_name] < 0 else f"nodePools[{seen[gke_name]}]"
                    yield RuleError(("nodePools", i, "name"), f"node pool {gke_name!r} is also made by {other}")
                    break
            for gke_name in pool.pool_names:
                seen.setdefault(gke_name, i)
            if i in copies:
                continue
            if pool.kind == "cpu" and pool.machine_type is not None:
                # GPU and TPU pools' machine types are checked against their accelerator already
                # (machines.check_gpu, catalogue.tpu_slice).
                problem = self.catalogue.machine_type_problem(pool.machine_type)
                if problem:
                    yield RuleError(("nodePools", i, "machineType"), problem)
            yield from self._check_pool_location(i, pool)
            yield from self._check_pool_versions(i, pool)
            if pool.capacity == "reservation" and pool.reservation is not None:
                for problem in reservation_zone_problems(pool, self.pool_zones(pool)):
                    yield RuleError(("nodePools", i, *problem.path), problem.message)

    def _check_pool_location(self, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
        region = region_of(self.cluster.location)
        outside = False
        for j, zone in enumerate(pool.zones):
            if region_of(zone) != region:
                yield RuleError(("nodePools", i, "zones", j), f"{zone} is not in the cluster's region {region}")
                outside = True
        if pool.tpu is not None and len(self.pool_zones(pool)) != 1:
            yield RuleError(
                ("nodePools", i, "zones"),
                "a TPU slice lives in exactly one zone: list one zone here (or give the cluster a "
                "single node location)",
            )
            return
        if not outside and self._zones_known(self.pool_zones(pool)):
            yield from self._check_pool_offer(i, pool)

    def _check_pool_offer(self, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
        """The pool's accelerator must be offered in its zones (gke_ai_batch/domain/regions.py)."""
        cat = self.regions
        region = region_of(self.cluster.location)
        zones = self.pool_zones(pool)
        if pool.tpu is not None:
            where = ("nodePools", i, "zones") if pool.zones else ("cluster", "nodeLocations")
            version = pool.tpu.version
            offering = cat.tpu_zones(region, version)
            zone = zones[0]
            if zone not in offering:
                yield RuleError(
                    (*where, 0) if pool.zones else ("nodePools", i, "tpu", "version"),
                    f"GKE offers TPU {version} in {region} only in {', '.join(offering) or 'no zone'}, "
                    f"not in {zone}" + _override_hint(zone),
                )
        elif pool.gpu is not None:
            gpu = pool.gpu.type
            offering = cat.gpu_zones(region, gpu)
            if not zones:
                if not offering:
                    yield RuleError(
                        ("nodePools", i, "gpu", "type"),
                        f"GKE offers {gpu} in no zone of {region} (the cluster names no node locations, "
                        "so GKE picks the zones; at least one must offer it)" + _override_hint(region),
                    )
                return
            for j, zone in enumerate(zones):
                if zone not in offering:
                    at = ("nodePools", i, "zones", j) if pool.zones else ("nodePools", i, "gpu", "type")
                    via = "" if pool.zones else " (the pool takes the cluster's nodeLocations)"
                    yield RuleError(
                        at,
                        f"GKE offers {gpu} in {region} only in {', '.join(offering) or 'no zone'}, not in "
                        f"{zone}{via}; every zone of a GPU pool must offer it" + _override_hint(zone),
                    )
                    if not pool.zones:
                        return  # one key (gpu.type) for all the cluster's zones: one message

    def _check_pool_versions(self, i: int, pool: NodePoolConfig) -> Iterator[RuleError]:
        # Checked against what the cluster's minor alias (or its channel's default) resolves to:
        # gke_ai_batch/domain/versions.py explains how.
        if pool.capacity == "flexStart":
            yield from self._version_floor(
                ("nodePools", i, "capacity"), versions.FLEX_START_MIN[pool.kind], f"flexStart {pool.kind.upper()} pools"
            )
        if pool.tpu is None:
            return
        gen = catalogue.TPU_GENERATIONS[pool.tpu.version]
        if gen.min_gke_version is not None:
            yield from self._version_floor(("nodePools", i, "tpu", "version"), gen.min_gke_version, f"{gen.version} pools")
        if gen.workload_policy:
            name = naming.workload_policy_name(self.cluster.name, pool.name)
            if pool.tpu.slice.multi_host and len(name) > RESOURCE_POLICY_NAME_MAX:
                yield RuleError(
                    ("nodePools", i, "name"),
                    f"the {gen.version} workload policy {name!r} would exceed {RESOURCE_POLICY_NAME_MAX} "
                    "characters; shorten the cluster or pool name",
                )

    def pool_zones(self, pool: NodePoolConfig) -> list[str]:
        """Zones a pool's nodes go to, where the stack says; [] means GKE's default."""
        if pool.zones:
            return list(pool.zones)
        return self._cluster_zones()

    def pool_zone_count(self, pool: NodePoolConfig) -> int:
        """How many zones the pool's nodes spread over (GKE's default for a regional cluster
        without node locations: regions.DEFAULT_ZONES_PER_REGION)."""
        return len(self.pool_zones(pool)) or regions.DEFAULT_ZONES_PER_REGION

    def pool_max_nodes(self, pool: NodePoolConfig) -> int:
        """The most nodes an entry's pools can have: slices x VMs per slice, or maxNodes."""
        if pool.tpu is not None:
            return pool.slice_count * pool.tpu.slice.vms
        return pool.max_nodes or 0

    def _check_node_limits(self) -> Iterator[RuleError]:
        """GKE's node limits (NODES_PER_POOL_ZONE, NODES_PER_STANDARD_CLUSTER)."""
        total = 0
        over = False
        copies = _copies(self.node_pools)
        for i, pool in enumerate(self.node_pools):
            # A TPU slice's size is a topology GKE itself offers ("Plan TPUs in GKE" lists v5p up
            # to 16x16x24, 1,536 VMs in one pool): the per-pool limit would refuse documented
            # shapes, so it applies to GPU and CPU pools only.
            if pool.tpu is None and i not in copies:
                zones = self.pool_zone_count(pool)
                if pool.max_nodes is not None and pool.max_nodes > NODES_PER_POOL_ZONE * zones:
                    over = True
                    yield RuleError(
                        ("nodePools", i, "maxNodes"),
                        f"maxNodes {pool.max_nodes} over {zones} zone{'s' if zones > 1 else ''} exceeds GKE's "
                        f"{NODES_PER_POOL_ZONE} nodes per node pool per zone (at most "
                        f"{NODES_PER_POOL_ZONE * zones} here)",
                    )
            total += self.pool_max_nodes(pool)
        system = self.cluster.system
        if system is not None:
            total += system.max_nodes
        # A pool over its own limit is reported already, and the total it makes is moot.
        if total > NODES_PER_STANDARD_CLUSTER and not over:
            parts = ", ".join(
                f"{p.name} {self.pool_max_nodes(p)}" for p in self.node_pools
            ) + (f", system {system.max_nodes}" if system is not None else "")
            yield RuleError(
                "nodePools",
                f"the pools can grow to {total} nodes ({parts}); a GKE Standard cluster has at most "
                f"{NODES_PER_STANDARD_CLUSTER}",
            )

    # -- flavors ----------------------------------------------------------------------------

    def _check_flavors(self) -> Iterator[RuleError]:
        yield from self._check_flavor_references()
        yield from self._check_flavor_limits()

    def _unknown_pools(self, flavor: FlavorConfig) -> list[str]:
        """The pools a declared flavor names that the stack does not have."""
        names = {p.name for p in self.node_pools}
        return [p for p in flavor.pools if p not in names]

    def _check_flavor_references(self) -> Iterator[RuleError]:
        if self.flavors is None:
            # With node pools listed, "Autopilot has no node pools" is the message (and this one's
            # "no node pools to derive them from" would not be true yet).
            if not self.cluster.standard and self.cluster_queues and not self.node_pools:
                yield RuleError(
                    "flavors",
                    "Autopilot stacks declare their flavors (there are no node pools to derive them from)",
                )
            return
        pools = {p.name: p for p in self.node_pools}
        owner: dict[str, int] = {}
        names: set[str] = set()
        copies = _copies(self.flavors)
        for i, flavor in enumerate(self.flavors):
            if flavor.name in names:
                yield RuleError(("flavors", i, "name"), f"flavor {flavor.name!r} is declared twice")
            names.add(flavor.name)
            if i in copies:
                continue
            for j, pool_name in enumerate(flavor.pools):
                if pool_name not in pools:
                    yield RuleError(
                        ("flavors", i, "pools", j),
                        f"unknown node pool {pool_name!r}; known: {_known(pools)}",
                    )
                elif pool_name in owner:
                    if self.flavors[owner[pool_name]].name == flavor.name:
                        continue  # the same flavor declared twice: that is the one message
                    yield RuleError(
                        ("flavors", i, "pools", j),
                        f"pool {pool_name!r} already belongs to flavors[{owner[pool_name]}]",
                    )
                else:
                    owner[pool_name] = i
            if self._unknown_pools(flavor):
                continue  # what the flavor's pools are is unknown: the rules below would guess
            members = [pools[p] for p in flavor.pools]
            if len({p.kind for p in members}) > 1:
                yield RuleError(("flavors", i, "pools"), "a flavor's pools must all be TPU, all GPU or all CPU")
            if len({p.capacity == "queued" for p in members}) > 1:
                yield RuleError(
                    ("flavors", i, "pools"),
                    "queued and non-queued pools cannot share a flavor: the admission check applies per flavor",
                )
            if flavor.queued_provisioning and members and not all(p.capacity == "queued" for p in members):
                yield RuleError(("flavors", i, "queuedProvisioning"), "set only for flavors without pools")
            if flavor.node_labels is not None:
                missing: set[str] = set()
                for pool in members:
                    carried = naming.node_labels(pool)
                    for key, value in flavor.node_labels.items():
                        if carried.get(key) != value and key not in missing:
                            missing.add(key)  # one message per label, naming the first pool
                            yield RuleError(
                                ("flavors", i, "nodeLabels", key),
                                f"pool {pool.name!r} nodes do not carry {key}={value}; they carry "
                                f"{', '.join(f'{k}={v}' for k, v in sorted(carried.items())) or 'no such labels'}",
                            )

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

    # -- queues -----------------------------------------------------------------------------

    def _check_queues(self) -> Iterator[RuleError]:
        yield from self._check_fair_sharing()
        known = self.flavor_names()
        names: set[str] = set()
        derived = self._flavors_with_capacity()
        # Which flavors there are, and what capacity they have, is unknown on an Autopilot stack
        # that declares none, and for a flavor that names an unknown pool: both are reported
        # under flavors, and the queue rules that need them stay quiet.
        flavors_known = self.flavors is not None or self.cluster.standard
        unsure = {f.name for f in self.flavors or [] if self._unknown_pools(f)}
        copies = _copies(self.cluster_queues)
        for i, cq in enumerate(self.cluster_queues):
            if cq.name in names:
                yield RuleError(("clusterQueues", i, "name"), f"cluster queue {cq.name!r} is declared twice")
            names.add(cq.name)
            if i in copies:
                continue
            yield from cluster_queue_problems(
                ("clusterQueues", i), cq, known, derived, unsure, flavors_known, self.kueue.fair_sharing is not None
            )

    def _check_fair_sharing(self) -> Iterator[RuleError]:
        """Kueue's fair sharing divides "the unused nominal quota of all the ClusterQueues in
        the cohort" between "the tenants of a cohort" (Kueue v0.19.2 docs, concepts/preemption
        #fair-sharing; share values compare a ClusterQueue "to others in the same cohort").
        Without a cohort of two or more cluster queues there is nothing to share, and the
        setting changes nothing."""
        if self.kueue.fair_sharing is None:
            return
        cohorts: dict[str, list[str]] = {}
        for cq in self.cluster_queues:
            if cq.cohort is not None:
                cohorts.setdefault(cq.cohort, []).append(cq.name)
        if any(len(members) >= 2 for members in cohorts.values()):
            return
        alone = [f"{q[0]!r} alone in cohort {c!r}" for c, q in cohorts.items()]
        loose = [repr(cq.name) for cq in self.cluster_queues if cq.cohort is None]
        if loose:
            alone.append(f"{', '.join(loose)} in no cohort")
        yield RuleError(
            ("kueue", "fairSharing"),
            "fair sharing divides a cohort's unused quota between its cluster queues, and no cohort "
            f"here has two or more ({'; '.join(alone) or 'no cluster queues'}), so it would do "
            "nothing; remove kueue.fairSharing, or give the queues that should share one cohort",
        )

    def _flavors_with_capacity(self) -> set[str]:
        """Flavors whose pools carry TPUs or GPUs, so a queue's quota can default to them."""
        if self.flavors is None:
            return set(self.flavor_names())
        pools = {p.name: p for p in self.node_pools}
        return {f.name for f in self.flavors if any(pools[p].kind != "cpu" for p in f.pools if p in pools)}

    # -- teams and priorities ----------------------------------------------------------------

    def _check_teams(self) -> Iterator[RuleError]:
        queues = list(dict.fromkeys(cq.name for cq in self.cluster_queues))
        # Sorted by entry afterwards (_stack_order), so each entry's problems keep this order.
        yield from local_queue_problems(self.teams)
        copies = _copies(self.teams)
        for i, team in enumerate(self.teams):
            if i in copies:
                continue
            if team.cluster_queue not in queues:
                yield RuleError(
                    ("teams", i, "clusterQueue"),
                    f"unknown cluster queue {team.cluster_queue!r}; known: {', '.join(queues) or 'none'}",
                )
            yield from team_namespace_problems(i, team, self.cluster.standard)
            if team.group is not None and self.cluster.security_group is None:
                # GKE puts a user's groups into the request only through the cluster's security
                # group (authenticatorGroupsConfig); without it a Group subject matches nobody.
                yield RuleError(
                    ("teams", i, "group"),
                    f"group {team.group!r} needs Google Groups for RBAC on the cluster: set "
                    "cluster.securityGroup to gke-security-groups@<your domain> and make this group a "
                    "member of it (https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac)",
                )
            if team.group is not None:
                yield from self._check_team_role_is_queued(i)
            if team.network_policy and self.cluster.standard and not self.cluster.dataplane_v2:
                # GKE enforces NetworkPolicy only with Dataplane V2 or the Calico add-on
                # (https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2), which this
                # program does not offer: the object would be accepted and do nothing.
                yield RuleError(
                    ("teams", i, "networkPolicy"),
                    "a NetworkPolicy is enforced only with Dataplane V2, and cluster.dataplaneV2 is false: "
                    "it would isolate nothing; set cluster.dataplaneV2 true or networkPolicy false",
                )
        yield from namespace_settings_problems(self.teams)

    def _check_team_role_is_queued(self, i: int) -> Iterator[RuleError]:
        """The team Role creates Jobs and JobSets (gke_ai_batch/plan/rbac.py) on the promise that
        Kueue holds every one of them: with manageJobsWithoutQueueName false, or a kind whose
        integration is off, a Job without a queue name runs at once, outside every quota
        (Kueue docs: manage-jobs-without-queue-name; Configuration integrations.frameworks)."""
        k = self.kueue
        if not k.manage_jobs_without_queue_name:
            yield RuleError(
                ("teams", i, "group"),
                "the team's Role may create Jobs and JobSets, and kueue.manageJobsWithoutQueueName is false: a Job "
                "without a queue name would run outside every quota; set it true (the default)",
            )
        missing = [fw for fw in TEAM_ROLE_FRAMEWORKS if fw not in k.integrations]
        if missing:
            yield RuleError(
                ("teams", i, "group"),
                f"the team's Role may create Jobs and JobSets, and kueue.integrations lacks {', '.join(missing)}: "
                "Kueue would not hold those, so they would run outside every quota; add them",
            )

    def _check_flavor_limits(self) -> Iterator[RuleError]:
        """Kueue's ResourceFlavor CRD: at most 8 node labels and 8 tolerations."""
        pools = {p.name: p for p in self.node_pools}
        members: dict[str, list[NodePoolConfig]] = {}
        for pool in self.node_pools:
            name = self.pool_flavor(pool)
            if name is not None:
                members.setdefault(name, []).append(pool)
        declared = self.flavors if self.flavors is not None else [None] * len(self.flavor_names())
        copies = _copies(declared) if self.flavors is not None else set()
        for i, (name, flavor) in enumerate(zip(self.flavor_names(), declared)):
            if flavor is not None and (self._unknown_pools(flavor) or i in copies):
                continue  # reported by _check_flavor_references, or the same as an earlier flavor
            mine = [pools[p] for p in flavor.pools] if flavor is not None else members.get(name, [])
            if flavor is not None and flavor.node_labels is not None:
                labels = dict(flavor.node_labels)
            else:
                sets = [naming.pool_node_labels(p) for p in mine]
                labels = {k: v for k, v in (sets[0] if sets else {}).items() if all(x.get(k) == v for x in sets)}
            if flavor is not None and flavor.tolerations is not None:
                tolerations = len(flavor.tolerations)
            else:
                tolerations = len({(t["key"], t["value"], t["effect"]) for p in mine for t in naming.pool_taints(p)})
            at = ("flavors", i) if flavor is not None else ("nodePools", self.node_pools.index(mine[0]))
            yield from flavor_limit_problems(
                at, "nodeLabels" if flavor is not None else "labels", "tolerations" if flavor is not None else "taints",
                name, labels, tolerations,
            )

    def _check_priorities(self) -> Iterator[RuleError]:
        yield from priority_problems(self.priorities, [wl.name for wl in self.workloads if wl.priority is None])

    # -- workloads --------------------------------------------------------------------------

    def _check_workloads(self) -> Iterator[RuleError]:
        pools = {p.name: p for p in self.node_pools}
        priorities = [p.name for p in self.priorities]
        seen: set[str] = set()
        copies = _copies(self.workloads)
        for i, wl in enumerate(self.workloads):
            at = ("workloads", i)
            if wl.name in seen:
                yield RuleError((*at, "name"), f"workload {wl.name!r} is declared twice")
            seen.add(wl.name)
            if i in copies:
                continue
            team_problems = list(self._check_workload_team(at, wl))
            yield from team_problems
            yield from self._check_workload_integration(at, wl)
            # An unknown pool is one message: every rule that looks at the pool would guess.
            pool_known = wl.pool is None or wl.pool in pools
            if not pool_known:
                yield RuleError((*at, "pool"), f"unknown node pool {wl.pool!r}; known: {_known(pools)}")
            if wl.pool is None and wl.tpu is None and wl.gpu is None and self.cluster.standard and isinstance(
                wl, JobSetWorkload
            ):
                yield RuleError((*at, "pool"), "a JobSet needs a pool (or a tpu or gpu shape) to run on")
            if wl.priority is not None and wl.priority not in priorities:
                yield RuleError(
                    (*at, "priority"),
                    f"unknown priority {wl.priority!r}; known: {', '.join(priorities) or 'none'}",
                )
            pool = pools.get(wl.pool) if wl.pool else None
            yield from self._check_shape_offered(at, wl)
            yield from self._check_generated_names(at, wl, pool)
            if pool_known:
                yield from self._check_target(at, wl, pool, team_known=not team_problems)

    def _check_target(self, at: tuple, wl, pool: NodePoolConfig | None, team_known: bool) -> Iterator[RuleError]:
        """The rules on what a workload runs on: its pool (None: a bare shape, or none given),
        which must be one the stack has."""
        yield from self._check_accelerator_request(at, wl, pool)
        yield from self._check_host_ports(at, wl)
        if pool is not None and not isinstance(wl, ProvisioningRequestWorkload) and team_known:
            yield from self._check_pool_reachable(at, wl, pool)
        if isinstance(wl, JobSetWorkload):
            yield from self._check_jobset(at, wl, pool)
        elif isinstance(wl, JobWorkload):
            yield from self._check_job(at, wl, pool)
        elif isinstance(wl, ProvisioningRequestWorkload):
            if pool is not None and pool.capacity != "queued":
                yield RuleError(
                    (*at, "pool"),
                    f"a ProvisioningRequest needs a queued pool; {pool.name!r} is {pool.capacity}",
                )
            if pool is None and wl.gpu is None and wl.tpu is None:
                yield RuleError((*at, "pool"), "a ProvisioningRequest needs a queued pool (or a gpu or tpu shape)")

    def uses_host_network(self, wl) -> bool:
        """Whether the workload's pods run on the host network: multi-host TPU slices on
        Standard, whose hosts talk over it (TPU runtime ports 8471/8431). Autopilot forbids
        hostNetwork, and GKE wires multi-host slices there itself."""
        if wl.pool is not None:
            tpu = self.pool(wl.pool).tpu
            return tpu is not None and tpu.slice.multi_host
        return wl.tpu is not None and wl.tpu.slice.multi_host and self.cluster.standard

    def _check_host_ports(self, at: tuple, wl) -> Iterator[RuleError]:
        """On the host network every containerPort is a host port too (the API server defaults
        hostPort to containerPort: defaultHostNetworkPorts, pkg/apis/core/v1/defaults.go), and a pod's
        host ports are unique by port, protocol and host IP (AccumulateUniqueHostPorts in
        k8s.io/kubernetes pkg/apis/core/validation/validation.go: "Duplicate value"). Off the
        host network a repeated containerPort is only a warning."""
        if not self.uses_host_network(wl):
            return
        for i, port in enumerate(wl.ports):
            if port in wl.ports[:i]:
                yield RuleError(
                    (*at, "ports", i),
                    f"port {port} is listed twice; this workload's pods use the host network, where each "
                    "containerPort is also a host port and the API server refuses a repeated one",
                )

    def pool_flavor(self, pool: NodePoolConfig) -> str | None:
        """The flavor a pool's nodes belong to, declared or derived."""
        if self.flavors is None:
            return naming.derived_flavor_name(pool)
        return next((f.name for f in self.flavors if pool.name in f.pools), None)

    def _check_pool_reachable(self, at: tuple, wl, pool: NodePoolConfig) -> Iterator[RuleError]:
        """A queued workload runs only where its ClusterQueue has quota: the pool's flavor must
        be one of the queue's, or Kueue never admits it. Judged only when the team, its queue,
        the queue's flavors and the declared flavors' pools all resolve (else that is reported,
        and this would repeat it)."""
        flavor = self.pool_flavor(pool)
        if flavor is None:
            if not any(self._unknown_pools(f) for f in self.flavors or []):
                yield RuleError(
                    (*at, "pool"), f"no flavor covers pool {pool.name!r}, so no queue can admit work onto it"
                )
            return
        queue_name = self.team_queue(wl).cluster_queue
        queue = next((cq for cq in self.cluster_queues if cq.name == queue_name), None)
        if queue is None:
            return
        names = [f.name for f in queue.flavors]
        if any(name not in self.flavor_names() for name in names):
            return
        if names and flavor not in names:
            yield RuleError(
                (*at, "pool"),
                f"pool {pool.name!r} is flavor {flavor!r}, which cluster queue {queue_name!r} of team "
                f"{wl.team!r} does not offer ({', '.join(names)}); Kueue would never admit this workload",
            )

    def _check_shape_offered(self, at: tuple, wl) -> Iterator[RuleError]:
        """A bare tpu/gpu shape (Autopilot, or auto-provisioned nodes) needs a zone of the cluster
        that offers it: GKE creates the nodes there (gke_ai_batch/domain/regions.py)."""
        if not self._zones_known(self._cluster_zones()):
            return  # the cluster's location is reported already
        cat = self.regions
        region = region_of(self.cluster.location)
        allowed = self._cluster_zones() or cat.zones_of(region)
        for kind, spec in (("tpu", wl.tpu), ("gpu", wl.gpu)):
            if spec is None:
                continue
            name = spec.version if kind == "tpu" else spec.type
            offering = cat.tpu_zones(region, name) if kind == "tpu" else cat.gpu_zones(region, name)
            if not set(offering) & set(allowed):
                where = "the cluster's zones " + ", ".join(allowed) if allowed != cat.zones_of(region) else region
                yield RuleError(
                    (*at, kind, "version" if kind == "tpu" else "type"),
                    f"GKE offers {'TPU ' if kind == 'tpu' else ''}{name} in {region} only in "
                    f"{', '.join(offering) or 'no zone'}, none of them in {where}, so no node can be made "
                    "for this workload" + _override_hint(region),
                )

    def _check_generated_names(self, at: tuple, wl, pool: NodePoolConfig | None) -> Iterator[RuleError]:
        """Names Kubernetes derives from a workload's must be DNS labels too: JobSet pods are
        <name>-slice-<job>-<pod>-<5 random>, a multi-host Job's Service is <name>-hosts. (With
        an unknown pool, one VM per slice: the shortest names, so no false alarm.)"""
        tpu = pool.tpu if pool is not None else wl.tpu
        vms = tpu.slice.vms if tpu is not None else 1
        if not ("a" <= wl.name[0] <= "z"):  # ASCII: str.isalpha() also takes other scripts' letters
            yield RuleError((*at, "name"), f"{wl.name!r} must start with a letter (it names pods and Services)")
        if isinstance(wl, JobSetWorkload):
            room = 63 - len("-slice-") - len(str(wl.slices - 1)) - 1 - len(str(vms - 1)) - 6
            what = f"JobSet pod names (<name>-slice-<i>-<j>-xxxxx) for {wl.slices} slices of {vms} VMs"
        elif isinstance(wl, JobWorkload) and tpu is not None and tpu.slice.multi_host:
            room = 63 - len("-hosts")
            what = "the headless Service <name>-hosts"
        else:
            return
        if len(wl.name) > room:
            yield RuleError(
                (*at, "name"), f"{wl.name!r} is too long: {what} must fit 63 characters; at most {room} here"
            )

    def _check_accelerator_request(self, at: tuple, wl, pool: NodePoolConfig | None) -> Iterator[RuleError]:
        tpu = pool.tpu if pool is not None else wl.tpu
        gpu = pool.gpu if pool is not None else wl.gpu
        asked = quantity.value(wl.resources.get(catalogue.TPU_RESOURCE))
        if tpu is not None and asked is not None and asked != tpu.slice.chips_per_vm:
            yield RuleError(
                (*at, "resources", catalogue.TPU_RESOURCE),
                f"a TPU pod takes all {tpu.slice.chips_per_vm} chips of its {tpu.slice.machine_type} VM; "
                "leave google.com/tpu out to derive it",
            )
        asked = quantity.value(wl.resources.get(catalogue.GPU_RESOURCE))
        if gpu is not None and asked is not None and asked > gpu.count:
            yield RuleError(
                (*at, "resources", catalogue.GPU_RESOURCE),
                f"{wl.resources[catalogue.GPU_RESOURCE]} GPUs per pod never fit a node with {gpu.count}",
            )

    def _check_workload_team(self, at: tuple, wl) -> Iterator[RuleError]:
        """The workload's team and local queue resolve to exactly one team entry."""
        teams = [t for t in self.teams if t.namespace == wl.team]
        queues = list(dict.fromkeys(t.local_queue for t in teams))  # a team declared twice: one queue
        if not teams:
            known = sorted({t.namespace for t in self.teams})
            yield RuleError((*at, "team"), f"unknown team {wl.team!r}; known: {', '.join(known) or 'none'}")
            if not isinstance(wl, ProvisioningRequestWorkload):
                return  # which local queue is right depends on the team
        if isinstance(wl, ProvisioningRequestWorkload):
            if wl.local_queue is not None:
                yield RuleError((*at, "localQueue"), "a ProvisioningRequest workload bypasses Kueue: no local queue")
            return
        if wl.local_queue is not None:
            if wl.local_queue not in queues:
                yield RuleError(
                    (*at, "localQueue"),
                    f"team {wl.team!r} has no local queue {wl.local_queue!r}; it has {', '.join(queues)}",
                )
        elif len(queues) > 1:
            yield RuleError(
                (*at, "localQueue"),
                f"team {wl.team!r} has several local queues ({', '.join(queues)}); name one",
            )

    def _check_workload_integration(self, at: tuple, wl) -> Iterator[RuleError]:
        if isinstance(wl, ProvisioningRequestWorkload):
            return  # no Kueue
        framework = "jobset.x-k8s.io/jobset" if isinstance(wl, JobSetWorkload) else "batch/job"
        if framework not in self.kueue.integrations:
            yield RuleError(
                (*at, "kind"),
                f"Kueue manages this workload only with the {framework!r} integration; add it to kueue.integrations",
            )

    def _check_jobset(self, at: tuple, wl: JobSetWorkload, pool: NodePoolConfig | None) -> Iterator[RuleError]:
        if pool is not None and pool.tpu is not None and wl.slices > pool.slice_count:
            yield RuleError(
                (*at, "slices"),
                f"{wl.slices} slices never fit pool {pool.name!r}, which has {pool.slice_count}",
            )

    def _check_job(self, at: tuple, wl: JobWorkload, pool: NodePoolConfig | None) -> Iterator[RuleError]:
        if wl.max_run_duration_seconds is not None and (pool is None or pool.capacity != "queued"):
            yield RuleError(
                (*at, "maxRunDurationSeconds"),
                "only for workloads on a queued pool (it becomes a ProvisioningRequest parameter)",
            )

    # -- lookups used by the plan -------------------------------------------------------------

    def pool(self, name: str) -> NodePoolConfig:
        return next(p for p in self.node_pools if p.name == name)

    def team_queue(self, wl) -> TeamConfig:
        return next(
            t for t in self.teams if t.namespace == wl.team and (wl.local_queue in (None, t.local_queue))
        )


def cluster_queue_problems(
    at: tuple,
    cq: ClusterQueueConfig,
    known: list[str],
    derived: set[str],
    unsure: set[str] = frozenset(),
    flavors_known: bool = True,
    fair_sharing: bool = False,
) -> Iterator[RuleError]:
    """One cluster queue's rules against the flavors there are (`known`), those with TPU or GPU
    capacity to derive a quota from (`derived`) and those whose pools are unknown (`unsure`):
    the stack's, and a ClusterQueue component's (gke_ai_batch/components/queues.py), whose
    flavors are its args."""
    if fair_sharing and cq.preemption and cq.preemption.borrow_within_cohort:
        yield RuleError(
            (*at, "preemption", "borrowWithinCohort"),
            "Kueue ignores borrowWithinCohort when fair sharing is on (kueue.fairSharing); "
            "remove one of the two",
        )
    if not cq.flavors and flavors_known:
        if not known:
            yield RuleError((*at, "flavors"), "the stack has no flavors for this queue")
        else:
            bare = [f for f in known if f not in derived and f not in unsure]
            if bare:
                yield RuleError(
                    (*at, "flavors"),
                    f"list this queue's flavors with quotas: {', '.join(bare)} offer no accelerator "
                    "capacity to derive a quota from",
                )
    for j, flavor in enumerate(cq.flavors):
        where = (*at, "flavors", j)
        if flavor.name not in known:
            if flavors_known:
                yield RuleError(
                    (*where, "name"),
                    f"unknown flavor {flavor.name!r}; known: {', '.join(dict.fromkeys(known)) or 'none'}",
                )
        elif flavor.name not in derived and flavor.name not in unsure and not flavor.quotas:
            yield RuleError(
                (*where, "quotas"),
                f"flavor {flavor.name!r} has no TPU or GPU pools to derive a quota from; give its quotas",
            )
        for resource, q in flavor.quotas.items():
            if isinstance(q, QuotaLimits) and q.lending_limit is not None:
                if quantity.value(q.lending_limit) > quantity.value(q.nominal):
                    yield RuleError(
                        (*where, "quotas", resource, "lendingLimit"),
                        f"lendingLimit {q.lending_limit} exceeds nominal {q.nominal} (Kueue rejects it)",
                    )


def flavor_limit_problems(
    at: tuple, labels_key: str, tolerations_key: str, name: str, labels: dict[str, str], tolerations: int
) -> Iterator[RuleError]:
    """Kueue's ResourceFlavor CRD (kueue.x-k8s.io_resourceflavors.yaml): at most 8 node labels
    and 8 tolerations; `at` is where the flavor is declared (a stack's flavor or pool, a
    component's args)."""
    if len(labels) > KUEUE_FLAVOR_MAX_LABELS:
        yield RuleError(
            (*at, labels_key),
            f"flavor {name!r} would select on {len(labels)} node labels ({', '.join(sorted(labels))}); "
            f"a Kueue ResourceFlavor takes at most {KUEUE_FLAVOR_MAX_LABELS}",
        )
    if tolerations > KUEUE_FLAVOR_MAX_TOLERATIONS:
        yield RuleError(
            (*at, tolerations_key),
            f"flavor {name!r} would carry {tolerations} tolerations (one per taint of its pools); "
            f"a Kueue ResourceFlavor takes at most {KUEUE_FLAVOR_MAX_TOLERATIONS}",
        )


def local_queue_problems(teams: list[TeamConfig]) -> Iterator[RuleError]:
    """A LocalQueue is one object per namespace and name."""
    seen: set[tuple[str, str]] = set()
    for i, team in enumerate(teams):
        key = (team.namespace, team.local_queue)
        if key in seen:
            yield RuleError(
                ("teams", i, "localQueue"),
                f"namespace {team.namespace!r} already has a local queue {team.local_queue!r}",
            )
        seen.add(key)


def namespace_settings_problems(teams: list[TeamConfig]) -> Iterator[RuleError]:
    """A namespace has one Pod Security level, one NetworkPolicy and one value per label:
    teams that share it must say the same, and its labels leave the pod-security.kubernetes.io/
    keys to podSecurity (the labels are merged into one Namespace, so either would silently
    win; Kubernetes labels are a map, one value per key,
    https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/)."""
    first: dict[str, int] = {}
    # namespace -> label key -> (the first team that sets it, its value)
    labelled: dict[str, dict[str, tuple[int, str]]] = {}
    for i, team in enumerate(teams):
        for key, value in team.labels.items():
            if key.startswith(POD_SECURITY_LABEL_PREFIX):
                yield RuleError(
                    ("teams", i, "labels", key),
                    f"{key} is set from teams[{i}].podSecurity (restricted, baseline or privileged); "
                    "remove the label",
                )
                continue
            j, other = labelled.setdefault(team.namespace, {}).setdefault(key, (i, value))
            if other != value:
                yield RuleError(
                    ("teams", i, "labels", key),
                    f"namespace {team.namespace!r} gets label {key}={other!r} from teams[{j}] (local queue "
                    f"{teams[j].local_queue!r}) and {key}={value!r} here (local queue "
                    f"{team.local_queue!r}); the teams share one Namespace, which has one value per label: "
                    "set the same value on both, or the label on one team only",
                )
        j = first.setdefault(team.namespace, i)
        if j == i:
            continue
        other = teams[j]
        for attr, key in (("pod_security", "podSecurity"), ("network_policy", "networkPolicy")):
            if getattr(team, attr) != getattr(other, attr):
                yield RuleError(
                    ("teams", i, key),
                    f"namespace {team.namespace!r} has {key} {_show(getattr(other, attr))} from teams[{j}], "
                    f"and {_show(getattr(team, attr))} here; teams sharing a namespace share its "
                    f"{key}: set the same on both",
                )


def team_namespace_problems(i: int, team: TeamConfig, standard: bool = True) -> Iterator[RuleError]:
    """One message per namespace: kube-system is reserved and built in, but the fix is one."""
    reserved = next((p for p in RESERVED_NAMESPACE_PREFIXES if team.namespace.startswith(p)), None)
    if reserved is not None:
        owner = RESERVED_NAMESPACE_PREFIXES[reserved]
        managed = (
            "; on Autopilot GKE also denies writes in its managed namespaces"
            if not standard
            else ""
        )
        yield RuleError(
            ("teams", i, "namespace"),
            f"{team.namespace!r}: namespaces starting with {reserved!r} belong to {owner}{managed}; "
            "give the team its own namespace",
        )
    elif team.namespace in INSTALL_NAMESPACES:
        yield RuleError(
            ("teams", i, "namespace"),
            f"{team.namespace!r} belongs to the {team.namespace.split('-')[0]} install; give the team its own",
        )
    elif team.labels and team.namespace in naming.BUILTIN_NAMESPACES:
        yield RuleError(
            ("teams", i, "labels"),
            f"namespace {team.namespace!r} exists in every cluster and is not managed here (the program "
            "patches only its Pod Security labels)",
        )


def _stack_order(problem: RuleError) -> tuple[int, float]:
    """Problems in the order of the stack: by top-level key as StackConfig declares them, then
    by entry (a key's problems about the whole list after its entries'). The sort is stable, so
    one entry's problems keep the order their rules run in."""
    head, *rest = problem.path
    entry = rest[0] if rest and isinstance(rest[0], int) else math.inf
    return _KEY_ORDER[head], entry


_KEY_ORDER = {field.alias or name: i for i, (name, field) in enumerate(StackConfig.model_fields.items())}


def _copies(entries: list) -> set[int]:
    """The entries equal to an earlier one. A copied entry is reported as declared twice (or its
    pool name as made twice); its other rules would only repeat the original's messages."""
    return {i for i, entry in enumerate(entries) if entry in entries[:i]}


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else value


def _known(items) -> str:
    return ", ".join(items) or "none"


# Rank words in priority names, lowest first. A word followed by what it qualifies is no
# rank: "low-latency" or "high-memory" say what the work needs, not where it stands.
_RANK_WORDS = {"lowest": 0, "low": 1, "background": 1, "besteffort": 1, "high": 2, "highest": 3}
_LOW = 1
_QUALIFIED = {"latency", "throughput", "memory", "mem", "cpu", "gpu", "tpu", "bandwidth", "cost", "power"}


def _rank(name: str) -> int | None:
    """The rank a priority's name claims, or None when it claims none (or contradicts itself)."""
    words = [w for w in re.split(r"[-._]", name) if w]
    words = [  # "best-effort" and "best_effort" are one word
        "besteffort" if (w, nxt) == ("best", "effort") else w for w, nxt in zip(words, [*words[1:], ""])
    ]
    ranks = {
        _RANK_WORDS[w]
        for w, nxt in zip(words, [*words[1:], ""])
        if w in _RANK_WORDS and nxt not in _QUALIFIED
    }
    return ranks.pop() if len(ranks) == 1 else None


def _override_hint(where: str) -> str:
    return (
        f" (gke_ai_batch/domain/regions.py, as of {regions.CATALOGUE_DATE}; if GKE offers it there now, "
        f"add it under gke-ai-batch:catalogue.zones for {where})"
    )


def kueue_release_problems(
    kueue: KueueConfig, multi_kueue: MultiKueueSettings | None, multi_kueue_at: tuple = ("fleet", "multiKueue")
) -> Iterator[RuleError]:
    """What the program writes into Kueue's Configuration and flags must exist in the release
    the cluster runs (gke_ai_batch/domain/kueue_releases.py): the manager would not start. Also
    KueueInstall's rule (gke_ai_batch/config/standalone.py), whose multiKueue arg sits at
    `multi_kueue_at`."""
    version = kueue.release
    for i, framework in enumerate(kueue.integrations):
        problem = kueue_releases.lacks(version, framework, kueue_releases.INTEGRATIONS[framework])
        if problem:
            yield RuleError(("kueue", "integrations", i), problem)
    if multi_kueue is not None and multi_kueue.incremental_step_size is not None:
        name = "multiKueue.incrementalDispatcherConfig"
        problem = kueue_releases.lacks(version, name, kueue_releases.CONFIG_FIELDS[name])
        if problem:
            yield RuleError(
                (*multi_kueue_at, "incrementalStepSize"),
                f"{problem}; before it the Incremental dispatcher adds 3 workers per round: remove "
                "incrementalStepSize, or raise kueue.version",
            )


def priority_problems(priorities: list[PriorityConfig], unranked: list[str]) -> Iterator[RuleError]:
    """A name declared twice, and the order check below; `unranked`: the workloads that name no
    priority. Also Priorities' rule (gke_ai_batch/config/standalone.py)."""
    seen: set[str] = set()
    for i, prio in enumerate(priorities):
        if prio.name in seen:
            yield RuleError(("priorities", i, "name"), f"priority {prio.name!r} is declared twice")
        seen.add(prio.name)
    yield from _priority_order(priorities, unranked)


def _priority_order(priorities: list[PriorityConfig], unranked: list[str]) -> Iterator[RuleError]:
    """A priority named low must rank low. Its value is all kube-scheduler and Kueue
    compare: a workload with no priority class ranks 0 (Kubernetes docs, pod-priority-
    preemption: "pods without a priorityClassName ... priority zero" when no class is the
    global default; Kueue takes a Workload's priority from its WorkloadPriorityClass, else
    its pods' PriorityClass, else 0). So a "low" class above 0 outranks every workload that
    names none, and one named low must sit below one named high.

    A name declared twice is refused already; only its first declaration is ranked here,
    and each priority gets one message (one value to change)."""
    first_at: dict[str, int] = {}
    for i, prio in enumerate(priorities):
        first_at.setdefault(prio.name, i)
    ranked = [(i, p, _rank(p.name)) for i, p in enumerate(priorities) if first_at[p.name] == i]
    first = [p for _, p, _ in ranked]
    for i, prio, rank in ranked:
        if rank is None or rank > _LOW:
            continue
        if prio.value > 0 and unranked:
            yield RuleError(
                ("priorities", i, "value"),
                f"priority {prio.name!r} (value {prio.value}) outranks the workloads that set no "
                f"priority (priority 0: {', '.join(unranked)}), though its name says low; give it "
                "a negative value, or give those workloads a priority above it",
            )
            continue
        for other in first:
            other_rank = _rank(other.name)
            if other_rank is not None and other_rank > rank and other.value <= prio.value:
                yield RuleError(
                    ("priorities", i, "value"),
                    f"priority {prio.name!r} (value {prio.value}) is not below {other.name!r} "
                    f"(value {other.value}), though their names say it should be; Kueue and "
                    "kube-scheduler compare only the values",
                )
                break
