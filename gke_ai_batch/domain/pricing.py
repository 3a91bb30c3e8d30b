"""What a node pool costs at list price, from the vendored table in price_table.py.

Pure functions over plain values (standard library only), so synth's cost.json and report and
the policy pack's budget rule price a pool the same way, from the same recorded resources.

Units: a TPU pool is priced per chip-hour (Cloud TPU's unit; the host VM is included), every
other pool per node-hour: the machine type as Google's billing catalogue prices it (A2, A3 and G2
whole, their fixed GPUs included), plus GPUs Compute Engine bills apart (N1's T4).
A pool is priced at its maximum and its minimum size. 30 days are 720 hours.

Capacity types (the provisioning model GKE uses, gke_ai_batch/model/facts.capacity_of):
- on-demand: the on-demand list price; spot: the spot price of the same row.
- flex-start and queued provisioning: billed at Dynamic Workload Scheduler prices, "discounted
  (up to 53%) for vCPUs, GPUs and TPUs" (GKE "About flex-start provisioning mode", Pricing:
  https://cloud.google.com/kubernetes-engine/docs/concepts/dws#pricing). That is a ceiling, not
  a rate, and neither source of the table carries DWS SKUs, so they are priced at the on-demand
  list price: an upper bound, said so on each entry.
- reservation: paid by the reservation whether or not the pool uses it, so not priced here; a
  pool that consumes any matching reservation (ANY_RESERVATION) falls back to on-demand VMs when
  none has room (GKE docs how-to/consuming-reservations), so it is priced on-demand, an upper bound.

What is not priced: boot and attached disks, network egress, load balancers, the GKE cluster
management fee, Autopilot pods (billed per pod request) and committed-use discounts. A price
the table lacks (a region, a machine type, tpu7x) is no price with its reason, never a guess;
`gke-ai-batch:prices` supplies negotiated or missing rates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gke_ai_batch.domain import price_table

HOURS_PER_30_DAYS = 24 * 30
# The stack output the program records gke-ai-batch:budget and gke-ai-batch:prices under, so the
# stack file stays their one home: CrossGuard gives a stack policy each resource's outputs, the
# root stack's being its exports (pulumi/pulumi pkg/resource/deploy/step_generator.go,
# AnalyzeResources: "AnalyzeStack is called on the final outputs of each resource"), and the
# stack-budget rule reads them there, in synth and in a live `pulumi preview --policy-pack`.
BUDGET_OUTPUT = "costBudget"


def budget_output(budget: float, prices: Mapping[str, float]) -> dict:
    """The value of the BUDGET_OUTPUT stack output."""
    return {"budget": budget, "prices": {k: prices[k] for k in sorted(prices)}}
DWS_BASIS = "on-demand list price: an upper bound (DWS discounts are 'up to 53%', no fixed rate)"
ANY_RESERVATION_BASIS = "on-demand list price when no matching reservation has room; paid by the reservation when one has"
CAPACITIES = ("on-demand", "spot", "flex-start", "queued", "reservation")


@dataclass(frozen=True)
class PoolShape:
    """A node pool as far as its price goes."""

    pool: str
    region: str
    machine_type: str
    capacity: str  # one of CAPACITIES
    min_nodes: int
    max_nodes: int | None  # None: not known before deploy
    tpu_version: str | None = None  # catalogue.TPU_GENERATIONS key
    chips_per_node: int = 0
    gpu_type: str | None = None  # catalogue.GPU_TYPES key
    gpus_per_node: int = 0
    reservation: str | None = None
    cluster: str = ""  # the GKE cluster: a fleet has a pool of one name in each
    any_reservation: bool = False  # ANY_RESERVATION: a matching reservation, else on-demand


@dataclass(frozen=True)
class PoolCost:
    pool: str
    capacity: str
    unit: str  # chip-hour | node-hour
    unit_price: float | None  # USD per unit-hour
    units_per_node: int
    min_nodes: int
    max_nodes: int | None
    basis: str = ""  # which price, when it is not simply the list price of the capacity type
    reason: str = ""  # why there is no price
    overridden: tuple[str, ...] = ()  # the gke-ai-batch:prices keys used
    cluster: str = ""

    @property
    def label(self) -> str:
        return f"{self.cluster}/{self.pool}" if self.cluster else self.pool

    def per_hour(self, nodes: int | None) -> float | None:
        if self.unit_price is None or nodes is None:
            return None
        return round(self.unit_price * self.units_per_node * nodes, 4)

    @property
    def per_hour_max(self) -> float | None:
        return self.per_hour(self.max_nodes)

    @property
    def per_hour_min(self) -> float | None:
        return self.per_hour(self.min_nodes)

    @property
    def per_30_days_max(self) -> float | None:
        hour = self.per_hour_max
        return None if hour is None else round(hour * HOURS_PER_30_DAYS, 2)

    @property
    def per_30_days_min(self) -> float | None:
        hour = self.per_hour_min
        return None if hour is None else round(hour * HOURS_PER_30_DAYS, 2)

    def as_json(self) -> dict:
        return {
            "pool": self.pool,
            "cluster": self.cluster,
            "capacity": self.capacity,
            "unit": self.unit,
            "unitPrice": self.unit_price,
            "unitsPerNode": self.units_per_node,
            "minNodes": self.min_nodes,
            "maxNodes": self.max_nodes,
            "perHourMax": self.per_hour_max,
            "per30DaysMax": self.per_30_days_max,
            "perHourMin": self.per_hour_min,
            "per30DaysMin": self.per_30_days_min,
            **({"basis": self.basis} if self.basis else {}),
            **({"reason": self.reason} if self.reason else {}),
            **({"overrides": list(self.overridden)} if self.overridden else {}),
        }


def _lookup(kind: str, name: str, region: str, spot: bool, overrides: Mapping[str, float], used: list[str]):
    """(price, reason): an override by name wins; else the table's row for the region."""
    if name in overrides:
        used.append(name)
        return float(overrides[name]), ""
    return _row_price(kind, name, region, spot)


