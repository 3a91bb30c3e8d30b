"""Kueue ResourceFlavors: the pools each declares, and the CRD's limits."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import naming
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check, entry, valid
from gke_ai_batch.config.lookups import copies, each_once, known, unknown_pools
from gke_ai_batch.config.batch import FlavorConfig
from gke_ai_batch.config.pools import NodePoolConfig

# ResourceFlavor CRD (kueue.x-k8s.io_resourceflavors.yaml): nodeLabels maxProperties 8,
# tolerations maxItems 8.
KUEUE_FLAVOR_MAX_LABELS = 8
KUEUE_FLAVOR_MAX_TOLERATIONS = 8


@check("flavors", on_manager=False)
def flavor_references(cfg, ctx) -> Iterator[RuleError]:
    """A declared flavor names known pools, each pool in one flavor, of one kind and one
    admission path, whose nodes carry the flavor's nodeLabels (Kueue docs
    concepts/resource_flavor: Kueue places a workload by the flavor's labels, so a label no
    node carries places it nowhere)."""
    if cfg.flavors is None:
        # With node pools listed, "Autopilot has no node pools" is the message (and this one's
        # "no node pools to derive them from" would not be true yet).
        if not cfg.cluster.standard and cfg.cluster_queues and not cfg.node_pools:
            yield RuleError(
                "flavors",
                "Autopilot stacks declare their flavors (there are no node pools to derive them from)",
            )
        return
    twice, own = each_once("flavors", "flavor", cfg.flavors)
    yield from twice  # before reading the pools: a name declared twice needs none
    pools = {p.name: p for p in cfg.node_pools}
    owner: dict[str, int] = {}
    for i, flavor in own:
        for j, pool_name in enumerate(flavor.pools):
            if pool_name not in pools:
                yield RuleError(
                    ("flavors", i, "pools", j),
                    f"unknown node pool {pool_name!r}; known: {known(pools)}",
                )
            elif pool_name in owner:
                if cfg.flavors[owner[pool_name]].name == flavor.name:
                    continue  # the same flavor declared twice: that is the one message
                yield RuleError(
                    ("flavors", i, "pools", j),
                    f"pool {pool_name!r} already belongs to flavors[{owner[pool_name]}]",
                )
            else:
                owner[pool_name] = i
        if unknown_pools(cfg, flavor):
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


@check("flavors", on_manager=False)
def flavor_limits(cfg, ctx) -> Iterator[RuleError]:
    """Kueue's ResourceFlavor CRD: at most 8 node labels and 8 tolerations."""
    if cfg.flavors is not None:
        copied = copies(cfg.flavors)  # the same as an earlier flavor: its messages
        for i, flavor in valid(cfg.flavors):
            if i not in copied:
                yield from flavor_limit_entry(cfg, ctx, i, flavor)
        return
    members: dict[str, list[NodePoolConfig]] = {}
    for pool in cfg.node_pools:
        name = cfg.pool_flavor(pool)
        if name is not None:
            members.setdefault(name, []).append(pool)
    for name, mine in members.items():
        yield from _limits(("nodePools", cfg.node_pools.index(mine[0])), "labels", "taints", name, None, mine)


@entry("flavors", on_manager=False)
def flavor_limit_entry(cfg, ctx, i: int, flavor: FlavorConfig) -> Iterator[RuleError]:
    """One declared flavor's CRD limits (the flavor_limits check's, on each entry that is not a copy)."""
    if unknown_pools(cfg, flavor):
        return  # reported by flavor_references
    pools = {p.name: p for p in cfg.node_pools}
    mine = [pools[p] for p in flavor.pools]
    yield from _limits(("flavors", i), "nodeLabels", "tolerations", flavor.name, flavor, mine)


def _limits(
    at: tuple[str | int, ...], labels_key: str, tolerations_key: str, name: str, flavor: FlavorConfig | None,
    mine: list[NodePoolConfig],
) -> Iterator[RuleError]:
    """A flavor's labels and tolerations: declared, or its pools' (`flavor` None: derived)."""
    if flavor is not None and flavor.node_labels is not None:
        labels = dict(flavor.node_labels)
    else:
        sets = [naming.pool_node_labels(p) for p in mine]
        labels = {k: v for k, v in (sets[0] if sets else {}).items() if all(x.get(k) == v for x in sets)}
    if flavor is not None and flavor.tolerations is not None:
        tolerations = len(flavor.tolerations)
    else:
        tolerations = len({(t["key"], t["value"], t["effect"]) for p in mine for t in naming.pool_taints(p)})
    yield from flavor_limit_problems(at, labels_key, tolerations_key, name, labels, tolerations)


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
