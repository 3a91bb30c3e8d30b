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
_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def version() -> str:
    """The library's release, pyproject.toml's `version` (its one home): read from the file in a
    checkout, from the installed distribution's metadata otherwise."""
    if _PYPROJECT.is_file():
        import tomllib

        return tomllib.loads(_PYPROJECT.read_text())["project"]["version"]
    from importlib.metadata import version as installed

    return installed(NAME)


def _described_from_bases() -> None:
    """Make the SDK's schema inference read an attribute's docstring where it is written.

    Pulumi's analyzer (pulumi/provider/experimental/analyzer.py, Analyzer.get_docstring) parses
    only the source of the class it is given, so a field declared on a base (the pools' common
    args, a component base's outputs) reached the schema with no description, and a docstring
    kept its source indentation. This looks through the bases (a TypedDict's __orig_bases__: its
    __mro__ is dict's) and cleans the text. Applied on import of this module, which both the
    committed schema (schema()) and the hosted provider (provider/__main__.py) go through;
    tests/test_component_package.py fails if a property is left undescribed."""
    import ast
    import functools
    import inspect

    from pulumi.provider.experimental.analyzer import Analyzer

    own = Analyzer.get_docstring
    if getattr(own, "reads_bases", False):
        return

    # Once per class: inspect.getsource parses the class's whole module to find it, and the
    # analyzer asks for every property of every component (~650 calls, ~4 s of each provider
    # start and schema inference before this cache).
    @functools.cache
    def declared_bases(cls: type) -> tuple[type, ...]:
        # A TypedDict keeps no trace of its bases at run time before Python 3.12 (no
        # __orig_bases__, and its __mro__ is dict's): read them off its class statement.
        try:
            (node,) = ast.parse(inspect.getsource(cls)).body
        except (OSError, TypeError, ValueError):
            return cls.__bases__
        scope = vars(sys.modules[cls.__module__])
        names = [b.id for b in getattr(node, "bases", []) if isinstance(b, ast.Name)]
        return tuple(scope[n] for n in names if isinstance(scope.get(n), type))

    def bases(typ: type) -> list[type]:
        seen: list[type] = []
        todo = [typ]
        while todo:
            cls = todo.pop(0)
            if cls in seen or cls in (object, dict) or cls.__module__ in ("builtins", "typing"):
                continue
            seen.append(cls)
            todo += declared_bases(cls)
        return seen

    def get_docstring(self, typ: type, name: str) -> str | None:
        for cls in bases(typ):
            text = own(self, cls, name)
            if text:
                return inspect.cleandoc(text)
        return None

    get_docstring.reads_bases = True  # type: ignore[attr-defined]
    Analyzer.get_docstring = get_docstring  # type: ignore[method-assign]


_described_from_bases()


def provider():
    """The provider that hosts COMPONENTS (provider/__main__.py serves it): Pulumi's
    ComponentProvider, except that an input the schema does not declare is refused. The SDK's
    mapping keeps only the declared ones (pulumi/provider/experimental/component.py,
    map_input_properties), so a misspelt key from a YAML or TypeScript program was dropped, and
    the component's own unknown-arg check never saw it."""
    from pulumi.errors import InputPropertyError
    from pulumi.provider.experimental.component import ComponentProvider

    from gke_ai_batch.config.errors import did_you_mean

    class Provider(ComponentProvider):
        def map_input_properties(self, inputs, properties, mapping, component_name, property_path):
            if isinstance(inputs, dict):
                for key in sorted(set(inputs) - set(properties)):
                    path = f"{property_path}.{key}" if property_path else key
                    known = sorted(properties)
                    raise InputPropertyError(
                        path, f"Unknown input '{path}' on '{component_name}'{did_you_mean(key, known)}; known: {', '.join(known)}"
                    )
            return super().map_input_properties(inputs, properties, mapping, component_name, property_path)

    return Provider(COMPONENTS, NAME, version=version())


def schema() -> dict:
    """The schema the provider serves for COMPONENTS, without starting it."""
    return json.loads(provider().schema or "{}")


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    cli.parser(_PROG, __doc__).parse_args(argv)
    SCHEMA_PATH.write_text(schema_text())
    print(f"{SCHEMA_PATH.name}: {len(COMPONENTS)} components")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
