"""Hypothesis strategies over stack files: random VALID `config:` mappings, and random
MUTATIONS of them that a stack file's many editors could make (typos, wrong types, missing
keys, out-of-range numbers, bad names and values, duplicates, broken cross-references).

A valid stack is built from the catalogue (gke_ai_batch/domain/catalogue.py), so every TPU shape,
machine type and GPU count is one GKE offers; the rules that span keys (one zone per TPU
slice, flexStart and tpu7x versions, derived flavor names, queue/team/priority references,
a queued workload's pool offered by its team's queue) are followed by construction, not by
filtering. What a test checks against (`expected_*`, `vms_of`, `derived_flavor`, ...) is
computed here from the stack file alone, independently of the program.

A mutation comes with where the error must point: `Mutation.paths`, stack-file key paths
such as `gke-ai-batch:nodePools[2].tpu.topology`. With `exact`, the error lists exactly one
problem, at one of `paths` (for a removed key: the key, or the mapping that lacks it);
with `every_path`, one problem at each of `paths` and no other (a renamed target breaks every
reference to it, and each is reported); without either, one of `paths` is among the problems
(a renamed required key is also missing).
Which kinds of value count as a wrong type comes from the models' JSON Schema.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import kueue_releases
from gke_ai_batch.domain import regions as R
from gke_ai_batch.domain import versions as V
from gke_ai_batch.config.batch import KueueConfig

NS = "gke-ai-batch"
SEVEN_DAYS = 7 * 86400
REGIONS = ("us-central1", "europe-west4", "us-east5")
# Zones come from the regions catalogue (gke_ai_batch/domain/regions.py), and each pool's accelerator
# from what its zones offer there.
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# Namespaces that exist without the team: built in, or made by the Helm releases.
SPECIAL_NAMESPACES = ("default", "kueue-system", "jobset-system")
HELM_NAMESPACES = ("kueue-system", "jobset-system")
CAPACITY_SUFFIX = {
    "onDemand": "",
    "spot": "-spot",
    "reservation": "-reserved",
    "flexStart": "-flex",
    "queued": "-queued",
}
CAPACITY_VALUE = {
    "onDemand": "on-demand",
    "spot": "spot",
    "reservation": "reservation",
    "flexStart": "flex-start",
    "queued": "queued",
}
CAPACITY_LABEL = "gke-ai-batch/capacity"
PROVISIONED = ("flexStart", "queued")
CPU_MACHINES = ("e2-standard-4", "n2-standard-8", "c3-standard-22", "n2d-highmem-16")
T4_MACHINES = ("n1-standard-4", "n1-standard-8", "n1-highmem-16")
QUOTA_RESOURCES = ("cpu", "memory", "google.com/tpu", "nvidia.com/gpu", "ephemeral-storage")
POOL_LABEL_KEYS = ("team", "env", "example.com/owner")
FRAMEWORKS_EXTRA = (
    "kubeflow.org/pytorchjob", "ray.io/rayjob", "pod", "leaderworkerset.x-k8s.io/leaderworkerset", "ray.io/rayservice",
)

# minMasterVersion is a minor alias the channel offers (gke_ai_batch/domain/versions.py); every minor the
# channels offer is at or above the flexStart (1.33.0-gke.1712000 TPU, 1.32.2-gke.1652000 GPU)
# and tpu7x (1.34.0-gke.2201000) floors, so every capacity and generation is allowed.


# -- names -------------------------------------------------------------------------------------

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"


@st.composite
def dns_label(draw, max_len: int = 12, first: str = _LOWER) -> str:
    """A lowercase RFC 1035/1123 label: starts with `first`, ends with a letter or digit."""
    head = draw(st.sampled_from(first))
    if max_len == 1 or not draw(st.booleans()):
        return head
    middle = draw(st.text(_LOWER + _DIGITS + "-", max_size=max_len - 2))
    tail = draw(st.sampled_from(_LOWER + _DIGITS))
    return head + middle + tail


def gke_name(max_len: int = 12):
    return dns_label(max_len)


def k8s_name(max_len: int = 14):
    return dns_label(max_len, _LOWER + _DIGITS)


def unique(names: list[str], taken: set[str]) -> list[str]:
    """Make each name distinct from `taken` and from the others, by appending letters."""
    out = []
    for name in names:
        base, n = name, 0
        while name in taken:
            n += 1
            name = f"{base[:30]}x{n}"
        taken.add(name)
        out.append(name)
    return out


# -- shapes from the catalogue --------------------------------------------------------------------


@lru_cache(maxsize=None)
def tpu_shapes(version: str) -> tuple[tuple[str, str], ...]:
    """Every (topology, machine type) the catalogue builds for a generation, within GKE's 1,000
    nodes per node pool per zone."""
    gen = catalogue.TPU_GENERATIONS[version]
    return tuple(
        (topology, machine)
        for machine in gen.machine_types
        for topology in catalogue.tpu_topologies_for_machine(gen, machine)
        if catalogue.topology_chips(topology) // gen.machine_types[machine] <= 1000
    )


@st.composite
def tpu_spec(draw, versions=tuple(catalogue.TPU_VERSIONS)) -> dict[str, Any]:
    version = draw(st.sampled_from(versions))
    topology, machine = draw(st.sampled_from(tpu_shapes(version)))
    gen = catalogue.TPU_GENERATIONS[version]
    spec: dict[str, Any] = {"version": version, "topology": topology}
    if machine != catalogue.default_tpu_machine_type(gen, topology) or draw(st.booleans()):
        spec["machineType"] = machine
    return spec


@st.composite
def gpu_spec_and_machine(draw, types=tuple(sorted(catalogue.GPU_TYPES))) -> tuple[dict[str, Any], str | None]:
    """A GPU spec with a machine type that carries it; the machine type is None when the
    catalogue has exactly one for that count (the pool may then omit it)."""
    gtype = draw(st.sampled_from(types))
    gpu = catalogue.GPU_TYPES[gtype]
    spec: dict[str, Any] = {"type": gtype}
    if not gpu.machine_types:
        count = draw(st.sampled_from(catalogue.T4_COUNTS))
        machine: str | None = draw(st.sampled_from(T4_MACHINES))
    else:
        machine = draw(st.sampled_from(sorted(gpu.machine_types)))
        count = gpu.machine_types[machine]
        options = [m for m, n in gpu.machine_types.items() if n == count]
        if len(options) == 1 and draw(st.booleans()):
            machine = None
    if count != 1 or draw(st.booleans()):
        spec["count"] = count
    if draw(st.booleans()):
        spec["driverVersion"] = draw(st.sampled_from(("default", "latest")))
    return spec, machine


def vms_of(tpu: dict[str, Any]) -> int:
    """VMs of one slice of a TPU spec: chips of the topology over chips per VM."""
    gen = catalogue.TPU_GENERATIONS[tpu["version"]]
    machine = tpu.get("machineType") or catalogue.default_tpu_machine_type(gen, tpu["topology"])
    return catalogue.topology_chips(tpu["topology"]) // gen.machine_types[machine]


def chips_of(tpu: dict[str, Any]) -> int:
    return catalogue.topology_chips(tpu["topology"])


def pool_kind(pool: dict[str, Any]) -> str:
    return "tpu" if "tpu" in pool else "gpu" if "gpu" in pool else "cpu"


def derived_flavor(pool: dict[str, Any]) -> str | None:
    suffix = CAPACITY_SUFFIX[pool.get("capacity", "onDemand")]
    if "tpu" in pool:
        gen = catalogue.TPU_GENERATIONS[pool["tpu"]["version"]]
        return f"{gen.accelerator}-{pool['tpu']['topology']}{suffix}"
    if "gpu" in pool:
        return f"{pool['gpu']['type']}{suffix}"
    return None


def carried_labels(pool: dict[str, Any]) -> dict[str, str]:
    """Labels every node of the pool carries, that a flavor's nodeLabels may select on."""
    labels: dict[str, str] = {}
    capacity = pool.get("capacity", "onDemand")
    if "tpu" in pool:
        gen = catalogue.TPU_GENERATIONS[pool["tpu"]["version"]]
        labels[catalogue.TPU_ACCELERATOR_LABEL] = gen.accelerator
        labels[catalogue.TPU_TOPOLOGY_LABEL] = pool["tpu"]["topology"]
    elif "gpu" in pool:
        labels[catalogue.GPU_ACCELERATOR_LABEL] = pool["gpu"]["type"]
    if "tpu" in pool or "gpu" in pool:
        labels[CAPACITY_LABEL] = CAPACITY_VALUE[capacity]
    labels.update(pool.get("labels", {}))
    return labels


