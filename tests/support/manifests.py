"""Offline validation of the Kubernetes objects the program emits.

`validate(manifest)` returns the problems the API server (and the Kueue and JobSet admission
webhooks) would report when the object is created, as far as that can be told without a
cluster; an empty list means valid. What it checks:

* Custom resources (Kueue v1beta2, JobSet v1alpha2, ProvisioningRequest v1) against the
  upstream openAPIV3Schema files vendored in schema/upstream, made strict the way
  `kubectl apply --validate=strict` is: every object schema that lists `properties` (or
  none at all) rejects other fields, inline RE2 flags are moved to where Python `re` takes
  them, `x-kubernetes-int-or-string` / `nullable` become JSON Schema, `format: int32/int64`
  are range checked. Structural defaults are applied first, as the API server does, then
  the schema, `x-kubernetes-list-type` (set / map key uniqueness) and the CEL rules
  (`x-kubernetes-validations`) are checked. Transition rules (those that read `oldSelf`)
  only run on update and are skipped. CEL is evaluated with cel-python (`celpy`) when it is
  installed, otherwise with the hand-written equivalents in BUILTIN_CEL_RULES; a rule
  neither can evaluate is reported, never passed.
* Core kinds (CORE_KINDS) against kubernetes-validate's strict schemas for
  KUBERNETES_VERSION.
* `metadata` by hand, as the schemas do not: name (DNS-1123 subdomain, or the stricter
  rule of the kind), namespace present exactly for namespaced kinds (scope from the schemas'
  README for custom resources), labels and annotations string to string with valid keys and
  label values, no server-populated fields. Pod-template metadata gets the same label and
  annotation checks.
* Admission rules that no schema carries, written by hand: the Kueue ClusterQueue and
  ResourceFlavor webhooks, the JobSet webhook's generated-name limits and name references,
  and a few core API server rules that matter for accelerator workloads (extended resources,
  tolerations, node selectors, Job restart policy and indexed completions).

Anything else fails: a kind that is neither a core kind listed here nor a CRD with a schema
file, and the deprecated kueue.x-k8s.io/v1beta1 and autoscaling.x-k8s.io/v1beta1 APIs.

`check_references(manifests)` adds cross-object checks (a queue's flavors exist, a workload's
queue label names a LocalQueue in its namespace, ...), and `embedded_manifests(manifest)`
yields the objects a ConfigMap carries as YAML (the webhook probe's dry-run payload).
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import importlib.util
import json
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate.utils as kv
import yaml
from packaging.version import Version
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS_DIR = ROOT / "schema" / "upstream"  # a vendored copy: schema/upstream/VENDORED.md
# CRDs the shared copy does not extract (Kueue's Workload), kept apart so that SCHEMAS_DIR stays
# byte-identical to it: schema/upstream-extra/README.md.
EXTRA_SCHEMAS_DIRS = (ROOT / "schema" / "upstream-extra",)
# The oldest minor the validation targets: kubernetes-validate picks its newest bundled schema
# set that is not newer than this. Fields added after it are rejected, which is what we want.
KUBERNETES_VERSION = "1.33"

CLUSTER = "Cluster"
NAMESPACED = "Namespaced"

CORE_KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): CLUSTER,
    ("v1", "ServiceAccount"): NAMESPACED,
    ("v1", "ConfigMap"): NAMESPACED,
    ("v1", "Secret"): NAMESPACED,
    ("v1", "Pod"): NAMESPACED,
    ("v1", "Service"): NAMESPACED,
    ("v1", "PodTemplate"): NAMESPACED,
    ("batch/v1", "Job"): NAMESPACED,
    ("scheduling.k8s.io/v1", "PriorityClass"): CLUSTER,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): CLUSTER,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): CLUSTER,
    ("rbac.authorization.k8s.io/v1", "Role"): NAMESPACED,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): NAMESPACED,
    ("networking.k8s.io/v1", "NetworkPolicy"): NAMESPACED,
}

REJECTED_API_VERSIONS = {
    "kueue.x-k8s.io/v1beta1": (
        "kueue.x-k8s.io/v1beta1 is deprecated and not the storage version in Kueue v0.19; "
        "emit kueue.x-k8s.io/v1beta2"
    ),
    "autoscaling.x-k8s.io/v1beta1": (
        "autoscaling.x-k8s.io/v1beta1 is deprecated in cluster-autoscaler; emit autoscaling.x-k8s.io/v1"
    ),
}

# Set by the API server; a client that sends them is confused about what it is creating.
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "selfLink",
    "managedFields",
)

CELPY_AVAILABLE = importlib.util.find_spec("celpy") is not None


# --------------------------------------------------------------------------------------------
# Names, labels, quantities: the apimachinery validation helpers, with their messages.

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def dns1123_label(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(value):
        out.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                   "and must start and end with an alphanumeric character")
    return out


def dns1035_label(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _DNS1035_LABEL.fullmatch(value):
        out.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                   "start with an alphabetic character, and end with an alphanumeric character")
    return out


def dns1123_subdomain(value: str) -> list[str]:
    out = []
    if len(value) > 253:
        out.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        out.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                   "and must start and end with an alphanumeric character")
    return out


def qualified_name(value: str) -> list[str]:
    """A label or annotation key: an optional DNS subdomain prefix and '/', then a name."""
    prefix, slash, name = value.rpartition("/")
    out = []
    if slash:
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out += [f"prefix part {m}" for m in dns1123_subdomain(prefix)]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME.fullmatch(name):
        out.append("name part must consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")
    if value.count("/") > 1:
        out.append("a qualified name has at most one '/'")
    return out


def label_value(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        out.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")
    return out


def path_segment_name(value: str) -> list[str]:
    """RBAC object names: anything a URL path segment can hold."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


_QUANTITY = re.compile(
    r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?"
)
_SUFFIX = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    **{s: Decimal(1024) ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
}


def parse_quantity(value: Any) -> Decimal | None:
    """A resource.Quantity as a Decimal, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value)
    if not m:
        return None
    sign, number, suffix = m.group(1), m.group(2), m.group(3) or ""
    amount = Decimal(number) * (Decimal(f"1{suffix}") if suffix[:1] in ("e", "E") else _SUFFIX[suffix])
    return -amount if sign == "-" else amount


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------------------------
# Paths.

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def fmt_path(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{part}]"
    return out or "<root>"


def _frozen(value: Any) -> Any:
    """A hashable copy of a manifest that tells apart what validation tells apart: types (a
    tuple is no JSON array, True is no 1), key types and key order. TypeError for a value of
    another type."""
    if isinstance(value, dict):
        return (dict, tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_frozen(v) for v in value))
    if value is None or isinstance(value, (str, int, float, bool)):
        return (type(value), value)
    raise TypeError(type(value).__name__)


def _ident(manifest: Any) -> str:
    if not isinstance(manifest, dict):
        return "<not a mapping>"
    meta = manifest.get("metadata") if isinstance(manifest.get("metadata"), dict) else {}
    name = meta.get("name", "<unnamed>")
    if meta.get("namespace"):
        name = f"{meta['namespace']}/{name}"
    return f"{manifest.get('apiVersion', '<no apiVersion>')} {manifest.get('kind', '<no kind>')} {name}"


def _clip(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# CRD schemas: loading and the strictness transform.

_FLAGS_AFTER_ANCHOR = re.compile(r"^\^\(\?([aiLmsux]+)\)")


def python_pattern(pattern: str) -> str:
    """An RE2 `pattern` as Python `re` accepts it. RE2 allows inline flags anywhere
    (`^(?i)[a-z]...`); Python only at the start, where they mean the same for a pattern
    that begins with `^`. A pattern that still does not compile raises: it must not be
    dropped silently."""
    try:
        re.compile(pattern)
        return pattern
    except re.error:
        pass
    fixed = _FLAGS_AFTER_ANCHOR.sub(lambda m: f"(?{m.group(1)})^", pattern)
    re.compile(fixed)
    return fixed


def strict_schema(node: Any, *, root: bool = True) -> Any:
    """A copy of a structural schema that rejects unknown fields the way strict field
    validation does. The root's `metadata` ({type: object}) is left open: ObjectMeta is
    checked on its own."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {
                name: sub if (root and name == "metadata") else strict_schema(sub, root=False)
                for name, sub in value.items()
            }
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = strict_schema(value, root=False)
        elif key in ("anyOf", "allOf", "oneOf"):
            out[key] = [strict_schema(v, root=False) for v in value]
        elif key == "pattern":
            out[key] = python_pattern(value)
        else:
            out[key] = value
    if out.get("x-kubernetes-int-or-string") and not any(k in out for k in ("anyOf", "oneOf", "type")):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if out.get("nullable") is True:
        if "type" in out:
            types = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*types, "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    open_ = out.get("x-kubernetes-preserve-unknown-fields") or out.get("x-kubernetes-embedded-resource")
    if not open_ and "additionalProperties" not in out:
        # An object schema without `properties` keeps no field through pruning either.
        if "properties" in out or out.get("type") == "object":
            out["additionalProperties"] = False
    return out


