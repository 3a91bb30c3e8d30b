"""The component package: which components a Pulumi program in any language (TypeScript, Go,
YAML, ...) can use through `pulumi package add`, and the schema Pulumi infers for them.

provider/__main__.py hosts COMPONENTS with Pulumi's component_provider_host; the schema is
committed as provider/schema.json so a change to a component's inputs or outputs shows up in
review (tests/test_component_package.py regenerates it offline and fails when it is stale):

    python -m gke_ai_batch.components.package    # rewrite provider/schema.json
"""

import json
import sys
from pathlib import Path

from gke_ai_batch.domain import cli

_PROG = "python -m gke_ai_batch.components.package"
if __name__ == "__main__":
    # --help (and a stray argument) answered before the components and the cloud SDKs load (~1 s).
    cli.parser(_PROG, __doc__).parse_args()

import pulumi  # noqa: E402

from gke_ai_batch.components.batch import JobSetInstall, KueueInstall  # noqa: E402
from gke_ai_batch.components.cluster import ExistingCluster, GkeCluster  # noqa: E402
from gke_ai_batch.components.multikueue import MultiKueueManager, MultiKueueWorker  # noqa: E402
from gke_ai_batch.components.computeclasses import ComputeClasses  # noqa: E402
from gke_ai_batch.components.topology import Topologies  # noqa: E402
from gke_ai_batch.components.metrics import Metrics  # noqa: E402
from gke_ai_batch.components.nodepools import CpuPool, GpuPool, TpuSlices  # noqa: E402
from gke_ai_batch.components.priorities import Priorities  # noqa: E402
from gke_ai_batch.components.queues import ClusterQueue, ProvisioningCheck, ResourceFlavor, Team  # noqa: E402
from gke_ai_batch.components.storage import CheckpointBucket  # noqa: E402
from gke_ai_batch.config.errors import NAMESPACE  # noqa: E402

# One line per hosted component. A component is hostable when its __init__ annotates `args`
# with a TypedDict (or class) of annotated inputs and its class-level annotations are all
# Outputs (Pulumi's analyzer turns every public one into a schema output).
COMPONENTS: list[type[pulumi.ComponentResource]] = [
    GkeCluster,
    ExistingCluster,
    TpuSlices,
    GpuPool,
    CpuPool,
    JobSetInstall,
    KueueInstall,
    Priorities,
    MultiKueueWorker,
    MultiKueueManager,
    ResourceFlavor,
    ProvisioningCheck,
    ClusterQueue,
    Team,
    ComputeClasses,
    Topologies,
    CheckpointBucket,
    Metrics,
]

# The package is named as the project; its components' tokens are NAMESPACE:index:<Class>
# (gke_ai_batch/components/nodepools.py, type_token).
NAME = NAMESPACE
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "provider" / "schema.json"


def schema() -> dict:
    """The schema component_provider_host serves for COMPONENTS, without starting a provider."""
    from pulumi.provider.experimental.component import ComponentProvider

    # The version is left at the SDK's default: the schema's content, not the release it ships
    # in, is what the committed file pins.
    return json.loads(ComponentProvider(COMPONENTS, NAME).schema or "{}")


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    cli.parser(_PROG, __doc__).parse_args(argv)
    SCHEMA_PATH.write_text(schema_text())
    print(f"{SCHEMA_PATH.name}: {len(COMPONENTS)} components")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
