"""Shared pieces of the config models: the base model, name and quantity types, RuleError."""

from __future__ import annotations

import re
from typing import Annotated, Iterable, Iterator

from pydantic import AfterValidator, BaseModel, ConfigDict

from gke_ai_batch.domain import images

from gke_ai_batch.domain import quantity
from pydantic.alias_generators import to_camel


class RuleError(ValueError):
    """A rule broken by a validated value. `path` is relative to the model that raises it,
    so the formatter can name the exact key (e.g. nodePools[2].reservation) rather than the
    model that happened to check it."""

    def __init__(self, path: tuple[str | int, ...] | str | int, message: str):
        self.path = (path,) if isinstance(path, (str, int)) else tuple(path)
        self.message = message
        super().__init__(message)


class RuleErrors(ValueError):
    """Several rules broken at once, each a RuleError with its own path. A validator raises
    this once after checking every rule, and errors.from_validation_error lists each as a
    problem of its own, so a stack with five mistakes shows five."""

    def __init__(self, errors: Iterable[RuleError]):
        self.errors = list(errors)
        super().__init__("; ".join(e.message for e in self.errors))


def raise_all(errors: Iterable[RuleError]) -> None:
    """Raise every problem a validator found: nothing if none, the RuleError itself if one,
    RuleErrors if several. Checks written as generators of RuleError pass straight in."""
    found = list(errors)
    if len(found) == 1:
        raise found[0]
    if found:
        raise RuleErrors(found)


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


# Every pattern here is ASCII-only: Python's \d, \w and str.isdigit() also accept other
# scripts' digits and letters (fullwidth '１', Arabic-Indic '٣'), which no Google or Kubernetes
# API accepts. Ranges such as [0-9] are spelled out, patterns compiled with re.ASCII, and
# fullmatch used throughout ("$" alone lets a trailing newline through).


def _pattern_check(pattern: str, max_len: int, what: str):
    rx = re.compile(pattern, re.ASCII)

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

# GKE cluster and node pool names: RFC 1035 label, 40 characters at most (GKE API:
# Cluster.name "must start with a letter, end with a number or a letter, and contain only
# lowercase letters, numbers and hyphens, at most 40 characters",
# https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster;
# node pools likewise, NodePool.name).
GKE_NAME_MAX = 40
check_gke_name = _pattern_check(_DNS_LABEL, GKE_NAME_MAX, "GKE name")
GkeName = Annotated[str, AfterValidator(check_gke_name)]

# Kubernetes object names: RFC 1123 label (namespaces, queues, flavors, priority classes;
# https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names).
_K8S_NAME_RX = re.compile(_K8S_LABEL, re.ASCII)


def check_k8s_name(value: str) -> str:
    if len(value) > 63 or not _K8S_NAME_RX.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a valid Kubernetes name: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters"
        )
    return value


K8sName = Annotated[str, AfterValidator(check_k8s_name)]

# LocalQueue names: Kueue checks the kueue.x-k8s.io/queue-name label of a job as a DNS-1123
# subdomain (ValidateLabelAsCRDName in pkg/controller/jobframework/validation.go:146-154,
# v0.19.2), and the LocalQueue CRD's names are ordinary object names; a label value also holds
# at most 63 characters. So dots are allowed (team.a), unlike in namespaces and ClusterQueues.
_QUEUE_NAME_RX = re.compile(rf"{_K8S_LABEL}(\.{_K8S_LABEL})*", re.ASCII)


def _check_queue_name(value: str) -> str:
    if len(value) > 63 or not _QUEUE_NAME_RX.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a valid LocalQueue name: lowercase letters, digits, '-' and '.', each "
            "dot-separated part starting and ending with a letter or digit, at most 63 characters "
            "(a DNS subdomain that fits the kueue.x-k8s.io/queue-name label)"
        )
    return value


QueueName = Annotated[str, AfterValidator(_check_queue_name)]


# Label keys and other qualified names: an optional DNS-subdomain prefix (at most 253
# characters) and "/", then a name of at most 63 letters, digits, '-', '_' or '.', starting and
# ending with a letter or digit. Values: at most 63 of the same, or empty. The rules of
# apimachinery's IsQualifiedName / IsLabelValue (k8s.io/apimachinery/pkg/util/validation),
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set.
# Taint keys are qualified names and taint values label values (core/v1 validation, and Kueue's
# ResourceFlavor webhook: validateNodeTaints); Kueue's coveredResources are qualified names.
_LABEL_NAME = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)"
_LABEL_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL_KEY_RX = re.compile(rf"({_LABEL_PREFIX}/)?{_LABEL_NAME}", re.ASCII)
_LABEL_VALUE_RX = re.compile(rf"({_LABEL_NAME})?", re.ASCII)
QUALIFIED_NAME_RULE = (
    "an optional DNS-subdomain prefix and '/', then at most 63 ASCII letters, digits, '-', '_' "
    "or '.', starting and ending with a letter or digit (e.g. example.com/team)"
)
LABEL_VALUE_RULE = (
    "at most 63 ASCII letters, digits, '-', '_' or '.', starting and ending with a letter or "
    "digit, or empty"
)


