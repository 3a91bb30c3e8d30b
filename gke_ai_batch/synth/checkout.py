"""Whether synth runs from a checkout of this repository, and where it is.

A stack render (`synth dev`, `--all`, `--config FILE` without `--program`) runs the repository's
stack program (__main__.py) on its stack files (stacks/) and judges it at the levels of its
policy pack (policy/config/): it needs the checkout. A program render (`--program DIR --config
FILE`) needs nothing but the package, so the installed wheel renders from any folder."""

from __future__ import annotations

from pathlib import Path

# The folder that holds the gke_ai_batch package: the checkout when synth runs from one,
# site-packages when the wheel is installed.
_BESIDE_PACKAGE = Path(__file__).resolve().parents[2]
# What only a checkout has beside the package (the wheel carries none of it).
_MARKERS = ("Pulumi.yaml", "__main__.py", "stacks")

NEEDS_CHECKOUT = (
    "needs a checkout of gke-ai-batch (its stacks/, stack program and policy/config/): run it there; "
    "installed, `gke-ai-batch synth --program DIR --config FILE` renders your own program from any folder"
)


def root() -> Path | None:
    """The checkout the package is imported from, or None when it is installed."""
    return _BESIDE_PACKAGE if all((_BESIDE_PACKAGE / m).exists() for m in _MARKERS) else None