FORMAT_CHECKER = jsonschema.FormatChecker(formats=())


@FORMAT_CHECKER.checks("int32")
def _int32(value: Any) -> bool:
    return not _is_int(value) or -(2**31) <= value < 2**31


@FORMAT_CHECKER.checks("int64")
def _int64(value: Any) -> bool:
    return not _is_int(value) or -(2**63) <= value < 2**63


def crd_scopes(schemas_dir: Path) -> dict[tuple[str, str], str]:
    """(apiVersion, kind) -> Cluster | Namespaced, from the README's file table."""
    row = re.compile(r"^\|\s*`([^`/]+)/([^`/]+)/([^`/]+)\.json`\s*\|\s*(\w+)\s*\|\s*(Cluster|Namespaced)\s*\|")
    scopes = {}
    for line in (schemas_dir / "README.md").read_text().splitlines():
        m = row.match(line)
        if m:
            group, version, kind, _, scope = m.groups()
            scopes[(f"{group}/{version}", kind)] = scope
    return scopes


class Crd:
    def __init__(self, path: Path, scope: str | None):
        self.path = path
        self.scope = scope
        self.schema = strict_schema(json.loads(path.read_text()))
        self.validator = jsonschema.Draft202012Validator(self.schema, format_checker=FORMAT_CHECKER)


@functools.lru_cache(maxsize=None)
def _load_crd(path: str, scope: str | None) -> Crd:
    return Crd(Path(path), scope)


