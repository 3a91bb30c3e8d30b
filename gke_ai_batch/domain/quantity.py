"""Kubernetes resource quantities ('8', '500m', '10Gi', '1.5e3') as numbers.

Pure Python on purpose: the config models, synth's report and the policy pack (which runs
in its own virtualenv without pydantic) share this one parser."""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, Decimal, DecimalException, localcontext
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


# Extended resources (nvidia.com/gpu, google.com/tpu, any name with a domain other than
# kubernetes.io) are counted in whole units: the API server refuses a container whose request or
# limit for one is not an integer ("must be an integer": validateResourceQuantityValue, with
# IsIntegerResourceName and IsExtendedResourceName in k8s.io/kubernetes
# pkg/apis/core/helper/helpers.go and pkg/apis/core/validation/validation.go), judged on the
# quantity's milli-value rounded up, as resource.Quantity.MilliValue does.
NATIVE_RESOURCE_DOMAIN = "kubernetes.io/"
QUOTA_REQUESTS_PREFIX = "requests."


def is_extended_resource(name: str) -> bool:
    return "/" in name and NATIVE_RESOURCE_DOMAIN not in name and not name.startswith(QUOTA_REQUESTS_PREFIX)


# "No quantity may represent a number greater than 2^63-1 in magnitude ... Numbers larger or
# more precise will be capped or rounded up" (k8s.io/apimachinery pkg/api/resource/quantity.go,
# the Quantity type's comment).
QUANTITY_CAP = Decimal(2**63 - 1)


def is_whole(q: Any) -> bool:
    """Whether a quantity is a whole number, to the API server's milli precision."""
    if isinstance(q, bool):
        return False
    if isinstance(q, int):
        return True
    if not isinstance(q, str) or not is_quantity(q):
        return False
    number, factor = q, Decimal(1)
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if q.endswith(suffix):
            number = q[: -len(suffix)]
            size = _SUFFIXES[suffix]
            factor = Decimal(size) if isinstance(size, int) else Decimal(10) ** _DECIMAL_EXPONENT[suffix]
            break
    # Exact arithmetic, whatever the size: "1e-999999999" is a positive amount the API server
    # rounds up to 1m (not whole), and Decimal's default context would round it to 0; "9"*40
    # and "1e999999999" need more than its 28 digits and its exponent range.
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = len(q) + 40, MAX_EMAX, MIN_EMIN
        try:
            amount = Decimal(number) * factor
        except DecimalException:
            # An exponent beyond any context's range: zero, a huge amount (capped, as next) or
            # a tiny positive one (rounded up to 1m).
            mantissa, _, _ = number.lower().partition("e")
            return Decimal(mantissa) == 0 or "e-" not in number.lower()
        if amount >= QUANTITY_CAP:
            return True  # capped to a whole number; the fit rules refuse such amounts
        try:
            milli = (amount * 1000).to_integral_value(rounding=ROUND_CEILING)
            return milli % 1000 == 0
        except DecimalException:
            return False


# The decimal suffixes' exact powers of ten (_SUFFIXES holds them as floats).
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
