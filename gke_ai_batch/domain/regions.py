"""Where GKE offers what: Google Cloud regions, their zones, and per zone the TPU generations
and GPU types a node pool can use there.

Pure data and pure functions (no pydantic, no Pulumi), like gke_ai_batch/domain/catalogue.py. TPU
generations are named by their config value (catalogue.TPU_GENERATIONS: v4, v5e, v5p, v6e,
tpu7x), GPU types by their GKE accelerator name (keys of catalogue.GPU_TYPES).

A stack can extend this catalogue for a zone or a version newer than it
(`gke-ai-batch:catalogue`, gke_ai_batch/config/catalogue.py); synth's report lists what a stack
overrode.

Sources (as of 2026-08; the catalogue is not exhaustive: it covers the regions commonly used
for TPUs and GPUs, and a zone missing here is refused until it is added or overridden):
- Zones that exist: Compute Engine "Regions and zones"
  (https://cloud.google.com/compute/docs/regions-zones); AI zones (us-central1-ai1a,
  us-south1-ai1b): "About AI zones" (https://cloud.google.com/compute/docs/regions-zones/ai-zones).
- TPUs: Cloud TPU "TPU regions and zones" (https://cloud.google.com/tpu/docs/regions-zones),
  which GKE's "Plan TPUs in GKE" (.../kubernetes-engine/docs/concepts/plan-tpus#availability)
  defers to, plus the zones the Cloud TPU API lists accelerator types for, as recorded in
  skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv (generated from the Compute Engine and
  TPU APIs; entries there with a placeholder price, i.e. not offered for sale, left out).
- GPUs: Compute Engine "GPU regions and zones"
  (https://cloud.google.com/compute/docs/gpus/gpu-regions-zones), cross-checked with the
  accelerator-optimized machine types (a2-highgpu, a2-ultragpu, a3-highgpu, a3-megagpu,
  a3-ultragpu, a4-highgpu, g2-standard) and N1 T4 rows per zone in the same skypilot-catalog
  file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from gke_ai_batch.domain import catalogue

CATALOGUE_DATE = "2026-08"

# A zone is <region>-<letter>, or an AI zone <region>-ai<digit><letter>. ASCII only.
REGION_RX = re.compile(r"[a-z]+-[a-z]+[0-9]+", re.ASCII)
ZONE_RX = re.compile(r"(?P<region>[a-z]+-[a-z]+[0-9]+)-(?P<suffix>[a-z]|ai[0-9][a-z])", re.ASCII)
# Where a regional cluster's pools go when it names no node locations: "By default, GKE
# replicates each node pool across three zones of the control plane's region"
# (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters, "Regional clusters").
DEFAULT_ZONES_PER_REGION = 3


def region_of(location: str) -> str:
    """The region of a zone or region name; anything else as it is."""
    m = ZONE_RX.fullmatch(location)
    return m.group("region") if m else location


@dataclass(frozen=True)
class Zone:
    name: str
    tpu: frozenset[str] = frozenset()  # TPU generations (catalogue.TPU_GENERATIONS keys)
    gpu: frozenset[str] = frozenset()  # GPU types (catalogue.GPU_TYPES keys)
    calendar_tpu: frozenset[str] = frozenset()  # TPU generations reservable in calendar mode here


def _zones(region: str, letters: str, **offers: Iterable[str]) -> dict[str, Zone]:
    """Zones <region>-<letter> for each letter (an AI zone suffix is written 'ai1a');
    `offers` maps an accelerator to the zone suffixes that offer it, e.g.
    nvidia_l4="abc" or v6e=["b", "ai1a"]."""
    suffixes = letters.split() if " " in letters else list(letters)
    tpu: dict[str, set[str]] = {s: set() for s in suffixes}
    gpu: dict[str, set[str]] = {s: set() for s in suffixes}
    for accel, where in offers.items():
        where = list(where)
        name = accel.replace("_", "-")
        target = tpu if accel in catalogue.TPU_GENERATIONS else gpu
        for suffix in where:
            if suffix not in target:
                raise ValueError(f"{region}-{suffix} is not listed as a zone of {region}")
            target[suffix].add(name)
    return {
        f"{region}-{s}": Zone(f"{region}-{s}", frozenset(tpu[s]), frozenset(gpu[s])) for s in suffixes
    }


# GPU type names as Python identifiers in the tables below.
T4, L4 = "nvidia_tesla_t4", "nvidia_l4"
A100, A100_80 = "nvidia_tesla_a100", "nvidia_a100_80gb"
H100, H100_MEGA = "nvidia_h100_80gb", "nvidia_h100_mega_80gb"
H200, B200 = "nvidia_h200_141gb", "nvidia_b200"


def _region(name: str, letters: str, **offers) -> tuple[str, dict[str, Zone]]:
    return name, _zones(name, letters, **offers)


REGIONS: dict[str, dict[str, Zone]] = dict(
    [
        _region(
            "us-central1", "a b c f ai1a",
            v5e="a", v5p="a", v6e="abc", tpu7x=["c", "ai1a"],
            **{T4: "abcf", L4: "abc", A100: "abcf", A100_80: "ac", H100: "abc", H100_MEGA: "abc",
               H200: "b", B200: "b"},
        ),
        # us-central2 is the TPU v4 region; b is the only zone the sources list.
        _region("us-central2", "b", v4="b"),
        _region(
            "us-east1", "bcd",
            v5e="bc", v5p="d", v6e="d",
            **{T4: "bcd", L4: "bcd", A100: "b", B200: "b"},
        ),
        _region(
            "us-east4", "abc",
            v5e="b", v6e="a",
            **{T4: "abc", L4: "ac", A100_80: "c", H100: "abc", H100_MEGA: "abc", H200: "b", B200: "b"},
        ),
        _region(
            "us-east5", "abc",
            v5e="abc", v5p="abc", v6e="abc",
            **{A100_80: "ab", H100: "a", H100_MEGA: "a", H200: "a"},
        ),
        _region(
            "us-south1", "a b c ai1b",
            v5e="ab", v5p="abc", v6e=["a", "c", "ai1b"],
            **{H200: "b", B200: "b"},
        ),
        _region(
            "us-west1", "abc",
            v5e="c", v6e="c",
            **{T4: "ab", L4: "abc", A100: "b", H100: "ab", H100_MEGA: "ab", H200: "c"},
        ),
        _region(
            "us-west4", "abc",
            v5e="ab",
            **{T4: "ab", L4: "ac", A100: "b", H100: "a", H100_MEGA: "a"},
        ),
        _region(
            "europe-west1", "bcd",
            v5e="bc", v5p="bd",
            **{T4: "bcd", L4: "bc", H100: "bc", H100_MEGA: "bc", H200: "b"},
        ),
        _region(
            "europe-west4", "abc",
            v5e="ab", v5p="b", v6e="a",
            **{T4: "abc", L4: "abc", A100: "ab", A100_80: "a", H100: "bc", H100_MEGA: "bc", H200: "a",
               B200: "b"},
        ),
        _region(
            "asia-northeast1", "abc",
            v5e="b", v6e="b",
            **{T4: "ac", L4: "abc", A100: "ac", H100: "b", H100_MEGA: "b", B200: "b"},
        ),
        _region(
            "asia-southeast1", "abc",
            v5e="b", v6e="b",
            **{T4: "abc", L4: "abc", A100: "abc", A100_80: "c", H100: "bc", H100_MEGA: "bc", B200: "b"},
        ),
    ]
)


# Zones where Compute Engine takes a future reservation request in calendar mode, per TPU
# generation: "You can only reserve the following TPU versions in the specified zones" (Cloud
# TPU docs tpu/docs/calendar-mode-reservation, "Limitations": v6e asia-northeast1-b, us-east5-a,
# us-east5-b; v5p us-east5-a; v5e us-west4-b for BATCH, us-central1-a for SERVING (1, 4 or 8
# chips); Compute Engine docs instances/create-future-reservations-calendar-mode, "Limitations",
# lists the same but us-east5-b). Read 2026-11; TPU7x is listed nowhere. A stack adds a zone GKE
# offers since under gke-ai-batch:catalogue.zones.<zone>.calendar.
CALENDAR_DATE = "2026-11"
CALENDAR_TPU_ZONES: dict[str, tuple[str, ...]] = {
    "v6e": ("asia-northeast1-b", "us-east5-a", "us-east5-b"),
    "v5p": ("us-east5-a",),
    "v5e": ("us-west4-b", "us-central1-a"),
}


# TPU chips one calendar-mode request may hold, per generation, and zones that take requests for
# serving only, of 1, 4 or 8 chips ("You can only reserve one, four, or eight TPUs v5e for serving
# (SERVING) workload types"): Compute Engine docs instances/create-future-reservations-calendar-mode,
# "Limitations", read 2026-11 (CALENDAR_DATE). A slice is whole in one reservation, so a larger
# one is never served by such a request.
CALENDAR_MAX_CHIPS: dict[str, int] = {"v6e": 256, "v5p": 1024, "v5e": 256}
CALENDAR_SERVING_ZONES: dict[str, tuple[str, ...]] = {"v5e": ("us-central1-a",)}
CALENDAR_SERVING_CHIPS = (1, 4, 8)


def _with_calendar(regions: dict[str, dict[str, Zone]]) -> dict[str, dict[str, Zone]]:
    for version, names in CALENDAR_TPU_ZONES.items():
        for name in names:
            zone = regions[region_of(name)][name]  # a KeyError here: the table names a zone the catalogue lacks
            regions[region_of(name)][name] = Zone(zone.name, zone.tpu, zone.gpu, zone.calendar_tpu | {version})
    return regions


REGIONS = _with_calendar(REGIONS)


@dataclass(frozen=True)
class Catalogue:
    """The regions catalogue, possibly extended by a stack's override."""

    regions: Mapping[str, Mapping[str, Zone]] = field(default_factory=lambda: REGIONS)

    def region_of(self, location: str) -> str:
        m = ZONE_RX.fullmatch(location)
        return m.group("region") if m else location

    def has_region(self, region: str) -> bool:
        return region in self.regions

    def zones_of(self, region: str) -> list[str]:
        return list(self.regions.get(region, {}))

    def zone(self, name: str) -> Zone | None:
        return self.regions.get(self.region_of(name), {}).get(name)

    def tpu_zones(self, region: str, version: str) -> list[str]:
        return [z.name for z in self.regions.get(region, {}).values() if version in z.tpu]

    def gpu_zones(self, region: str, gpu_type: str) -> list[str]:
        return [z.name for z in self.regions.get(region, {}).values() if gpu_type in z.gpu]

    def calendar_tpu_zones(self, version: str) -> list[str]:
        """Every zone, of any region, where TPU `version` is reservable in calendar mode."""
        return sorted(z.name for zs in self.regions.values() for z in zs.values() if version in z.calendar_tpu)

    def extended(
        self, zones: Mapping[str, tuple[Iterable[str], Iterable[str]] | tuple[Iterable[str], Iterable[str], Iterable[str]]]
    ) -> "Catalogue":
        """A copy in which each zone (name -> (TPU generations, GPU types[, TPU generations
        reservable in calendar mode])) exists and offers at least these; zones of a region the
        catalogue lacks add the region."""
        regions = {r: dict(zs) for r, zs in self.regions.items()}
        for name, offer in zones.items():
            tpu, gpu, calendar = (*offer, ())[:3]
            region = self.region_of(name)
            old = regions.setdefault(region, {}).get(name, Zone(name))
            regions[region][name] = Zone(
                name, old.tpu | frozenset(tpu), old.gpu | frozenset(gpu), old.calendar_tpu | frozenset(calendar)
            )
        return Catalogue(regions)


DEFAULT = Catalogue()


def known_regions() -> list[str]:
    return sorted(REGIONS)


# Regions where Google Cloud Managed Lustre instances can be created, hence where a cluster's
# Managed Lustre CSI driver has an instance of its own region to mount (instances live in zones
# of these regions; GKE's nodes reach one over the VPC, best from the same region): Managed
# Lustre docs "Supported regions and zones" (https://cloud.google.com/managed-lustre/docs/locations,
# read 2026-11). This list is the union of two versions of that table: an earlier one, read whole
# in its zh-TW translation (asia-northeast1 to us-central1, 14 regions), and the current one,
# read from africa-south1 to europe-central2 (the English page and its ?hl=zh-tw and ?hl=ko
# translations). The current table's rows after europe-central2 could not be read, so a region
# listed only there is refused until it is added here.
LUSTRE_REGIONS = frozenset({
    "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2", "asia-northeast3",
    "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2", "australia-southeast1",
    "australia-southeast2", "europe-central2",
    "europe-west1", "europe-west2", "europe-west3", "europe-west4", "europe-west9", "me-central2", "me-west1",
    "northamerica-northeast1", "southamerica-east1", "us-central1",
})