@functools.lru_cache(maxsize=None)
def _crd_scopes(schemas_dir: str) -> dict[tuple[str, str], str]:
    return crd_scopes(Path(schemas_dir))


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    """Structural defaulting, in place: absent properties with a `default` get it, then are
    defaulted themselves (so `default: {}` picks up its children's defaults)."""
    if isinstance(value, dict):
        props = schema.get("properties")
        if props:
            for key, sub in props.items():
                if key not in value and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
                if key in value:
                    apply_defaults(sub, value[key])
        elif isinstance(schema.get("additionalProperties"), dict):
            for item in value.values():
                apply_defaults(schema["additionalProperties"], item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(schema["items"], item)
    return value


def schema_nodes(schema: dict[str, Any], value: Any, path: tuple = ()) -> Iterator[tuple[dict, Any, tuple]]:
    """Every (schema node, value, path) pair of an instance, root first. The root's metadata
    is not descended into (its schema is only {type: object})."""
    yield schema, value, path
    if isinstance(value, dict):
        props = schema.get("properties")
        if props is not None:
            for key, item in value.items():
                sub = props.get(key)
                if sub is not None and not (path == () and key == "metadata"):
                    yield from schema_nodes(sub, item, (*path, key))
        elif isinstance(schema.get("additionalProperties"), dict):
            for key, item in value.items():
                yield from schema_nodes(schema["additionalProperties"], item, (*path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from schema_nodes(schema["items"], item, (*path, i))


def list_type_problems(schema: dict[str, Any], value: Any) -> list[str]:
    """x-kubernetes-list-type: set items and map keys are unique (the API server says Duplicate value)."""
    out = []
    for node, items, path in schema_nodes(schema, value):
        kind = node.get("x-kubernetes-list-type")
        if not isinstance(items, list) or kind not in ("set", "map"):
            continue
        seen: list[Any] = []
        for i, item in enumerate(items):
            if kind == "set":
                key = item
            else:
                if not isinstance(item, dict):
                    continue
                key = {k: item.get(k) for k in node.get("x-kubernetes-list-map-keys", ())}
            if key in seen:
                out.append(f"{fmt_path((*path, i))}: Duplicate value: {json.dumps(key, sort_keys=True)} "
                           f"(x-kubernetes-list-type: {kind})")
            else:
                seen.append(key)
    return out


# --------------------------------------------------------------------------------------------
# CEL.


def is_transition_rule(rule: dict[str, Any]) -> bool:
    return re.search(r"\boldSelf\b", rule.get("rule", "")) is not None


def _has(value: Any, key: str) -> bool:
    return isinstance(value, dict) and key in value


_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# The non-transition rules of the schemas this project uses, as Python: the fallback when
# cel-python is not installed. Keyed by the exact rule text; missing keys raise KeyError,
# which is reported the way CEL reports "no such key".
BUILTIN_CEL_RULES: dict[str, Callable[[Any], bool]] = {
    # ClusterQueue .spec
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, "
    "f.resources.all(r, !has(r.borrowingLimit)))) : true": lambda s: (
        not (not _has(s, "cohortName") and _has(s, "resourceGroups"))
        or all(
            not _has(r, "borrowingLimit") for rg in s["resourceGroups"] for f in rg["flavors"] for r in f["resources"]
        )
    ),
    # ClusterQueue .spec.flavorFungibility
    "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')": (
        lambda s: not _has(s, "preference")
        or (s["whenCanBorrow"] == "TryNextFlavor" and s["whenCanPreempt"] == "TryNextFlavor")
    ),
    # ClusterQueue .spec.preemption (two spaces before the last && are in the CRD)
    "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  "
    "self.borrowWithinCohort.policy != 'Never')": lambda s: not (
        s["reclaimWithinCohort"] == "Never"
        and _has(s, "borrowWithinCohort")
        and s["borrowWithinCohort"]["policy"] != "Never"
    ),
    # ClusterQueue and Cohort .spec.resourceGroups[]
    "self.flavors.all(x, size(x.resources) == size(self.coveredResources))": lambda s: all(
        len(x["resources"]) == len(s["coveredResources"]) for x in s["flavors"]
    ),
    # ComputeClass .spec.priorities[] (schema/upstream-extra/cloud.google.com/v1/ComputeClass.json)
    "!(has(self.machineFamily) && has(self.machineType))": lambda s: not (_has(s, "machineFamily") and _has(s, "machineType")),
    "!(has(self.machineType) && (has(self.minCores) || has(self.minMemoryGb)))": lambda s: not (
        _has(s, "machineType") and (_has(s, "minCores") or _has(s, "minMemoryGb"))
    ),
    "!(has(self.flexStart) && has(self.spot) && self.spot == true && self.flexStart.enabled == true)": lambda s: not (
        _has(s, "flexStart") and _has(s, "spot") and s["spot"] is True and s["flexStart"]["enabled"] is True
    ),
    "!(has(self.machineFamily) && self.machineFamily == 'ek')": lambda s: not (
        _has(s, "machineFamily") and s["machineFamily"] == "ek"
    ),
    "!(has(self.machineType) && self.machineType.startsWith('ek'))": lambda s: not (
        _has(s, "machineType") and s["machineType"].startswith("ek")
    ),
    # ComputeClass .spec.priorities[].reservations
    'has(self.specific) && self.specific.size() > 0 ? self.affinity == "Specific" : true': lambda s: (
        s["affinity"] == "Specific" if _has(s, "specific") and len(s["specific"]) > 0 else True
    ),
    'self.affinity == "Specific" ? has(self.specific) && self.specific.size() > 0 : true': lambda s: (
        _has(s, "specific") and len(s["specific"]) > 0 if s["affinity"] == "Specific" else True
    ),
    # ResourceFlavor .spec
    "!has(self.topologyName) || self.nodeLabels.size() >= 1": lambda s: (
        not _has(s, "topologyName") or len(s["nodeLabels"]) >= 1
    ),
    # ResourceFlavor .spec.nodeTaints
    "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])": lambda s: all(
        x["effect"] in _EFFECTS for x in s
    ),
    # ResourceFlavor .spec.tolerations
    "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)": lambda s: all(
        x["operator"] == "Exists" if not _has(x, "key") else True for x in s
    ),
    "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)": lambda s: all(
        x["effect"] == "NoExecute" if _has(x, "tolerationSeconds") else True for x in s
    ),
    "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])": lambda s: all(
        not _has(x, "operator") or x["operator"] in ("Equal", "Exists") for x in s
    ),
    "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : true)": lambda s: all(
        not _has(x, "value") if (_has(x, "operator") and x["operator"] == "Exists") else True for x in s
    ),
    "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])": lambda s: all(
        not _has(x, "effect") or x["effect"] in _EFFECTS for x in s
    ),
    # JobSet .spec
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
    "self.replicatedJobs.exists(x, has(x.dependsOn)))": lambda s: not (
        _has(s, "startupPolicy")
        and s["startupPolicy"]["startupPolicyOrder"] == "InOrder"
        and any(_has(x, "dependsOn") for x in s["replicatedJobs"])
    ),
    # JobSet .spec.volumeClaimPolicies[]
    "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)": lambda s: all(
        not _has(t["metadata"], "namespace") or len(t["metadata"]["namespace"]) == 0 for t in s["templates"]
    ),
    # Workload (root): an admitted workload assigns every podSet
    "has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'QuotaReserved' "
    "&& c.status == 'True') && has(self.status.admission) ? size(self.spec.podSets) == "
    "size(self.status.admission.podSetAssignments) : true": lambda s: (
        not (
            _has(s, "status")
            and _has(s["status"], "conditions")
            and any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in s["status"]["conditions"])
            and _has(s["status"], "admission")
        )
        or len(s["spec"]["podSets"]) == len(s["status"]["admission"]["podSetAssignments"])
    ),
    # Workload .spec
    "!has(self.priorityClassRef) || has(self.priority)": lambda s: (
        not _has(s, "priorityClassRef") or _has(s, "priority")
    ),
    # Workload .spec.podSets[]
    "has(self.minCount) ? self.minCount <= self.count : true": lambda s: (
        s["minCount"] <= s["count"] if _has(s, "minCount") else True
    ),
    # Workload .spec.priorityClassRef
    "(self.group == 'scheduling.k8s.io') ? self.kind == 'PriorityClass' : true": lambda s: (
        s["kind"] == "PriorityClass" if s["group"] == "scheduling.k8s.io" else True
    ),
    "(self.group == 'kueue.x-k8s.io') ? self.kind == 'WorkloadPriorityClass' : true": lambda s: (
        s["kind"] == "WorkloadPriorityClass" if s["group"] == "kueue.x-k8s.io" else True
    ),
    # Workload .status
    "!has(self.clusterName) || (!has(self.nominatedClusterNames) || (has(self.nominatedClusterNames) && "
    "size(self.nominatedClusterNames) == 0))": lambda s: (
        not _has(s, "clusterName") or not _has(s, "nominatedClusterNames") or len(s["nominatedClusterNames"]) == 0
    ),
    # Workload .status.admission.podSetAssignments[].topologyAssignment
    "self.slices.all(x, size(x.valuesPerLevel) == size(self.levels))": lambda s: all(
        len(x["valuesPerLevel"]) == len(s["levels"]) for x in s["slices"]
    ),
    "!has(self.podCounts.individual) || size(self.podCounts.individual) == self.domainCount": lambda s: (
        not _has(s["podCounts"], "individual") or len(s["podCounts"]["individual"]) == s["domainCount"]
    ),
    "self.valuesPerLevel.all(x, !has(x.individual) || size(x.individual.roots) == self.domainCount)": lambda s: all(
        not _has(x, "individual") or len(x["individual"]["roots"]) == s["domainCount"] for x in s["valuesPerLevel"]
    ),
    "[has(self.universal),has(self.individual)].filter(x,x==true).size() == 1": lambda s: (
        [_has(s, "universal"), _has(s, "individual")].count(True) == 1
    ),
    "has(self.universal) != has(self.individual)": lambda s: _has(s, "universal") != _has(s, "individual"),
    # MultiKueueCluster .spec.clusterSource: exactly one of kubeConfig / clusterProfileRef
    "[has(self.kubeConfig),has(self.clusterProfileRef)].filter(x,x==true).size() == 1": lambda s: (
        [_has(s, "kubeConfig"), _has(s, "clusterProfileRef")].count(True) == 1
    ),
    # MultiKueueConfig .spec.clusters, Topology .spec.levels
    "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0": lambda s: all(s.count(i) <= 1 for i in s),
    # Topology .spec.levels
    "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || "
    "self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'": lambda s: (
        not any(i["nodeLabel"] == "kubernetes.io/hostname" for i in s) or s[-1]["nodeLabel"] == "kubernetes.io/hostname"
    ),
    # PodMonitoring (GMP v0.17.2): no namespace on a secret reference, at most one kind of auth,
    # a timeout within the interval, no relabelling onto GMP's own target labels.
    **{
        f"self.spec.endpoints.all(e, !has(e.{a}) || !has(e.{a}.{b}) || !has(e.{a}.{b}.secret) || "
        f"!has(e.{a}.{b}.secret.__namespace__))": (
            lambda s, a=a, b=b: all(not _has(_dig(e, a, b, "secret"), "namespace") for e in s["spec"]["endpoints"])
        )
        for a, b in (("authorization", "credentials"), ("basicAuth", "password"), ("tls", "ca"), ("tls", "cert"),
                     ("tls", "key"), ("oauth2", "clientSecret"))
    },
    "self != 'project_id' && self != 'location' && self != 'cluster' && self != 'namespace' && self != 'job' && "
    "self != 'instance' && self != 'top_level_controller' && self != 'top_level_controller_type' && "
    "self != '__address__'": lambda s: s not in (
        "project_id", "location", "cluster", "namespace", "job", "instance", "top_level_controller",
        "top_level_controller_type", "__address__",
    ),
    "!has(self.timeout) || self.timeout <= self.interval": lambda s: (
        not _has(s, "timeout") or _prometheus_seconds(s["timeout"]) <= _prometheus_seconds(s["interval"])
    ),
    "((has(self.authorization) ? 1 : 0) + (has(self.basicAuth) ? 1 : 0) + (has(self.oauth2) ? 1 : 0)) <= 1": lambda s: (
        [_has(s, k) for k in ("authorization", "basicAuth", "oauth2")].count(True) <= 1
    ),
    "has(self.cert) == has(self.key)": lambda s: _has(s, "cert") == _has(s, "key"),
    "isURL(self) && !self.matches('@')": lambda s: bool(re.fullmatch(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s]+", s)) and "@" not in s,
    "self != 0": lambda s: s != 0,
    "!has(self.action) ||  self.action != 'labeldrop' || has(self.regex)": lambda s: (
        not _has(s, "action") or s["action"] != "labeldrop" or _has(s, "regex")
    ),
    "self != 'Basic'": lambda s: s != "Basic",
}


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


_PROMETHEUS_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def _prometheus_seconds(text: str) -> float:
    """A Prometheus duration (1h30m, 30s, 500ms) in seconds; KeyError if it is none, which
    the caller reports as the rule failing to evaluate."""
    parts = re.findall(r"([0-9]+)(ms|s|m|h|d|w|y)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise KeyError(f"{text!r} is not a Prometheus duration")
    return sum(int(n) * _PROMETHEUS_UNITS[u] for n, u in parts)


class CelError(Exception):
    """The rule could not be evaluated (the API server reports that as invalid too)."""


@functools.lru_cache(maxsize=None)
def _celpy_program(rule: str):
    import celpy

    env = celpy.Environment()
    return env.program(env.compile(rule))


# Rules cel-python evaluates otherwise than the API server's cel-go: Kubernetes CEL compares
# values of different types as unequal (PodMonitoring's int-or-string port, `self != 0`, with a
# port name), where cel-python finds no overload; it escapes property names that are CEL
# keywords (`__namespace__` is `namespace`: Kubernetes docs "Escaping" in
# reference/using-api/cel), which cel-python reads literally; its library functions (isURL) and
# typed duration fields are Kubernetes' own. These take the built-in evaluator.
CELPY_DIVERGES = frozenset({
    "self != 0",
    "isURL(self) && !self.matches('@')",
    "!has(self.timeout) || self.timeout <= self.interval",
    *(rule for rule in BUILTIN_CEL_RULES if "__namespace__" in rule),
})


def eval_celpy(rule: str, value: Any) -> bool:
    import celpy

    if rule in CELPY_DIVERGES:
        return eval_builtin(rule, value)
    try:
        result = _celpy_program(rule).evaluate({"self": celpy.json_to_cel(value)})
    except Exception as exc:  # noqa: BLE001 - CELEvalError, or a compile error of an unsupported rule
        raise CelError(_clip(str(exc), 200)) from exc
    if isinstance(result, Exception):
        raise CelError(_clip(str(result), 200))
    if not isinstance(result, (bool, celpy.celtypes.BoolType)):
        raise CelError(f"rule evaluated to {type(result).__name__}, not bool")
    return bool(result)


def eval_builtin(rule: str, value: Any) -> bool:
    fn = BUILTIN_CEL_RULES.get(rule)
    if fn is None:
        raise CelError("no built-in evaluator for this rule and cel-python is not installed")
    try:
        return bool(fn(value))
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise CelError(f"no such key or wrong type: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Hand-written checks: metadata, admission webhooks, core API server rules.


def labels_problems(labels: Any, path: str) -> list[str]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [f"{path}: must be a map of string keys to string values, not {type(labels).__name__}"]
    out = []
    for key, value in labels.items():
        if not isinstance(key, str):
            out.append(f"{path}: key {key!r} must be a string")
            continue
        out += [f"{path}: Invalid value: {key!r}: {m}" for m in qualified_name(key)]
        if not isinstance(value, str):
            out.append(f"{path}[{key}]: must be a string, not {type(value).__name__} ({value!r})")
        else:
            out += [f"{path}[{key}]: Invalid value: {value!r}: {m}" for m in label_value(value)]
    return out


def annotations_problems(annotations: Any, path: str) -> list[str]:
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [f"{path}: must be a map of string keys to string values, not {type(annotations).__name__}"]
    out = []
    size = 0
    for key, value in annotations.items():
        if not isinstance(key, str):
            out.append(f"{path}: key {key!r} must be a string")
            continue
        out += [f"{path}: Invalid value: {key!r}: {m}" for m in qualified_name(key.lower())]
        if not isinstance(value, str):
            out.append(f"{path}[{key}]: must be a string, not {type(value).__name__} ({value!r})")
        else:
            size += len(key) + len(value)
    if size > 256 * 1024:
        out.append(f"{path}: Too long: must have at most 262144 bytes")
    return out


def _name_rules(kind: str) -> list[tuple[Callable[[str], list[str]], str]]:
    if kind == "Namespace":
        return [(dns1123_label, "")]
    if kind == "Service":
        return [(dns1035_label, "")]
    if kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        return [(path_segment_name, "")]
    if kind == "Job":
        # The Job controller labels its pods batch.kubernetes.io/job-name=<name>.
        return [(dns1123_subdomain, ""), (label_value, " (it becomes the pods' batch.kubernetes.io/job-name label)")]
    return [(dns1123_subdomain, "")]


def metadata_problems(kind: str, scope: str, meta: Any) -> list[str]:
    if meta is None:
        return ["metadata: Required value"]
    if not isinstance(meta, dict):
        return ["metadata: must be a mapping"]
    out = []
    name = meta.get("name")
    if name is None or name == "":
        out.append("metadata.name: Required value (objects are named explicitly; generateName is not used)")
    elif not isinstance(name, str):
        out.append(f"metadata.name: must be a string, not {type(name).__name__}")
    else:
        for rule, note in _name_rules(kind):
            out += [f"metadata.name: Invalid value: {name!r}: {m}{note}" for m in rule(name)]
        if kind == "PriorityClass" and name.startswith("system-"):
            out.append(f"metadata.name: Invalid value: {name!r}: the prefix 'system-' is reserved")
    namespace = meta.get("namespace")
    if scope == NAMESPACED:
        if not namespace:
            out.append(f"metadata.namespace: Required value: {kind} is namespaced")
        elif not isinstance(namespace, str):
            out.append(f"metadata.namespace: must be a string, not {type(namespace).__name__}")
        else:
            out += [f"metadata.namespace: Invalid value: {namespace!r}: {m}" for m in dns1123_label(namespace)]
    elif namespace is not None:
        out.append(f"metadata.namespace: must not be set: {kind} is cluster-scoped")
    out += labels_problems(meta.get("labels"), "metadata.labels")
    out += annotations_problems(meta.get("annotations"), "metadata.annotations")
    out += [f"metadata.{f}: set by the API server, not by clients" for f in SERVER_METADATA if f in meta]
    return out


def template_metadata_problems(manifest: dict[str, Any]) -> list[str]:
    """Labels and annotations of every embedded `template.metadata` (Job, JobSet, PodTemplate)."""
    out = []

    def walk(node: Any, path: tuple) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "template" and isinstance(value, dict) and isinstance(value.get("metadata"), dict):
                    meta = value["metadata"]
                    base = fmt_path((*path, key, "metadata"))
                    out.extend(labels_problems(meta.get("labels"), f"{base}.labels"))
                    out.extend(annotations_problems(meta.get("annotations"), f"{base}.annotations"))
                walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*path, i))

    walk({k: v for k, v in manifest.items() if k != "metadata"}, ())
    return out


def label_selector_problems(selector: Any, path: str) -> list[str]:
    """metav1 validation.ValidateLabelSelector."""
    if not isinstance(selector, dict):
        return []
    out = labels_problems(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, req in enumerate(selector.get("matchExpressions") or []):
        if not isinstance(req, dict):
            continue
        p = f"{path}.matchExpressions[{i}]"
        key, op, values = req.get("key", ""), req.get("operator"), req.get("values") or []
        out += [f"{p}.key: Invalid value: {key!r}: {m}" for m in qualified_name(str(key))]
        if op in ("In", "NotIn"):
            if not values:
                out.append(f"{p}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                out.append(f"{p}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        else:
            out.append(f"{p}.operator: Invalid value: {op!r}: not a valid selector operator")
        for j, v in enumerate(values):
            if isinstance(v, str):
                out += [f"{p}.values[{j}]: Invalid value: {v!r}: {m}" for m in label_value(v)]
    return out


def tolerations_problems(tolerations: Any, path: str, *, cel_covered: bool = False) -> list[str]:
    """core validation.ValidateTolerations. With cel_covered, only the parts the
    ResourceFlavor CRD's CEL rules do not already check."""
    if not isinstance(tolerations, list):
        return []
    out = []
    for i, t in enumerate(tolerations):
        if not isinstance(t, dict):
            continue
        p = f"{path}[{i}]"
        key, op, value, effect = t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""), t.get("effect", "")
        if key:
            out += [f"{p}.key: Invalid value: {key!r}: {m}" for m in qualified_name(key)]
        if op == "Equal" and isinstance(value, str):
            out += [f"{p}.value: Invalid value: {value!r}: {m}" for m in label_value(value)]
        if cel_covered:
            continue
        if not key and op != "Exists":
            out.append(f"{p}.operator: Invalid value: {op!r}: operator must be Exists when `key` is empty, "
                       "which means \"match all values and all keys\"")
        if op == "Exists" and value:
            out.append(f"{p}.operator: Invalid value: {value!r}: value must be empty when `operator` is 'Exists'")
        if op not in ("Equal", "Exists"):
            out.append(f"{p}.operator: Unsupported value: {op!r}: supported values: \"Equal\", \"Exists\"")
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(f"{p}.effect: Invalid value: {effect!r}: "
                       "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if effect and effect not in _EFFECTS:
            out.append(f"{p}.effect: Unsupported value: {effect!r}: supported values: {', '.join(_EFFECTS)}")
    return out


def _is_extended_resource(name: str) -> bool:
    native = "/" not in name or "kubernetes.io/" in name
    return not native and not name.startswith("requests.")


def resources_problems(resources: Any, path: str) -> list[str]:
    """core validation.ValidateContainerResourceRequirements, the parts schemas miss."""
    if not isinstance(resources, dict):
        return []
    out = []
    parsed: dict[str, dict[str, Decimal]] = {}
    for part in ("limits", "requests"):
        items = resources.get(part) or {}
        parsed[part] = {}
        for name, value in items.items() if isinstance(items, dict) else ():
            q = parse_quantity(value)
            p = f"{path}.{part}[{name}]"
            out += [f"{p}: Invalid resource name {name!r}: {m}" for m in qualified_name(name)]
            if q is None:
                out.append(f"{p}: Invalid value: {value!r}: must be a Kubernetes quantity")
                continue
            if q < 0:
                out.append(f"{p}: Invalid value: {value!r}: must be greater than or equal to 0")
            if _is_extended_resource(name) and q != q.to_integral_value():
                out.append(f"{p}: Invalid value: {value!r}: must be an integer (extended resource)")
            parsed[part][name] = q
    limits, requests = parsed["limits"], parsed["requests"]
    for name, req in requests.items():
        if name in limits and req > limits[name]:
            out.append(f"{path}.requests[{name}]: Invalid value: must be less than or equal to {name} limit")
        if _is_extended_resource(name):
            if name not in limits:
                out.append(f"{path}.limits: Required value: Limit must be set for non overcommitable resources "
                           f"({name} is an extended resource)")
            elif req != limits[name]:
                out.append(f"{path}.requests[{name}]: Invalid value: must be equal to {name} limit "
                           "(extended resources cannot be overcommitted)")
    return out


def pod_spec_problems(spec: Any, path: str, *, restart_policies: tuple[str, ...] | None = None,
                      restart_required: bool = False) -> list[str]:
    """The core PodSpec rules the OpenAPI schema cannot express, for what we emit."""
    if not isinstance(spec, dict):
        return []
    out = []
    names: list[str] = []
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            if not isinstance(c, dict):
                continue
            p = f"{path}.{group}[{i}]"
            name = c.get("name")
            if isinstance(name, str):
                out += [f"{p}.name: Invalid value: {name!r}: {m}" for m in dns1123_label(name)]
                if name in names:
                    out.append(f"{p}.name: Duplicate value: {name!r}")
                names.append(name)
            out += resources_problems(c.get("resources"), f"{p}.resources")
    volumes = [v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)]
    for i, v in enumerate(volumes):
        if isinstance(v, str):
            out += [f"{path}.volumes[{i}].name: Invalid value: {v!r}: {m}" for m in dns1123_label(v)]
            if v in volumes[:i]:
                out.append(f"{path}.volumes[{i}].name: Duplicate value: {v!r}")
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            for j, m in enumerate(c.get("volumeMounts") or [] if isinstance(c, dict) else []):
                if isinstance(m, dict) and m.get("name") not in volumes:
                    out.append(f"{path}.{group}[{i}].volumeMounts[{j}].name: Not found: {m.get('name')!r}")
    out += labels_problems(spec.get("nodeSelector"), f"{path}.nodeSelector")
    out += tolerations_problems(spec.get("tolerations"), f"{path}.tolerations")
    for field, rule in (("subdomain", dns1123_label), ("serviceAccountName", dns1123_subdomain),
                        ("priorityClassName", dns1123_subdomain)):
        value = spec.get(field)
        if isinstance(value, str) and value:
            out += [f"{path}.{field}: Invalid value: {value!r}: {m}" for m in rule(value)]
    if restart_policies is not None:
        policy = spec.get("restartPolicy")
        if policy is None:
            if restart_required:
                out.append(f"{path}.restartPolicy: Required value: the default (Always) is not allowed here; "
                           f"use one of {', '.join(restart_policies)}")
        elif policy not in restart_policies:
            out.append(f"{path}.restartPolicy: Unsupported value: {policy!r}: supported values: "
                       f"{', '.join(restart_policies)}")
    return out


_INDEXED_MAX = 100_000


def _job_counts(spec: dict[str, Any]) -> tuple[Any, Any]:
    """(completions, parallelism) after the API server's Job defaulting: both 1 when both are unset."""
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    if completions is None and parallelism is None:
        return 1, 1
    return completions, parallelism


def job_spec_problems(spec: Any, path: str, *, in_jobset: bool) -> list[str]:
    """batch validation.ValidateJobSpec, the parts that matter for what we emit."""
    if not isinstance(spec, dict):
        return []
    out = []
    # A JobSet's webhook defaults completionMode to Indexed.
    mode = spec.get("completionMode", "Indexed" if in_jobset else "NonIndexed")
    if mode == "Indexed":
        completions, parallelism = _job_counts(spec)
        if completions is None:
            out.append(f"{path}.completions: Required value: when completion mode is Indexed")
        elif _is_int(completions) and completions > _INDEXED_MAX:
            out.append(f"{path}.completions: Invalid value: {completions}: "
                       f"must be less than or equal to {_INDEXED_MAX} when completion mode is Indexed")
        if _is_int(parallelism) and parallelism > _INDEXED_MAX:
            out.append(f"{path}.parallelism: Invalid value: {parallelism}: "
                       f"must be less than or equal to {_INDEXED_MAX} when completion mode is Indexed")
    elif spec.get("backoffLimitPerIndex") is not None:
        out.append(f"{path}.backoffLimitPerIndex: Forbidden: requires indexed completion mode")
    if spec.get("selector") is not None and not spec.get("manualSelector"):
        out.append(f"{path}.selector: Invalid value: the selector is generated unless manualSelector is true")
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    out += pod_spec_problems(
        template.get("spec"),
        f"{path}.template.spec",
        restart_policies=("OnFailure", "Never"),
        restart_required=not in_jobset,  # the JobSet webhook defaults it to OnFailure
    )
    return out


def _nonneg(value: Any, path: str) -> list[str]:
    q = parse_quantity(value)
    if q is not None and q < 0:
        return [f"{path}: Invalid value: {value!r}: must be greater than or equal to 0"]
    return []


def cluster_queue_problems(m: dict[str, Any]) -> list[str]:
    """Kueue's ClusterQueue webhook (ValidateClusterQueue), minus what the CEL rules already
    check, plus: admission-check onFlavors must name flavors of this queue."""
    spec = m.get("spec") if isinstance(m.get("spec"), dict) else {}
    out = []
    has_cohort = bool(spec.get("cohortName"))
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for i, rg in enumerate(spec.get("resourceGroups") or []):
        if not isinstance(rg, dict):
            continue
        p = f"spec.resourceGroups[{i}]"
        covered = [r for r in rg.get("coveredResources") or []]
        for j, name in enumerate(covered):
            if not isinstance(name, str):
                continue
            out += [f"{p}.coveredResources[{j}]: Invalid value: {name!r}: {e}" for e in qualified_name(name)]
            if name in seen_resources:
                out.append(f"{p}.coveredResources[{j}]: Duplicate value: {name!r} "
                           "(each resource can only be covered by one resource group)")
            seen_resources.add(name)
        for j, flavor in enumerate(rg.get("flavors") or []):
            if not isinstance(flavor, dict):
                continue
            fp = f"{p}.flavors[{j}]"
            fname = flavor.get("name")
            if fname in seen_flavors:
                out.append(f"{fp}.name: Duplicate value: {fname!r} (each flavor can only be in one resource group)")
            seen_flavors.add(fname)
            for k, rq in enumerate(flavor.get("resources") or []):
                if k >= len(covered) or not isinstance(rq, dict):
                    break
                rp = f"{fp}.resources[{k}]"
                if rq.get("name") != covered[k]:
                    out.append(f"{rp}.name: Invalid value: {rq.get('name')!r}: must match the name in coveredResources "
                               f"(coveredResources[{k}] is {covered[k]!r})")
                out += _nonneg(rq.get("nominalQuota"), f"{rp}.nominalQuota")
                if "borrowingLimit" in rq:
                    out += _nonneg(rq["borrowingLimit"], f"{rp}.borrowingLimit")
                if "lendingLimit" in rq:
                    lend = rq["lendingLimit"]
                    out += _nonneg(lend, f"{rp}.lendingLimit")
                    if not has_cohort:
                        out.append(f"{rp}.lendingLimit: Invalid value: {lend!r}: must be nil when cohort is empty")
                    nominal, lq = parse_quantity(rq.get("nominalQuota")), parse_quantity(lend)
                    if nominal is not None and lq is not None and lq > nominal:
                        out.append(f"{rp}.lendingLimit: Invalid value: {lend!r}: must be less than or equal to the "
                                   "nominalQuota")
    strategy = spec.get("admissionChecksStrategy") if isinstance(spec.get("admissionChecksStrategy"), dict) else {}
    for i, check in enumerate(strategy.get("admissionChecks") or []):
        for j, flavor in enumerate(check.get("onFlavors") or [] if isinstance(check, dict) else []):
            if flavor not in seen_flavors:
                out.append(f"spec.admissionChecksStrategy.admissionChecks[{i}].onFlavors[{j}]: Invalid value: "
                           f"{flavor!r}: not a flavor of this ClusterQueue (its flavors: {sorted(seen_flavors)})")
    out += label_selector_problems(spec.get("namespaceSelector"), "spec.namespaceSelector")
    fair = spec.get("fairSharing")
    if isinstance(fair, dict) and "weight" in fair:
        out += _nonneg(fair["weight"], "spec.fairSharing.weight")
    return out


def resource_flavor_problems(m: dict[str, Any]) -> list[str]:
    """Kueue's ResourceFlavor webhook (ValidateResourceFlavor), minus the CEL-checked parts."""
    spec = m.get("spec") if isinstance(m.get("spec"), dict) else {}
    out = labels_problems(spec.get("nodeLabels"), "spec.nodeLabels")
    seen: set[tuple[Any, Any]] = set()
    for i, taint in enumerate(spec.get("nodeTaints") or []):
        if not isinstance(taint, dict):
            continue
        key, value = taint.get("key", ""), taint.get("value", "")
        out += [f"spec.nodeTaints[{i}].key: Invalid value: {key!r}: {e}" for e in qualified_name(str(key))]
        if isinstance(value, str):
            out += [f"spec.nodeTaints[{i}].value: Invalid value: {value!r}: {e}" for e in label_value(value)]
        if (key, taint.get("effect")) in seen:
            out.append(f"spec.nodeTaints[{i}]: Duplicate value: taints must be unique by key and effect pair")
        seen.add((key, taint.get("effect")))
    out += tolerations_problems(spec.get("tolerations"), "spec.tolerations", cel_covered=True)
    return out


_RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_JOB_FAILURE_REASONS = ("BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded",
                        "PodFailurePolicy")


def jobset_problems(m: dict[str, Any]) -> list[str]:
    """The JobSet webhook's ValidateCreate (after its defaulting), and the pod/Job rules the
    Job controller will apply to the Jobs it creates."""
    spec = m.get("spec") if isinstance(m.get("spec"), dict) else {}
    name = (m.get("metadata") or {}).get("name") or ""
    out = []
    rjobs = [r for r in spec.get("replicatedJobs") or [] if isinstance(r, dict)]
    names = [r.get("name") for r in rjobs]
    if rjobs and rjobs[0].get("dependsOn") is not None:
        out.append("spec.replicatedJobs[0].dependsOn: DependsOn can't be set for the first ReplicatedJob")
    for i, rj in enumerate(rjobs):
        p = f"spec.replicatedJobs[{i}]"
        replicas = rj.get("replicas", 1)
        job = ((rj.get("template") or {}).get("spec")) or {}
        completions, parallelism = _job_counts(job)
        parallelism = 1 if parallelism is None else parallelism
        if _is_int(replicas) and _is_int(parallelism) and replicas * parallelism > 2**31 - 1:
            out.append(f"{p}: the product of replicas and parallelism must not exceed {2**31 - 1}")
        if _is_int(replicas):
            longest_job = f"{name}-{rj.get('name')}-{replicas - 1}"
            for e in dns1035_label(longest_job):
                if "63" in e:
                    e = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
                out.append(f"{p}.name: Invalid value: generated Job name {longest_job!r}: {e}")
            if job.get("completionMode", "Indexed") == "Indexed" and _is_int(completions):
                longest_pod = f"{name}-{rj.get('name')}-{replicas - 1}-{completions - 1}-abcde"
                for e in dns1035_label(longest_pod):
                    if "63" in e:
                        e = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
                    out.append(f"{p}.name: Invalid value: generated Pod name {longest_pod!r}: {e}")
        for dep in rj.get("dependsOn") or []:
            if isinstance(dep, dict) and dep.get("name") not in names[:i]:
                out.append(f"{p}.dependsOn: replicatedJob {rj.get('name')!r} cannot depend on "
                           f"replicatedJob {dep.get('name')!r} (only on an earlier one)")
        out += job_spec_problems(job, f"{p}.template.spec", in_jobset=True)
    success = spec.get("successPolicy") if isinstance(spec.get("successPolicy"), dict) else {}
    for target in success.get("targetReplicatedJobs") or []:
        if target not in names:
            out.append(f"spec.successPolicy.targetReplicatedJobs: invalid replicatedJob name {target!r} "
                       "does not appear in .spec.replicatedJobs")
    failure = spec.get("failurePolicy") if isinstance(spec.get("failurePolicy"), dict) else {}
    rule_names: list[str] = []
    for i, rule in enumerate(failure.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        p = f"spec.failurePolicy.rules[{i}]"
        rname = rule.get("name") or f"failurePolicyRule{i}"  # the webhook's default
        if not (1 <= len(rname) <= 128) or not _RULE_NAME.fullmatch(rname):
            out.append(f"{p}.name: Invalid value: {rname!r}: must start with a letter, hold letters, digits or '_,:', "
                       "end with a letter, digit or '_', and be 1 to 128 characters")
        if rname in rule_names:
            out.append(f"{p}.name: Duplicate value: {rname!r}")
        rule_names.append(rname)
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in names:
                out.append(f"{p}.targetReplicatedJobs: invalid replicatedJob name {target!r} in failure policy "
                           "does not appear in .spec.replicatedJobs")
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in _JOB_FAILURE_REASONS:
                out.append(f"{p}.onJobFailureReasons: invalid job failure reason {reason!r}")
    subdomain = (spec.get("network") or {}).get("subdomain") if isinstance(spec.get("network"), dict) else None
    if subdomain:
        out += [f"spec.network.subdomain: Invalid value: {subdomain!r}: {e}"
                for e in dns1123_subdomain(subdomain) + dns1035_label(subdomain)]
    return out


def workload_problems(m: dict[str, Any]) -> list[str]:
    """Kueue v0.19.2's Workload webhook on create (pkg/webhooks/workload_webhook.go
    ValidateWorkload), for a Workload without status: the resource name "pods" is reserved,
    and at most one podSet may use minCount."""
    spec = m.get("spec") if isinstance(m.get("spec"), dict) else {}
    out = []
    pod_sets = [ps for ps in spec.get("podSets") or [] if isinstance(ps, dict)]
    for i, ps in enumerate(pod_sets):
        pod = ((ps.get("template") or {}).get("spec")) or {}
        for group in ("initContainers", "containers"):
            for j, c in enumerate(pod.get(group) or []):
                for part in ("requests", "limits"):
                    if "pods" in (((c or {}).get("resources") or {}).get(part) or {}):
                        out.append(f"spec.podSets[{i}].template.spec.{group}[{j}].resources.{part}[pods]: "
                                   "Invalid value: the key is reserved for internal kueue use")
    if sum(1 for ps in pod_sets if ps.get("minCount") is not None) > 1:
        out.append("spec.podSets: Invalid value: at most one podSet can use minCount")
    return out


_RBAC_GROUP = "rbac.authorization.k8s.io"


def policy_rules_problems(m: dict[str, Any]) -> list[str]:
    """k8s.io/kubernetes pkg/apis/rbac/validation ValidatePolicyRule: verbs are required, and a
    resource rule names its apiGroups and resources."""
    out = []
    for i, rule in enumerate(m.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        if not rule.get("verbs"):
            out.append(f"rules[{i}].verbs: Required value: verbs must contain at least one value")
        if rule.get("nonResourceURLs"):
            continue
        for field in ("apiGroups", "resources"):
            if not rule.get(field):
                out.append(f"rules[{i}].{field}: Required value: resource rules must supply at least one {field[:-1]}")
    return out


def binding_problems(m: dict[str, Any]) -> list[str]:
    """ValidateRoleBinding / ValidateClusterRoleBinding and ValidateRoleBindingSubject (same
    package): roleRef in the RBAC group naming a Role (RoleBinding only) or a ClusterRole;
    User and Group subjects in the RBAC group; ServiceAccount subjects in the core group, with
    a namespace in a ClusterRoleBinding."""
    out = []
    namespaced = m.get("kind") == "RoleBinding"
    ref = m.get("roleRef") if isinstance(m.get("roleRef"), dict) else {}
    if ref.get("apiGroup") != _RBAC_GROUP:
        out.append(f"roleRef.apiGroup: Unsupported value: {ref.get('apiGroup')!r}: supported values: \"{_RBAC_GROUP}\"")
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        out.append(f"roleRef.kind: Unsupported value: {ref.get('kind')!r}: supported values: {', '.join(kinds)}")
    if not ref.get("name"):
        out.append("roleRef.name: Required value")
    for i, subject in enumerate(m.get("subjects") or []):
        if not isinstance(subject, dict):
            continue
        p, kind, group = f"subjects[{i}]", subject.get("kind"), subject.get("apiGroup", "")
        if not subject.get("name"):
            out.append(f"{p}.name: Required value")
        if kind == "ServiceAccount":
            if group:
                out.append(f"{p}.apiGroup: Unsupported value: {group!r}: supported values: \"\"")
            if not namespaced and not subject.get("namespace"):
                out.append(f"{p}.namespace: Required value")
        elif kind in ("User", "Group"):
            if group != _RBAC_GROUP:
                out.append(f"{p}.apiGroup: Unsupported value: {group!r}: supported values: \"{_RBAC_GROUP}\"")
        else:
            out.append(f"{p}.kind: Unsupported value: {kind!r}: supported values: ServiceAccount, User, Group")
    return out


def job_problems(m: dict[str, Any]) -> list[str]:
    return job_spec_problems(m.get("spec"), "spec", in_jobset=False)


def pod_problems(m: dict[str, Any]) -> list[str]:
    return pod_spec_problems(m.get("spec"), "spec", restart_policies=("Always", "OnFailure", "Never"))


def pod_template_problems(m: dict[str, Any]) -> list[str]:
    template = m.get("template") if isinstance(m.get("template"), dict) else {}
    return pod_spec_problems(template.get("spec"), "template.spec", restart_policies=("Always", "OnFailure", "Never"))


def service_problems(m: dict[str, Any]) -> list[str]:
    spec = m.get("spec") if isinstance(m.get("spec"), dict) else {}
    return labels_problems(spec.get("selector"), "spec.selector")


def priority_class_problems(m: dict[str, Any]) -> list[str]:
    value = m.get("value")
    if _is_int(value) and value > 1_000_000_000:
        return [f"value: Invalid value: {value}: must be no greater than 1000000000 for user-defined priority classes"]
    return []


_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")


def secret_problems(m: dict[str, Any]) -> list[str]:
    """core validation.ValidateSecret, and the base64 the API server decodes `data` from (the
    schema says `format: byte`, which no validator here checks)."""
    out = []
    size = 0
    for field in ("data", "stringData"):
        items = m.get(field) if isinstance(m.get(field), dict) else {}
        for key, value in items.items():
            if len(key) > 253 or not _CONFIG_KEY.fullmatch(key):
                out.append(f"{field}[{key}]: Invalid value: {key!r}: a valid config key must consist of alphanumeric "
                           "characters, '-', '_' or '.', at most 253")
            if field == "data" and isinstance(value, str):
                try:
                    size += len(base64.b64decode(value, validate=True))
                except (binascii.Error, ValueError):
                    out.append(f"data[{key}]: illegal base64 data")
            elif isinstance(value, str):
                size += len(value.encode())
    if size > 1024 * 1024:
        out.append(f"data: Too long: must have at most 1048576 bytes ({size})")
    annotations = (m.get("metadata") or {}).get("annotations") or {}
    if m.get("type") == "kubernetes.io/service-account-token" and not annotations.get(
            "kubernetes.io/service-account.name"):
        out.append("metadata.annotations[kubernetes.io/service-account.name]: Required value "
                   "(a service-account-token Secret names its ServiceAccount)")
    return out


HAND_WRITTEN: dict[tuple[str, str], Callable[[dict[str, Any]], list[str]]] = {
    ("v1", "Secret"): secret_problems,
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): cluster_queue_problems,
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): resource_flavor_problems,
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): jobset_problems,
    ("batch/v1", "Job"): job_problems,
    ("v1", "Pod"): pod_problems,
    ("v1", "PodTemplate"): pod_template_problems,
    ("v1", "Service"): service_problems,
    ("scheduling.k8s.io/v1", "PriorityClass"): priority_class_problems,
    ("kueue.x-k8s.io/v1beta2", "Workload"): workload_problems,
    ("rbac.authorization.k8s.io/v1", "Role"): policy_rules_problems,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): policy_rules_problems,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): binding_problems,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): binding_problems,
}


