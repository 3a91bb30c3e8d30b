"""Shared pieces of the config models: the base model, name and quantity types, RuleError."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

from .. import quantity
from pydantic.alias_generators import to_camel


class RuleError(ValueError):
    """A rule broken by a validated value. `path` is relative to the model that raises it,
    so the formatter can name the exact key (e.g. nodePools[2].reservation) rather than the
    model that happened to check it."""

    def __init__(self, path: tuple[str | int, ...] | str | int, message: str):
        self.path = (path,) if isinstance(path, (str, int)) else tuple(path)
        self.message = message
        super().__init__(message)


class Model(BaseModel):
    """camelCase in YAML, snake_case in Python; unknown keys are errors, values immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        frozen=True,
        # YAML's true is not 1 and 1.0 is not a node count: no silent coercion.
        strict=True,
        str_strip_whitespace=False,
        use_attribute_docstrings=True,
        validate_default=True,
    )


def _pattern_check(pattern: str, max_len: int, what: str):
    rx = re.compile(pattern)

    def check(value: str) -> str:
        if len(value) > max_len or not rx.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a valid {what}: lowercase letters, digits and '-', "
                f"starting with a letter, ending with a letter or digit, at most {max_len} characters"
            )
        return value

    return check


_DNS_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_K8S_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"

# GKE cluster and node pool names: RFC 1035 label, 40 characters at most.
GKE_NAME_MAX = 40
GkeName = Annotated[str, AfterValidator(_pattern_check(_DNS_LABEL, GKE_NAME_MAX, "GKE name"))]

# Kubernetes object names: RFC 1123 label (namespaces, queues, flavors, priority classes).
def _check_k8s_name(value: str) -> str:
    if len(value) > 63 or not re.fullmatch(_K8S_LABEL, value):
        raise ValueError(
            f"{value!r} is not a valid Kubernetes name: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters"
        )
    return value


K8sName = Annotated[str, AfterValidator(_check_k8s_name)]


# Label keys: optional DNS-subdomain prefix + "/" + name (Kubernetes rules).
_LABEL_NAME = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)"
_LABEL_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL_KEY_RX = re.compile(rf"({_LABEL_PREFIX}/)?{_LABEL_NAME}")
_LABEL_VALUE_RX = re.compile(rf"({_LABEL_NAME})?")


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        name = key.rsplit("/", 1)[-1]
        if not _LABEL_KEY_RX.fullmatch(key) or len(name) > 63 or len(key.split("/")[0]) > 253:
            raise ValueError(f"label key {key!r} is not a valid Kubernetes label key")
        if len(value) > 63 or not _LABEL_VALUE_RX.fullmatch(value):
            raise ValueError(
                f"label {key}={value!r}: values are at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit"
            )
    return labels


Labels = Annotated[dict[str, str], AfterValidator(_check_labels)]

def _check_quantity(value: int | str) -> int | str:
    if isinstance(value, bool):
        raise ValueError("a quantity is a number or a string such as '500m' or '10Gi'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"quantity {value} is negative")
        return value
    if not quantity.is_quantity(value) or value.startswith("-"):
        raise ValueError(
            f"{value!r} is not a Kubernetes quantity (examples: 8, '500m', '10Gi', '1.5')"
        )
    return value


Quantity = Annotated[int | str, AfterValidator(_check_quantity)]


_DURATION_RX = re.compile(r"^(\d+)(s|m|h|d)$")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_seconds(value: int | str) -> int:
    """'3600s', '90m', '24h', '7d' or a whole number of seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration is a whole number of seconds or a string like '90m', '24h', '7d'")
    if isinstance(value, int):
        seconds = value
    else:
        m = _DURATION_RX.match(value)
        if not m:
            raise ValueError(
                f"{value!r} is not a duration; use whole seconds or a number with s, m, h or d (e.g. '24h')"
            )
        seconds = int(m.group(1)) * _DURATION_UNITS[m.group(2)]
    if seconds <= 0:
        raise ValueError("a duration must be positive")
    return seconds


Duration = Annotated[int | str, AfterValidator(duration_seconds)]

SEVEN_DAYS = 7 * 86400


def parse_gke_version(version: str) -> tuple[int, ...]:
    """'1.33.0-gke.1712000' -> (1, 33, 0, 1712000); '1.33' -> (1, 33)."""
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?", version)
    if not m:
        raise ValueError(
            f"{version!r} is not a GKE version (examples: '1.33', '1.33.2', '1.33.0-gke.1712000')"
        )
    return tuple(int(g) for g in m.groups() if g is not None)


def version_at_least(version: str, minimum: str) -> bool:
    """Whether a version prefix can only resolve to `minimum` or later. '1.33' means the
    newest 1.33 patch GKE offers, so only the components given are compared."""
    have, need = parse_gke_version(version), parse_gke_version(minimum)
    n = min(len(have), len(need))
    if have[:n] != need[:n]:
        return have[:n] > need[:n]
    return True