def _row_price(kind: str, name: str, region: str, spot: bool):
    """(price, reason) of the table's row; a row left out of the table says why."""
    key = (kind, name, region)
    row = price_table.PRICES.get(key)
    what = {"tpu": "TPU chip", "gpu": "GPU", "vm": "machine", "host": "machine"}[kind]
    if row is None:
        why = price_table.DROPPED.get(key)
        missing = f"the price table ({price_table.DATE}) has no {what} price for {name} in {region}"
        return None, missing + (f": {why}" if why else "")
    price = row[1] if spot else row[0]
    if price is None:
        return None, f"the price table ({price_table.DATE}) has no spot price for {name} in {region}"
    return price, ""


def _node(shape: "PoolShape", spot: bool, overrides: Mapping[str, float], used: list[str]):
    """(price, reason) of one node of a machine-type pool. The table prices A2, A3 and G2 machine
    types whole, their fixed GPUs included, as Google's billing catalogue does; GPUs billed apart
    (N1's T4) are added per GPU. A gke-ai-batch:prices rate for such a machine type (without its
    GPUs) or for its GPU type splits the whole price into the host the table also records and the
    GPUs' share (the whole price less the host's)."""
    machine, gpu, region = shape.machine_type, shape.gpu_type, shape.region
    row = price_table.PRICES.get(("vm", machine, region))
    if row is not None and row.gpus and gpu and machine not in overrides and gpu not in overrides:
        return _row_price("vm", machine, region, spot)
    if row is None or not row.gpus or not gpu:
        price, reason = _lookup("vm", machine, region, spot, overrides, used)
        if price is not None and gpu and shape.gpus_per_node:
            per_gpu, reason = _lookup("gpu", gpu, region, spot, overrides, used)
            price = None if per_gpu is None else round(price + per_gpu * shape.gpus_per_node, 6)
        return price, reason
    whole, reason = _row_price("vm", machine, region, spot)
    host, host_reason = _row_price("host", machine, region, spot)
    if machine in overrides:
        used.append(machine)
    if gpu in overrides:
        used.append(gpu)
    split = None if whole is None or host is None else (whole - host) / row.gpus
    host = float(overrides[machine]) if machine in overrides else host
    per_gpu = float(overrides[gpu]) if gpu in overrides else split
    if host is None or per_gpu is None:
        return None, (reason or host_reason) + f" without its GPUs: set both {machine} and {gpu} in gke-ai-batch:prices"
    return round(host + per_gpu * row.gpus, 6), ""


def price_pool(shape: PoolShape, overrides: Mapping[str, float] | None = None) -> PoolCost:
    """The pool's unit price and sizes; a reservation or a price the table lacks gives
    unit_price None with the reason."""
    overrides = overrides or {}
    tpu = shape.tpu_version is not None
    unit, per_node = ("chip-hour", shape.chips_per_node) if tpu else ("node-hour", 1)
    base = dict(pool=shape.pool, cluster=shape.cluster, capacity=shape.capacity, unit=unit, units_per_node=per_node,
                min_nodes=shape.min_nodes, max_nodes=shape.max_nodes)
    if shape.capacity == "reservation" and not shape.any_reservation:
        # The reservation is billed whether or not the pool runs: its price is not the pool's.
        reason = "paid by the reservation" + (f" {shape.reservation}" if shape.reservation else "")
        if shape.max_nodes is not None:
            reason += f": {shape.max_nodes} nodes" + (f", {shape.max_nodes * shape.chips_per_node} chips" if tpu else "")
        return PoolCost(**base, unit_price=None, reason=reason)
    spot = shape.capacity == "spot"
    basis = DWS_BASIS if shape.capacity in ("flex-start", "queued") else ANY_RESERVATION_BASIS if shape.any_reservation else ""
    used: list[str] = []
    if tpu:
        price, reason = _lookup("tpu", shape.tpu_version, shape.region, spot, overrides, used)
    else:
        price, reason = _node(shape, spot, overrides, used)
    if price is None:
        return PoolCost(**base, unit_price=None, reason=reason, overridden=tuple(used))
    return PoolCost(**base, unit_price=price, basis=basis, overridden=tuple(used))


@dataclass(frozen=True)
class Total:
    per_hour_max: float
    per_30_days_max: float
    per_hour_min: float
    per_30_days_min: float
    unpriced: tuple[str, ...]  # pools without a price (reservations included)

    def as_json(self) -> dict:
        return {"perHourMax": self.per_hour_max, "per30DaysMax": self.per_30_days_max,
                "perHourMin": self.per_hour_min, "per30DaysMin": self.per_30_days_min,
                "unpriced": list(self.unpriced)}


def total(costs) -> Total:
    costs = list(costs)
    hour_max = round(sum(c.per_hour_max or 0 for c in costs), 4)
    hour_min = round(sum(c.per_hour_min or 0 for c in costs), 4)
    return Total(hour_max, round(hour_max * HOURS_PER_30_DAYS, 2), hour_min, round(hour_min * HOURS_PER_30_DAYS, 2),
                 tuple(c.label for c in costs if c.per_hour_max is None))