def is_qualified_name(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return bool(_LABEL_KEY_RX.fullmatch(key)) and len(name) <= 63 and len(prefix) <= 253


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE_RX.fullmatch(value))


def check_qualified_name(value: str, what: str = "key") -> str:
    if not is_qualified_name(value):
        raise ValueError(f"{what} {value!r} is not a valid Kubernetes qualified name: {QUALIFIED_NAME_RULE}")
    return value


def check_label_value(value: str, what: str = "value") -> str:
    if not is_label_value(value):
        raise ValueError(f"{what} {value!r} is not a valid Kubernetes label value: {LABEL_VALUE_RULE}")
    return value


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    raise_all(_label_problems(labels))
    return labels


def _label_problems(labels: dict[str, str]) -> Iterator[RuleError]:
    for key, value in labels.items():
        if not is_qualified_name(key):
            yield RuleError(key, f"label key {key!r} is not a valid Kubernetes label key: {QUALIFIED_NAME_RULE}")
        elif not is_label_value(value):
            yield RuleError(key, f"label {key}={value!r}: values are {LABEL_VALUE_RULE}")


Labels = Annotated[dict[str, str], AfterValidator(_check_labels)]


def _check_pinned_image(value: str) -> str:
    problem = images.pin_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


# A Google Group's email address, as Google Groups for RBAC puts it in the user's groups and
# RBAC subjects name it (https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac):
# local part and domain in lowercase ASCII, the domain with at least one dot.
_GROUP_EMAIL_RX = re.compile(
    r"[a-z0-9](?:[a-z0-9._+-]*[a-z0-9])?@[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)+",
    re.ASCII,
)


def _check_group_email(value: str) -> str:
    if len(value) > 254 or not _GROUP_EMAIL_RX.fullmatch(value):
        raise ValueError(f"{value!r} is not a Google Group email address (lowercase, e.g. ml-research@acme.com)")
    return value


GroupEmail = Annotated[str, AfterValidator(_check_group_email)]


# An image that names one build: a version tag other than latest, or a digest.
PinnedImage = Annotated[str, AfterValidator(_check_pinned_image)]
QualifiedName = Annotated[str, AfterValidator(lambda v: check_qualified_name(v))]
LabelValue = Annotated[str, AfterValidator(lambda v: check_label_value(v))]


# GCP resource labels (the cluster's resourceLabels): at most 64; keys 1 to 63 characters of
# lowercase letters, digits, '_' and '-', starting with a lowercase letter; values 0 to 63 of
# the same. Google also allows international lowercase letters; this project takes ASCII only.
# https://cloud.google.com/resource-manager/docs/labels-overview#requirements
GCP_LABELS_MAX = 64
_GCP_LABEL_KEY_RX = re.compile(r"[a-z][a-z0-9_-]{0,62}", re.ASCII)
_GCP_LABEL_VALUE_RX = re.compile(r"[a-z0-9_-]{0,63}", re.ASCII)


def _check_gcp_labels(labels: dict[str, str]) -> dict[str, str]:
    raise_all(_gcp_label_problems(labels))
    return labels


def _gcp_label_problems(labels: dict[str, str]) -> Iterator[RuleError]:
    if len(labels) > GCP_LABELS_MAX:
        yield RuleError((), f"{len(labels)} labels; a Google Cloud resource takes at most {GCP_LABELS_MAX}")
    for key, value in labels.items():
        if not _GCP_LABEL_KEY_RX.fullmatch(key):
            yield RuleError(
                key,
                f"GCP label key {key!r}: 1 to 63 lowercase ASCII letters, digits, '_' or '-', "
                "starting with a lowercase letter",
            )
        elif not _GCP_LABEL_VALUE_RX.fullmatch(value):
            yield RuleError(
                key, f"GCP label {key}={value!r}: values are at most 63 lowercase ASCII letters, digits, '_' or '-'"
            )


GcpLabels = Annotated[dict[str, str], AfterValidator(_check_gcp_labels)]

