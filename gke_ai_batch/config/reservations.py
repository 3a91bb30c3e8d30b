"""A pool's `reservation`: which Compute Engine reservation its nodes consume, and the rules GKE
and Compute Engine hold it to (docs/capacity-types.md, "Reservations").

Written as a string (a name, projects/P/reservations/R, either with /reservationBlocks/B and
/reservationSubBlocks/S) or as a mapping that also declares what the reservation holds (its
zone, VM count and machine type) so that a pool that could never consume it is refused here,
not when GKE fails to create its nodes."""

from __future__ import annotations

from typing import Annotated, Iterator, Literal

from pydantic import AfterValidator, Field

from gke_ai_batch.config.base import CLUSTER_NODES_MAX, Model, RuleError
from gke_ai_batch.config.gcpnames import (
    ReservationRef,
    check_gce_name,
    check_project_id,
    parse_reservation,
    reservation_reference,
)
from gke_ai_batch.domain import catalogue, regions

_SPECIFIC_ONLY = ("name", "project", "block", "sub_block", "zone", "count", "machine_type", "calendar")


def _check_zone(value: str) -> str:
    if not regions.ZONE_RX.fullmatch(value):
        raise ValueError(f"{value!r} is not a zone (example: us-central1-a)")
    return value


class ReservationConfig(Model):
    affinity: Literal["specific", "any"] = "specific"
    """specific (default): the named reservation only; any: whichever matching reservation has room,
    else on-demand capacity (GKE's ANY_RESERVATION)."""
    name: Annotated[str, AfterValidator(lambda v: check_gce_name(v, "reservation name"))] | None = None
    """The reservation's name (specific)."""
    project: Annotated[str, AfterValidator(check_project_id)] | None = None
    """The project that owns the reservation when it is not the cluster's: a shared reservation,
    which that project must share with the cluster's."""
    block: Annotated[str, AfterValidator(lambda v: check_gce_name(v, "block name"))] | None = None
    """One block of the reservation (A3, A4 and TPU7x reservations; docs/capacity-types.md)."""
    sub_block: Annotated[str, AfterValidator(lambda v: check_gce_name(v, "sub-block name"))] | None = None
    """One sub-block of that block."""
    zone: Annotated[str, AfterValidator(_check_zone)] | None = None
    """The reservation's zone, when declared: the pool's nodes must be in it."""
    count: int | None = Field(None, ge=1, le=CLUSTER_NODES_MAX)
    """The VMs the reservation holds, when declared: the pool may not need more."""
    machine_type: str | None = None
    """The reservation's machine type, when declared: the pool's must be the same."""
    calendar: bool = False
    """A future reservation in calendar mode (the Dynamic Workload Scheduler's calendar mode)."""

    @property
    def ref(self) -> ReservationRef | None:
        if self.affinity == "any" or self.name is None:
            return None
        return ReservationRef(self.name, self.project, self.block, self.sub_block)


def spec_of(value: str | ReservationConfig | None) -> ReservationConfig | None:
    """The reservation as a mapping, whichever way the stack wrote it."""
    if value is None or isinstance(value, ReservationConfig):
        return value
    ref = parse_reservation(value)
    assert ref is not None, value  # checked on the way in (gcpnames.check_reservation)
    return ReservationConfig.model_construct(
        affinity="specific", name=ref.name, project=ref.project, block=ref.block, sub_block=ref.sub_block
    )


def shown(value: str | ReservationConfig) -> str:
    """A pool's reservation as GKE takes it under compute.googleapis.com/reservation-name (a string
    as written, a mapping as projects/P/reservations/R/...), or ANY_RESERVATION."""
    spec = spec_of(value)
    if spec.affinity == "any":
        return "ANY_RESERVATION"
    return value if isinstance(value, str) else reservation_reference(spec.ref)


def _at(value: str | ReservationConfig, key: str) -> tuple:
    """The key a problem is reported at: the string, or the mapping's own key."""
    camel = {"sub_block": "subBlock", "machine_type": "machineType"}.get(key, key)
    return ("reservation",) if isinstance(value, str) else ("reservation", camel)