@st.composite
def duration(draw, max_seconds: int = SEVEN_DAYS) -> int | str:
    unit, size = draw(st.sampled_from((("", 1), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400))))
    n = draw(st.integers(1, max_seconds // size))
    return n if unit == "" else f"{n}{unit}"


def seconds(value: int | str) -> int:
    if isinstance(value, int):
        return value
    n, unit = int(value[:-1]), value[-1]
    return n * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]


RANK_WORDS = {"lowest", "low", "background", "besteffort", "best", "high", "highest"}
IMAGES = (
    "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:jax0.8.1-rev1",
    "busybox:1.36",
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "registry.k8s.io/kubectl:v1.36.2@sha256:" + "b0d792e0d8dfb9bb1b922b78b23137e2a34bb6f9667640353a9d2aadd1fd7761",
)
priority_values = st.one_of(
    st.integers(-2_147_483_648, 1_000_000_000), st.sampled_from((0, 1_000_000_000, -2_147_483_648))
)
descriptions = st.sampled_from(("", "Interactive.", "Background sweeps; preempted first."))
quantities = st.one_of(
    st.integers(0, 4096),
    st.sampled_from(("500m", "10Gi", "1.5", "64", "2Ti", "100M", "1e3")),
)


# -- cluster ---------------------------------------------------------------------------------------


@dataclass
class Ctx:
    """What later parts of a stack may refer to."""

    region: str
    standard: bool
    cluster_zones: list[str]  # where a pool without zones goes; [] = GKE's default (region)
    version: str | None
    cluster_name: str


def zones_of(region: str) -> list[str]:
    return R.DEFAULT.zones_of(region)


def shape_zones(ctx: Ctx) -> list[str]:
    """Where GKE may create nodes for a bare tpu/gpu shape: the cluster's zones, or the region's."""
    return ctx.cluster_zones or zones_of(ctx.region)


@st.composite
def control_plane_keys(draw, cluster: dict[str, Any], standard: bool, region: str) -> dict[str, Any]:
    """Control-plane access and hardening keys the config accepts for this cluster."""
    out: dict[str, Any] = {}
    endpoints = ["authorizedNetworks"]
    if not cluster.get("masterAuthorizedNetworks"):
        endpoints.append("disabled")
    if cluster.get("privateNodes"):
        endpoints.append("private")
    ip = draw(st.sampled_from((None, *endpoints)))
    # Without the DNS endpoint something else must reach the control plane.
    dns_optional = ip in ("private", None, "authorizedNetworks") and bool(cluster.get("masterAuthorizedNetworks"))
    cp: dict[str, Any] = {}
    if ip is not None:
        cp["ipEndpoint"] = ip
    if draw(st.booleans()):
        cp["dnsEndpoint"] = draw(st.booleans()) if dns_optional else True
    if cp:
        out["controlPlane"] = cp
    if standard and draw(st.booleans()):
        out["dataplaneV2"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        out["databaseEncryption"] = {"keyName": f"projects/acme-kms/locations/{region}/keyRings/gke/cryptoKeys/secrets"}
    if draw(st.booleans()):
        out["binaryAuthorization"] = draw(st.booleans())
    return out


@st.composite
def maintenance_policy(draw) -> dict[str, Any]:
    """A maintenance policy GKE takes: a window that leaves at least 48 hours in any 92 days
    (stretches of 4 hours or more), or a daily one, and up to three exclusions of unique names
    (NO_UPGRADES for at most 90 days)."""
    day = draw(st.integers(1, 28))
    hour = draw(st.integers(0, 23))
    start = f"2026-03-{day:02d}T{hour:02d}:00:00Z"
    if draw(st.booleans()):
        # 12 to 24 hours on two or more days a week: at least 4 weeks x 2 x 12 h = 96 h.
        days = draw(st.lists(st.sampled_from(("MO", "TU", "WE", "TH", "FR", "SA", "SU")), min_size=2, max_size=7, unique=True))
        length = draw(st.integers(12, 24))
        end = (datetime(2026, 3, day, hour, tzinfo=timezone.utc) + timedelta(hours=length)).strftime("%Y-%m-%dT%H:%M:%SZ")
        policy: dict[str, Any] = {"window": {"start": start, "end": end, "recurrence": f"FREQ=WEEKLY;BYDAY={','.join(days)}"}}
    else:
        policy = {"dailyStart": f"{hour:02d}:{draw(st.integers(0, 59)):02d}"}
    exclusions = []
    for i in range(draw(st.integers(0, 3))):
        exclusion = {"name": f"x{i}", "scope": draw(st.sampled_from(("NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"))), "start": start}
        if exclusion["scope"] == "NO_UPGRADES" and draw(st.booleans()):
            # GKE takes NO_UPGRADES for at most 90 days (gke_ai_batch/domain/maintenance.py).
            exclusion["end"] = f"2026-05-{day:02d}T00:00:00Z"
        elif exclusion["scope"] != "NO_UPGRADES" and draw(st.booleans()):
            exclusion["end"] = f"2026-{draw(st.integers(4, 12)):02d}-01T00:00:00Z"
        else:
            exclusion["untilEndOfSupport"] = True
        exclusions.append(exclusion)
    if exclusions:
        policy["exclusions"] = exclusions
    return policy


@st.composite
def cluster_part(draw, mode: str | None = None) -> tuple[dict[str, Any], dict[str, Any], Ctx]:
    """(gcp keys, cluster mapping, context). `mode` forces standard or autopilot."""
    region = draw(st.sampled_from(REGIONS))
    standard = draw(st.sampled_from((True, False, True, True))) if mode is None else mode == "standard"
    name = draw(gke_name(20))
    cluster: dict[str, Any] = {"name": name}
    if not standard:
        cluster["mode"] = "autopilot"
    elif draw(st.booleans()):
        cluster["mode"] = "standard"
    gcp: dict[str, Any] = {"gcp:project": draw(st.sampled_from(("test-project", "acme-ml-prod")))}
    # GKE creates Autopilot clusters only in a region.
    where = draw(st.sampled_from(("gcp:region", "region", "zone") if standard else ("gcp:region", "region")))
    location = region
    if where == "gcp:region" or draw(st.booleans()):
        gcp["gcp:region"] = region
    if where == "region":
        cluster["location"] = region
    elif where == "zone":
        location = draw(st.sampled_from(zones_of(region)))
        cluster["location"] = location
    node_locations = draw(st.lists(st.sampled_from(zones_of(region)), max_size=3, unique=True))
    if node_locations:
        cluster["nodeLocations"] = node_locations
    channel = draw(st.sampled_from((None, "RAPID", "REGULAR", "STABLE")))
    if channel is not None:
        cluster["releaseChannel"] = channel
    version = draw(st.sampled_from((None, None, *V.DEFAULT.minors(channel or "REGULAR"))))
    if version is not None:
        cluster["minMasterVersion"] = version
    for key in ("deletionProtection", "privateNodes"):
        if draw(st.booleans()):
            cluster[key] = draw(st.booleans())
    networks = draw(st.integers(0, 3)) == 0
    if networks:
        cluster["masterAuthorizedNetworks"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"cidr": st.sampled_from(("203.0.113.0/24", "10.0.0.0/8", "2001:db8::/32"))},
                    optional={"name": st.sampled_from(("office", "vpn"))},
                ),
                max_size=2,
                unique_by=lambda n: n["cidr"],  # config refuses a network listed twice
            )
        )
    cluster.update(draw(control_plane_keys(cluster, standard, region)))
    if draw(st.integers(0, 3)) == 0:
        cluster["maintenance"] = draw(maintenance_policy())
    if draw(st.integers(0, 3)) == 0:
        # Every reference form the config takes (gke_ai_batch/config/gcpnames.py); a subnetwork
        # that names a region names the cluster's.
        project = gcp["gcp:project"]
        cluster["network"] = draw(
            st.sampled_from(("vpc-ml", "global/networks/vpc-ml", f"projects/{project}/global/networks/vpc-ml"))
        )
        cluster["subnetwork"] = draw(
            st.sampled_from(
                (
                    "nodes",
                    f"regions/{region}/subnetworks/nodes",
                    f"projects/{project}/regions/{region}/subnetworks/nodes",
                    f"https://www.googleapis.com/compute/v1/projects/{project}/regions/{region}/subnetworks/nodes",
                )
            )
        )
    if draw(st.booleans()):
        keys = st.sampled_from(("env", "cost-center", "team"))
        cluster["labels"] = draw(st.dictionaries(keys, k8s_name(8), max_size=2))
    if standard and draw(st.booleans()):
        lo = draw(st.integers(0, 3))
        cluster["systemPool"] = {
            "machineType": draw(st.sampled_from(CPU_MACHINES)),
            "minNodes": lo,
            "maxNodes": draw(st.integers(max(lo, 1), 5)),
        }
    if standard and draw(st.integers(0, 3)) == 0:
        accel = draw(
            st.dictionaries(
                st.sampled_from(("nvidia-l4", "nvidia-h100-80gb", "tpu-v6e-slice")),
                st.integers(1, 64).map(lambda n: {"max": n}),
                max_size=2,
            )
        )
        cluster["autoProvisioning"] = {
            "cpu": {"min": 0, "max": draw(st.integers(1, 1000))},
            "memoryGb": {"max": draw(st.integers(1, 4000))},
            **({"accelerators": accel} if accel else {}),
        }
        if draw(st.booleans()):
            zones = st.lists(st.sampled_from(zones_of(region)), min_size=1, max_size=2, unique=True)
            cluster["autoProvisioning"]["locations"] = draw(zones)
    if node_locations:
        cluster_zones = node_locations
    elif location != region:
        cluster_zones = [location]
    else:
        cluster_zones = []
    return gcp, cluster, Ctx(region, standard, cluster_zones, version, name)


# -- node pools ---------------------------------------------------------------------------------


