"""What the stack's checks look up on a StackConfig: its zones, its GKE version floors, its
declared flavors' pools. Functions of the config (duck-typed: this module is imported by the
schema modules StackConfig is made of, so it cannot import StackConfig)."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import regions, versions
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.cluster import region_of


def cluster_zones(cfg) -> list[str]:
    """The zones the cluster names for its nodes ([] for a regional cluster without node
    locations: GKE picks them)."""
    if cfg.cluster.node_locations:
        return list(cfg.cluster.node_locations)
    location = cfg.cluster.location
    return [location] if region_of(location) != location else []


def zones_known(cfg, zones: list[str]) -> bool:
    """Whether the cluster's region and these zones passed the locations check, so that what
    they offer can be looked up (else the offer checks stay quiet: the location is reported
    already)."""
    cat = cfg.regions
    region = region_of(cfg.cluster.location)
    return cat.has_region(region) and all(region_of(z) == region and cat.zone(z) is not None for z in zones)


def master_version_problems(cfg) -> Iterator[RuleError]:
    """minMasterVersion must be a minor the cluster's release channel offers."""
    version = cfg.cluster.min_master_version
    if version is None:
        return
    vers = cfg.versions
    channel = cfg.cluster.release_channel
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


def version_floor(cfg, at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
    """A feature GKE refuses below `minimum`, checked against what the cluster's minor alias (or
    its channel's default) resolves to (gke_ai_batch/domain/versions.py explains how), or an
    existing cluster's declared version."""
    if cfg.cluster.existing:
        yield from _existing_version_floor(cfg, at, minimum, what)
        return
    if any(master_version_problems(cfg)):
        return  # minMasterVersion is refused already; what it resolves to is moot
    version = cfg.cluster.min_master_version
    channel = cfg.cluster.release_channel
    vers = cfg.versions
    if vers.resolves_at_least(channel, version, minimum):
        return
    given = f"cluster.minMasterVersion {version!r} gives {vers.resolved_text(channel, version)}" if version else (
        f"without cluster.minMasterVersion the cluster gets {vers.resolved_text(channel, None)}"
    )
    later = [m for m in vers.minors(channel) if versions.minor_of(m) > versions.minor_of(minimum)]
    hint = f"set minMasterVersion to {later[0]!r}" if later else f"use a channel that offers a minor above {minimum}"
    yield RuleError(at, f"{what} need GKE {minimum} or later; {given}; {hint}")


def _existing_version_floor(cfg, at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
    """An existing cluster's control plane runs the one patch it declares (cluster.version);
    GKE refuses a pool whose feature needs a later one (a pool's nodes take the control
    plane's version: REST NodePool.version, "If unspecified, it defaults" to it)."""
    version = cfg.cluster.version
    if version is None or not versions.PATCH_RX.fullmatch(version):
        return  # required, or refused as no exact version (ClusterConfig)
    if versions.patch_key(version) >= versions.patch_key(minimum):
        return
    yield RuleError(
        at,
        f"{what} need GKE {minimum} or later; the existing cluster runs {version} (cluster.version): "
        "upgrade its control plane first, then update cluster.version",
    )


def unknown_pools(cfg, flavor) -> list[str]:
    """The pools a declared flavor names that the stack does not have."""
    names = {p.name for p in cfg.node_pools}
    return [p for p in flavor.pools if p not in names]


def flavors_with_capacity(cfg) -> set[str]:
    """Flavors whose pools carry TPUs or GPUs, so a queue's quota can default to them."""
    if cfg.flavors is None:
        return set(cfg.flavor_names())
    pools = {p.name: p for p in cfg.node_pools}
    return {f.name for f in cfg.flavors if any(pools[p].kind != "cpu" for p in f.pools if p in pools)}


def copies(entries: list) -> set[int]:
    """The entries equal to an earlier one. A copied entry is reported as declared twice (or its
    pool name as made twice); its other rules would only repeat the original's messages."""
    return {i for i, entry in enumerate(entries) if entry in entries[:i]}


def each_once(key: str, what: str, entries: list) -> Iterator[tuple[int, object, tuple[RuleError, ...], bool]]:
    """Each named entry of a list with its "declared twice" problem (none or one), and whether
    its own rules run: not for a copy of an earlier entry (copies)."""
    names: set[str] = set()
    copied = copies(entries)
    for i, entry in enumerate(entries):
        twice = (RuleError((key, i, "name"), f"{what} {entry.name!r} is declared twice"),) if entry.name in names else ()
        names.add(entry.name)
        yield i, entry, twice, i not in copied


def known(items) -> str:
    return ", ".join(items) or "none"


def override_hint(where: str) -> str:
    return (
        f" (gke_ai_batch/domain/regions.py, as of {regions.CATALOGUE_DATE}; if GKE offers it there now, "
        f"add it under gke-ai-batch:catalogue.zones for {where})"
    )