def reservation_problems(pool) -> Iterator[RuleError]:
    """Every rule a pool entry's reservation breaks on its own (its zone is the stack's rule,
    zone_problems below). `pool` is a NodePoolConfig with capacity reservation."""
    value = pool.reservation
    spec = spec_of(value)
    if spec.affinity == "any":
        for key in _SPECIFIC_ONLY:
            if key in spec.model_fields_set:
                yield RuleError(
                    _at(value, key),
                    "only for a specific reservation: affinity any consumes whichever matching reservation has "
                    "room (GKE's ANY_RESERVATION names none); remove it, or drop affinity any to consume this one reservation",
                )
        return
    if spec.name is None:
        yield RuleError(("reservation",), "name the reservation (name), or write affinity: any")
        return
    if spec.sub_block is not None and spec.block is None:
        # A sub-block is named within its block (xpk parse_reservation: R/reservationBlocks/B/reservationSubBlocks/S).
        yield RuleError(_at(value, "sub_block"), "a sub-block is named within its block: add block")
    accelerator = _accelerator(pool)
    what = _accelerator_name(pool)
    if spec.block is not None and not getattr(accelerator, "reservation_blocks", False):
        yield RuleError(
            _at(value, "block"),
            f"{what} reservations have no blocks to target ({_supported('reservation_blocks')}); "
            "name the reservation alone",
        )
    elif spec.sub_block is not None and pool.tpu is not None and accelerator.sub_block_vms is not None:
        vms = pool.tpu.slice.vms
        if vms > accelerator.sub_block_vms:
            # GKE docs how-to/tpu-all-capacity-mode, terminology: one sub-block is one 4x4x4 cube
            # of 16 hosts; a slice larger than that cannot be placed in one.
            yield RuleError(
                _at(value, "sub_block"),
                f"a {pool.tpu.topology} slice is {vms} VMs and a {pool.tpu.version} sub-block holds "
                f"{accelerator.sub_block_vms}: target the block, or a slice of at most {accelerator.sub_block_vms} VMs",
            )
    if spec.calendar and not getattr(accelerator, "calendar_mode", False):
        yield RuleError(
            _at(value, "calendar"),
            f"future reservations in calendar mode are not offered for {what} ({_supported('calendar_mode')})",
        )
    if spec.count is not None:
        # A specific reservation holds `count` VMs; nodes beyond it are never created from it
        # (AI-Hypercomputer/xpk src/xpk/core/capacity.py, assess_available_slices: slices that
        # fit = free VMs // VMs per slice).
        need = pool.slice_count * pool.tpu.slice.vms if pool.tpu is not None else pool.max_nodes
        if need is not None and need > spec.count:
            how = f"{pool.slice_count} × {pool.tpu.slice.vms} VMs" if pool.tpu is not None else f"maxNodes {need}"
            yield RuleError(
                _at(value, "count"),
                f"the pool needs {need} VMs ({how}) and the reservation holds {spec.count}: "
                "lower the pool's size or reserve more",
            )
    if spec.machine_type is not None and spec.machine_type != pool.node_machine_type:
        # A specific reservation is consumed only by VMs of its machine type (and accelerators):
        # GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/reservation_definitions.tf
        # refuses a node pool whose machine_type differs from the reservation's.
        yield RuleError(
            _at(value, "machine_type"),
            f"the reservation holds {spec.machine_type} VMs and the pool's nodes are {pool.node_machine_type}: "
            "a VM consumes a reservation only with the reservation's machine type",
        )


def zone_problems(pool, zones: list[str], region: str | None = None) -> Iterator[RuleError]:
    """A specific reservation is zonal (Compute Engine "Reservations of Compute Engine zonal
    resources"): with its zone declared, every zone of the pool must be that one
    (GoogleCloudPlatform/cluster-toolkit gke-node-pool: the reservation must exist in each of the
    pool's zones). `zones` are the pool's ([]: GKE's default zones of the region); `region` the
    cluster's, whose zones alone a pool's nodes can be in."""
    spec = spec_of(pool.reservation)
    if spec is None or spec.affinity == "any" or not isinstance(spec.zone, str):
        return
    if region is not None and regions.region_of(spec.zone) != region:
        yield RuleError(
            _at(pool.reservation, "zone"),
            f"the reservation is in {spec.zone}, outside the cluster's region {region}, and a node pool's nodes are "
            "in the cluster's region: they can never consume it (a reservation serves its own zone only)",
        )
        return
    if zones == [spec.zone]:
        return
    where = ", ".join(zones) if zones else "GKE's default zones of the region"
    yield RuleError(
        ("zones",),
        f"the reservation is in {spec.zone} and the pool's nodes would be in {where}: "
        f"a reservation serves its own zone only; set zones: [{spec.zone}]",
    )


