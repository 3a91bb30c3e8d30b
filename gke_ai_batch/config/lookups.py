"""What the stack's checks look up: the facts about the cluster a rule stands on
(ClusterFacts: its zones, its GKE version floors), and a StackConfig's declared flavors' pools.
Functions of the config are duck-typed: this module is imported by the schema modules
StackConfig is made of, so it cannot import StackConfig."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from pydantic import ValidationError

from gke_ai_batch.domain import regions, versions
from gke_ai_batch.domain.regions import DEFAULT as DEFAULT_ZONES, Catalogue as ZoneCatalogue
from gke_ai_batch.domain.versions import DEFAULT as DEFAULT_VERSIONS, Versions
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.catalogue import CatalogueOverride
from gke_ai_batch.config.checks import valid
from gke_ai_batch.config.cluster import ClusterConfig, region_of
from gke_ai_batch.config.errors import field_path, located_problems


@dataclass(frozen=True)
class ClusterFacts:
    """What a rule about one entry (a node pool, a compute class) needs to know of its cluster:
    its name, where it is, its GKE version facts, its mode, whether it exists already, and the
    catalogue override. A stack's checks make it from the stack (of); a component from the
    ClusterRef it is given, so both run the same rule on the same data."""

    name: str
    location: str
    node_locations: tuple[str, ...] = ()
    standard: bool = True
    existing: bool = False
    release_channel: str = "REGULAR"
    min_master_version: str | None = None
    version: str | None = None
    """An existing cluster's control plane's exact GKE version."""
    catalogue: CatalogueOverride = field(default_factory=CatalogueOverride)
    regions: ZoneCatalogue = DEFAULT_ZONES
    """The zone catalogue with the override applied."""
    versions: Versions = DEFAULT_VERSIONS
    """The version catalogue with the override applied."""

    @classmethod
    def of(cls, cluster: ClusterConfig, catalogue: CatalogueOverride) -> ClusterFacts:
        return cls(
            name=cluster.name,
            location=cluster.location or "",  # a validated cluster has one (ClusterConfig requires it)
            node_locations=tuple(cluster.node_locations),
            standard=cluster.standard,
            existing=cluster.existing,
            release_channel=cluster.release_channel,
            min_master_version=cluster.min_master_version,
            version=cluster.version,
            catalogue=catalogue,
            regions=catalogue.region_catalogue(),
            versions=catalogue.version_catalogue(),
        )

    @property
    def region(self) -> str:
        return region_of(self.location)


def validated_cluster(
    entry: dict[str, Any], catalogue: Any
) -> tuple[list[tuple[tuple, str]], ClusterConfig | None, ClusterFacts | None]:
    """A cluster key given by field name (a component's args, ClusterConfig) and a catalogue as a
    stack spells it (CatalogueOverride), each validated by its model: every problem at its field
    path (the catalogue's under "catalogue"), and the cluster and its facts once both are valid.
    What a cluster component and a pool's ClusterRef both stand on; each runs its own rules on
    the facts."""
    found: list[tuple[tuple, str]] = []
    cluster = override = None
    try:
        cluster = ClusterConfig.model_validate(entry, by_alias=False, by_name=True)
    except ValidationError as exc:
        found += [(field_path(ClusterConfig, loc), msg) for loc, msg in located_problems(exc, ClusterConfig)]
    try:
        override = CatalogueOverride.model_validate(catalogue if isinstance(catalogue, dict) else {})
    except ValidationError as exc:
        found += [(("catalogue", *loc), msg) for loc, msg in located_problems(exc, CatalogueOverride)]
    if cluster is None or override is None:
        return found, None, None
    return found, cluster, ClusterFacts.of(cluster, override)


def under(prefix: tuple, found: Iterable[RuleError]) -> Iterator[RuleError]:
    """Problems found about one entry or key (paths relative to it), under its key path."""
    for problem in found:
        yield RuleError((*prefix, *problem.path), problem.message)


def cluster_zones(facts: ClusterFacts) -> list[str]:
    """The zones the cluster names for its nodes ([] for a regional cluster without node
    locations: GKE picks them)."""
    if facts.node_locations:
        return list(facts.node_locations)
    location = facts.location
    return [location] if region_of(location) != location else []


def pool_zones(pool, facts: ClusterFacts) -> list[str]:
    """Zones a pool entry's nodes go to, where it or its cluster says; [] means GKE's default."""
    if pool.zones:
        return list(pool.zones)
    return cluster_zones(facts)


def unknown_zone(facts: ClusterFacts, at: tuple, location: str) -> Iterator[RuleError]:
    """A zone of a region the catalogue knows must be one of that region's zones
    (gke_ai_batch/domain/regions.py, or the catalogue override)."""
    cat = facts.regions
    region = region_of(location)
    if region == location or region not in cat.regions:
        return  # a region (checked apart), or a zone of another region (refused elsewhere)
    if cat.zone(location) is None:
        yield RuleError(
            at,
            f"{location!r} is not a zone of {region}; its zones: {', '.join(cat.zones_of(region))} "
            "(a newer one: add it under gke-ai-batch:catalogue.zones)",
        )


def zones_known(facts: ClusterFacts, zones: list[str]) -> bool:
    """Whether the cluster's region and these zones passed the locations check, so that what
    they offer can be looked up (else the offer checks stay quiet: the location is reported
    already)."""
    cat = facts.regions
    region = facts.region
    return cat.has_region(region) and all(region_of(z) == region and cat.zone(z) is not None for z in zones)


def master_version_problems(facts: ClusterFacts) -> Iterator[RuleError]:
    """minMasterVersion must be a minor the cluster's release channel offers."""
    version = facts.min_master_version
    if version is None:
        return
    vers = facts.versions
    channel = facts.release_channel
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


def version_floor(facts: ClusterFacts, at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
    """A feature GKE refuses below `minimum`, checked against what the cluster's minor alias (or
    its channel's default) resolves to (gke_ai_batch/domain/versions.py explains how), or an
    existing cluster's declared version."""
    if facts.existing:
        yield from _existing_version_floor(facts, at, minimum, what)
        return
    if any(master_version_problems(facts)):
        return  # minMasterVersion is refused already; what it resolves to is moot
    version = facts.min_master_version
    channel = facts.release_channel
    vers = facts.versions
    if vers.resolves_at_least(channel, version, minimum):
        return
    given = f"cluster.minMasterVersion {version!r} gives {vers.resolved_text(channel, version)}" if version else (
        f"without cluster.minMasterVersion the cluster gets {vers.resolved_text(channel, None)}"
    )
    later = [m for m in vers.minors(channel) if versions.minor_of(m) > versions.minor_of(minimum)]
    hint = f"set minMasterVersion to {later[0]!r}" if later else f"use a channel that offers a minor above {minimum}"
    yield RuleError(at, f"{what} need GKE {minimum} or later; {given}; {hint}")


def _existing_version_floor(facts: ClusterFacts, at: tuple, minimum: str, what: str) -> Iterator[RuleError]:
    """An existing cluster's control plane runs the one patch it declares (cluster.version);
    GKE refuses a pool whose feature needs a later one (a pool's nodes take the control
    plane's version: REST NodePool.version, "If unspecified, it defaults" to it)."""
    version = facts.version
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
    pool name as made twice); its other rules would only repeat the original's messages. A
    partial stack's invalid entries are neither copies nor copied (checks.valid)."""
    seen = valid(entries)
    return {i for n, (i, entry) in enumerate(seen) if any(entry == other for _, other in seen[:n])}


def each_once(key: str, what: str, entries: list) -> tuple[list[RuleError], list[tuple[int, Any]]]:
    """Every named entry's "declared twice" problem, and the entries whose own rules run (not a
    copy of an earlier entry: copies). All the names first: on a partial stack a check stops at
    its first read of an invalid key (an entry's rules read the cluster, say), and a name
    declared twice needs none. A partial stack's invalid entries are left out (checks.valid)."""
    names: set[str] = set()
    twice: list[RuleError] = []
    copied = copies(entries)
    for i, entry in valid(entries):
        if entry.name in names:
            twice.append(RuleError((key, i, "name"), f"{what} {entry.name!r} is declared twice"))
        names.add(entry.name)
    return twice, [(i, entry) for i, entry in valid(entries) if i not in copied]


def known(items) -> str:
    return ", ".join(items) or "none"


def override_hint(where: str) -> str:
    return (
        f" (gke_ai_batch/domain/regions.py, as of {regions.CATALOGUE_DATE}; if GKE offers it there now, "
        f"add it under gke-ai-batch:catalogue.zones for {where})"
    )
