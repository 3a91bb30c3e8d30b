"""Which stack-file keys would replace (delete and recreate) this stack's GKE node pools.

Source: the google_container_node_pool schema of terraform-provider-google 7.x, which
pulumi-gcp 10 bridges (google/services/container/resource_container_node_pool.go and
node_config.go). ForceNew there means replace here: name, cluster, location,
initial_node_count, placement_policy (the block, and policy_name), queued_provisioning, and in
node_config: spot, flex_start, max_run_duration, reservation_affinity, guest_accelerator
(type, count, gpu_driver_installation_config), service_account, oauth_scopes,
shielded_instance_config, metadata. machine_type, gvnic, labels, taints, node_locations,
node_count, autoscaling and management update in place. placement_policy.tpu_topology is not
ForceNew, so the program marks a TPU pool's placement policy and machine type
replace-on-change itself (gke_ai_batch/components/nodepools.py).
"""

from __future__ import annotations

from gke_ai_batch.config.reservations import shown
from gke_ai_batch.plan.kueue import go_duration

from .md import code, codes, table

REPLACES = "**replaces**"

# The ForceNew inputs above, by Pulumi type and input path, for a diff of two renders
# (gke_ai_batch/synth/diff.py): a change at or under one of them replaces the resource. A resource's own
# `replaceOnChanges` adds to these. Kubernetes objects are replaced when their name or
# namespace changes (pulumi-kubernetes provider/pkg/provider/provider.go, forceNewProperties).
FORCE_NEW = {
    "gcp:container/nodePool:NodePool": (
        "name", "cluster", "location", "project", "initialNodeCount", "placementPolicy", "queuedProvisioning",
        "nodeConfig.spot", "nodeConfig.flexStart", "nodeConfig.maxRunDuration", "nodeConfig.reservationAffinity",
        "nodeConfig.guestAccelerators", "nodeConfig.serviceAccount", "nodeConfig.oauthScopes",
        "nodeConfig.shieldedInstanceConfig", "nodeConfig.metadata",
    ),
    # resource_container_cluster.go: name, location, project and datapath_provider are ForceNew.
    "gcp:container/cluster:Cluster": ("name", "location", "project", "datapathProvider"),
    # resource_google_service_account.go: account_id and project are ForceNew.
    "gcp:serviceaccount/account:Account": ("accountId", "project"),
}
KUBERNETES_FORCE_NEW = ("metadata.name", "metadata.namespace")


