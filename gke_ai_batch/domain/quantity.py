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
INT64 = (-(2**63), 2**63 - 1)  # a 64-bit signed integer's range
QUANTITY_CAP = Decimal(INT64[1])


def is_whole(q: Any) -> bool:
    """Whether a quantity is a whole number, to the API server's milli precision."""
    if isinstance(q, int) and not isinstance(q, bool):
        return True
    amount = exact(q)
    if amount is None:
        return False
    if amount >= QUANTITY_CAP:
        return True  # capped to a whole number; the fit rules refuse such amounts
    with _exact_context(q):
        try:
            milli = (amount * 1000).to_integral_value(rounding=ROUND_CEILING)
            return milli % 1000 == 0
        except DecimalException:
            return False


# The decimal suffixes' exact powers of ten (_SUFFIXES holds them as floats).
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def _split(q: str) -> tuple[str, Decimal]:
    """A quantity string as its number and its suffix's exact factor."""
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if q.endswith(suffix):
            size = _SUFFIXES[suffix]
            return q[: -len(suffix)], Decimal(size) if isinstance(size, int) else Decimal(10) ** _DECIMAL_EXPONENT[suffix]
    return q, Decimal(1)


def exact(q: Any) -> Decimal | None:
    """The exact amount of a quantity of 0 or more (an int, or a string the API's grammar
    takes), or None for anything else."""
    if isinstance(q, bool):
        return None
    if isinstance(q, int):
        return Decimal(q)
    if not isinstance(q, str) or not is_quantity(q):
        return None
    number, factor = _split(q)
    # Exact arithmetic, whatever the size: "1e-999999999" is a positive amount the API server
    # rounds up to 1m (not whole), and Decimal's default context would round it to 0; "9"*40
    # and "1e999999999" need more than its 28 digits and its exponent range.
    with _exact_context(q):
        try:
            return Decimal(number) * factor
        except DecimalException:
            # An exponent beyond any context's range: zero, a huge amount or a tiny positive one.
            mantissa, _, _ = number.lower().partition("e")
            if Decimal(mantissa) == 0:
                return Decimal(0)
            return _TINY if "e-" in number.lower() else Decimal("Infinity")


_TINY = Decimal(f"1E{MIN_EMIN}")


def _exact_context(q: str):
    """A context that holds a quantity string's amount exactly, whatever its size."""
    return localcontext(prec=len(q) + 40, Emax=MAX_EMAX, Emin=MIN_EMIN)


# Kueue counts a quota as an int64 of its resource's units, cpu in millicores, and from v0.18 reads
# one whose amount does not fit as unlimited: AmountFromQuantity returns Unlimited for a cpu quota
# of math.MaxInt64/1000 cores or more and any other of math.MaxInt64 or more
# (kubernetes-sigs/kueue v0.19.2 pkg/resources/amount.go; ClusterQueue quotas go through it in
# pkg/cache/scheduler/resource.go). Before it (v0.17.0 pkg/resources/requests.go, ResourceValue)
# the quota was resource.Quantity's MilliValue or Value, which "could overflow an int64"
# (k8s.io/apimachinery pkg/api/resource/quantity.go, ScaledValue): no quota Kueue enforces as written.
AMOUNT_MAX = INT64[1]
CPU = "cpu"


def quota_limit(resource: str) -> int:
    """The smallest quota Kueue reads as unlimited, in the resource's quantity (cores for cpu)."""
    return AMOUNT_MAX // 1000 if resource == CPU else AMOUNT_MAX


def unlimited_quota_problem(resource: str, q: Any) -> str | None:
    """Why Kueue would not enforce quota `q` of `resource` as written, or None."""
    amount = exact(q)
    limit = quota_limit(resource)
    if amount is None or amount < limit:
        return None
    fills = " cores, whose millicores (Kueue's unit for cpu) fill an int64" if resource == CPU else ", the most an int64 holds"
    return (
        f"{q} of {resource} is at least {limit}{fills}, and Kueue reads such a quota as unlimited "
        "(kubernetes-sigs/kueue pkg/resources/amount.go, AmountFromQuantity): give less, or leave the resource out "
        "of the queue's quotas"
    )


def int64_problem(value: int, shown: str | None = None) -> str | None:
    """Why a whole number is no 64-bit integer, or None: Pulumi's YAML config reader and every
    Kubernetes amount (resource.Quantity's int64 form) hold no more. `shown`: the number as the
    user wrote it."""
    if INT64[0] <= value <= INT64[1]:
        return None
    return f"{shown if shown is not None else value} is outside the 64-bit integer range"


def wire_problem(value: int) -> str | None:
    """Why a whole number would not reach Kubernetes as written, or None: outside int64, or an
    integer a double cannot hold. Pulumi sends every number as a double (pulumi/runtime/rpc.py,
    serialize_property: struct_pb2.Value(number_value=float(value))), so such an integer arrives
    rounded."""
    problem = int64_problem(value)
    if problem is None and float(value) != value:
        problem = f"{value} would reach Kubernetes as {int(float(value))} (Pulumi sends numbers as doubles); write it as a string: '{value}'"
    return problem
