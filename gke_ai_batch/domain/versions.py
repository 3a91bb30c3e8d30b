"""GKE control-plane versions per release channel, and how a minor alias resolves.

Pure data and pure functions (no pydantic, no Pulumi). A stack can extend the channels for
versions newer than this catalogue (`gke-ai-batch:catalogue.channels`).

Why minor aliases only: `cluster.minMasterVersion` becomes the cluster's
initialClusterVersion (pulumi-gcp min_master_version, terraform-provider-google
resource_container_cluster.go sets InitialClusterVersion from it). The GKE API takes either an
exact version or an alias, and "1.X" "picks the highest valid patch+gke.N patch in the 1.X
version"; "" picks the default version (Cluster.initialClusterVersion,
https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster).
An exact patch (1.34.0-gke.2201000) stops being valid once GKE retires it, months later, and
from then on every create of that stack fails; an alias keeps resolving.

What an alias resolves to: for a cluster in a release channel, the valid versions are those
the channel offers (getServerConfig channels[].validVersions); "1.X" is the newest 1.X patch of
the channel. So a feature floor such as flex-start TPUs' 1.33.0-gke.1712000 is met by "1.33"
only if the channel's newest 1.33 patch is at least the floor: true once the floor patch (or a
later one) has reached that channel, which is what `newest_known_patch` checks against the
patches this catalogue knows. A minor above the floor's minor always meets it. Without
minMasterVersion the channel's default version applies.

Source: GKE release notes, "Current versions" table
(https://cloud.google.com/kubernetes-engine/docs/release-notes), as of 2026-09 (Regular's
default 1.35.7-gke.1222000; the 2026-09-17 Regular release note moved it to 1.35.8). Patches
travel Rapid -> Regular -> Stable (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels),
so a patch known in a slower channel counts as known in the faster ones: their newest patch
of that minor is at least as new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

CATALOGUE_DATE = "2026-09"
SOURCE = "https://cloud.google.com/kubernetes-engine/docs/release-notes (Current versions)"

CHANNEL_NAMES = ("RAPID", "REGULAR", "STABLE")  # fastest first
# Feature floors: the control-plane version a feature needs (GKE docs concepts/provisioning-model,
# "Flex-start": 1.33.0-gke.1712000 for TPUs, 1.32.2-gke.1652000 for GPUs). A TPU generation's own
# floor lives with it (catalogue.TpuGeneration.min_gke_version).
FLEX_START_MIN = {"tpu": "1.33.0-gke.1712000", "gpu": "1.32.2-gke.1652000"}
# Custom ComputeClasses (GKE docs concepts/about-custom-compute-classes: "available to use in
# GKE Autopilot mode and GKE Standard mode in version 1.30.3-gke.1451000 and later"), and a
# class's own node pool auto-creation (spec.nodePoolAutoCreation.enabled) on a Standard cluster
# without node auto-provisioning: 1.33.3-gke.1136000 (GKE docs how-to/node-auto-provisioning,
# "Configure node pool auto-creation": a ComputeClass with nodePoolAutoCreation enabled); before
# it a Standard cluster creates a class's node pools only with cluster-level auto-provisioning.
CUSTOM_COMPUTE_CLASS_MIN = "1.30.3-gke.1451000"
COMPUTE_CLASS_AUTO_CREATION_MIN = "1.33.3-gke.1136000"

# The Managed Lustre CSI driver (addonsConfig.lustreCsiDriverConfig) needs a cluster at
# 1.33.2-gke.1111000 or later (GKE docs concepts/managed-lustre, "Requirements"; the same
# floor for x86 nodes under "Limitations").
LUSTRE_CSI_MIN = "1.33.2-gke.1111000"

# GKE's managed DCGM metrics package (monitoring_config.enable_components DCGM): GKE docs
# how-to/dcgm-metrics, "Requirements": GKE 1.30.1-gke.1204000 or later (on by default on new
# clusters from 1.32.1-gke.1357000, https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics).
# The floor itself is as SkyPilot's GKE GPU-metrics guide gives it: the page's "Requirements"
# section could not be read here (docs/verification.md says what was searched); its
# translations confirm the on-by-default version.
DCGM_METRICS_MIN = "1.30.1-gke.1204000"
# TPU utilization as GKE system metrics: the runtime metrics (kubernetes.io/node/accelerator/
# duty_cycle, memory_used, memory_total) from GKE 1.27.4-gke.900, the host metrics
# (tensorcore_utilization, memory_bandwidth_utilization) from 1.28.1-gke.1066000 (GKE docs
# how-to/tpus, "Observability and metrics",
# https://cloud.google.com/kubernetes-engine/docs/how-to/tpus#observability-metrics; Google's own
# google/skills skills/cloud/gke-ai-troubleshooting-tpu-metrics-monitoring/SKILL.md:38,133 at
# 1af77752). `metrics.tpu` promises all of them, so the later floor.
TPU_METRICS_MIN = "1.28.1-gke.1066000"
MINOR_RX = re.compile(r"1\.([0-9]{1,3})", re.ASCII)
PATCH_RX = re.compile(r"1\.([0-9]{1,3})\.([0-9]{1,3})-gke\.([0-9]{1,12})", re.ASCII)
# A Helm chart version pinned to one release: SemVer 2.0 (https://semver.org, its suggested
# regular expression), optionally a pre-release or build, no ranges, wildcards, 'v' or leading
# zeros. Helm requires a chart's version to be SemVer 2 (helm.sh/docs/topics/charts, "Charts and
# Versioning"), and given a version it returns the chart whose version is exactly that string
# before trying it as a range (helm/helm pkg/repo/index.go, IndexFile.Get: test.Original() ==
# version), so anything else is a range or matches no chart.
CHART_VERSION_RX = re.compile(
    r"(?P<major>0|[1-9][0-9]*)\.(?P<minor>0|[1-9][0-9]*)\.(?P<patch>0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?",
    re.ASCII,
)
# The chart versions installed when a stack (or a component's args) pins none: the releases
# this project's objects and Kueue's release table (domain/kueue_releases.py) were read against.
KUEUE_CHART_VERSION = "0.19.2"
JOBSET_CHART_VERSION = "0.12.0"
# Anything that looks like a version but is not a bare minor: 1.34.0, 1.34.0-gke.2201000, 2.0.
VERSIONISH_RX = re.compile(r"[0-9]+(\.[0-9]+)*(-gke\.[0-9]+)?", re.ASCII)


@dataclass(frozen=True)
class Channel:
    minors: tuple[str, ...]  # minor versions offered for cluster creation, oldest first
    default: str  # the exact patch a cluster gets when no version is asked for
    patches: tuple[str, ...] = ()  # other exact patches known to be offered


CHANNELS: dict[str, Channel] = {
    # Available minor versions and default patch for cluster creation, from the table above;
    # the recommended auto-upgrade targets (1.36.4-gke.1082000, 1.35.7-gke.1222000,
    # 1.34.9-gke.1655001) are offered patches too.
    "RAPID": Channel(("1.34", "1.35", "1.36", "1.37"), "1.36.4-gke.1082000"),
    "REGULAR": Channel(("1.34", "1.35", "1.36"), "1.35.7-gke.1222000"),
    "STABLE": Channel(("1.34", "1.35"), "1.35.6-gke.1250000", ("1.34.9-gke.1655001",)),
}


def minor_of(version: str) -> tuple[int, int]:
    m = MINOR_RX.fullmatch(version) or PATCH_RX.fullmatch(version)
    if not m:
        raise ValueError(f"{version!r} is not a GKE version")
    return (1, int(m.group(1)))


def patch_key(patch: str) -> tuple[int, int, int, int]:
    m = PATCH_RX.fullmatch(patch)
    if not m:
        raise ValueError(f"{patch!r} is not an exact GKE version such as 1.34.9-gke.1655001")
    return (1, int(m.group(1)), int(m.group(2)), int(m.group(3)))


def minor_text(minor: tuple[int, int]) -> str:
    return f"{minor[0]}.{minor[1]}"


# The oldest Kubernetes minor the batch layer this program installs runs on, which an existing
# cluster must run (a cluster this program creates gets a minor its channel offers, far above).
# Kueue: "Requires Kubernetes 1.29 or newer" (kubernetes-sigs/kueue README.md, "Installation", the
# same at v0.15.0 through v0.19.2); JobSet 0.12.0: "Kubernetes >= 1.27" (kubernetes-sigs/jobset
# charts/jobset/README.md, "Prerequisites"). A GKE version's minor is its Kubernetes minor.
KUEUE_MIN_KUBERNETES = "1.29"
JOBSET_MIN_KUBERNETES = "1.27"
EXISTING_CLUSTER_MIN = max(KUEUE_MIN_KUBERNETES, JOBSET_MIN_KUBERNETES, key=minor_of)


@dataclass(frozen=True)
class Versions:
    channels: Mapping[str, Channel]

    def minors(self, channel: str) -> list[str]:
        return sorted(self.channels[channel].minors, key=minor_of)

    def all_minors(self) -> list[str]:
        return sorted({m for c in self.channels.values() for m in c.minors}, key=minor_of)

    def known_patches(self, channel: str) -> list[str]:
        """Patches offered in this channel or, by the Rapid -> Regular -> Stable order, in a
        slower one."""
        slower = CHANNEL_NAMES[CHANNEL_NAMES.index(channel):] if channel in CHANNEL_NAMES else (channel,)
        out: list[str] = []
        for name in slower:
            c = self.channels.get(name)
            if c is not None:
                out += [c.default, *c.patches]
        return out

    def newest_known_patch(self, channel: str, minor: str) -> str | None:
        mine = [p for p in self.known_patches(channel) if minor_of(p) == minor_of(minor)]
        return max(mine, key=patch_key) if mine else None

    def resolves_at_least(self, channel: str, version: str | None, floor: str) -> bool:
        """Whether the cluster's initial version is at least `floor`: the channel's default
        when `version` is None, else the newest patch of the minor `version` names."""
        if version is None:
            return patch_key(self.channels[channel].default) >= patch_key(floor)
        if minor_of(version) > minor_of(floor):
            return True
        if minor_of(version) < minor_of(floor):
            return False
        known = self.newest_known_patch(channel, version)
        return known is not None and patch_key(known) >= patch_key(floor)

    def resolved_text(self, channel: str, version: str | None) -> str:
        """How a reader should picture the version: 'the REGULAR default 1.35.7-gke.1222000' or
        'the newest 1.33 patch of REGULAR (newest known: ...)'."""
        if version is None:
            return f"the {channel} channel's default {self.channels[channel].default}"
        known = self.newest_known_patch(channel, version)
        return f"the newest {version} patch of {channel}" + (f" (newest known here: {known})" if known else "")

    def extended(self, overrides: Mapping[str, tuple[Iterable[str], str | None, Iterable[str]]]) -> "Versions":
        """A copy with each channel's (extra minors, new default or None, extra patches)."""
        channels = dict(self.channels)
        for name, (minors, default, patches) in overrides.items():
            old = channels[name]
            channels[name] = Channel(
                tuple(dict.fromkeys([*old.minors, *minors])),
                default or old.default,
                tuple(dict.fromkeys([*old.patches, *patches])),
            )
        return Versions(channels)