def section(plan, protected: dict[str, bool], prefix: str = "") -> list[str]:
    """`prefix`: where the plan's keys sit in the stack file (a fleet worker's are under
    `fleet.workers[i].`)."""
    cfg = plan.config
    entries = list(cfg.node_pools)
    pools_of = {e.name: [p.name for p in plan.pools if p.entry == e.name] for e in entries}
    rows: list[list[str]] = []

    def add(key: str, here: list[str], effect: str) -> None:
        if here:
            rows.append([key, ", ".join(here), effect])

    add(
        "`nodePools[].name`",
        [codes(pools_of[e.name]) for e in entries],
        f"{REPLACES}: pools are named `<name>-<i>` (TPU) or `<name>`, so a new name deletes them "
        "and creates new ones",
    )
    tpu = [e for e in entries if e.tpu is not None]
    add(
        "`nodePools[].slices`",
        [f"{code(e.name)} ({e.slice_count})" for e in tpu],
        "fewer **deletes** pools from the top" + _slice_example(tpu) + "; more only adds `<name>-<n>` pools",
    )
    add(
        "`nodePools[].capacity`",
        [f"{code(e.name)} ({e.capacity})" for e in entries],
        f"{REPLACES}: `spot`, `flex_start`, `reservation_affinity`, `queued_provisioning` are ForceNew; "
        "a derived flavor is renamed too",
    )
    add(
        "`nodePools[].reservation`",
        [f"{code(e.name)} ({code(shown(e.reservation))})" for e in entries if e.reservation],
        f"{REPLACES} (`reservation_affinity`)",
    )
    add(
        "`nodePools[].maxRunDuration`",
        [
            f"{code(e.name)} ({go_duration(e.max_run_duration) if e.max_run_duration is not None else 'unset'})"
            for e in entries
            if e.capacity in ("flexStart", "queued")
        ],
        f"{REPLACES} when set, changed or removed (`max_run_duration`)",
    )
    add(
        "`nodePools[].gpu` (type, count, driverVersion)",
        [f"{code(e.name)} ({e.gpu.count} × {e.gpu.type}, {e.gpu.driver_version})" for e in entries if e.gpu],
        f"{REPLACES} (`guest_accelerator`)",
    )
    # Generations whose multi-host slices are placed by a workload policy (catalogue.TpuGeneration).
    with_policy = sorted({e.tpu.version for e in tpu if e.tpu.slice.generation.workload_policy})
    add(
        "`nodePools[].tpu.topology`, `tpu.version`, `tpu.machineType`",
        [f"{code(e.name)} ({e.tpu.topology}, {_hosts(e)}, {e.node_machine_type})" for e in tpu],
        f"{REPLACES}: the program marks a TPU pool's `placementPolicy` and machine type "
        "replace-on-change, because GKE cannot reshape a slice in place"
        + (f"; the {', '.join(with_policy)} workload policy is replaced too" if with_policy else ""),
    )
    other = [e for e in entries if e.tpu is None]
    add(
        "`nodePools[].machineType`, `gvnic`",
        [f"{code(e.name)} ({e.node_machine_type}{', gVNIC' if e.gvnic else ''})" for e in other]
        + [f"{code(e.name)} (gVNIC)" for e in tpu if e.gvnic],
        "in place (`machine_type`, `gvnic`), but GKE recreates every node: running pods stop",
    )
    add(
        "`nodePools[].zones`, `cluster.nodeLocations`",
        [f"{code(e.name)} ({', '.join(cfg.pool_zones(e)) or 'GKE default'})" for e in entries],
        "in place (`node_locations`); nodes in a dropped zone are deleted, and a TPU slice lives in one zone",
    )
    add(
        "`nodePools[].labels`, `taints`, `minNodes`, `maxNodes`",
        ["every pool"] if entries else [],
        "in place; nodes are kept",
    )
    if cfg.cluster.existing:
        # Nothing here owns the cluster: another name or location is another cluster the pools
        # (ForceNew `cluster`, `location` on google_container_node_pool) are recreated on.
        rows.append(
            [
                "`cluster.name`, `cluster.location`",
                "every pool" if entries else "—",
                f"{REPLACES} every node pool (on the cluster they then name); the existing cluster is untouched",
            ]
        )
    else:
        rows.append(
            [
                "`cluster.name`, `cluster.location`",
                "every pool" if entries else "the cluster",
                f"{REPLACES} the cluster"
                + (" and every node pool" if entries else "")
                + " (the node service account `<name>-nodes` too)",
            ]
        )
    if cfg.cluster.standard and not cfg.cluster.existing:
        # google_container_cluster: datapath_provider is ForceNew (resource_container_cluster.go).
        rows.append(
            [
                "`cluster.dataplaneV2`",
                "on" if cfg.cluster.dataplane_v2 else "off",
                f"{REPLACES} the cluster (`datapath_provider`); GKE deletes its node pools with it",
            ]
        )
    if entries:
        rows.append(
            [
                "(program) node service account, OAuth scopes, shielded VM, metadata",
                "every pool",
                f"{REPLACES} (ForceNew): a change in `gke_ai_batch/plan/pools.py` replaces pools of every stack",
            ]
        )

    if prefix:
        for r in rows:
            r[0] = r[0].replace("`nodePools", f"`{prefix}nodePools").replace("`cluster.", f"`{prefix}cluster.")
    lines = table(["stack key", "here", "if changed"], rows)
    if not entries:
        lines.append("")
        lines.append("No node pool entries (Autopilot or none declared): no stack key replaces a node pool.")
    lines.append("")
    lines.append(_protection(plan, protected))
    return lines


def _slice_example(tpu) -> str:
    multi = next((e for e in tpu if e.slice_count > 1), None)
    if multi is None:
        return " (`<name>-<n-1>` first)"
    n = multi.slice_count
    return f" ({code(multi.name)}: {n} → {n - 1} deletes {code(f'{multi.name}-{n - 1}')})"


def _hosts(entry) -> str:
    s = entry.tpu.slice
    return f"multi-host, {s.vms} VMs" if s.multi_host else "single-host"


def _protection(plan, protected: dict[str, bool]) -> str:
    names = [p.name for p in plan.pools]
    held = [n for n in names if protected.get(n)]
    if plan.config.production:
        if names and len(held) != len(names):
            loose = [n for n in names if not protected.get(n)]
            return (
                f"**Production stack**, but {codes(loose)} are not protected: a replacement there deletes "
                "the pool without a guard."
            )
        return (
            "**Production stack:** the cluster, the node pools and the node service account are `protect`ed, "
            "so `pulumi up` "
            "refuses to delete or replace them until protection is lifted (`pulumi state unprotect <urn>`, "
            "in its own reviewed change)."
        )
    if held:
        return f"Not a production stack; {codes(held)} are protected all the same."
    if not names:
        return "Not a production stack: the cluster is not protected."
    return (
        "Not a production stack: nothing is protected, so a replacement deletes the pool and evicts "
        "what runs on it."
    )
