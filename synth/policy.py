"""Run the policy pack's rule functions over what synth recorded (stub: filled in by issue 4)."""

from __future__ import annotations

from typing import Any


def evaluate(result) -> list[dict[str, Any]]:
    """[{"policy", "enforcement", "urn", "message"}] for every violation, in a stable order."""
    return []
