"""The component package's entry point: the Pulumi CLI runs this (PulumiPlugin.yaml) and
talks to the provider it starts. Which components are hosted, and under which package name,
is gke_ai_batch.components.package's to say."""

from importlib.metadata import PackageNotFoundError, version

from pulumi.provider.experimental import component_provider_host

from gke_ai_batch.components.package import COMPONENTS, NAME


def _version() -> str | None:
    # The installed library's release (pyproject.toml's version); None (the SDK's 0.0.0) when
    # the library runs from a checkout rather than an installed distribution.
    try:
        return version(NAME)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    component_provider_host(COMPONENTS, NAME, version=_version())