@st.composite
def node_pool(draw, ctx: Ctx) -> dict[str, Any]:
    kind = draw(st.sampled_from(("tpu", "tpu", "gpu", "cpu")))
    pool: dict[str, Any] = {"name": draw(gke_name(20))}
    offering: list[str] = []
    if kind == "tpu":
        versions = tuple(v for v in catalogue.TPU_VERSIONS if R.DEFAULT.tpu_zones(ctx.region, v))
        pool["tpu"] = draw(tpu_spec(versions))
        offering = R.DEFAULT.tpu_zones(ctx.region, pool["tpu"]["version"])
        capacities = ["flexStart", "spot", "queued", "onDemand", "reservation"]
    elif kind == "gpu":
        types = tuple(t for t in sorted(catalogue.GPU_TYPES) if R.DEFAULT.gpu_zones(ctx.region, t))
        spec, machine = draw(gpu_spec_and_machine(types))
        offering = R.DEFAULT.gpu_zones(ctx.region, spec["type"])
        pool["gpu"] = spec
        if machine is not None:
            pool["machineType"] = machine
        capacities = ["queued", "flexStart", "spot", "onDemand", "reservation"]
    else:
        pool["machineType"] = draw(st.sampled_from(CPU_MACHINES))
        capacities = ["spot", "onDemand", "reservation"]
    capacity = draw(st.sampled_from(capacities))
    if capacity != "onDemand" or draw(st.booleans()):
        pool["capacity"] = capacity
    if capacity == "reservation":
        pool["reservation"] = draw(st.sampled_from(("res-a", "tpu-res", "projects/shared-proj/reservations/r1")))
    if capacity in PROVISIONED and draw(st.booleans()):
        pool["maxRunDuration"] = draw(duration())
    if kind == "tpu":
        if draw(st.booleans()):
            pool["slices"] = draw(st.integers(1, 4))
        if len(ctx.cluster_zones) != 1 or ctx.cluster_zones[0] not in offering or draw(st.booleans()):
            pool["zones"] = [draw(st.sampled_from(offering))]
    else:
        hi = draw(st.integers(1, 8))
        pool["maxNodes"] = hi
        if draw(st.booleans()):
            pool["minNodes"] = 0 if capacity in PROVISIONED else draw(st.integers(0, hi))
        # A GPU pool's zones must all offer its type; without zones it takes the cluster's.
        where = offering if kind == "gpu" else zones_of(ctx.region)
        must = kind == "gpu" and not set(ctx.cluster_zones) <= set(offering)
        if must or draw(st.booleans()):
            pool["zones"] = draw(st.lists(st.sampled_from(where), min_size=1, max_size=2, unique=True))
    if draw(st.integers(0, 3)) == 0:
        pool["gvnic"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        pool["labels"] = draw(st.dictionaries(st.sampled_from(POOL_LABEL_KEYS), k8s_name(8), min_size=1, max_size=2))
    if draw(st.integers(0, 3)) == 0:
        pool["taints"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"key": st.sampled_from(("dedicated", "example.com/gpu-team"))},
                    optional={
                        "value": st.sampled_from(("", "ml", "research")),
                        "effect": st.sampled_from(("NoSchedule", "PreferNoSchedule", "NoExecute")),
                    },
                ),
                max_size=2,
                # Taints are unique by key and effect (core/v1 Node validation).
                unique_by=lambda t: (t["key"], t.get("effect", "NoSchedule")),
            )
        )
    return pool


def gke_pool_names(pool: dict[str, Any]) -> list[str]:
    if "tpu" in pool:
        return [f"{pool['name']}-{i}" for i in range(pool.get("slices", 1))]
    return [pool["name"]]


@st.composite
def node_pools(draw, ctx: Ctx, max_pools: int = 4) -> list[dict[str, Any]]:
    if not ctx.standard:
        return []
    count = draw(st.sampled_from(tuple(n for n in (2, 1, 3, 0, 4, 2, 3) if n <= max_pools)))
    pools = [draw(node_pool(ctx)) for _ in range(count)]
    entries: set[str] = set()
    taken = {"system"}
    for pool in pools:
        # Entry names and the GKE pools they become must not collide (system, <name>-<i>).
        base, n = pool["name"], 0
        while pool["name"] in entries or taken & set(gke_pool_names(pool)):
            n += 1
            pool["name"] = f"{base[:30]}x{n}"
        entries.add(pool["name"])
        taken |= set(gke_pool_names(pool))
    return pools


# -- batch layer ----------------------------------------------------------------------------------


@st.composite
def toleration(draw) -> dict[str, Any]:
    op = draw(st.sampled_from(("Equal", "Exists")))
    key = draw(st.sampled_from(("nvidia.com/gpu", "google.com/tpu", "dedicated")))
    tol: dict[str, Any] = {"key": key, "operator": op}
    if op == "Equal":
        tol["value"] = draw(st.sampled_from(("present", "ml")))
    if draw(st.booleans()):
        tol["effect"] = draw(st.sampled_from(("NoSchedule", "NoExecute")))
    return tol


