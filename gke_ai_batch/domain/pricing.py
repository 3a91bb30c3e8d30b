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

Capacity no pool describes (price_class, price_autopilot, unpriced):
- a custom ComputeClass's nodes: each priority priced as a pool of its node shape and capacity
  at the class's limits (the nodes the queues' quota fills, gke_ai_batch/model/computeclass.py
  nodes_at_limits); the class is the range from its cheapest to its dearest priority, and the
  totals and the budget take the dearest, an upper bound (GKE may use any priority).
- an Autopilot cluster's Kueue quotas: what Autopilot bills for Pods that request them, at the
  rates of gke_ai_batch/domain/autopilot_prices.py (GKE's Autopilot pricing), all of it in use.
- node auto-provisioning: machine types GKE picks at run time, so no price, with its limits.

What is not priced: boot and attached disks, network egress, load balancers, the GKE cluster
management fee, Autopilot Pods outside Kueue's quotas (its controllers') and committed-use
discounts. A price the table lacks (a region, a machine type, tpu7x) is no price with its
reason, never a guess; `gke-ai-batch:prices` supplies negotiated or missing rates.

A budget is judged on the total (judge_budget): over it, within it, or unknown when something
that can create nodes has no price (a reservation's pools are paid by the reservation and do
not count)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.domain import autopilot_prices, price_table

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
# What a cost entry prices (PoolCost.kind).
NODE_POOL, COMPUTE_CLASS, AUTOPILOT, AUTO_PROVISIONING = "nodePool", "computeClass", "autopilot", "autoProvisioning"
# The unit of an Autopilot entry: the rates of the quota it prices, for an hour.
QUOTA_HOUR = "quota-hour"


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
    kind: str = NODE_POOL  # NODE_POOL | COMPUTE_CLASS | AUTOPILOT | AUTO_PROVISIONING
    paid_by_reservation: bool = False  # no price because a reservation pays for it
    options: tuple["PoolCost", ...] = ()  # a ComputeClass's priorities, each priced as a pool
    flavors: tuple[str, ...] = ()  # the ResourceFlavors whose capacity this is (not a pool's)
    quota: tuple[tuple[str, str], ...] = ()  # Autopilot: (resource, quota) priced

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

    @property
    def unpriced(self) -> bool:
        """No price that is not a reservation's: the totals miss something that can cost."""
        return self.per_hour_max is None and not self.paid_by_reservation

    def cheapest(self) -> "PoolCost | None":
        """A ComputeClass's cheapest priced priority at the class's limits."""
        priced = [o for o in self.options if o.per_hour_max is not None]
        return min(priced, key=lambda o: o.per_hour_max or 0) if priced else None

    def as_json(self) -> dict:
        low = self.cheapest()
        return {
            "pool": self.pool,
            "kind": self.kind,
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
            **({"paidByReservation": True} if self.paid_by_reservation else {}),
            **({"flavors": list(self.flavors)} if self.flavors else {}),
            **({"quota": dict(self.quota)} if self.quota else {}),
            **({"priorities": [o.as_json() for o in self.options]} if self.options else {}),
            **({"range": {"perHourMax": [low.per_hour_max, self.per_hour_max],
                          "per30DaysMax": [low.per_30_days_max, self.per_30_days_max]}}
               if low is not None and self.per_hour_max is not None else {}),
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
    base: dict[str, Any] = dict(pool=shape.pool, cluster=shape.cluster, capacity=shape.capacity, unit=unit,
                                units_per_node=per_node, min_nodes=shape.min_nodes, max_nodes=shape.max_nodes)
    if shape.capacity == "reservation" and not shape.any_reservation:
        # The reservation is billed whether or not the pool runs: its price is not the pool's.
        reason = "paid by the reservation" + (f" {shape.reservation}" if shape.reservation else "")
        if shape.max_nodes is not None:
            reason += f": {shape.max_nodes} nodes" + (f", {shape.max_nodes * shape.chips_per_node} chips" if tpu else "")
        return PoolCost(**base, unit_price=None, reason=reason, paid_by_reservation=True)
    spot = shape.capacity == "spot"
    basis = DWS_BASIS if shape.capacity in ("flex-start", "queued") else ANY_RESERVATION_BASIS if shape.any_reservation else ""
    used: list[str] = []
    if shape.tpu_version is not None:
        price, reason = _lookup("tpu", shape.tpu_version, shape.region, spot, overrides, used)
    else:
        price, reason = _node(shape, spot, overrides, used)
    if price is None:
        return PoolCost(**base, unit_price=None, reason=reason, overridden=tuple(used))
    return PoolCost(**base, unit_price=price, basis=basis, overridden=tuple(used))


@dataclass(frozen=True)
class ClassShape:
    """A custom ComputeClass as far as its price goes: each priority as a pool of its node
    shape, from 0 to its nodes at the class's limits (max_nodes None: nothing bounds them)."""

    name: str
    priorities: tuple[PoolShape, ...]
    limit: str = ""  # what bounds the nodes: the queues' quota on the class's flavors
    reason: str = ""  # why no price although the priorities have one (nothing bounds the nodes)
    cluster: str = ""
    flavors: tuple[str, ...] = ()
    when_unsatisfiable: str = "DoNotScaleUp"


def price_class(shape: ClassShape, overrides: Mapping[str, float] | None = None) -> PoolCost:
    """The class at its dearest priority (the totals' and the budget's figure, an upper bound:
    GKE may create any priority's nodes), its priorities in `options`, the cheapest in the
    basis. No price, with the reason, when a priority has none (other than a reservation's),
    when nothing bounds the nodes, or when GKE may create nodes outside the priorities."""
    options = tuple(price_pool(p, overrides) for p in shape.priorities)
    capacity = " → ".join(o.capacity for o in options)
    base: dict[str, Any] = dict(
        pool=shape.name, cluster=shape.cluster, capacity=capacity, kind=COMPUTE_CLASS, options=options,
        flavors=shape.flavors, min_nodes=0, overridden=tuple(dict.fromkeys(k for o in options for k in o.overridden)))
    first = options[0] if options else None
    unit, per_node = (first.unit, first.units_per_node) if first else ("node-hour", 1)
    missing = [(i, o) for i, o in enumerate(options) if o.unit_price is None and not o.paid_by_reservation]
    reason = ""
    if shape.when_unsatisfiable == "ScaleUpAnyway":
        reason = "whenUnsatisfiable ScaleUpAnyway: GKE may create nodes outside its priorities"
    elif missing:
        reason = "; ".join(f"priority {i + 1} ({o.capacity}): {o.reason}" for i, o in missing)
    elif shape.reason:
        reason = shape.reason
    priced = [o for o in options if o.per_hour_max is not None]
    if reason or not priced:
        if not reason and options and all(o.paid_by_reservation for o in options):
            return PoolCost(**base, unit=unit, units_per_node=per_node, unit_price=None, max_nodes=None,
                            reason="; ".join(o.reason for o in options), paid_by_reservation=True)
        return PoolCost(**base, unit=unit, units_per_node=per_node, unit_price=None, max_nodes=None,
                        reason=reason or "no priority has a price")
    # On a tie, the exact price over an upper bound (flex-start priced at on-demand).
    dearest = max(priced, key=lambda o: (o.per_hour_max or 0, not o.basis))
    cheapest = min(priced, key=lambda o: o.per_hour_max or 0)
    basis = (f"its dearest priority ({dearest.capacity}), used for the totals and the budget; the cheapest "
             f"({cheapest.capacity}) ${cheapest.per_hour_max:,.2f}/h; at the class's limits: {shape.limit}")
    if any(o.paid_by_reservation for o in options):
        basis += "; a reservation's priority is paid by the reservation"
    if dearest.basis:
        basis += f"; {dearest.capacity}: {dearest.basis}"
    return PoolCost(**base, unit=dearest.unit, units_per_node=dearest.units_per_node,
                    unit_price=dearest.unit_price, max_nodes=dearest.max_nodes, basis=basis)


@dataclass(frozen=True)
class AutopilotShape:
    """A ResourceFlavor of an Autopilot cluster: the quota the ClusterQueues give it (resource ->
    amount in vCPUs, GiB or devices), and the compute class its Pods run on."""

    flavor: str
    region: str
    quota: tuple[tuple[str, float], ...]
    spot: bool = False
    compute_class: str = autopilot_prices.GENERAL_PURPOSE
    cluster: str = ""


def price_autopilot(shape: AutopilotShape, overrides: Mapping[str, float] | None = None) -> PoolCost:
    """What Autopilot bills for Pods that request all of the flavor's quota, per hour: each
    resource at its rate (an override autopilot:RESOURCE, else autopilot_prices.RATES for the
    class, region and Spot). No price, with the reason, for a resource without a rate: GPU and
    TPU Pods are billed at their own classes' rates, not the general-purpose ones."""
    overrides = overrides or {}
    capacity = "spot" if shape.spot else "on-demand"
    shown = tuple((r, _amount(r, v)) for r, v in shape.quota)
    base: dict[str, Any] = dict(pool=shape.flavor, cluster=shape.cluster, capacity=capacity, unit=QUOTA_HOUR,
                                units_per_node=1, min_nodes=0, max_nodes=1, kind=AUTOPILOT, flavors=(shape.flavor,),
                                quota=shown)
    accelerated = any(r in ("nvidia.com/gpu", "google.com/tpu") for r, _ in shape.quota)
    price, used, missing = 0.0, [], []
    for resource, value in shape.quota:
        key = autopilot_prices.OVERRIDE_PREFIX + resource
        if key in overrides:
            used.append(key)
            price += float(overrides[key]) * value
            continue
        row = None if accelerated else autopilot_prices.RATES.get((shape.compute_class, resource, shape.region))
        if row is None:
            missing.append(resource)
            continue
        price += row[1 if shape.spot else 0] * value
    if missing:
        what = (f"Pods that request {' and '.join(r for r, _ in shape.quota if r in ('nvidia.com/gpu', 'google.com/tpu'))} "
                "are billed at GPU or TPU Pod rates" if accelerated else f"{shape.compute_class} Pods")
        reason = (f"Autopilot: no rate for {', '.join(missing)} ({what}; the Autopilot rates recorded "
                  f"({autopilot_prices.DATE}) are {_rates_known()}): give "
                  f"{', '.join(autopilot_prices.OVERRIDE_PREFIX + r for r in missing)} in gke-ai-batch:prices")
        return PoolCost(**base, unit_price=None, reason=reason, overridden=tuple(used))
    basis = (f"GKE Autopilot {shape.compute_class} Pod rates of {autopilot_prices.DATE} "
             f"({autopilot_prices.SOURCE}), the whole quota requested")
    return PoolCost(**base, unit_price=round(price, 6), basis=basis, overridden=tuple(used))


def _amount(resource: str, value: float) -> str:
    unit = autopilot_prices.UNITS.get(resource, "").split("-")[0]
    return f"{value:g} {unit}s" if unit in ("vCPU", "GPU", "chip") else f"{value:g} {unit}"


def _rates_known() -> str:
    known: dict[tuple[str, str], list[str]] = {}
    for c, r, region in autopilot_prices.RATES:
        known.setdefault((c, region), []).append(r)
    return "; ".join(f"{c} {' and '.join(rs)} in {region}" for (c, region), rs in sorted(known.items())) or "nothing"


def unpriced(pool: str, reason: str, kind: str, cluster: str = "") -> PoolCost:
    """Something that can create nodes and has no price: listed, never counted as $0."""
    return PoolCost(pool=pool, cluster=cluster, capacity="", unit="node-hour", unit_price=None, units_per_node=1,
                    min_nodes=0, max_nodes=None, reason=reason, kind=kind)


@dataclass(frozen=True)
class Total:
    per_hour_max: float
    per_30_days_max: float
    per_hour_min: float
    per_30_days_min: float
    unpriced: tuple[str, ...]  # what can create nodes and has no price: the sums miss it
    reserved: tuple[str, ...] = ()  # pools a reservation pays for: not in the sums, by design
    reasons: tuple[str, ...] = ()  # why each of `unpriced` has no price, in its order

    @property
    def complete(self) -> bool:
        return not self.unpriced

    def as_json(self) -> dict:
        return {"perHourMax": self.per_hour_max, "per30DaysMax": self.per_30_days_max,
                "perHourMin": self.per_hour_min, "per30DaysMin": self.per_30_days_min,
                "complete": self.complete, "unpriced": list(self.unpriced), "reserved": list(self.reserved)}


def total(costs) -> Total:
    costs = list(costs)
    hour_max = round(sum(c.per_hour_max or 0 for c in costs), 4)
    hour_min = round(sum(c.per_hour_min or 0 for c in costs), 4)
    missing = [c for c in costs if c.unpriced]
    return Total(hour_max, round(hour_max * HOURS_PER_30_DAYS, 2), hour_min, round(hour_min * HOURS_PER_30_DAYS, 2),
                 tuple(c.label for c in missing), tuple(c.label for c in costs if c.paid_by_reservation),
                 tuple(c.reason or "its maximum size is not known before deploy" for c in missing))


WITHIN, OVER, UNKNOWN = "within", "over", "unknown"


@dataclass(frozen=True)
class BudgetVerdict:
    state: str  # WITHIN | OVER | UNKNOWN
    budget: float
    total: Total

    def as_json(self) -> dict:
        return {"budget": self.budget, "verdict": self.state, "per30DaysMax": self.total.per_30_days_max,
                "unpriced": [{"item": i, "reason": r} for i, r in zip(self.total.unpriced, self.total.reasons)]}


def judge_budget(t: Total, budget: float) -> BudgetVerdict:
    """Over when what is priced already passes the budget; unknown when it does not but
    something that can create nodes has no price (it could cost anything); within only when
    every such thing is priced and the sum stays at or under it."""
    if t.per_30_days_max > budget:
        return BudgetVerdict(OVER, budget, t)
    return BudgetVerdict(UNKNOWN if t.unpriced else WITHIN, budget, t)
