"""The component package's entry point: the Pulumi CLI runs this (PulumiPlugin.yaml) and
talks to the provider it starts. Which components are hosted, and under which package name,
is gke_ai_batch.components.package's to say.

The Pulumi CLI starts it with the engine's address (ENGINE [--logflow] [--logtostderr]); it
serves until the engine is done and is not meant to be run by hand."""

if __name__ == "__main__":
    from gke_ai_batch.domain import cli

    # Only -h/--help is this file's own (the rest is component_provider_host's), answered
    # before the components and the cloud SDKs load (~1.5 s).
    cli.parser("python -m provider", __doc__).parse_known_args()

from importlib.metadata import PackageNotFoundError, version  # noqa: E402

from pulumi.provider.experimental import component_provider_host  # noqa: E402

from gke_ai_batch.components.package import COMPONENTS, NAME  # noqa: E402


def _version() -> str | None:
    # The installed library's release (pyproject.toml's version); None (the SDK's 0.0.0) when
    # the library runs from a checkout rather than an installed distribution.
    try:
        return version(NAME)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    component_provider_host(COMPONENTS, NAME, version=_version())
