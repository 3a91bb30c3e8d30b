"""`gke-ai-batch:catalogue`: a stack's additions to the zone and version catalogues
(components/regions.py, components/versions.py), for zones, accelerators or GKE versions newer
than the catalogues. An override only adds: it never removes what the catalogue offers.
synth's report lists every override a stack relies on."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from .. import catalogue, regions, versions
from .base import Model, RuleError, raise_all

TpuVersion = Literal["v4", "v5e", "v5p", "v6e", "tpu7x"]


class ZoneOffer(Model):
    """What a zone offers, in addition to what the catalogue says."""

    tpu: list[TpuVersion] = []
    """TPU generations GKE offers in the zone (config values: v4, v5e, v5p, v6e, tpu7x)."""
    gpu: list[str] = []
    """GPU types GKE offers in the zone (e.g. nvidia-h100-80gb)."""

    @field_validator("gpu")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        raise_all(
            RuleError(i, f"unknown GPU type {gpu!r}; allowed: {', '.join(catalogue.GPU_TYPES)}")
            for i, gpu in enumerate(v)
            if gpu not in catalogue.GPU_TYPES
        )
        return v


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
        raise_all(
            RuleError(i, f"{minor!r} is not a minor version such as '1.38'")
            for i, minor in enumerate(v)
            if not versions.MINOR_RX.fullmatch(minor)
        )
        return v

    @field_validator("patches")
    @classmethod
    def _patches(cls, v: list[str]) -> list[str]:
        raise_all(
            RuleError(i, f"{patch!r} is not an exact GKE version such as 1.36.2-gke.1000000")
            for i, patch in enumerate(v)
            if not versions.PATCH_RX.fullmatch(patch)
        )
        return v

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
    channels: dict[Literal["RAPID", "REGULAR", "STABLE"], ChannelOffer] = {}
    """Release channel -> minors, default and patches it offers beyond the catalogue."""

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
        return regions.DEFAULT.extended({z: (o.tpu, o.gpu) for z, o in self.zones.items()})

    def version_catalogue(self) -> versions.Versions:
        if not self.channels:
            return versions.DEFAULT
        return versions.DEFAULT.extended({c: (o.minors, o.default, o.patches) for c, o in self.channels.items()})

    def summary(self) -> list[str]:
        """One line per override, for synth's report."""
        lines = []
        for name, offer in self.zones.items():
            known = regions.DEFAULT.zone(name)
            what = [*offer.tpu, *offer.gpu]
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
        return lines
