"""The Pulumi component resources: the cluster, node pools, JobSet and Kueue, queues, teams,
the fleet's MultiKueue wiring, ComputeClasses, topologies, checkpoint buckets and metrics.

Every public component and its typed args are importable from here (and from `gke_ai_batch`),
loaded on first use: `import gke_ai_batch` stays as light as the policy pack needs (no Pulumi
SDK, no pydantic) until a component is touched (PEP 562 module __getattr__). Type checkers read
the imports under TYPE_CHECKING below."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gke_ai_batch.components.batch import (
        FairSharingArgs as FairSharingArgs,
        JobSetInstall as JobSetInstall,
        JobSetInstallArgs as JobSetInstallArgs,
        KueueInstall as KueueInstall,
        KueueInstallArgs as KueueInstallArgs,
        MultiKueueArgs as MultiKueueArgs,
        WaitForPodsReadyArgs as WaitForPodsReadyArgs,
    )
    from gke_ai_batch.components.cluster import (
        AddonsArgs as AddonsArgs,
        AuthorizedNetworkArgs as AuthorizedNetworkArgs,
        AutoProvisioningArgs as AutoProvisioningArgs,
        ControlPlaneArgs as ControlPlaneArgs,
        DatabaseEncryptionArgs as DatabaseEncryptionArgs,
        ExistingCluster as ExistingCluster,
        ExistingClusterArgs as ExistingClusterArgs,
        GkeCluster as GkeCluster,
        GkeClusterArgs as GkeClusterArgs,
        LimitArgs as LimitArgs,
        MaintenanceArgs as MaintenanceArgs,
        MaintenanceExclusionArgs as MaintenanceExclusionArgs,
        MaintenanceWindowArgs as MaintenanceWindowArgs,
        MonitoringArgs as MonitoringArgs,
        SystemPoolArgs as SystemPoolArgs,
    )
    from gke_ai_batch.components.computeclasses import (
        ClassGpuArgs as ClassGpuArgs,
        ClassPriorityArgs as ClassPriorityArgs,
        ClassTpuArgs as ClassTpuArgs,
        ComputeClassArgs as ComputeClassArgs,
        ComputeClasses as ComputeClasses,
        ComputeClassesArgs as ComputeClassesArgs,
    )
    from gke_ai_batch.components.metrics import (
        Metrics as Metrics,
        MetricsArgs as MetricsArgs,
    )
    from gke_ai_batch.components.multikueue import (
        ManagerCheckArgs as ManagerCheckArgs,
        MultiKueueManager as MultiKueueManager,
        MultiKueueManagerArgs as MultiKueueManagerArgs,
        MultiKueueWorker as MultiKueueWorker,
        MultiKueueWorkerArgs as MultiKueueWorkerArgs,
        WorkerKubeconfigArgs as WorkerKubeconfigArgs,
    )
    from gke_ai_batch.components.nodepools import (
        ClusterRef as ClusterRef,
        CpuPool as CpuPool,
        CpuPoolArgs as CpuPoolArgs,
        GpuArgs as GpuArgs,
        GpuPool as GpuPool,
        GpuPoolArgs as GpuPoolArgs,
        ReservationArgs as ReservationArgs,
        TaintArgs as TaintArgs,
        TpuSlices as TpuSlices,
        TpuSlicesArgs as TpuSlicesArgs,
        UpgradeArgs as UpgradeArgs,
    )
    from gke_ai_batch.components.priorities import (
        Priorities as Priorities,
        PrioritiesArgs as PrioritiesArgs,
        PriorityArgs as PriorityArgs,
    )
    from gke_ai_batch.components.queues import (
        BorrowWithinCohortArgs as BorrowWithinCohortArgs,
        ClusterQueue as ClusterQueue,
        ClusterQueueArgs as ClusterQueueArgs,
        FlavorArgs as FlavorArgs,
        LabelSelectorArgs as LabelSelectorArgs,
        LabelSelectorRequirementArgs as LabelSelectorRequirementArgs,
        LocalQueueArgs as LocalQueueArgs,
        PreemptionArgs as PreemptionArgs,
        ProvisioningCheck as ProvisioningCheck,
        ProvisioningCheckArgs as ProvisioningCheckArgs,
        ResourceFlavor as ResourceFlavor,
        ResourceFlavorArgs as ResourceFlavorArgs,
        Team as Team,
        TeamArgs as TeamArgs,
        TolerationArgs as TolerationArgs,
    )
    from gke_ai_batch.components.storage import (
        CheckpointBucket as CheckpointBucket,
        CheckpointBucketArgs as CheckpointBucketArgs,
    )
    from gke_ai_batch.components.topology import (
        Topologies as Topologies,
        TopologiesArgs as TopologiesArgs,
        TopologyArgs as TopologyArgs,
    )
    from gke_ai_batch.config.errors import (
        ArgsError as ArgsError,
    )

# Where each public name lives, one line per module.
_HOMES: dict[str, tuple[str, ...]] = {
    "gke_ai_batch.components.batch": (
        "FairSharingArgs", "JobSetInstall", "JobSetInstallArgs", "KueueInstall", "KueueInstallArgs",
        "MultiKueueArgs", "WaitForPodsReadyArgs",
    ),
    "gke_ai_batch.components.cluster": (
        "AddonsArgs", "AuthorizedNetworkArgs", "AutoProvisioningArgs", "ControlPlaneArgs",
        "DatabaseEncryptionArgs", "ExistingCluster", "ExistingClusterArgs", "GkeCluster", "GkeClusterArgs",
        "LimitArgs", "MaintenanceArgs", "MaintenanceExclusionArgs", "MaintenanceWindowArgs", "MonitoringArgs",
        "SystemPoolArgs",
    ),
    "gke_ai_batch.components.computeclasses": (
        "ClassGpuArgs", "ClassPriorityArgs", "ClassTpuArgs", "ComputeClassArgs", "ComputeClasses",
        "ComputeClassesArgs",
    ),
    "gke_ai_batch.components.metrics": (
        "Metrics", "MetricsArgs",
    ),
    "gke_ai_batch.components.multikueue": (
        "ManagerCheckArgs", "MultiKueueManager", "MultiKueueManagerArgs", "MultiKueueWorker",
        "MultiKueueWorkerArgs", "WorkerKubeconfigArgs",
    ),
    "gke_ai_batch.components.nodepools": (
        "ClusterRef", "CpuPool", "CpuPoolArgs", "GpuArgs", "GpuPool", "GpuPoolArgs", "ReservationArgs",
        "TaintArgs", "TpuSlices", "TpuSlicesArgs", "UpgradeArgs",
    ),
    "gke_ai_batch.components.priorities": (
        "Priorities", "PrioritiesArgs", "PriorityArgs",
    ),
    "gke_ai_batch.components.queues": (
        "BorrowWithinCohortArgs", "ClusterQueue", "ClusterQueueArgs", "FlavorArgs", "LabelSelectorArgs",
        "LabelSelectorRequirementArgs", "LocalQueueArgs", "PreemptionArgs", "ProvisioningCheck",
        "ProvisioningCheckArgs", "ResourceFlavor", "ResourceFlavorArgs", "Team",
        "TeamArgs", "TolerationArgs",
    ),
    "gke_ai_batch.components.storage": (
        "CheckpointBucket", "CheckpointBucketArgs",
    ),
    "gke_ai_batch.components.topology": (
        "Topologies", "TopologiesArgs", "TopologyArgs",
    ),
    "gke_ai_batch.config.errors": (
        "ArgsError",
    ),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

# The public names as a literal list: mypy reads a star import (gke_ai_batch/__init__.py) only
# through a literal __all__. tests/test_package_exports.py holds it, _HOMES and the
# TYPE_CHECKING imports above equal.
__all__ = [
    "FairSharingArgs", "JobSetInstall", "JobSetInstallArgs", "KueueInstall", "KueueInstallArgs",
    "MultiKueueArgs", "WaitForPodsReadyArgs", "AddonsArgs", "AuthorizedNetworkArgs",
    "AutoProvisioningArgs", "ControlPlaneArgs", "DatabaseEncryptionArgs", "ExistingCluster",
    "ExistingClusterArgs", "GkeCluster", "GkeClusterArgs", "LimitArgs", "MaintenanceArgs",
    "MaintenanceExclusionArgs", "MaintenanceWindowArgs", "MonitoringArgs", "SystemPoolArgs",
    "ClassGpuArgs", "ClassPriorityArgs", "ClassTpuArgs", "ComputeClassArgs", "ComputeClasses",
    "ComputeClassesArgs", "Metrics", "MetricsArgs", "ManagerCheckArgs", "MultiKueueManager",
    "MultiKueueManagerArgs", "MultiKueueWorker", "MultiKueueWorkerArgs", "WorkerKubeconfigArgs",
    "ClusterRef", "CpuPool", "CpuPoolArgs", "GpuArgs", "GpuPool", "GpuPoolArgs", "ReservationArgs",
    "TaintArgs", "TpuSlices", "TpuSlicesArgs", "UpgradeArgs", "Priorities", "PrioritiesArgs",
    "PriorityArgs", "BorrowWithinCohortArgs", "ClusterQueue", "ClusterQueueArgs", "FlavorArgs",
    "LabelSelectorArgs", "LabelSelectorRequirementArgs", "LocalQueueArgs", "PreemptionArgs",
    "ProvisioningCheck", "ProvisioningCheckArgs", "ResourceFlavor", "ResourceFlavorArgs", "Team",
    "TeamArgs", "TolerationArgs", "CheckpointBucket", "CheckpointBucketArgs", "Topologies",
    "TopologiesArgs", "TopologyArgs", "ArgsError",
]


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