# --------------------------------------------------------------------------------------------
# Core kinds: kubernetes-validate's bundled strict schemas, one cached validator per kind.


def _kubernetes_validate_version(desired: str) -> str:
    """The bundled schema set kubernetes-validate itself would pick for `desired`."""
    wanted = Version(kv.major_minor(desired.lstrip("v")))
    candidates = [v for v in kv.all_versions() if Version(kv.major_minor(v)) <= wanted]
    if not candidates:
        raise ValueError(f"kubernetes-validate bundles no schemas for Kubernetes {desired} or older")
    return candidates[-1]


@functools.lru_cache(maxsize=None)
def _core_definitions(version: str) -> Resource:
    return Resource.from_contents(
        kv.schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    )


@functools.lru_cache(maxsize=None)
def _core_validator(version: str, api_version: str, kind: str) -> jsonschema.Validator:
    munged = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = kv.schema_contents(f"kubernetes-json-schema/v{version}-local-strict/{kind.lower()}-{munged}.json", version)
    registry = _core_definitions(version) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


@functools.lru_cache(maxsize=None)
def _object_meta_validator(version: str) -> jsonschema.Validator:
    ref = {"$ref": "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    return jsonschema.Draft202012Validator(ref, registry=_core_definitions(version) @ Registry())


def _schema_errors(validator: jsonschema.Validator, instance: Any, prefix: tuple = ()) -> list[str]:
    errors = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{fmt_path((*prefix, *e.absolute_path))}: {_clip(e.message)}" for e in errors]


# --------------------------------------------------------------------------------------------
# The entry points.


class Validator:
    """Validates manifests; caches are module-wide, so instances are cheap.

    cel: "auto" (cel-python when installed, else the built-in rules), "celpy" or "builtin"."""

    def __init__(self, schemas_dir: Path | str | None = None, kubernetes_version: str = KUBERNETES_VERSION,
                 cel: str = "auto", extra_dirs: Iterable[Path | str] = EXTRA_SCHEMAS_DIRS):
        self.schemas_dir = Path(schemas_dir) if schemas_dir is not None else SCHEMAS_DIR
        self.schema_dirs = (self.schemas_dir, *(Path(d) for d in extra_dirs))
        for folder in self.schema_dirs:
            if not (folder / "README.md").is_file():
                raise FileNotFoundError(f"{folder}: no CRD schemas (expected a README.md with a file table)")
        self.core_version = _kubernetes_validate_version(kubernetes_version)
        if cel == "auto":
            cel = "celpy" if CELPY_AVAILABLE else "builtin"
        if cel == "celpy" and not CELPY_AVAILABLE:
            raise RuntimeError("cel-python is not installed (pip install cel-python)")
        if cel not in ("celpy", "builtin"):
            raise ValueError(f"cel must be auto, celpy or builtin, not {cel!r}")
        self.cel = cel
        self._eval = eval_celpy if cel == "celpy" else eval_builtin

    def crd(self, api_version: str, kind: str) -> Crd | None:
        group, slash, version = api_version.partition("/")
        if not slash or "/" in version or not re.fullmatch(r"[A-Za-z0-9.-]+", group + version + kind):
            return None
        for folder in self.schema_dirs:
            path = folder / group / version / f"{kind}.json"
            if path.is_file():
                return _load_crd(str(path), _crd_scopes(str(folder)).get((api_version, kind)))
        return None

    def validate(self, manifest: Any) -> list[str]:
        ident = _ident(manifest)
        try:
            key = _frozen(manifest)
        except TypeError:  # a value no manifest holds (a set, an object): checked afresh
            return [f"{ident}: {p}" for p in self._problems(manifest)]
        # The same objects come back in every render (namespaces, Kueue's, a stack's queues):
        # each is checked once per validator, its problems kept as an immutable tuple.
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = tuple(self._problems(manifest))
        return [f"{ident}: {p}" for p in memo[key]]

    def _problems(self, manifest: Any) -> list[str]:
        if not isinstance(manifest, dict):
            return [f"a manifest must be a mapping, not {type(manifest).__name__}"]
        api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            return ["apiVersion and kind: Required value (non-empty strings)"]
        if api_version in REJECTED_API_VERSIONS:
            return [f"apiVersion: Invalid value: {api_version!r}: {REJECTED_API_VERSIONS[api_version]}"]
        out: list[str] = []
        if (api_version, kind) in CORE_KINDS:
            scope = CORE_KINDS[(api_version, kind)]
            out += _schema_errors(_core_validator(self.core_version, api_version, kind), manifest)
        else:
            crd = self.crd(api_version, kind)
            if crd is None:
                return [f"{api_version} {kind} is not covered: neither a core kind in CORE_KINDS nor a CRD with a "
                        f"schema in {', '.join(map(str, self.schema_dirs))}; add it to the validator rather than let it pass unchecked"]
            if crd.scope is None:
                return [f"{api_version} {kind}: the schemas' README gives no scope for it; cannot check metadata"]
            scope = crd.scope
            defaulted = apply_defaults(crd.schema, copy.deepcopy(manifest))
            out += _schema_errors(crd.validator, defaulted)
            out += list_type_problems(crd.schema, defaulted)
            out += self.cel_problems(crd.schema, defaulted)
            if isinstance(manifest.get("metadata"), dict):
                out += _schema_errors(_object_meta_validator(self.core_version), manifest["metadata"], ("metadata",))
        if "status" in manifest:
            out.append("status: set by controllers; the API server drops it on create")
        out += metadata_problems(kind, scope, manifest.get("metadata"))
        out += template_metadata_problems(manifest)
        check = HAND_WRITTEN.get((api_version, kind))
        if check is not None:
            out += check(manifest)
        return out

    def cel_problems(self, schema: dict[str, Any], instance: Any) -> list[str]:
        out = []
        for node, value, path in schema_nodes(schema, instance):
            if value is None:
                continue
            for rule in node.get("x-kubernetes-validations") or ():
                if is_transition_rule(rule) and not rule.get("optionalOldSelf"):
                    continue  # compares with the stored object: evaluated on update only
                text = rule.get("rule", "")
                where = fmt_path(path) + (rule.get("fieldPath") or "")
                if rule.get("optionalOldSelf"):
                    out.append(f"{where}: CEL rule not evaluated (optionalOldSelf is not supported here): {text}")
                    continue
                try:
                    ok = self._eval(text, value)
                except CelError as exc:
                    out.append(f"{where}: CEL rule could not be evaluated ({exc}): {text}")
                    continue
                if not ok:
                    message = rule.get("message") or f"failed rule: {text}"
                    out.append(f"{where}: Invalid value: {message} (x-kubernetes-validations rule: {text})")
        return out


@functools.lru_cache(maxsize=None)
def default_validator() -> Validator:
    return Validator()


def validate(manifest: Any) -> list[str]:
    """Problems with one manifest (empty when valid), with the default Validator."""
    return default_validator().validate(manifest)


def embedded_manifests(manifest: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, object) for every Kubernetes object a ConfigMap holds as YAML or JSON in its data."""
    if not isinstance(manifest, dict) or manifest.get("kind") != "ConfigMap" or manifest.get("apiVersion") != "v1":
        return
    for key, text in sorted((manifest.get("data") or {}).items()):
        if not isinstance(text, str) or not key.endswith((".yaml", ".yml", ".json")):
            continue
        for i, doc in enumerate(yaml.safe_load_all(text)):
            if isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc:
                yield f"{_ident(manifest)}: data[{key}] document {i}", doc


KNOWN_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")
# Built into every cluster, or created by the Kueue and JobSet Helm releases (createNamespace).
KNOWN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "kueue-system", "jobset-system")
KNOWN_CLUSTER_ROLES = ("cluster-admin", "admin", "edit", "view")


def check_references(manifests: list[dict[str, Any]]) -> list[str]:
    """Cross-object problems: duplicates and references to objects nobody creates. References to
    objects outside the manifests (Helm-installed, built in) are listed in KNOWN_*."""
    out = []
    index: dict[tuple[str, str, str | None, str], dict[str, Any]] = {}
    for m in manifests:
        if not isinstance(m, dict) or not isinstance(m.get("metadata"), dict):
            continue
        group = str(m.get("apiVersion", "")).rpartition("/")[0]
        key = (group, str(m.get("kind")), m["metadata"].get("namespace"), str(m["metadata"].get("name")))
        if key in index:
            out.append(f"{_ident(m)}: declared twice")
        index[key] = m

    def exists(group: str, kind: str, name: Any, namespace: str | None = None) -> bool:
        return (group, kind, namespace, name) in index

    for (group, kind, ns, _name), m in index.items():
        ident = _ident(m)
        if ns is not None and ns not in KNOWN_NAMESPACES and not exists("", "Namespace", ns):
            out.append(f"{ident}: metadata.namespace: no Namespace {ns!r} is declared")
        spec = m.get("spec") if isinstance(m.get("spec"), dict) else {}
        labels = m["metadata"].get("labels") or {}
        if (group, kind) == ("kueue.x-k8s.io", "ClusterQueue"):
            for i, rg in enumerate(spec.get("resourceGroups") or []):
                for j, f in enumerate(rg.get("flavors") or []):
                    if not exists("kueue.x-k8s.io", "ResourceFlavor", f.get("name")):
                        out.append(f"{ident}: spec.resourceGroups[{i}].flavors[{j}].name: no ResourceFlavor "
                                   f"{f.get('name')!r} is declared")
            for i, c in enumerate((spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []):
                if not exists("kueue.x-k8s.io", "AdmissionCheck", c.get("name")):
                    out.append(f"{ident}: spec.admissionChecksStrategy.admissionChecks[{i}].name: no AdmissionCheck "
                               f"{c.get('name')!r} is declared")
        elif (group, kind) == ("kueue.x-k8s.io", "LocalQueue"):
            if not exists("kueue.x-k8s.io", "ClusterQueue", spec.get("clusterQueue")):
                out.append(f"{ident}: spec.clusterQueue: no ClusterQueue {spec.get('clusterQueue')!r} is declared")
        elif (group, kind) == ("kueue.x-k8s.io", "AdmissionCheck"):
            params = spec.get("parameters") or {}
            if params and params.get("kind") == "ProvisioningRequestConfig":
                if not exists("kueue.x-k8s.io", "ProvisioningRequestConfig", params.get("name")):
                    out.append(f"{ident}: spec.parameters: no ProvisioningRequestConfig {params.get('name')!r} "
                               "is declared")
        elif (group, kind) == ("autoscaling.x-k8s.io", "ProvisioningRequest"):
            for i, ps in enumerate(spec.get("podSets") or []):
                ref = (ps.get("podTemplateRef") or {}).get("name")
                if not exists("", "PodTemplate", ref, ns):
                    out.append(f"{ident}: spec.podSets[{i}].podTemplateRef: no PodTemplate {ns}/{ref} is declared")
        queue = labels.get("kueue.x-k8s.io/queue-name")
        if queue is not None and not exists("kueue.x-k8s.io", "LocalQueue", queue, ns):
            out.append(f"{ident}: metadata.labels[kueue.x-k8s.io/queue-name]: no LocalQueue {ns}/{queue} is declared")
        priority = labels.get("kueue.x-k8s.io/priority-class")
        if priority is not None and not exists("kueue.x-k8s.io", "WorkloadPriorityClass", priority):
            out.append(f"{ident}: metadata.labels[kueue.x-k8s.io/priority-class]: no WorkloadPriorityClass "
                       f"{priority!r} is declared")
        if (group, kind) in (("rbac.authorization.k8s.io", "ClusterRoleBinding"),
                             ("rbac.authorization.k8s.io", "RoleBinding")):
            # A binding to a role nobody creates grants nothing, silently: the API server
            # accepts it (roles are resolved at authorization time).
            ref = m.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole" and ref.get("name") not in KNOWN_CLUSTER_ROLES:
                if not exists("rbac.authorization.k8s.io", "ClusterRole", ref.get("name")):
                    out.append(f"{ident}: roleRef: no ClusterRole {ref.get('name')!r} is declared")
            elif ref.get("kind") == "Role" and not exists("rbac.authorization.k8s.io", "Role", ref.get("name"), ns):
                out.append(f"{ident}: roleRef: no Role {ns}/{ref.get('name')} is declared")
        for path, pod in _pod_specs(m):
            pc = pod.get("priorityClassName")
            if pc and pc not in KNOWN_PRIORITY_CLASSES and not exists("scheduling.k8s.io", "PriorityClass", pc):
                out.append(f"{ident}: {path}.priorityClassName: no PriorityClass {pc!r} is declared")
            sa = pod.get("serviceAccountName")
            if sa and sa != "default" and not exists("", "ServiceAccount", sa, ns):
                out.append(f"{ident}: {path}.serviceAccountName: no ServiceAccount {ns}/{sa} is declared")
            for i, vol in enumerate(pod.get("volumes") or []):
                cm = (vol.get("configMap") or {}).get("name") if isinstance(vol, dict) else None
                if cm and not (vol["configMap"].get("optional")) and not exists("", "ConfigMap", cm, ns):
                    out.append(f"{ident}: {path}.volumes[{i}].configMap: no ConfigMap {ns}/{cm} is declared")
    return out


def _pod_specs(m: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    def get(node: Any, *keys: str) -> Any:
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    kind, out = m.get("kind"), []
    if kind == "Pod":
        out.append(("spec", get(m, "spec")))
    elif kind == "Job":
        out.append(("spec.template.spec", get(m, "spec", "template", "spec")))
    elif kind == "PodTemplate":
        out.append(("template.spec", get(m, "template", "spec")))
    elif kind == "JobSet":
        for i, rj in enumerate(get(m, "spec", "replicatedJobs") or []):
            out.append((f"spec.replicatedJobs[{i}].template.spec.template.spec",
                        get(rj, "template", "spec", "template", "spec")))
    return [(p, s) for p, s in out if isinstance(s, dict)]


def problems(manifests: list[dict[str, Any]], validator: Validator | None = None) -> list[str]:
    """Everything wrong with a stack's manifests: each object, the objects ConfigMaps embed,
    and cross-object references."""
    validator = validator or default_validator()
    out = []
    for m in manifests:
        out += validator.validate(m)
        for where, doc in embedded_manifests(m):
            out += [f"{where}: {p}" for p in validator.validate(doc)]
    out += check_references(manifests)
    return out