def _check_quantity(value: int | str) -> int | str:
    if isinstance(value, bool):
        raise ValueError("a quantity is a number or a string such as '500m' or '10Gi'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"quantity {value} is negative")
        problem = quantity.wire_problem(value)
        if problem:
            raise ValueError(problem)
        return value
    if not quantity.is_quantity(value) or value.startswith("-"):
        raise ValueError(
            f"{value!r} is not a Kubernetes quantity (examples: 8, '500m', '10Gi', '1.5')"
        )
    return value


Quantity = Annotated[int | str, AfterValidator(_check_quantity)]


# Durations as Go's time.ParseDuration reads them (go/src/time/format.go, ParseDuration: "a
# possibly signed sequence of decimal numbers, each with optional fraction and a unit suffix,
# such as "300ms", "-1.5h" or "2h45m". Valid time units are "ns", "us" (or "µs"), "ms", "s",
# "m", "h""): Kueue's durations are metav1.Duration, parsed by it, so a Kueue user writes
# '1h30m'. Plus 'd' (days), this program's own ('7d'). Whole numbers only (no sign, no
# fraction), and a whole number of seconds in all: every duration here is counted in seconds.
_DURATION_PART = r"([0-9]{1,15})(d|h|ms|m|s|us|µs|ns)"
_DURATION_RX = re.compile(f"(?:{_DURATION_PART})+", re.ASCII)
_DURATION_PART_RX = re.compile(_DURATION_PART, re.ASCII)
# Kueue and GKE read durations as Go's time.Duration: int64 nanoseconds, about 292 years.
GO_DURATION_MAX_SECONDS = (2**63 - 1) // 1_000_000_000
_NANOSECONDS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9}


class Seconds(int):
    """A duration in seconds that remembers how the stack file wrote it ('200h'), so that a
    message about it answers in the user's unit: `200h exceeds ... 168h`, not `720000s`."""

    written: int | str

    def __new__(cls, seconds: int, written: int | str):
        self = super().__new__(cls, seconds)
        self.written = written
        return self

    def __reduce__(self):
        return (Seconds, (int(self), self.written))

    @property
    def unit(self) -> str:
        """The smallest unit written: '1h30m' answers in minutes, so a limit is exact in it."""
        if not isinstance(self.written, str):
            return "s"
        return min((u for _, u in _DURATION_PART_RX.findall(self.written)), key=_NANOSECONDS.__getitem__)

    def shown(self) -> str:
        """The duration as the file wrote it: '200h', or '720000s' for a bare number of seconds."""
        return self.written if isinstance(self.written, str) else f"{self.written}s"

    def limit(self, seconds: int) -> str:
        """A limit of `seconds` in this duration's unit, rounded down as a limit is: '168h',
        '10080m', '604800s'."""
        return f"{seconds * 10**9 // _NANOSECONDS[self.unit]}{self.unit}"


def duration_seconds(value: int | str) -> Seconds:
    """'3600s', '90m', '1h30m', '24h', '7d' or a whole number of seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration is a whole number of seconds or a string like '90m', '24h', '7d'")
    if isinstance(value, int):
        seconds = value
    else:
        if not _DURATION_RX.fullmatch(value):
            if value.isascii() and value.isdigit():
                raise ValueError(f"{value!r} is not a duration: write seconds as a number ({value}, unquoted) or with a unit ('{value}s')")
            raise ValueError(
                f"{value!r} is not a duration; use whole seconds or whole numbers with units, "
                "as Go writes durations (e.g. '24h', '1h30m'; units ns, us, ms, s, m, h, and d for days)"
            )
        nanoseconds = sum(int(n) * _NANOSECONDS[u] for n, u in _DURATION_PART_RX.findall(value))
        seconds, fraction = divmod(nanoseconds, 10**9)
        if fraction:
            raise ValueError(f"{value!r} is not a whole number of seconds, which every duration here is counted in")
    if seconds <= 0:
        raise ValueError("a duration must be positive")
    duration = Seconds(seconds, value)
    if seconds > GO_DURATION_MAX_SECONDS:
        raise ValueError(
            f"{duration.shown()} is beyond Go's time.Duration ({duration.limit(GO_DURATION_MAX_SECONDS)}, about 292 years), "
            "which Kueue and GKE parse it as"
        )
    return duration


Duration = Annotated[int | str, AfterValidator(duration_seconds)]

SEVEN_DAYS = 7 * 86400


# Upper bounds checked with the field, before any rule counts or lists anything: 15,000 nodes
# per Standard cluster (https://cloud.google.com/kubernetes-engine/quotas, "Limits per
# cluster"; a slice is at least one node), and 16 GPUs per VM (a2-megagpu-16g, the most any
# GCE machine type attaches: https://cloud.google.com/compute/docs/gpus).
CLUSTER_NODES_MAX = 15_000
GPUS_PER_VM_MAX = 16
