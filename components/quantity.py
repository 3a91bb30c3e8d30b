"""Kubernetes resource quantities ('8', '500m', '10Gi', '1.5e3') as numbers.

Pure Python on purpose: the config models, synth's report and the policy pack (which runs
in its own virtualenv without pydantic) share this one parser."""

from __future__ import annotations

import re
from typing import Any

# The API's grammar, as Kueue's CRDs spell it (pattern on nominalQuota).
PATTERN = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_SUFFIXES = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}


def is_quantity(text: str) -> bool:
    return bool(PATTERN.fullmatch(text))  # fullmatch: "$" alone would accept a trailing newline


def value(q: Any) -> float | None:
    """The number a quantity stands for; None for anything that is not a quantity."""
    if isinstance(q, bool):
        return None
    if isinstance(q, (int, float)):
        return float(q)
    if not isinstance(q, str) or not is_quantity(q.strip()):
        return None
    text = q.strip()
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * _SUFFIXES[suffix]
    return float(text)
