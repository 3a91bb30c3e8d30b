"""The component package's entry point: the Pulumi CLI runs this (PulumiPlugin.yaml) and
talks to the provider it starts. Which components are hosted, and under which package name,
is gke_ai_batch.components.package's to say.

The Pulumi CLI starts it with the engine's address (ENGINE [--logflow] [--logtostderr]); it
serves until the engine is done and is not meant to be run by hand."""

if __name__ == "__main__":
    from gke_ai_batch.domain import cli

    # Only -h/--help is this file's own (the rest is the provider host's), answered
    # before the components and the cloud SDKs load (~1.5 s).
    cli.parser("python -m provider", __doc__).parse_known_args()

import sys  # noqa: E402

from pulumi.provider import main  # noqa: E402

from gke_ai_batch.components.package import provider  # noqa: E402

if __name__ == "__main__":
    # What component_provider_host does (pulumi/provider/experimental/host.py), with the
    # package's provider, which refuses inputs its schema does not declare.
    main(provider(), sys.argv[1:])