DEFAULT = Versions(CHANNELS)


# Job spec.managedBy (KEP-4368): alpha and off in 1.30-1.31, beta and on from 1.32, GA in 1.35
# (https://github.com/kubernetes/enhancements/issues/4368;
# https://kubernetes.io/docs/concepts/workloads/controllers/job/#delegation-of-managing-a-job-object-to-external-controller).
MANAGED_BY_MINOR = (1, 32)


def managed_by_problem(gke_minor: str) -> str | None:
    """Why a manager cluster at this GKE version (a minor such as '1.33', or an exact patch)
    cannot run batch Jobs through MultiKueue, or None.

    On the manager, Kueue sets a Job's spec.managedBy to kueue.x-k8s.io/multikueue and only
    mirrors its status from the worker (IsJobManagedByKueue,
    pkg/controller/jobs/job/job_multikueue_adapter.go:197-208); since 0.19 there is no other
    mode (the MultiKueueBatchJobWithManagedBy gate is gone from pkg/features/kube_features.go).
    An API server without the field drops it on create, and the built-in Job controller then
    runs the Job's pods on the manager as well as on the worker. Workers need nothing: the copy
    they receive has managedBy cleared (job_multikueue_adapter.go:103-104)."""
    minor = minor_of(gke_minor)
    if minor >= MANAGED_BY_MINOR:
        return None
    return (
        f"GKE {gke_minor}: batch Jobs need Job spec.managedBy on the MultiKueue manager, beta and on by default "
        f"from Kubernetes {minor_text(MANAGED_BY_MINOR)} (KEP-4368); below it the manager would run every Job's "
        "pods itself as well as on a worker"
    )