def calendar_zone_problems(pool, zones: list[str], cat: regions.Catalogue) -> Iterator[RuleError]:
    """A future reservation in calendar mode exists only in the zones where Compute Engine takes
    calendar-mode requests for the pool's TPU generation (regions.CALENDAR_TPU_ZONES, dated, with
    the stack's catalogue override): the reservation's zone when declared, else the pool's. GPU
    reservations are not judged here (that page lists TPUs only)."""
    spec = spec_of(pool.reservation)
    if spec is None or not spec.calendar or pool.tpu is None:
        return
    if not catalogue.TPU_GENERATIONS[pool.tpu.version].calendar_mode:
        return  # refused as not offered in calendar mode at all (reservation_problems)
    offered = cat.calendar_tpu_zones(pool.tpu.version)
    chips = pool.tpu.slice.chips
    most = regions.CALENDAR_MAX_CHIPS.get(pool.tpu.version)
    if most is not None and chips > most:
        yield RuleError(
            _at(pool.reservation, "calendar"),
            f"a {pool.tpu.topology} slice is {chips} chips, and a calendar-mode request for TPU {pool.tpu.version} holds "
            f"at most {most} (Compute Engine docs create-future-reservations-calendar-mode, \"Limitations\", as of "
            f"{regions.CALENDAR_DATE}): no such reservation holds the slice",
        )
        return
    for zone in [spec.zone] if isinstance(spec.zone, str) else zones:
        if zone in regions.CALENDAR_SERVING_ZONES.get(pool.tpu.version, ()) and chips not in regions.CALENDAR_SERVING_CHIPS:
            yield RuleError(
                _at(pool.reservation, "calendar"),
                f"{zone} takes calendar-mode requests for TPU {pool.tpu.version} for serving only, of "
                f"{', '.join(map(str, regions.CALENDAR_SERVING_CHIPS))} chips, and a {pool.tpu.topology} slice is {chips} "
                f"(Compute Engine docs create-future-reservations-calendar-mode, \"Limitations\", as of "
                f"{regions.CALENDAR_DATE}): reserve it in {', '.join(z for z in offered if z != zone) or 'another zone'}",
            )
            return
        if zone not in offered:
            yield RuleError(
                _at(pool.reservation, "calendar"),
                f"Compute Engine takes calendar-mode future reservations for TPU {pool.tpu.version} only in "
                f"{', '.join(offered) or 'no zone'}, not {zone}, so no such reservation can exist there (Cloud TPU "
                f"docs calendar-mode-reservation, \"Limitations\", as of {regions.CALENDAR_DATE}; if it takes them "
                f"there now, add {pool.tpu.version} under gke-ai-batch:catalogue.zones.{zone}.calendar)",
            )
            return


def _accelerator(pool):
    if pool.tpu is not None:
        return catalogue.TPU_GENERATIONS[pool.tpu.version]
    if pool.gpu is not None:
        return catalogue.GPU_TYPES[pool.gpu.type]
    return None


def _accelerator_name(pool) -> str:
    if pool.tpu is not None:
        return f"TPU {pool.tpu.version}"
    if pool.gpu is not None:
        return pool.gpu.type
    return f"CPU ({pool.node_machine_type})"


def _supported(flag: str) -> str:
    """The catalogue's accelerators with a reservation feature, named as the config names them."""
    tpus = [f"TPU {v}" for v, g in catalogue.TPU_GENERATIONS.items() if getattr(g, flag)]
    gpus = [t for t, g in catalogue.GPU_TYPES.items() if getattr(g, flag)]
    return "offered for " + ", ".join(gpus + tpus)
