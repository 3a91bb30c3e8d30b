"""Node pools: from a pool entry to the exact `gcp.container.NodePool` arguments GKE needs.

Rules per capacity (GKE docs: dws-flex-start-training-tpu, provisioningrequest, spot-vms,
consuming-reservations; see docs/capacity-types.md):
- onDemand / spot / reservation: TPU slices have a fixed node count (VMs per slice); GPU and
  CPU pools autoscale between minNodes and maxNodes.
- flexStart / queued: GKE creates nodes on request, so the pool autoscales from 0 (initial 0)
  to the VMs of a slice (TPU) or maxNodes (GPU), with location policy ANY, no reservation, and
  auto-repair off (a repair would recreate a node outside the request it belongs to).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import naming

from gke_ai_batch.domain import regions
from gke_ai_batch.config.base import duration_seconds
from gke_ai_batch.config.cluster import ClusterConfig
from gke_ai_batch.config.lookups import ClusterFacts, pool_zones
from gke_ai_batch.config.maintenance import UpgradeSettings
from gke_ai_batch.config.pools import PROVISIONED_ON_DEMAND, NodePoolConfig
from gke_ai_batch.config.reservations import ReservationConfig, shown, spec_of
from gke_ai_batch.config.stack import StackConfig

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# The node pool's reservation affinity key for a specific reservation (GKE API
# ReservationAffinity.key: "compute.googleapis.com/reservation-name" to target a reservation by
# name; pulumi-gcp NodePoolNodeConfigReservationAffinity).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"


@dataclass(frozen=True)
class PoolPlan:
    """One GKE node pool (a TPU entry with N slices yields N of these)."""

    name: str
    entry: str
    index: int
    kind: str  # tpu | gpu | cpu
    capacity: str
    machine_type: str
    zones: tuple[str, ...]
    nodes: int  # fixed node count, or the autoscaling ceiling
    autoscaled: bool
    floor: int  # fixed node count, or the autoscaling floor (across the pool's zones)
    chips: int  # accelerator chips (TPU) or GPUs the pool provides at its ceiling
    tpu: catalogue.TpuSlice | None
    workload_policy: str | None  # tpu7x multi-host: the workload policy's name
    args: dict[str, Any] = field(hash=False, compare=False)
    """NodePool arguments, snake_case; the component adds cluster, project and service account."""

    @property
    def multi_host(self) -> bool:
        return self.tpu is not None and self.tpu.multi_host


def plan_pools(cfg: StackConfig) -> list[PoolPlan]:
    facts = cfg.facts
    return [plan for entry in cfg.node_pools for plan in plan_entry(entry, facts)]


def plan_entry(entry: NodePoolConfig, cluster: ClusterFacts) -> list[PoolPlan]:
    """The GKE node pools of one validated pool entry on its cluster (a TPU entry's slices)."""
    zones = tuple(pool_zones(entry, cluster))
    return [_plan_pool(cluster.name, entry, index, gke_name, zones) for index, gke_name in enumerate(entry.pool_names)]


def _plan_pool(cluster: str, entry: NodePoolConfig, index: int, name: str, zones: tuple[str, ...]) -> PoolPlan:
    tpu = entry.tpu.slice if entry.tpu is not None else None
    provisioned = entry.capacity in PROVISIONED_ON_DEMAND
    if tpu is not None:
        ceiling, floor = tpu.vms, 0
        chips = tpu.chips
        autoscaled = provisioned
    else:
        ceiling, floor = entry.max_nodes, 0 if provisioned else (entry.min_nodes or 0)
        chips = entry.gpu.count * ceiling if entry.gpu else 0
        autoscaled = True
    workload_policy = None
    if tpu is not None and tpu.multi_host and tpu.generation.workload_policy:
        workload_policy = naming.workload_policy_name(cluster, entry.name)

    args: dict[str, Any] = {
        "name": name,
        "node_config": _node_config(entry),
        "management": {"auto_repair": entry.repaired, "auto_upgrade": True},
    }
    if entry.upgrade is not None:
        args["upgrade_settings"] = upgrade_settings_args(entry.upgrade)
    # auto_upgrade stays on for every pool: the cluster is enrolled in a release channel, and
    # GKE rejects auto_upgrade=false there ("Auto_upgrade cannot be false when release_channel
    # ... is set"). Flex-start and queued nodes are not upgraded in place anyway: GKE applies
    # its short-lived upgrade strategy to them (concepts/node-pool-upgrade-strategies).
    if zones:
        args["node_locations"] = list(zones)
    if autoscaled:
        args["initial_node_count"] = _per_zone(floor, zones)
        args["autoscaling"] = {
            **_limits(tpu is not None, floor, ceiling),
            "location_policy": "BALANCED" if entry.capacity == "onDemand" else "ANY",
        }
    else:
        args["node_count"] = ceiling
    if entry.capacity == "queued":
        args["queued_provisioning"] = {"enabled": True}
    if tpu is not None and tpu.multi_host:
        if workload_policy is None:
            args["placement_policy"] = {"type": "COMPACT", "tpu_topology": tpu.topology}
        else:
            # tpu7x: the workload policy carries the topology and replaces compact placement
            # (GKE rejects COMPACT for tpu7x). GKE stores policyName and tpuTopology with no
            # type, so type stays empty to avoid a perpetual diff (vllm-project/ci-infra#547).
            args["placement_policy"] = {"type": "", "policy_name": workload_policy, "tpu_topology": tpu.topology}
    return PoolPlan(
        name=name,
        entry=entry.name,
        index=index,
        kind=entry.kind,
        capacity=entry.capacity,
        machine_type=entry.node_machine_type,
        zones=zones,
        nodes=ceiling,
        autoscaled=autoscaled,
        floor=floor if autoscaled else ceiling,
        chips=chips,
        tpu=tpu,
        workload_policy=workload_policy,
        args=args,
    )


def upgrade_settings_args(upgrade: UpgradeSettings) -> dict[str, Any]:
    """pulumi-gcp NodePoolUpgradeSettings: strategy SURGE with max_surge/max_unavailable, or
    BLUE_GREEN with blue_green_settings (node_pool_soak_duration as seconds, "3600s")."""
    if upgrade.strategy == "surge":
        surge, unavailable = upgrade.surge
        return {"strategy": "SURGE", "max_surge": surge, "max_unavailable": unavailable}
    settings: dict[str, Any] = {}
    if upgrade.soak is not None:
        settings["node_pool_soak_duration"] = f"{duration_seconds(upgrade.soak)}s"
    return {"strategy": "BLUE_GREEN", "blue_green_settings": settings}


def _limits(tpu: bool, floor: int, ceiling: int) -> dict[str, int]:
    """Autoscaling limits: per zone for TPU pools, in total for the others.

    The provider always sends all four limits, unset ones as 0 (ForceSendFields on
    MinNodeCount, MaxNodeCount, TotalMinNodeCount and TotalMaxNodeCount in
    terraform-provider-google, google/services/container/resource_container_node_pool.go,
    expandNodePool). With total limits a TPU pool therefore carries maxNodeCount 0, and GKE
    checks a multi-host slice against that per-zone maximum: "Maximum node count 0 is not a
    valid size of TPU pod slice with topology ..." (vllm-project/ci-infra#545).
    GoogleCloudPlatform/cluster-toolkit's modules/compute/gke-node-pool/main.tf sets
    min_node_count/max_node_count instead "to workaround a Terraform provider bug when using
    TPU Flex Start" (its dws-flex-start and dws-flex-start-queued-provisioning v6e and tpu7x
    examples use them).

    Every TPU pool here lives in exactly one zone (gke_ai_batch/config/checks/pools.py), so the
    per-zone limit is the pool's total. Single-host TPU pools get the same: GKE's check is
    against a slice topology they do not carry, so total limits would probably pass, but
    Google's xpk sizes every flex-start TPU pool per zone (src/xpk/core/capacity.py:
    `--max-nodes` = VMs per slice, single- or multi-host) and in one zone it is the same
    number; one rule for all TPU pools leaves nothing to get wrong.

    GPU and CPU pools keep total limits: they may span zones, where a per-zone limit would
    multiply with the zone count, and GKE accepts totals with a per-zone 0 for them
    (cluster-toolkit's dws-flex-start-queued-provisioning a3-ultragpu example sets
    autoscaling_total_min_nodes, which the module sends as total_min_node_count)."""
    if tpu:
        return {"min_node_count": floor, "max_node_count": ceiling}
    return {"total_min_node_count": floor, "total_max_node_count": ceiling}


def _per_zone(total: int, zones: tuple[str, ...]) -> int:
    # initial_node_count is per zone; round up so the pool starts at no less than its floor.
    return math.ceil(total / (len(zones) or regions.DEFAULT_ZONES_PER_REGION)) if total else 0


def _node_config(entry: NodePoolConfig) -> dict[str, Any]:
    node_config: dict[str, Any] = {"machine_type": entry.node_machine_type}
    labels = naming.own_labels(entry)
    if labels:
        node_config["labels"] = labels
    taints = [{"key": t.key, "value": t.value, "effect": naming.GKE_TAINT_EFFECTS[t.effect]} for t in entry.taints]
    if entry.gpu is not None:
        # GKE taints GPU nodes only when the cluster has a non-GPU pool too; say it outright
        # so that flavors and tolerations never depend on pool order.
        taints.insert(0, {**catalogue.GPU_TAINT, "effect": naming.GKE_TAINT_EFFECTS[catalogue.GPU_TAINT["effect"]]})
        node_config["guest_accelerators"] = [
            {
                "type": entry.gpu.type,
                "count": entry.gpu.count,
                "gpu_driver_installation_config": {"gpu_driver_version": entry.gpu.driver_version.upper()},
            }
        ]
    if taints:
        node_config["taints"] = taints
    if entry.gvnic:
        node_config["gvnic"] = {"enabled": True}
    if entry.capacity == "spot":
        node_config["spot"] = True
    if entry.capacity == "flexStart":
        node_config["flex_start"] = True
    if entry.max_run_duration is not None:
        node_config["max_run_duration"] = f"{entry.max_run_duration}s"
    if entry.capacity in PROVISIONED_ON_DEMAND:
        node_config["reservation_affinity"] = {"consume_reservation_type": "NO_RESERVATION"}
    elif entry.capacity == "reservation":
        node_config["reservation_affinity"] = affinity_args(entry.reservation)
    node_config.update(secure_node_defaults())
    return node_config


def affinity_args(value: str | ReservationConfig) -> dict[str, Any]:
    """pulumi-gcp's node_config.reservation_affinity for a pool that consumes a reservation.

    ANY_RESERVATION takes no key or values, SPECIFIC_RESERVATION takes the reservation under
    RESERVATION_KEY (GKE API ReservationAffinity; GoogleCloudPlatform/cluster-toolkit
    modules/compute/gke-node-pool/main.tf precondition: "When using NO_RESERVATION or
    ANY_RESERVATION ... specific_reservations cannot be set"; "only one reservation is allowed by
    the NodePool API"). A reservation written as a string is passed as written."""
    if spec_of(value).affinity == "any":
        return {"consume_reservation_type": "ANY_RESERVATION"}
    return {"consume_reservation_type": "SPECIFIC_RESERVATION", "key": RESERVATION_KEY, "values": [shown(value)]}


def secure_node_defaults() -> dict[str, Any]:
    """What every node of a Standard cluster gets: Workload Identity's metadata server,
    shielded VM with secure boot, no legacy metadata endpoints, cloud-platform scope (the
    node service account's IAM roles are what limit access)."""
    return {
        "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "metadata": {"disable-legacy-endpoints": "true"},
    }


def system_pool_args(cluster: ClusterConfig) -> dict[str, Any] | None:
    pool = cluster.system
    if pool is None:
        return None
    zones = tuple(cluster.node_locations)
    return {
        "name": naming.SYSTEM_POOL,
        "initial_node_count": _per_zone(pool.min_nodes, zones),
        "autoscaling": {
            "total_min_node_count": pool.min_nodes,
            "total_max_node_count": pool.max_nodes,
            "location_policy": "BALANCED",
        },
        "management": {"auto_repair": True, "auto_upgrade": True},
        "node_config": {
            "machine_type": pool.machine_type,
            "labels": {"gke-ai-batch/role": "system"},
            **secure_node_defaults(),
        },
    }


def workload_policy_args(pool: PoolPlan, region: str) -> dict[str, Any]:
    return {
        "name": pool.workload_policy,
        "region": region,
        "workload_policy": {"type": "HIGH_THROUGHPUT", "accelerator_topology": pool.tpu.topology},
    }
