"""`gke-ai-batch:catalogue`: a stack's additions to the zone and version catalogues
(gke_ai_batch/domain/regions.py, gke_ai_batch/domain/versions.py), for zones, accelerators or GKE versions newer
than the catalogues. An override only adds: it never removes what the catalogue offers.
synth's report lists every override a stack relies on."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import machines

from gke_ai_batch.domain import regions

from gke_ai_batch.domain import versions
from gke_ai_batch.config.base import Model, RuleError, raise_all
from gke_ai_batch.config.gcpnames import GCE_NAME_RULE, GCE_NAME_RX

# The generations are the catalogue's (gke_ai_batch/domain/catalogue.py), never retyped here.
TpuVersion = Literal[catalogue.TPU_VERSIONS]  # type: ignore[valid-type]


def _each(values: list[str], ok, message) -> list[str]:
    """Refuse every entry of a list that is not ok, each at its index."""
    raise_all(RuleError(i, message(value)) for i, value in enumerate(values) if not ok(value))
    return values


class ZoneOffer(Model):
    """What a zone offers, in addition to what the catalogue says."""

    tpu: list[TpuVersion] = []
    """TPU generations GKE offers in the zone (config values: v4, v5e, v5p, v6e, tpu7x)."""
    gpu: list[str] = []
    """GPU types GKE offers in the zone (e.g. nvidia-h100-80gb)."""
    calendar: list[TpuVersion] = []
    """TPU generations Compute Engine takes calendar-mode future reservations for in the zone."""

    @field_validator("gpu")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        return _each(
            v, catalogue.GPU_TYPES.__contains__, lambda gpu: f"unknown GPU type {gpu!r}; allowed: {', '.join(catalogue.GPU_TYPES)}"
        )


class ChannelOffer(Model):
    """What a release channel offers, in addition to what the catalogue says."""

    minors: list[str] = []
    """Minor versions (e.g. '1.38') offered for cluster creation in the channel."""
    default: str | None = None
    """The exact version GKE now creates clusters with in this channel (e.g. 1.36.2-gke.1000000)."""
    patches: list[str] = []
    """Exact versions known to be offered in the channel; they decide whether a minor alias meets a
    feature's minimum version."""

    @field_validator("minors")
    @classmethod
    def _minors(cls, v: list[str]) -> list[str]:
        return _each(v, versions.MINOR_RX.fullmatch, lambda minor: f"{minor!r} is not a minor version such as '1.38'")

    @field_validator("patches")
    @classmethod
    def _patches(cls, v: list[str]) -> list[str]:
        return _each(
            v, versions.PATCH_RX.fullmatch, lambda patch: f"{patch!r} is not an exact GKE version such as 1.36.2-gke.1000000"
        )

    @field_validator("default")
    @classmethod
    def _default(cls, v: str | None) -> str | None:
        if v is not None and not versions.PATCH_RX.fullmatch(v):
            raise ValueError(f"{v!r} is not an exact GKE version such as 1.36.2-gke.1000000")
        return v


class CatalogueOverride(Model):
    """Additions to the built-in catalogues, for what is newer than them. Each entry is listed in
    synth's report, so a reviewer sees what the stack vouches for itself."""

    zones: dict[str, ZoneOffer] = {}
    """Zone name -> TPU generations and GPU types it offers; adds the zone (and its region) if
    the catalogue lacks it, extends it otherwise."""
    channels: dict[Literal[versions.CHANNEL_NAMES], ChannelOffer] = {}  # type: ignore[valid-type]
    """Release channel -> minors, default and patches it offers beyond the catalogue."""
    machine_types: list[str] = []
    """Compute Engine machine types newer than the machine catalogue (gke_ai_batch/domain/machines.py), for
    CPU and system pools (a series it lists but does not size, such as c4, needs no entry); their
    vCPUs and memory are unknown here, so queues' cpu and memory quotas are not derived from them."""

    @field_validator("machine_types")
    @classmethod
    def _machine_type_names(cls, v: list[str]) -> list[str]:
        return _each(v, GCE_NAME_RX.fullmatch, lambda name: f"{name!r} is not a machine type name: {GCE_NAME_RULE}")

    def machine_type_problem(self, name: str) -> str | None:
        """Why Compute Engine has no machine type `name`, as far as the machine catalogue and
        this override know (or GKE refuses it); None if it has one."""
        if name in machines.GKE_REFUSED:
            return machines.GKE_REFUSED[name]
        if name in self.machine_types or machines.unsized(name):
            return None
        if not GCE_NAME_RX.fullmatch(name):
            return f"{name!r} is not a machine type name: {GCE_NAME_RULE}"
        try:
            machines.machine_type(name)
        except catalogue.CatalogueError as e:
            return (
                f"{e} (gke_ai_batch/domain/machines.py; if Compute Engine offers it now, add it under "
                "gke-ai-batch:catalogue.machineTypes)"
            )
        return None

    @field_validator("zones")
    @classmethod
    def _zone_names(cls, v: dict[str, ZoneOffer]) -> dict[str, ZoneOffer]:
        raise_all(
            RuleError(name, f"{name!r} is not a zone (example: us-central1-a)")
            for name in v
            if not regions.ZONE_RX.fullmatch(name)
        )
        return v

    def region_catalogue(self) -> regions.Catalogue:
        if not self.zones:
            return regions.DEFAULT
        return regions.DEFAULT.extended({z: (o.tpu, o.gpu, o.calendar) for z, o in self.zones.items()})

    def version_catalogue(self) -> versions.Versions:
        if not self.channels:
            return versions.DEFAULT
        return versions.DEFAULT.extended({c: (o.minors, o.default, o.patches) for c, o in self.channels.items()})

    def summary(self) -> list[str]:
        """One line per override, for synth's report."""
        lines = []
        for name, offer in self.zones.items():
            known = regions.DEFAULT.zone(name)
            what = [*offer.tpu, *offer.gpu, *(f"{v} in calendar mode" for v in offer.calendar)]
            verb = "adds zone" if known is None else "extends zone"
            lines.append(f"{verb} {name}" + (f": {', '.join(what)}" if what else ""))
        for name, offer in self.channels.items():
            parts = []
            if offer.minors:
                parts.append(f"minors {', '.join(offer.minors)}")
            if offer.default:
                parts.append(f"default {offer.default}")
            if offer.patches:
                parts.append(f"patches {', '.join(offer.patches)}")
            lines.append(f"channel {name}: {'; '.join(parts) or 'nothing'}")
        lines += [f"adds machine type {name}" for name in self.machine_types]
        return lines