@st.composite
def explicit_flavors(draw, ctx: Ctx, pools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Declared flavors: pools grouped by kind and queued-ness (a group may split in two),
    plus some flavors without pools."""
    groups: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for pool in pools:
        if pool_kind(pool) == "cpu" and draw(st.booleans()):
            continue
        if draw(st.integers(0, 4)) == 0:
            continue  # not every pool needs a flavor
        groups.setdefault((pool_kind(pool), pool.get("capacity") == "queued"), []).append(pool)
    members: list[list[dict[str, Any]]] = []
    for group in groups.values():
        cut = draw(st.integers(1, len(group)))
        members += [m for m in (group[:cut], group[cut:]) if m]
    members += [[] for _ in range(draw(st.integers(0 if members or ctx.standard else 1, 2)))]
    names = unique([draw(k8s_name(20)) for _ in members], set())
    flavors = []
    for name, group in zip(names, members):
        flavor: dict[str, Any] = {"name": name}
        if group:
            flavor["pools"] = [p["name"] for p in group]
            common = carried_labels(group[0])
            for pool in group[1:]:
                other = carried_labels(pool)
                common = {k: v for k, v in common.items() if other.get(k) == v}
            if common and draw(st.booleans()):
                keys = draw(st.lists(st.sampled_from(sorted(common)), min_size=1, unique=True))
                flavor["nodeLabels"] = {k: common[k] for k in keys}
            if all(p.get("capacity") == "queued" for p in group) and draw(st.booleans()):
                flavor["queuedProvisioning"] = True
        else:
            if draw(st.booleans()):
                flavor["nodeLabels"] = draw(
                    st.sampled_from(
                        [
                            {catalogue.GPU_ACCELERATOR_LABEL: "nvidia-tesla-t4"},
                            {catalogue.TPU_ACCELERATOR_LABEL: "tpu-v6e-slice", catalogue.TPU_TOPOLOGY_LABEL: "2x4"},
                            {"cloud.google.com/compute-class": "Performance"},
                        ]
                    )
                )
            if draw(st.booleans()):
                flavor["queuedProvisioning"] = draw(st.booleans())
        if draw(st.integers(0, 3)) == 0:
            flavor["tolerations"] = draw(st.lists(toleration(), max_size=2))
        flavors.append(flavor)
    return flavors


@st.composite
def quota_value(draw, cohort: bool, lenient: bool = False) -> Any:
    """A quota: a quantity, or (in a cohort) {nominal, borrowingLimit, lendingLimit}. Kueue
    wants lendingLimit <= nominal; `lenient` draws any lendingLimit."""
    if cohort and draw(st.booleans()):
        q: dict[str, Any] = {"nominal": draw(quantities)}
        if draw(st.booleans()):
            q["borrowingLimit"] = draw(quantities)
        if lenient and draw(st.booleans()):
            q["lendingLimit"] = draw(quantities)
        elif isinstance(q["nominal"], int) and draw(st.booleans()):
            q["lendingLimit"] = draw(st.integers(0, q["nominal"]))
        return q
    return draw(quantities)


@st.composite
def cluster_queue(
    draw, name: str, flavors: list[str], poolless: set[str], fair_sharing: bool = False, lenient: bool = False
) -> dict[str, Any]:
    """A cluster queue over `flavors`; those in `poolless` provide no accelerator to derive a
    quota from, so the queue gives their quotas (and lists its flavors)."""
    cq: dict[str, Any] = {"name": name}
    cohort = draw(st.sampled_from(("research", None, "shared")))
    if cohort:
        cq["cohort"] = cohort
    if (poolless and not lenient) or draw(st.integers(0, 3)) > 0:
        chosen = draw(st.lists(st.sampled_from(flavors), min_size=1, max_size=len(flavors), unique=True))
        entries: list[Any] = []
        for f in chosen:
            if f not in poolless and draw(st.booleans()):
                entries.append(f)
                continue
            quotas = draw(
                st.dictionaries(
                    st.sampled_from(QUOTA_RESOURCES),
                    quota_value(cohort is not None, lenient),
                    min_size=1 if f in poolless else 0,
                    max_size=3,
                )
            )
            entries.append({"name": f, **({"quotas": quotas} if quotas or draw(st.booleans()) else {})})
        cq["flavors"] = entries
    if draw(st.booleans()):
        reclaim = draw(st.sampled_from(("Never", "LowerPriority", "Any")))
        preemption: dict[str, Any] = {
            "reclaimWithinCohort": reclaim,
            "withinClusterQueue": draw(st.sampled_from(("Never", "LowerPriority", "LowerOrNewerEqualPriority"))),
        }
        if not fair_sharing and draw(st.booleans()):  # Kueue ignores it under fair sharing
            policy = "Never" if reclaim == "Never" else draw(st.sampled_from(("Never", "LowerPriority")))
            bwc: dict[str, Any] = {"policy": policy}
            if draw(st.booleans()):
                bwc["maxPriorityThreshold"] = draw(st.integers(-1000, 1000))
            preemption["borrowWithinCohort"] = bwc
        cq["preemption"] = preemption
    if draw(st.booleans()):
        cq["queueingStrategy"] = draw(st.sampled_from(("BestEffortFIFO", "StrictFIFO")))
    if draw(st.integers(0, 3)) == 0:
        cq["namespaceSelector"] = draw(
            st.sampled_from(
                [
                    {},
                    {"matchLabels": {"team": "ml"}},
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}
                        ]
                    },
                    {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
                ]
            )
        )
    if draw(st.integers(0, 3)) == 0:
        cq["fairSharingWeight"] = draw(st.sampled_from((1, "0.5", 2)))
    if draw(st.integers(0, 4)) == 0:
        cq["stopPolicy"] = draw(st.sampled_from(("None", "Hold", "HoldAndDrain")))
    return cq


@st.composite
def workload(
    draw,
    name: str,
    ctx: Ctx,
    pools: list[dict[str, Any]],
    teams: list[dict[str, Any]],
    priorities: list[str],
    admitted: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """A sample workload of a team. `admitted` maps a cluster queue to the pools whose flavor
    it offers: a queued workload on a pool must be admissible there."""
    kind = draw(st.sampled_from(("jobset", "job", "provisioningRequest")))
    team = draw(st.sampled_from(teams))
    wl: dict[str, Any] = {"kind": kind, "name": name, "team": team["namespace"]}
    queues = [t["localQueue"] for t in teams if t["namespace"] == team["namespace"]]
    if kind != "provisioningRequest" and (len(queues) > 1 or draw(st.booleans())):
        wl["localQueue"] = team["localQueue"]
    # The target: a pool entry (Standard), a bare TPU or GPU shape, or nothing (Jobs). A
    # ProvisioningRequest bypasses Kueue: any queued pool.
    queued = [p for p in pools if p.get("capacity") == "queued"]
    reachable = admitted.get(team["clusterQueue"], [])
    allowed = set(shape_zones(ctx))
    tpu_versions = tuple(v for v in catalogue.TPU_VERSIONS if allowed & set(R.DEFAULT.tpu_zones(ctx.region, v)))
    gpu_types = tuple(t for t in sorted(catalogue.GPU_TYPES) if allowed & set(R.DEFAULT.gpu_zones(ctx.region, t)))
    targets = (["tpu"] if tpu_versions else []) + (["gpu"] if gpu_types else [])
    if kind == "provisioningRequest":
        if queued:
            targets.append("pool")
    else:
        if reachable:
            targets.append("pool")
        if kind == "job" or not ctx.standard:
            targets.append("none")
    if "pool" in targets:
        targets += ["pool", "pool"]  # what Standard stacks mostly do
    target = draw(st.sampled_from(targets))
    pool = None
    if target == "pool":
        pool = draw(st.sampled_from(queued if kind == "provisioningRequest" else reachable))
        wl["pool"] = pool["name"]
    elif target == "tpu":
        wl["tpu"] = draw(tpu_spec(tpu_versions))
    elif target == "gpu":
        wl["gpu"] = {"type": draw(st.sampled_from(gpu_types)), "count": draw(st.integers(1, 8))}
    wl["image"] = draw(st.sampled_from(IMAGES))
    on_tpu = target == "tpu" or (pool is not None and "tpu" in pool)
    if on_tpu and ctx.standard and draw(st.integers(0, 3)) == 0:
        wl["privileged"] = True  # allowed only for TPU pods on Standard clusters
    if priorities and draw(st.booleans()):
        wl["priority"] = draw(st.sampled_from(priorities))
    if draw(st.booleans()):
        resources = st.sampled_from(("cpu", "memory", "ephemeral-storage"))
        wl["resources"] = draw(st.dictionaries(resources, quantities, max_size=2))
    if draw(st.integers(0, 3)) == 0:
        wl["command"] = ["python3", "-c", "print(1)"]
    if draw(st.integers(0, 3)) == 0:
        wl["args"] = draw(st.lists(st.sampled_from(("--steps=10", "10s", "-v")), max_size=2))
    if draw(st.integers(0, 3)) == 0:
        wl["ports"] = draw(st.lists(st.integers(1, 65535), max_size=2, unique=True))
    if draw(st.integers(0, 3)) == 0:
        wl["containerName"] = draw(k8s_name(10))
    if draw(st.integers(0, 4)) == 0:
        wl["labels"] = {"app": draw(k8s_name(8))}
    if kind == "jobset":
        most = pool.get("slices", 1) if pool is not None and "tpu" in pool else 3
        if most > 1 or draw(st.booleans()):
            wl["slices"] = draw(st.integers(1, most))
        if draw(st.booleans()):
            wl["failurePolicy"] = {"maxRestarts": draw(st.integers(0, 5))}
            if draw(st.booleans()):
                wl["failurePolicy"]["restartStrategy"] = draw(st.sampled_from(("Recreate", "BlockingRecreate")))
        if draw(st.booleans()):
            wl["exclusivePlacement"] = draw(st.booleans())
    elif kind == "job":
        if draw(st.booleans()):
            completions = draw(st.integers(1, 8))
            wl["completions"] = completions
            if draw(st.booleans()):
                # Above completions too: Kubernetes and Kueue run min(parallelism, completions).
                wl["parallelism"] = draw(st.integers(1, completions + 2))
        elif draw(st.booleans()):
            wl["parallelism"] = draw(st.integers(1, 8))
        if draw(st.integers(0, 2)) == 0:
            wl["backoffLimit"] = draw(st.integers(0, 3600))
        if draw(st.integers(0, 2)) == 0:
            wl["indexed"] = draw(st.booleans())
        if draw(st.integers(0, 2)) == 0:
            wl["restartPolicy"] = draw(st.sampled_from(("Never", "OnFailure")))
        if pool is not None and pool.get("capacity") == "queued" and draw(st.booleans()):
            wl["maxRunDurationSeconds"] = draw(st.integers(1, SEVEN_DAYS))
    else:
        if draw(st.booleans()):
            wl["count"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            wl["maxRunDurationSeconds"] = draw(st.integers(1, SEVEN_DAYS))
    return wl


@st.composite
def valid_stacks(
    draw, max_pools: int = 4, max_workloads: int = 4, mode: str | None = None, lenient: bool = False
) -> dict[str, Any]:
    """A stack file's `config:` mapping that the program must accept. `lenient` also draws
    what the config rules let through but Kueue may refuse (a queue flavor with nothing to
    quota, lendingLimit above nominal): the program must then refuse it or emit valid objects."""
    gcp, cluster, ctx = draw(cluster_part(mode))
    config: dict[str, Any] = dict(gcp)
    config[f"{NS}:cluster"] = cluster
    if draw(st.integers(0, 3)) == 0:
        config[f"{NS}:production"] = draw(st.booleans())
        if config[f"{NS}:production"]:
            # Production clusters have private nodes and the DNS endpoint (or are refused).
            cluster["privateNodes"] = True
            cluster.get("controlPlane", {}).pop("dnsEndpoint", None)
    pools = draw(node_pools(ctx, max_pools))
    if pools or (ctx.standard and draw(st.booleans())):
        config[f"{NS}:nodePools"] = pools

    fair_sharing = draw(
        st.sampled_from((None, None, True, False, {"preemptionStrategies": ["LessThanInitialShare"]}, {}))
    )
    fair_sharing_on = fair_sharing not in (None, False)  # false is off; true or a mapping on

    # Flavors: derived from the pools (key omitted) or declared.
    explicit = (not ctx.standard and draw(st.booleans())) or (ctx.standard and draw(st.integers(0, 2)) == 0)
    if explicit:
        flavors = draw(explicit_flavors(ctx, pools))
        config[f"{NS}:flavors"] = flavors
        flavor_names = [f["name"] for f in flavors]
        # Flavors without accelerators to derive a quota from: without pools, or of CPU pools.
        by_name = {p["name"]: p for p in pools}
        poolless = {
            f["name"]
            for f in flavors
            if not any(pool_kind(by_name[p]) != "cpu" for p in f.get("pools", []))
        }
        if lenient:
            poolless = {f["name"] for f in flavors if not f.get("pools")}
    else:
        flavor_names = []
        for pool in pools:
            name = derived_flavor(pool)
            if name is not None and name not in flavor_names:
                flavor_names.append(name)
        poolless = set()

    queues: list[dict[str, Any]] = []
    if flavor_names:
        names = unique([draw(k8s_name(12)) for _ in range(draw(st.sampled_from((1, 2, 1, 3, 0))))], set())
        queues = [draw(cluster_queue(n, flavor_names, poolless, fair_sharing_on, lenient)) for n in names]
        if queues or draw(st.booleans()):
            config[f"{NS}:clusterQueues"] = queues
    cohorts = [q["cohort"] for q in queues if q.get("cohort")]
    if fair_sharing_on and not any(cohorts.count(c) >= 2 for c in cohorts):
        # Fair sharing needs a cohort of two or more queues (a config error otherwise).
        fair_sharing = draw(st.sampled_from((None, False)))

    teams: list[dict[str, Any]] = []
    if queues:
        for _ in range(draw(st.sampled_from((1, 2, 3, 1, 0)))):
            # Teams may use a namespace every cluster has; `lenient` also tries the ones the
            # Kueue and JobSet releases create.
            namespace = draw(st.one_of(k8s_name(12), st.sampled_from(SPECIAL_NAMESPACES if lenient else ("default",))))
            team = {
                "namespace": namespace,
                "localQueue": draw(k8s_name(10)),
                "clusterQueue": draw(st.sampled_from([q["name"] for q in queues])),
            }
            if any((t["namespace"], t["localQueue"]) == (namespace, team["localQueue"]) for t in teams):
                continue
            if namespace not in BUILTIN_NAMESPACES and draw(st.integers(0, 3)) == 0:
                # Teams sharing a namespace share its labels: one value per key.
                shared = next((t["labels"] for t in teams if t["namespace"] == namespace and "labels" in t), None)
                team["labels"] = dict(shared) if shared is not None else {"team": draw(k8s_name(8))}
            teams.append(team)
        if teams:
            config[f"{NS}:teams"] = teams

    # Names that claim no rank (low, high, best-effort...): the rule that ranks by name is
    # tested case by case in test_config_errors.py.
    plain = k8s_name(12).filter(lambda n: not RANK_WORDS & set(n.replace("_", "-").replace(".", "-").split("-")))
    priorities = unique([draw(plain) for _ in range(draw(st.sampled_from((1, 2, 0, 3))))], set())
    if priorities:
        config[f"{NS}:priorities"] = [
            {
                "name": p,
                "value": draw(priority_values),
                **({"description": draw(descriptions)} if draw(st.booleans()) else {}),
            }
            for p in priorities
        ]

    workloads: list[dict[str, Any]] = []
    if teams:
        # Workload names start with a letter: they name pods and Services.
        count = draw(st.sampled_from(tuple(n for n in (2, 1, 3, 4, 0) if n <= max_workloads)))
        names = unique([draw(dns_label(14)) for _ in range(count)], set())
        # Which pools each queue admits work onto: those of the flavors it offers (all of the
        # stack's when it lists none); a pool in no flavor (CPU, derived) is in no queue.
        declared = config.get(f"{NS}:flavors")
        flavor_of = {
            p["name"]: (
                next((f["name"] for f in declared if p["name"] in f.get("pools", [])), None)
                if declared is not None
                else derived_flavor(p)
            )
            for p in pools
        }
        admitted = {}
        for q in queues:
            offered = [e if isinstance(e, str) else e["name"] for e in q.get("flavors", [])] or flavor_names
            admitted[q["name"]] = [p for p in pools if flavor_of[p["name"]] in offered]
        workloads = [draw(workload(n, ctx, pools, teams, priorities, admitted)) for n in names]
        if workloads:
            config[f"{NS}:workloads"] = workloads
        # One Pod Security level and NetworkPolicy choice per namespace, shared by its teams.
        # TPU pods on Standard may use the host network (multi-host) or run privileged: their
        # namespaces are privileged; the others baseline (the default) or restricted, which the
        # program hardens its pods for.
        tpu_pools = {p["name"] for p in pools if "tpu" in p}
        host = {w["team"] for w in workloads if w.get("privileged") or (ctx.standard and ("tpu" in w or w.get("pool") in tpu_pools))}
        settings = {}
        for ns in dict.fromkeys(t["namespace"] for t in teams):
            chosen = {}
            level = "privileged" if ns in host else draw(st.sampled_from((None, "baseline", "restricted")))
            if level is not None:
                chosen["podSecurity"] = level
            if draw(st.integers(0, 3)) == 0:
                chosen["networkPolicy"] = draw(st.booleans())
            settings[ns] = chosen
        # Without Dataplane V2 a NetworkPolicy isolates nothing, which config refuses.
        enforced = config[f"{NS}:cluster"].get("dataplaneV2", True) or not ctx.standard
        for team in teams:
            team.update(settings[team["namespace"]])
            if not enforced:
                team["networkPolicy"] = False

    kinds = {w["kind"] for w in workloads}
    needed = (["batch/job"] if "job" in kinds else []) + (["jobset.x-k8s.io/jobset"] if "jobset" in kinds else [])
    if fair_sharing is not None or draw(st.integers(0, 2)) == 0:
        kueue: dict[str, Any] = {}
        if draw(st.booleans()):
            kueue["version"] = draw(st.sampled_from(("0.15.0", "0.19.2", "0.20.1")))
        if draw(st.booleans()):
            # Only what the chosen release has (gke_ai_batch/domain/kueue_releases.py; others are refused).
            version = kueue.get("version", KueueConfig().version)
            offered = [f for f in FRAMEWORKS_EXTRA if kueue_releases.has(version, kueue_releases.INTEGRATIONS[f])]
            extra = draw(st.lists(st.sampled_from(offered), max_size=2, unique=True))
            kueue["integrations"] = needed + extra
        if fair_sharing is not None:
            kueue["fairSharing"] = fair_sharing
        if draw(st.booleans()):
            kueue["waitForPodsReady"] = draw(
                st.sampled_from(
                    (False, {"timeout": "10m"}, {"timeout": 600, "blockAdmission": True, "recoveryTimeout": "3m"})
                )
            )
        for key in ("manageJobsWithoutQueueName", "webhookGate"):
            if draw(st.booleans()):
                kueue[key] = draw(st.booleans())
        if draw(st.integers(0, 3)) == 0:
            kueue["provisioningAdmissionCheck"] = draw(k8s_name(12))
        config[f"{NS}:kueue"] = kueue
    if draw(st.integers(0, 3)) == 0:
        config[f"{NS}:jobset"] = {"version": draw(st.sampled_from(("0.8.1", "0.12.0")))}
    if draw(st.integers(0, 3)) == 0:
        # Metrics GKE takes on a cluster this program creates (every channel is above the DCGM
        # and TPU floors): DCGM only with managed collection, a dashboard only with a chart.
        config[f"{NS}:metrics"] = draw(st.sampled_from((
            {},
            {"dashboard": False},
            {"managedPrometheus": True, "dcgm": True, "tpu": False},
            {"managedPrometheus": False, "dcgm": False, "tpu": True},
            {"managedPrometheus": False, "dcgm": False, "tpu": False, "dashboard": False},
        )))
    return config


# -- expectations from a valid stack file ----------------------------------------------------------------


def ours(config: dict[str, Any], key: str, default: Any = None) -> Any:
    return config.get(f"{NS}:{key}", default)


def is_standard(config: dict[str, Any]) -> bool:
    return ours(config, "cluster").get("mode", "standard") == "standard"


def expected_node_pools(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """GKE node pool name -> {entry, kind, capacity, vms (TPU: per slice), max, min}."""
    out: dict[str, dict[str, Any]] = {}
    if is_standard(config):
        system = ours(config, "cluster").get("systemPool", {})
        out["system"] = {"kind": "system", "min": system.get("minNodes", 1), "max": system.get("maxNodes", 3)}
    for pool in ours(config, "nodePools", []):
        capacity = pool.get("capacity", "onDemand")
        for name in gke_pool_names(pool):
            info: dict[str, Any] = {"entry": pool, "kind": pool_kind(pool), "capacity": capacity}
            if "tpu" in pool:
                info["vms"] = info["max"] = vms_of(pool["tpu"])
                info["min"] = 0
            else:
                info["max"] = pool["maxNodes"]
                info["min"] = 0 if capacity in PROVISIONED else pool.get("minNodes", 0)
            out[name] = info
    return out


def expected_flavors(config: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Flavor name -> its pool entries."""
    pools = {p["name"]: p for p in ours(config, "nodePools", [])}
    declared = ours(config, "flavors")
    if declared is not None:
        return {f["name"]: [pools[n] for n in f.get("pools", [])] for f in declared}
    out: dict[str, list[dict[str, Any]]] = {}
    for pool in pools.values():
        name = derived_flavor(pool)
        if name is not None:
            out.setdefault(name, []).append(pool)
    return out


def flavor_accelerators(pools: list[dict[str, Any]]) -> dict[str, int]:
    """What a flavor's pools provide at their ceiling: TPU chips over every slice, or GPUs."""
    tpu = sum(chips_of(p["tpu"]) * p.get("slices", 1) for p in pools if "tpu" in p)
    gpu = sum(p["gpu"].get("count", 1) * p["maxNodes"] for p in pools if "gpu" in p)
    out = {}
    if any("tpu" in p for p in pools):
        out[catalogue.TPU_RESOURCE] = tpu
    if any("gpu" in p for p in pools):
        out[catalogue.GPU_RESOURCE] = gpu
    return out


# -- mutations ------------------------------------------------------------------------------------------


@dataclass
class Mutation:
    kind: str
    description: str
    paths: list[str]  # the key path(s) the error must name (any one of them)
    exact: bool = True  # the only problem reported, at exactly one of `paths`
    every_path: bool = False  # with exact: a problem at each of `paths`, and no other
    extra: dict[str, Any] = field(default_factory=dict)


def key_path(path: tuple) -> str:
    """('nodePools', 2, 'tpu', 'topology') -> 'gke-ai-batch:nodePools[2].tpu.topology'; keys of
    other namespaces (gcp:project) stand as they are."""
    from gke_ai_batch.config.errors import format_path

    return str(path[0]) if ":" in str(path[0]) else format_path(path)


@lru_cache(maxsize=None)
def stack_schema() -> dict[str, Any]:
    from gke_ai_batch.config.stack import StackConfig

    return StackConfig.model_json_schema(by_alias=True, mode="validation")


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        ref = schema["$ref"].rsplit("/", 1)[-1]
        merged = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**stack_schema()["$defs"][ref], **merged}
    return schema


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def members(schema: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            out = []
            for m in schema[key]:
                out += members(m)
            return out
    return [schema]


def member_for(schema: dict[str, Any], value: Any) -> dict[str, Any] | None:
    """The union member that describes `value` (by JSON type; by `kind` for workloads)."""
    schema = _resolve(schema)
    if "discriminator" in schema and isinstance(value, dict):
        ref = schema["discriminator"]["mapping"].get(value.get("kind"))
        return _resolve({"$ref": ref}) if ref else None
    kind = _json_type(value)
    fits = [m for m in members(schema) if m.get("type") == kind or (m.get("type") == "number" and kind == "integer")]
    return fits[0] if fits else None


def accepted_types(schema: dict[str, Any]) -> set[str]:
    out = set()
    for m in members(schema):
        if "type" in m:
            out.add(m["type"])
        elif "const" in m or "enum" in m:
            out.add(_json_type(m.get("const", (m.get("enum") or [None])[0])))
        else:
            out.add("any")
    return out


def walk(config: dict[str, Any]):
    """Every value under the gke-ai-batch keys: (path, value, schema, parent container)."""
    root = stack_schema()
    for full_key, value in config.items():
        if not full_key.startswith(f"{NS}:"):
            continue
        key = full_key.split(":", 1)[1]
        sub = root["properties"].get(key)
        if sub is None:
            continue
        yield from _walk((key,), value, sub)


def _walk(path: tuple, value: Any, schema: dict[str, Any]):
    yield path, value, schema
    member = member_for(schema, value)
    if member is None:
        return
    if isinstance(value, dict):
        props = member.get("properties")
        for k, v in value.items():
            if props is not None and k in props:
                yield from _walk((*path, k), v, props[k])
            elif isinstance(member.get("additionalProperties"), dict):
                yield from _walk((*path, k), v, member["additionalProperties"])
    elif isinstance(value, list) and "items" in member:
        for i, v in enumerate(value):
            yield from _walk((*path, i), v, member["items"])


def get_at(config: dict[str, Any], path: tuple) -> Any:
    node: Any = config[f"{NS}:{path[0]}"]
    for part in path[1:]:
        node = node[part]
    return node


def set_at(config: dict[str, Any], path: tuple, value: Any) -> None:
    if len(path) == 1:
        config[f"{NS}:{path[0]}"] = value
        return
    get_at(config, path[:-1])[path[-1]] = value


def delete_at(config: dict[str, Any], path: tuple) -> None:
    if len(path) == 1:
        del config[f"{NS}:{path[0]}"]
        return
    del get_at(config, path[:-1])[path[-1]]


def misspellings(key: str) -> list[str]:
    """Typos of a camelCase key that a person could make."""
    out = [key.lower(), key + "s", key[:-1], key[0].upper() + key[1:], re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()]
    out += [key[:i] + key[i + 1 :] for i in range(len(key))]
    out += [key[:i] + key[i + 1] + key[i] + key[i + 2 :] for i in range(len(key) - 1)]
    out += [key[:i] + key[i] + key[i:] for i in range(len(key))]
    return [m for m in dict.fromkeys(out) if m and m != key]


WRONG_VALUES: list[tuple[str, Any]] = [
    ("string", "not-a-number-x"),
    ("integer", 12345),
    ("number", 1.5),
    ("boolean", True),
    ("array", [1, 2]),
    ("object", {"zz": 1}),
    ("null", None),
]


def wrong_values_for(schema: dict[str, Any]) -> list[Any]:
    """Values of a JSON type the key takes in no form (no union member takes them).

    Pydantic's lax mode reads true as 1 for a plain integer key (`slices: yes` is 1 slice);
    that is its documented behaviour, so a boolean counts as wrong only where the key also
    takes strings: quantities and durations, whose validators mean to refuse booleans (see
    test_bool_is_no_duration_or_quantity). 1.5 is wrong for an integer (no whole number),
    'not-a-number-x' for a boolean (no boolean word), 12345 for a string (no coercion)."""
    accepted = accepted_types(schema)
    if "any" in accepted:
        return []
    out = []
    for kind, value in WRONG_VALUES:
        if kind in accepted:
            continue
        if kind == "boolean" and "integer" in accepted and "string" not in accepted:
            continue
        out.append(copy.deepcopy(value))
    return out


# Keys whose value is a name the API checks, and what makes it bad.
GKE_NAME_KEYS = {("cluster", "name"), ("nodePools", "*", "name")}
K8S_NAME_KEYS = {
    ("flavors", "*", "name"),
    ("clusterQueues", "*", "name"),
    ("clusterQueues", "*", "cohort"),
    ("teams", "*", "namespace"),
    ("teams", "*", "localQueue"),
    ("teams", "*", "clusterQueue"),
    ("priorities", "*", "name"),
    ("workloads", "*", "name"),
    ("workloads", "*", "team"),
    ("workloads", "*", "localQueue"),
    ("workloads", "*", "priority"),
    ("workloads", "*", "containerName"),
    ("kueue", "provisioningAdmissionCheck"),
    ("kueue", "provisioningRequestConfig"),
}


def pattern(path: tuple) -> tuple:
    return tuple("*" if isinstance(p, int) else p for p in path)


def bad_names(value: str, gke: bool) -> list[str]:
    limit = 40 if gke else 63
    out = [
        value.upper() if value.upper() != value else "A" + value,
        value[:1] + "_" + value[1:],
        (value + "-" + "x" * limit)[: limit + 1],
        value + "-",
        "-" + value,
        value + ".x",
        "",
    ]
    if gke:
        out.append("9" + value)
    return out


# Numeric keys and values out of their range: (pattern, values).
OUT_OF_RANGE: list[tuple[tuple, list[Any]]] = [
    (("nodePools", "*", "slices"), [0, -1]),
    (("nodePools", "*", "minNodes"), [-1]),
    (("nodePools", "*", "maxNodes"), [0, -3]),
    (("nodePools", "*", "gpu", "count"), [0]),
    (("nodePools", "*", "maxRunDuration"), ["8d", SEVEN_DAYS + 1, "169h", "10081m", 0, "0s", "-1h", "1w"]),
    (("cluster", "systemPool", "minNodes"), [-1]),
    (("cluster", "systemPool", "maxNodes"), [0]),
    (("priorities", "*", "value"), [1_000_000_001, 2_000_000_000, -2_147_483_649]),
    (("workloads", "*", "slices"), [0, -2]),
    (("workloads", "*", "count"), [0]),
    (("workloads", "*", "parallelism"), [0]),
    (("workloads", "*", "completions"), [0]),
    (("workloads", "*", "backoffLimit"), [-1]),
    (("workloads", "*", "maxRunDurationSeconds"), [0, SEVEN_DAYS + 1]),
    (("workloads", "*", "failurePolicy", "maxRestarts"), [-1]),
    (("workloads", "*", "gpu", "count"), [0]),
]


def is_name_key(path: tuple) -> bool | None:
    """True for a GKE name, False for a Kubernetes name, None otherwise."""
    p = pattern(path)
    if p in GKE_NAME_KEYS:
        return True
    if p in K8S_NAME_KEYS:
        return False
    return None


@st.composite
def mutations(draw, base=None) -> tuple[dict[str, Any], Mutation]:
    """A valid stack with exactly one mistake in it, and where the error must point."""
    config = draw(base if base is not None else valid_stacks(max_pools=3, max_workloads=3))
    config = copy.deepcopy(config)
    # The first kind this stack offers something to mutate for (not every stack has
    # workloads, say); every stack has top-level keys to misspell.
    for kind in draw(st.permutations(list(_MUTATORS))):
        mutation = _MUTATORS[kind](draw, config)
        if mutation is not None:
            return config, mutation
    raise AssertionError("unreachable: a stack always has a top-level key to misspell")


@st.composite
def mutation_batches(draw) -> list[tuple[dict[str, Any], Mutation]]:
    """One mistake of every kind that applies, each in its own copy of one valid stack
    (drawing a stack costs more than checking a mistake in it)."""
    base = draw(valid_stacks(max_pools=3, max_workloads=3))
    out = []
    for kind, mutate in _MUTATORS.items():
        config = copy.deepcopy(base)
        mutation = mutate(draw, config)
        if mutation is not None:
            out.append((config, mutation))
    return out


def _model_dicts(config):
    """(path, dict, model schema) for every mapping that is a model (fixed keys)."""
    for path, value, schema in walk(config):
        if isinstance(value, dict):
            member = member_for(schema, value)
            if member is not None and "properties" in member and member.get("additionalProperties") is False:
                yield path, value, member


def _unknown_key(draw, config) -> Mutation | None:
    candidates = [(p, v, m) for p, v, m in _model_dicts(config) if v]
    if not candidates:
        return None
    path, mapping, member = draw(st.sampled_from(candidates))
    key = draw(st.sampled_from(sorted(mapping)))
    typo = draw(st.sampled_from([t for t in misspellings(key) if t not in member["properties"]]))
    rename = draw(st.booleans())
    value = mapping.pop(key) if rename else copy.deepcopy(mapping[key])
    mapping[typo] = value
    required = key in member.get("required", ())
    paths = [key_path((*path, typo))]
    if rename and key == "kind" and pattern(path) == ("workloads", "*"):
        # Without its kind a workload is no model yet: the missing kind is the problem.
        paths.append(key_path((*path, "kind")))
    return Mutation(
        "unknown_key",
        f"{'rename' if rename else 'add'} {key_path((*path, key))} as {typo!r}",
        paths,
        exact=not rename or (not required and key != "kind"),
        extra={"typo": typo, "renamed": rename},
    )


def _misspelt_top_level(draw, config) -> Mutation:
    keys = [k.split(":", 1)[1] for k in config if k.startswith(f"{NS}:")]
    known = set(stack_schema()["properties"])
    key = draw(st.sampled_from(sorted(keys)))
    typo = draw(st.sampled_from([t for t in misspellings(key) if t not in known]))
    rename = draw(st.booleans())
    value = config.pop(f"{NS}:{key}") if rename else copy.deepcopy(config[f"{NS}:{key}"])
    config[f"{NS}:{typo}"] = value
    return Mutation(
        "misspelt_top_level",
        f"{'rename' if rename else 'add'} {NS}:{key} as {NS}:{typo}",
        [f"{NS}:{typo}"],
        # Renaming away a key others depend on (cluster) may add problems of its own.
        exact=not rename or key not in ("cluster",),
        extra={"typo": typo, "renamed": rename},
    )


def _wrong_type(draw, config) -> Mutation | None:
    candidates = []
    for path, value, schema in walk(config):
        wrong = wrong_values_for(schema)
        if wrong:
            candidates.append((path, value, wrong))
    if not candidates:
        return None
    path, old, wrong = draw(st.sampled_from(candidates))
    new = draw(st.sampled_from(wrong))
    set_at(config, path, new)
    return Mutation("wrong_type", f"{key_path(path)}: {old!r} -> {new!r}", [key_path(path)], extra={"value": new})


def _missing(draw, config) -> Mutation | None:
    candidates = []
    for path, mapping, member in _model_dicts(config):
        for key in member.get("required", ()):
            if key in mapping:
                candidates.append((path, key, True))
        # Keys a rule makes required.
        p = pattern(path)
        if p == ("nodePools", "*") and "maxNodes" in mapping:
            candidates.append((path, "maxNodes", False))
        if p == ("nodePools", "*") and "reservation" in mapping:
            candidates.append((path, "reservation", False))
        if p == ("nodePools", "*") and "gpu" in mapping and "machineType" in mapping:
            gpu = catalogue.GPU_TYPES[mapping["gpu"]["type"]]
            count = mapping["gpu"].get("count", 1)
            if len([m for m, n in gpu.machine_types.items() if n == count]) != 1:
                candidates.append((path, "machineType", False))
        if p == ("workloads", "*") and "kind" in mapping:
            candidates.append((path, "kind", False))
    candidates.append((("cluster",), None, True))
    if "gcp:region" in config and "location" not in ours(config, "cluster"):
        candidates.append((("gcp:region",), None, False))
    path, key, _ = draw(st.sampled_from(candidates))
    if path == ("gcp:region",):
        del config["gcp:region"]
        return Mutation("missing", "remove gcp:region (cluster.location unset)", [f"{NS}:cluster.location"])
    if key is None:
        delete_at(config, path)
        return Mutation("missing", f"remove {key_path(path)}", [key_path(path)])
    del get_at(config, path)[key]
    # Reported at the key, or (for a union such as a quota) at the mapping that lacks it.
    return Mutation("missing", f"remove {key_path((*path, key))}", [key_path((*path, key)), key_path(path)])


def _out_of_range(draw, config) -> Mutation | None:
    candidates = []
    by_pattern = dict(OUT_OF_RANGE)
    for path, value, schema in walk(config):
        if pattern(path) in by_pattern:
            candidates.append((path, by_pattern[pattern(path)]))
    # Keys that may be added where they are absent.
    for i, pool in enumerate(ours(config, "nodePools", [])):
        if "tpu" in pool and "slices" not in pool:
            candidates.append((("nodePools", i, "slices"), [0, -1]))
        if pool.get("capacity") in PROVISIONED and "maxRunDuration" not in pool:
            candidates.append((("nodePools", i, "maxRunDuration"), ["8d", SEVEN_DAYS + 1]))
        if "tpu" not in pool:
            # minNodes above maxNodes, or above 0 for pools GKE provisions on request.
            floor = 1 if pool.get("capacity") in PROVISIONED else pool["maxNodes"] + 1
            candidates.append((("nodePools", i, "minNodes"), [floor]))
    for i, prio in enumerate(ours(config, "priorities", [])):
        candidates.append((("priorities", i, "value"), [1_000_000_001]))
    for i, wl in enumerate(ours(config, "workloads", [])):
        if wl["kind"] == "jobset" and "slices" not in wl:
            candidates.append((("workloads", i, "slices"), [0]))
        candidates.append((("workloads", i, "ports"), [[0], [65536], [80, -1]]))
    if not candidates:
        return None
    path, values = draw(st.sampled_from(candidates))
    new = draw(st.sampled_from(values))
    old = None
    try:
        old = get_at(config, path)
    except (KeyError, IndexError):
        pass
    set_at(config, path, new)
    where = path
    if path[-1] == "ports":
        where = (*path, next(i for i, p in enumerate(new) if not 1 <= p <= 65535))
    return Mutation("out_of_range", f"{key_path(path)}: {old!r} -> {new!r}", [key_path(where)], extra={"value": new})


def _bad_name(draw, config) -> Mutation | None:
    candidates = []
    for path, value, _ in walk(config):
        gke = is_name_key(path)
        if gke is not None and isinstance(value, str):
            candidates.append((path, value, gke))
    # A bare flavor name in a cluster queue is checked as a Kubernetes name too.
    for i, cq in enumerate(ours(config, "clusterQueues", [])):
        for j, f in enumerate(cq.get("flavors", [])):
            if isinstance(f, str):
                candidates.append((("clusterQueues", i, "flavors", j), f, False))
    if not candidates:
        return None
    path, old, gke = draw(st.sampled_from(candidates))
    new = draw(st.sampled_from(bad_names(old, gke)))
    set_at(config, path, new)
    return Mutation("bad_name", f"{key_path(path)}: {old!r} -> {new!r}", [key_path(path)], extra={"value": new})


def _broken_ref(draw, config) -> Mutation | None:
    candidates: list[tuple[tuple, tuple]] = []  # (path to change, path reported)
    for i, f in enumerate(ours(config, "flavors") or []):
        for j, _ in enumerate(f.get("pools", [])):
            candidates.append((("flavors", i, "pools", j), ("flavors", i, "pools", j)))
    for i, cq in enumerate(ours(config, "clusterQueues", [])):
        for j, f in enumerate(cq.get("flavors", [])):
            if isinstance(f, str):
                candidates.append((("clusterQueues", i, "flavors", j), ("clusterQueues", i, "flavors", j, "name")))
            else:
                candidates.append((("clusterQueues", i, "flavors", j, "name"),) * 2)
    for i, _ in enumerate(ours(config, "teams", [])):
        candidates.append((("teams", i, "clusterQueue"),) * 2)
    for i, wl in enumerate(ours(config, "workloads", [])):
        candidates.append((("workloads", i, "team"),) * 2)
        for key in ("pool", "priority"):
            if key in wl:
                candidates.append((("workloads", i, key),) * 2)
        if "localQueue" in wl and wl["kind"] != "provisioningRequest":
            candidates.append((("workloads", i, "localQueue"),) * 2)
    if not candidates:
        return None
    path, reported = draw(st.sampled_from(candidates))
    old = get_at(config, path)
    new = f"{old}-nope"[-60:] if draw(st.booleans()) else "no-such-thing"
    set_at(config, path, new)
    return Mutation("broken_ref", f"{key_path(path)}: {old!r} -> {new!r}", [key_path(reported)], extra={"value": new})


def _gcp_project(draw, config) -> Mutation:
    value = config.pop("gcp:project")
    how = draw(st.sampled_from(("remove", "misspell", "empty", "not a project id")))
    if how == "misspell":
        config[draw(st.sampled_from(("gcp:projet", "gcp:Project", "gcp:project_id")))] = value
    elif how == "empty":
        config["gcp:project"] = ""
    elif how == "not a project id":
        # Resource Manager project ids: 6 to 30 of [a-z0-9-], a letter first, no '-' last.
        config["gcp:project"] = draw(st.sampled_from(("Acme-ML", "acme", "acme-ml-", "1acme-ml", "acme_ml", "a" * 31)))
    return Mutation("gcp_project", f"gcp:project: {how}", ["gcp:project"])


def typos(value: str) -> list[str]:
    """Misspellings of a value: case, a dropped, doubled or swapped character."""
    out = [value.lower(), value.upper(), value[:1].swapcase() + value[1:], value + " "]
    out += [value[:i] + value[i + 1 :] for i in range(len(value))]
    out += [value[:i] + value[i + 1] + value[i] + value[i + 2 :] for i in range(len(value) - 1)]
    return [t for t in dict.fromkeys(out) if t != value]


# Values that are no longer what the key allows: pattern -> replacements (callables of the
# old value, or constants).
BAD_VALUES: list[tuple[tuple, list[Any]]] = [
    (("nodePools", "*", "tpu", "topology"), ["4x5", "4×4", "44", "2x2x2x2", "4X4"]),
    (("workloads", "*", "tpu", "topology"), ["3x3", "4x4x4x4"]),
    (("nodePools", "*", "tpu", "machineType"), ["ct6e-standard-4", "ct5p-hightpu-4t-x", "n2-standard-8"]),
    (("nodePools", "*", "gpu", "type"), ["nvidia-h100", "nvidia-tesla-t4 ", "NVIDIA-L4", "h100"]),
    (("workloads", "*", "gpu", "type"), ["nvidia-a100", "tesla-t4"]),
    (("kueue", "version"), ["v0.19.2", "0.19", "^0.19.2", "0.14.9", "latest"]),
    (("jobset", "version"), ["v0.12.0", "0.12", "~0.12.0"]),
    (("cluster", "minMasterVersion"), ["1.33.x", "latest", "v1.33", "1.33.0-gke"]),
    (("cluster", "location"), ["us-central", "uscentral1", "us-central1-", "US-CENTRAL1"]),
    (("cluster", "nodeLocations", "*"), ["us-central1b", "europe-west1-b", "us-central1-b-1"]),
    (("cluster", "autoProvisioning", "locations", "*"), ["us-central1", "asia-east1-a"]),
    (("nodePools", "*", "zones", "*"), ["us-central1b", "europe-west1-b", "us-central"]),
    (("nodePools", "*", "maxRunDuration"), ["24 h", "1w", "90min", "1.5h", "h"]),
    (("kueue", "waitForPodsReady", "timeout"), ["30 m", "30min", "-5m"]),
    (("clusterQueues", "*", "flavors", "*", "quotas", "*"), ["10 GB", "1,5", "-1", "Gi", "1e", "ten"]),
    (("clusterQueues", "*", "flavors", "*", "quotas", "*", "nominal"), ["10 GB", "-4"]),
    (("workloads", "*", "resources", "*"), ["500 m", "1 Gi", "-1", "x"]),
    (("cluster", "masterAuthorizedNetworks", "*", "cidr"), ["10.0.0.1/8", "300.0.0.0/8", "10.0.0.0/33", "office"]),
    (("priorities", "*", "description"), ["x" * 2049]),
    # Names Compute Engine checks (RFC 1035, at most 63), and machine types it does not have.
    (("nodePools", "*", "reservation"), ["my res", "Res-A", "r_1", "r-", "x" * 64, "projects/Acme/reservations/r"]),
    (("nodePools", "*", "machineType"), ["n2-standard-7", "n2-standrad-8", "e2 standard 4", "N2-STANDARD-8"]),
    (("cluster", "systemPool", "machineType"), ["e2-standard-3", "e2-standrad-4", "E2-STANDARD-4"]),
    (("cluster", "network"), ["My VPC", "vpc_1", "projects/acme-ml/networks/vpc", "vpc-"]),
    (("cluster", "subnetwork"), ["sub net", "regions/us-central/subnetworks/s", "projects/p/regions/us-central1/subnetworks/s"]),
]


def _enum_of(schema: dict[str, Any]) -> list[Any] | None:
    for m in members(schema):
        if "enum" in m:
            return m["enum"]
        if "const" in m and isinstance(m["const"], str):
            return [m["const"]]
    return None


def _bad_value(draw, config) -> Mutation | None:
    candidates = []
    table = dict(BAD_VALUES)
    for path, value, schema in walk(config):
        enum = _enum_of(schema) if isinstance(value, str) else None
        if enum:
            bad = [t for t in typos(value) if t not in enum]
            candidates.append((path, path, bad))
        elif pattern(path) in table:
            candidates.append((path, path, table[pattern(path)]))
    # Workload kinds are union tags: checked like an enum, reported at the kind.
    for i, wl in enumerate(ours(config, "workloads", [])):
        kinds = ["Job", "jobSet", "provisioningrequest", "cronjob"]
        candidates.append((("workloads", i, "kind"), ("workloads", i, "kind"), kinds))
    # Label keys and values Kubernetes refuses, on anything that takes labels.
    for path, value, schema in walk(config):
        if path[-1] == "labels" and isinstance(value, dict):
            bad = [{"Team Name": "x"}, {"a/b/c": "x"}, {"team": "has space"}, {"team": "x" * 64}]
            candidates.append((path, path, bad))
    if not candidates:
        return None
    path, reported, bad = draw(st.sampled_from(candidates))
    old = get_at(config, path)
    new = draw(st.sampled_from(bad))
    set_at(config, path, new)
    paths = [key_path(reported)]
    if path[-1] == "labels":
        paths += [key_path((*path, k)) for k in new]
    if pattern(path)[-1:] == ("nominal",) or pattern(path)[-3:] == ("quotas", "*", "nominal"):
        paths.append(key_path(path[:-1]))
    return Mutation("bad_value", f"{key_path(path)}: {old!r} -> {new!r}", paths, extra={"value": new})


def _duplicate(draw, config) -> Mutation | None:
    """A copied list entry: its name (or namespace and local queue) is declared twice."""
    where = {
        "nodePools": "name",
        "flavors": "name",
        "clusterQueues": "name",
        "teams": "localQueue",
        "priorities": "name",
        "workloads": "name",
    }
    candidates = [key for key in where if ours(config, key)]
    if not candidates:
        return None
    key = draw(st.sampled_from(candidates))
    items = ours(config, key)
    item = copy.deepcopy(draw(st.sampled_from(items)))
    at = draw(st.integers(0, len(items)))
    items.insert(at, item)
    # The later of the two is the duplicate.
    second = max(at, next(i for i, x in enumerate(items) if x == item and i != at))
    paths = [key_path((key, second, where[key]))]
    return Mutation("duplicate", f"copy of {key} entry {item.get('name') or item.get('namespace')!r} at {at}", paths)


def _renamed_target(draw, config) -> Mutation | None:
    """Rename something other entries refer to: the error names a reference to it."""
    candidates: list[tuple[tuple, list[tuple]]] = []
    workloads, teams = ours(config, "workloads", []), ours(config, "teams", [])
    for i, pool in enumerate(ours(config, "nodePools", [])):
        refs = [("workloads", j, "pool") for j, w in enumerate(workloads) if w.get("pool") == pool["name"]]
        refs += [
            ("flavors", j, "pools", k)
            for j, f in enumerate(ours(config, "flavors") or [])
            for k, p in enumerate(f.get("pools", []))
            if p == pool["name"]
        ]
        if refs:
            candidates.append((("nodePools", i, "name"), refs))
    for i, f in enumerate(ours(config, "flavors") or []):
        refs = []
        for j, cq in enumerate(ours(config, "clusterQueues", [])):
            for k, e in enumerate(cq.get("flavors", [])):
                if (e if isinstance(e, str) else e["name"]) == f["name"]:
                    refs.append(("clusterQueues", j, "flavors", k, "name"))
        if refs:
            candidates.append((("flavors", i, "name"), refs))
    for i, cq in enumerate(ours(config, "clusterQueues", [])):
        refs = [("teams", j, "clusterQueue") for j, t in enumerate(teams) if t["clusterQueue"] == cq["name"]]
        if refs:
            candidates.append((("clusterQueues", i, "name"), refs))
    for i, team in enumerate(teams):
        if sum(t["namespace"] == team["namespace"] for t in teams) > 1:
            continue  # the workloads would still find the team's other local queue
        refs = [("workloads", j, "team") for j, w in enumerate(workloads) if w["team"] == team["namespace"]]
        if refs:
            candidates.append((("teams", i, "namespace"), refs))
    for i, prio in enumerate(ours(config, "priorities", [])):
        refs = [("workloads", j, "priority") for j, w in enumerate(workloads) if w.get("priority") == prio["name"]]
        if refs:
            candidates.append((("priorities", i, "name"), refs))
    if not candidates:
        return None
    path, refs = draw(st.sampled_from(candidates))
    old = get_at(config, path)
    set_at(config, path, "renamed")
    return Mutation(
        "renamed_target", f"{key_path(path)}: {old!r} -> 'renamed'", [key_path(r) for r in refs], every_path=True
    )


def _bad_region(draw, config) -> Mutation | None:
    if "gcp:region" not in config or "location" in ours(config, "cluster"):
        return None
    old = config["gcp:region"]
    config["gcp:region"] = new = draw(st.sampled_from(("us central1", "US-CENTRAL1", "uscentral1", 12345, "")))
    # The region is the cluster's location by default; either key may be named.
    return Mutation("bad_region", f"gcp:region: {old!r} -> {new!r}", ["gcp:region", f"{NS}:cluster.location"])


def _gcp_reference(draw, config) -> Mutation | None:
    """A reference GCP resolves to something that cannot be the cluster's: an Autopilot cluster in
    a zone, a subnetwork of another region, or a second team giving its namespace another value
    of a label (gke_ai_batch/config/gcpnames.py, cluster.py, stack.py)."""
    cluster = ours(config, "cluster")
    region = cluster.get("location") or config.get("gcp:region")
    candidates = ["subnetwork"]
    if cluster.get("mode") == "autopilot" and region in REGIONS:
        candidates.append("autopilot zone")
    labelled = [i for i, t in enumerate(ours(config, "teams", [])) if t.get("labels")]
    if labelled:
        candidates.append("team label")
    how = draw(st.sampled_from(candidates))
    if how == "autopilot zone":
        cluster["location"] = zone = draw(st.sampled_from(zones_of(region)))
        return Mutation("gcp_reference", f"Autopilot cluster.location: {zone}", [f"{NS}:cluster.location"])
    if how == "subnetwork":
        other = draw(st.sampled_from([r for r in REGIONS if r != R.DEFAULT.region_of(region or "")]))
        cluster["subnetwork"] = f"regions/{other}/subnetworks/nodes"
        return Mutation("gcp_reference", f"cluster.subnetwork in {other}", [f"{NS}:cluster.subnetwork"])
    teams = ours(config, "teams")
    team = teams[draw(st.sampled_from(labelled))]
    key = draw(st.sampled_from(sorted(team["labels"])))
    twin = {**copy.deepcopy(team), "localQueue": f"{team['localQueue'][:50]}-twin", "labels": {key: team["labels"][key] + "x"}}
    teams.append(twin)
    # The twin is a second local queue of the team: workloads naming none now need one.
    return Mutation(
        "gcp_reference", f"teams[{len(teams) - 1}] relabels {key}", [key_path(("teams", len(teams) - 1, "labels", key))], exact=False
    )


_MUTATORS = {
    "unknown_key": _unknown_key,
    "misspelt_top_level": _misspelt_top_level,
    "wrong_type": _wrong_type,
    "missing": _missing,
    "out_of_range": _out_of_range,
    "bad_name": _bad_name,
    "broken_ref": _broken_ref,
    "gcp_project": _gcp_project,
    "bad_value": _bad_value,
    "duplicate": _duplicate,
    "renamed_target": _renamed_target,
    "bad_region": _bad_region,
    "gcp_reference": _gcp_reference,
}
