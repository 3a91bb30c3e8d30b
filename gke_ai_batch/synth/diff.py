"""The diff of a render against a base render of the same stack (`python -m synth STACK --base DIR`):
diff.md and diff.json, beside the render.

Everything here is read from the files synth wrote (resources.json, cost.json, policy.json,
manifests.yaml) of both renders: the replacement rules are gke_ai_batch/synth/report/replacement.py's, the
recorded pools and flavors are parsed by the admission model's functions (gke_ai_batch/model/facts.py) and
the prices are cost.json's, so the diff says what the report and the policy pack say."""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.domain import catalogue, gke_updates, regions, urns
from gke_ai_batch.policy import rules
from gke_ai_batch.policy.rules.base import CLUSTER, HELM_RELEASES, NODE_POOL, RESOURCE_FLAVOR, by_cluster, dig, of_type
from gke_ai_batch.model.facts import cluster_facts, pool_facts, selects

from . import yamlread
from .report.cost import total_usd
from .report.md import DASH, code, table
from .report.replacement import FORCE_NEW, KUBERNETES_FORCE_NEW

FILES = ("resources.json", "policy.json", "manifests.yaml")
# Written since the diff compares costs and admission verdicts: a base branch's synth that
# predates one leaves it out, and the diff then says what it does not compare.
OPTIONAL = ("cost.json", "admission.json")
# A render's files are a few hundred KB (prod's resources.json ~150 KB); a base file past this
# is not one synth wrote, and is refused before it is read into memory.
MAX_BYTES = 64 * 2**20
# Where GKE, Helm and Pulumi document what an operation does to running work.
DOCS = {
    "pool-create": "https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools#add",
    "pool-delete": "https://cloud.google.com/sdk/gcloud/reference/container/node-pools/delete",
    "cluster": "https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters",
    "helm": "https://helm.sh/docs/chart_best_practices/custom_resource_definitions/",
    "delete-before-replace": "https://www.pulumi.com/docs/iac/concepts/options/deletebeforereplace/",
}


class DiffError(Exception):
    """A base render that cannot be read: a usage error about --base."""

    def __init__(self, message: str, path: Path):
        self.path = path
        super().__init__(message)


class _Refused(Exception):
    """A parsed file that departs from what synth writes, with the message that says where."""


class _Shape(_Refused):
    def __init__(self, where: str, kind: str):
        super().__init__(f"{where} is not {'an' if kind[0] in 'aeiou' else 'a'} {kind} as synth writes it")


_KINDS = {dict: "object", list: "list", str: "string"}


def _expect(value: Any, kind: type, where: str, optional: bool = False) -> Any:
    if (value is None and optional) or isinstance(value, kind):
        return value
    raise _Shape(where, _KINDS[kind])


def _number(value: Any, where: str) -> None:
    """A price: a finite number or null (cost.json writes null for a pool it cannot price), never
    below zero (a negative base cost showed as "$-2,458.44" and a rise that is none)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise _Shape(where, "number")
    if value is not None and value < 0:
        raise _Refused(f"{where}: {value!r} is below zero, and synth writes no negative price")


def _check_resources(value: Any) -> None:
    for i, r in enumerate(_expect(value, list, "resources.json")):
        where = f"resources.json[{i}]"
        _expect(r, dict, where)
        for key in ("urn", "type", "name"):
            _expect(r.get(key), str, f"{where}.{key}")
        for key in ("inputs", "options"):
            _expect(r.get(key), dict, f"{where}.{key}", optional=True)
        try:
            urns.parse(r["urn"])
        except urns.UrnError as exc:
            raise _Refused(f"{where}.urn: {exc}") from None


def _check_cost(value: Any) -> None:
    _expect(value, dict, "cost.json")
    for i, pool in enumerate(_expect(value.get("pools"), list, "cost.json.pools", optional=True) or []):
        _number(_expect(pool, dict, f"cost.json.pools[{i}]").get("per30DaysMax"), f"cost.json.pools[{i}].per30DaysMax")
    _number((_expect(value.get("total"), dict, "cost.json.total", optional=True) or {}).get("per30DaysMax"),
            "cost.json.total.per30DaysMax")


def _check_policy(value: Any) -> None:
    for i, v in enumerate(_expect(value, list, "policy.json")):
        _expect(v, dict, f"policy.json[{i}]")


def _check_admission(value: Any) -> None:
    _expect(value, dict, "admission.json")
    for key in ("workloads", "queues"):
        for name, v in (_expect(value.get(key), dict, f"admission.json.{key}", optional=True) or {}).items():
            _expect(v, dict, f"admission.json.{key}.{name}")


def _check_manifests(docs: list[Any]) -> None:
    """The objects the diff reads (queues, teams, priorities), in the shape it reads them."""
    for d in docs:
        if not isinstance(d, dict) or d.get("kind") not in ("ClusterQueue", "LocalQueue", "PriorityClass", "WorkloadPriorityClass"):
            continue
        metadata = d.get("metadata")
        where = f"manifests.yaml: {d['kind']} {metadata.get('name') if isinstance(metadata, dict) else '?'}:"
        _expect(metadata, dict, f"{where} metadata")
        spec = _expect(d.get("spec"), dict, f"{where} spec", optional=True) or {}
        if d["kind"] != "ClusterQueue":
            continue
        for g, group in enumerate(_expect(spec.get("resourceGroups"), list, f"{where} spec.resourceGroups", optional=True) or []):
            at = f"{where} spec.resourceGroups[{g}]"
            for f, flavor in enumerate(_expect(_expect(group, dict, at).get("flavors"), list, f"{at}.flavors", optional=True) or []):
                at_f = f"{at}.flavors[{f}]"
                for r, res in enumerate(_expect(_expect(flavor, dict, at_f).get("resources"), list, f"{at_f}.resources", optional=True) or []):
                    _expect(res, dict, f"{at_f}.resources[{r}]")


_CHECKS = {"resources.json": _check_resources, "cost.json": _check_cost, "policy.json": _check_policy,
           "admission.json": _check_admission, "manifests.yaml": _check_manifests}


MAX_YAML_DEPTH = yamlread.MAX_MANIFEST_DEPTH


def _yaml_documents(text: str) -> list[Any]:
    """The documents of a manifests.yaml, read as every YAML from outside is (yamlread.load_all):
    nesting past MAX_YAML_DEPTH and excessive aliasing are refused (YamlError) from libyaml's
    events, before PyYAML's composer starts on the file."""
    return yamlread.load_all(text, MAX_YAML_DEPTH)


def _no_constant(name: str) -> Any:
    # json.loads reads NaN and Infinity, which JSON has not and synth never writes: a NaN cost
    # differs from itself, so a render would not even match its own copy.
    raise ValueError(f"{name} is not a JSON number")


# -- numbers and values of a base file -----------------------------------------------------------
#
# Every number a render holds is one a Pulumi property value can be: an IEEE-754 double
# (google.protobuf.Value number_value, which the engine records as an int when integral,
# gke_ai_batch/synth/engine.py), so finite and within ±1.8e308. A base file's number outside that is no
# number synth wrote: `1e400` reads as infinity (and would reach diff.json as `Infinity`, which
# is no JSON), a 400-digit integer overflows every conversion to float. Each is refused here,
# for every base file, naming the key, before any part of the diff reads it.

_LARGEST = sys.float_info.max
_MOST_DIGITS = len(str(int(_LARGEST)))


class _OutOfRange(str):
    """A JSON number literal no double holds, kept as written so that the refusal can quote it."""


def _json_int(text: str) -> int | _OutOfRange:
    # By length first: int() of thousands of digits is slow, and refused past 4,300.
    if len(text.lstrip("-")) > _MOST_DIGITS or abs(value := int(text)) > _LARGEST:
        return _OutOfRange(text)
    return value


def _json_float(text: str) -> float | _OutOfRange:
    value = float(text)
    return value if math.isfinite(value) else _OutOfRange(text)


def _load_json(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constant, parse_int=_json_int, parse_float=_json_float)


def _literal(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"{text[:12]}… ({len(text)} characters)"


def _join(at: str, key: Any) -> str:
    return f"{at} {key}" if at.endswith(":") else f"{at}.{key}"


def _values(value: Any, where: str) -> None:
    """`value` holds only what JSON holds and synth writes: objects with string keys, lists,
    strings, booleans, null, and numbers a double holds (YAML's timestamps, binary, sets and
    `.inf` are none of these), nested no deeper than a manifests.yaml may be (the diff's readers
    recurse). _Refused naming the first key that departs."""
    todo = [(value, where, 0)]
    while todo:
        v, at, depth = todo.pop()
        if depth > MAX_YAML_DEPTH:
            raise _Refused(f"{at}: nested more than {MAX_YAML_DEPTH} levels deep: synth writes nothing that deep")
        if isinstance(v, _OutOfRange) or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                          and not (math.isfinite(v) and abs(v) <= _LARGEST)):
            raise _Refused(f"{at}: {_literal(v)} is out of range: synth writes only finite numbers within "
                           f"±{_LARGEST:.1e} (an IEEE-754 double, as every Pulumi number is)")
        if isinstance(v, dict):
            for k in v:
                if not isinstance(k, str):
                    raise _Refused(f"{at}: the key {_literal(k)} is not a string: synth writes only string keys")
            todo.extend((x, _join(at, k), depth + 1) for k, x in reversed(v.items()))
        elif isinstance(v, list):
            todo.extend((x, f"{at}[{i}]", depth + 1) for i, x in reversed(list(enumerate(v))))
        elif not isinstance(v, (str, int, float, bool, type(None))):
            raise _Refused(f"{at} is a YAML {type(v).__name__}: synth writes only JSON values (strings quoted)")


def _documents_where(docs: list[Any]) -> list[tuple[Any, str]]:
    out = []
    for i, d in enumerate(docs):
        meta = d.get("metadata") if isinstance(d, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        kind = d.get("kind") if isinstance(d, dict) else None
        label = f"{kind} {name}" if isinstance(kind, str) and isinstance(name, str) else f"document {i + 1}"
        out.append((d, f"manifests.yaml: {label}:"))
    return out


@dataclass(frozen=True)
class Render:
    resources: list[dict[str, Any]]
    cost: dict[str, Any] | None  # cost.json; None: the render has none
    policy: list[dict[str, Any]]
    manifests: list[dict[str, Any]]
    admission: dict[str, Any] | None = None  # admission.json; None: the render has none

    @classmethod
    def from_files(cls, files: dict[str, str], where: Path | None = None) -> Render:
        def parse(name: str):
            if name not in files:
                return None
            try:
                if name.endswith(".json"):
                    value = _load_json(files[name])
                else:
                    value = _yaml_documents(files[name])
            except yamlread.YamlError as exc:
                # Refused from libyaml's events (yamlread.load_all), before PyYAML composes it.
                [problem] = exc.problems
                why = "is not YAML: nested too deeply" if problem.rule == "yaml.depth" else f"is refused: line {problem.line}: {problem.message}"
                raise DiffError(why, _at(where, name)) from None
            except (ValueError, RecursionError, yaml.YAMLError) as exc:
                what = "JSON" if name.endswith(".json") else "YAML"
                detail = "nested too deeply" if isinstance(exc, RecursionError) else _one_line(exc)
                raise DiffError(f"is not {what}: {detail}", _at(where, name)) from None
            try:
                for part, at in _documents_where(value) if name.endswith(".yaml") else [(value, name)]:
                    _values(part, at)
                _CHECKS[name](value)
            except _Refused as exc:
                raise DiffError(str(exc), _at(where, name)) from None
            return value

        return cls(
            parse("resources.json"),
            parse("cost.json"),
            parse("policy.json"),
            [d for d in parse("manifests.yaml") if isinstance(d, dict)],
            parse("admission.json"),
        )

    @classmethod
    def empty(cls) -> Render:
        """The base of a stack the base branch does not have (or the head of one the change removes)."""
        return cls([], {}, [], [], {})

    @classmethod
    def from_folder(cls, folder: Path) -> Render:
        files = {}
        for name in FILES + OPTIONAL:
            try:
                files[name] = _read(folder / name)
            except FileNotFoundError:
                if name in OPTIONAL:
                    continue
                raise DiffError("is missing: --base takes a folder synth wrote for the same stack", folder / name) from None
            except (OSError, UnicodeDecodeError) as exc:
                raise DiffError(f"cannot be read: {getattr(exc, 'strerror', None) or exc}", folder / name) from None
        return cls.from_files(files, folder)

    def stacks(self) -> set[str]:
        """The stacks its URNs name (urn:pulumi:STACK::PROJECT::TYPE::NAME)."""
        return {urns.parse(r["urn"]).stack for r in self.resources}


def _read(path: Path) -> str:
    """A base file, only if it is a regular file synth could have written: a FIFO or device
    would block or never end, and a huge file would be read whole into memory."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise DiffError("is not a regular file: --base takes a folder synth wrote for the same stack", path)
    if info.st_size > MAX_BYTES:
        raise DiffError(f"is larger than {MAX_BYTES // 2**20} MiB: not a file synth wrote", path)
    with open(path, encoding="utf-8") as f:
        return f.read(MAX_BYTES + 1)


def base_render(folder: Path, stack: str) -> Render:
    """The --base folder, read: a folder synth wrote for the same stack (another stack's render
    would diff two different platforms)."""
    if not os.path.isdir(folder):
        raise DiffError("is not a folder: --base takes a folder synth wrote for the same stack", folder)
    base = Render.from_folder(folder)
    others = sorted(base.stacks() - {stack})
    if others:
        raise DiffError(f"is a render of stack {others[0]!r}, not {stack!r}: --base takes a folder synth wrote for "
                        "the same stack", folder / "resources.json")
    return base


def _at(where: Path | None, name: str) -> Path:
    return (where / name) if where is not None else Path(name)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


# -- resources ------------------------------------------------------------------------------


# One change: its path, the values before and after, and the names of the named-list entries
# on its path (`spec.resourceGroups[0].flavors[1]` is flavor `nvidia-l4-spot`), for the reader.
Change = tuple[str, Any, Any, tuple[str, ...]]


def _changes(before: Any, after: Any, path: str = "", names: tuple[str, ...] = ()) -> list[Change]:
    """Where two input values differ, leaf by leaf, by path (`spec.resourceGroups[0].flavors[1]
    .resources[2].nominalQuota`), as `pulumi preview --diff` shows them: objects key by key (a key
    absent and null alike), lists of objects by _list_changes, a list of plain values whole (a
    list of zones reads best as one change)."""
    if before == after:
        return []
    if isinstance(before, (dict, type(None))) and isinstance(after, (dict, type(None))):
        old, new = before or {}, after or {}
        out = []
        for key in sorted(set(old) | set(new)):
            out += _changes(old.get(key), new.get(key), f"{path}.{key}" if path else key, names)
        return out
    if isinstance(before, list) and isinstance(after, list) and any(isinstance(x, (dict, list)) for x in before + after):
        return _list_changes(before, after, path, names)
    return [(path, before, after, names)]


def _names(items: list[Any]) -> list[str] | None:
    """The names of a list whose every entry is an object with a name of its own."""
    names = [x.get("name") if isinstance(x, dict) else None for x in items]
    return names if all(isinstance(n, str) for n in names) and len(set(names)) == len(names) else None  # type: ignore[return-value]


def _list_changes(before: list[Any], after: list[Any], path: str, names: tuple[str, ...]) -> list[Change]:
    """A list of named objects (Kubernetes' named lists: containers, env, a ClusterQueue's
    flavors and resources) entry by name, so that an entry that comes or goes is one change,
    not a shift of every entry after it; an order that changes is one change of `[*].name` (a
    ClusterQueue's flavor order is the order Kueue tries them in). Any other list index by index.
    An entry's path is its index after the change (before it, for one removed)."""
    old_names, new_names = _names(before), _names(after)
    out: list[Change] = []
    if old_names is None or new_names is None:
        for i in range(max(len(before), len(after))):
            if i < len(before) and i < len(after):
                out += _changes(before[i], after[i], f"{path}[{i}]", names)
            else:
                out.append((f"{path}[{i}]", before[i] if i < len(before) else None,
                            after[i] if i < len(after) else None, names))
        return out
    if [n for n in old_names if n in new_names] != [n for n in new_names if n in old_names]:
        out.append((f"{path}[*].name", old_names, new_names, names))
    out += [(f"{path}[{i}]", before[i], None, (*names, n)) for i, n in enumerate(old_names) if n not in new_names]
    for i, name in enumerate(new_names):
        if name in old_names:
            out += _changes(before[old_names.index(name)], after[i], f"{path}[{i}]", (*names, name))
        else:
            out.append((f"{path}[{i}]", None, after[i], (*names, name)))
    return out


def _unindexed(path: str) -> str:
    """`a[0].b` as `a.b`: the tables of ForceNew and in-place inputs name no list index."""
    return re.sub(r"\[(?:\d+|\*)\]", "", path)


def _within(path: str, key: str) -> bool:
    return path == key or path.startswith((key + ".", key + "["))


def _under(path: str, keys) -> bool:
    """Whether a change at `path` touches one of `keys` (at, under or above it; an option's
    path may name list indices, the provider tables do not)."""
    paths = {path, _unindexed(path)}
    return any(_within(p, k) or _within(k, p) for k in keys if isinstance(k, str) for p in paths)


def _property_changes(before: dict, after: dict) -> tuple[list[dict[str, Any]], bool]:
    options = after.get("options") or {}
    ignored = options.get("ignoreChanges") or []
    force = list(FORCE_NEW.get(after["type"], ())) + list(options.get("replaceOnChanges") or [])
    if after["type"].startswith("kubernetes:"):
        force += KUBERNETES_FORCE_NEW
    changes = []
    for path, old, new, names in _changes(before.get("inputs") or {}, after.get("inputs") or {}):
        if _under(path, ignored):
            continue
        replaces = _under(path, force)
        change = {"path": path, "before": old, "after": new, "replaces": replaces}
        if names:
            change["names"] = list(names)
        if not replaces and after["type"] in gke_updates.UPDATES:
            update = gke_updates.update_of(after["type"], _unindexed(path))
            change["effect"], change["doc"] = update.effect, update.doc
        changes.append(change)
    return changes, any(c["replaces"] for c in changes)


def _protected(r: dict[str, Any] | None) -> bool:
    return bool(((r or {}).get("options") or {}).get("protect"))


def _resources(base: Render, head: Render) -> dict[str, Any]:
    old = {r["urn"]: r for r in base.resources}
    new = {r["urn"]: r for r in head.resources}
    out: dict[str, Any] = {"added": [], "changed": [], "replaced": [], "deleted": [], "details": {}}

    for urn, r in new.items():
        if urn not in old:
            out["added"].append(urn)
            continue
        changes, replaces = _property_changes(old[urn], r)
        if changes:
            out["replaced" if replaces else "changed"].append(urn)
            out["details"][urn] = changes
    out["deleted"] = [urn for urn in old if urn not in new]
    for key in ("added", "changed", "replaced", "deleted"):
        out[key].sort(key=lambda u: (not (_protected(old.get(u)) or _protected(new.get(u))), u))
    # What `pulumi up` refuses (pulumi/pulumi pkg/resource/deploy/step_generator.go and step.go):
    # deleting a resource protected in the state; replacing one protected in the state and in
    # the program (lifting protection and replacing in one update is allowed). Creating one, or
    # updating one in place, is not refused.
    out["protected"] = sorted(
        [u for u in out["deleted"] if _protected(old[u])]
        + [u for u in out["replaced"] if _protected(old[u]) and _protected(new[u])]
    )
    return out


# -- capacity, queues, teams, priorities ------------------------------------------------------


def _capacity(render: Render) -> dict[str, dict[str, int]]:
    """Per ResourceFlavor, the pools its nodeLabels select, as the cost and policy rules judge it.
    A fleet's clusters each have flavors of the same names selecting their own pools: each
    cluster is judged alone (gke_ai_batch/policy/rules/base.py by_cluster) and its flavors keyed `cluster/flavor`."""
    resources = [rules.Resource(r["urn"], r["type"], r["name"], r.get("inputs") or {}, False) for r in render.resources]
    out = {}
    for scope, mine in sorted(by_cluster(resources).items()):
        cluster = cluster_facts(mine)
        pools = [pool_facts(r, cluster) for r in of_type(mine, NODE_POOL)]
        for r in of_type(mine, RESOURCE_FLAVOR):
            name = dig(r.props, "metadata", "name")
            labels = dig(r.props, "spec", "nodeLabels")
            if not isinstance(name, str):
                continue
            chosen = [p for p in pools if isinstance(labels, dict) and labels and selects(labels, p)]
            out[f"{scope}/{name}" if scope else name] = {
                "pools": len(chosen),
                "slices": sum(1 for p in chosen if p.resource == catalogue.TPU_RESOURCE),
                "vms": sum(p.max_nodes or 0 for p in chosen),
                "accelerators": sum(p.accelerators or 0 for p in chosen),
            }
    return out


def _objects(render: Render, kind: str) -> list[dict[str, Any]]:
    return [d for d in render.manifests if d.get("kind") == kind and isinstance(d.get("metadata"), dict)]


def _queues(render: Render) -> dict[str, dict[str, Any]]:
    """Per ClusterQueue: its cohort and, per flavor and resource, nominal quota and the limits."""
    out = {}
    for q in _objects(render, "ClusterQueue"):
        spec = q.get("spec") if isinstance(q.get("spec"), dict) else {}
        quotas = {}
        for group in spec.get("resourceGroups") or []:
            for flavor in (group or {}).get("flavors") or []:
                for res in (flavor or {}).get("resources") or []:
                    limits = {k: res[k] for k in ("nominalQuota", "borrowingLimit", "lendingLimit") if k in res}
                    quotas[f"{flavor.get('name')}/{res.get('name')}"] = limits
        out[str(q["metadata"].get("name"))] = {"cohort": spec.get("cohortName") or spec.get("cohort"), "quotas": quotas}
    return out


def _teams(render: Render) -> dict[str, str]:
    """LocalQueue namespace/name -> its ClusterQueue."""
    return {
        f"{q['metadata'].get('namespace')}/{q['metadata'].get('name')}": str((q.get("spec") or {}).get("clusterQueue"))
        for q in _objects(render, "LocalQueue")
    }


def _priorities(render: Render) -> dict[str, Any]:
    return {
        f"{kind} {p['metadata'].get('name')}": p.get("value")
        for kind in ("PriorityClass", "WorkloadPriorityClass")
        for p in _objects(render, kind)
    }


def _changed_map(old: dict, new: dict) -> dict[str, dict[str, Any]]:
    return {k: {"before": old.get(k), "after": new.get(k)} for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)}


# -- cost and policy --------------------------------------------------------------------------


def _pool_costs(render: Render) -> dict[str, float | None]:
    return {f"{p.get('cluster')}/{p.get('pool')}": p.get("per30DaysMax") for p in (render.cost or {}).get("pools") or []}


def _cost(base: Render, head: Render) -> dict[str, Any]:
    """The total and per-pool cost before → after; not compared when a render has no cost.json
    (a base branch's synth that predates it), rather than shown as a change from nothing."""
    old_total = ((base.cost or {}).get("total") or {}).get("per30DaysMax")
    new_total = ((head.cost or {}).get("total") or {}).get("per30DaysMax")
    if base.cost is None or head.cost is None:
        return {"before": old_total, "after": new_total, "pools": {}, "compared": False}
    # Whether each total misses something unpriced: the table shows it as the report does (a
    # floor, or no price), never as a sum of $0.00.
    shown = {side: _total_cell(render.cost.get("total")) for side, render in (("before", base), ("after", head))}
    old, new = _pool_costs(base), _pool_costs(head)
    pools = _changed_map(old, new)
    for key, change in pools.items():
        # A pool of one render only appears or goes; one of both without a price has None too.
        if key not in old or key not in new:
            change["change"] = "new" if key not in old else "removed"
    return {"before": old_total, "after": new_total, "pools": pools, "compared": True, "shown": shown}


def _total_cell(total: Any) -> str:
    """A render's 30-day total as the report writes it (report/cost.py total_usd); a base render
    from before totals listed what they miss shows its figure as it is."""
    if isinstance(total, dict) and {"per30DaysMax", "unpriced", "reserved"} <= set(total):
        return total_usd(total, "per30DaysMax")
    return _usd(total.get("per30DaysMax") if isinstance(total, dict) else None)


def _findings(render: Render) -> set[tuple[str, str, str, str]]:
    return {(str(v.get("enforcement")), str(v.get("policy")), str(v.get("urn")), str(v.get("message"))) for v in render.policy}


def compute(base: Render, head: Render) -> dict[str, Any]:
    old_f, new_f = _findings(base), _findings(head)
    data = {
        "resources": _resources(base, head),
        "capacity": _changed_map(_capacity(base), _capacity(head)),
        "clusterQueues": _changed_map(_queues(base), _queues(head)),
        "teams": _changed_map(_teams(base), _teams(head)),
        "priorities": _changed_map(_priorities(base), _priorities(head)),
        "cost": _cost(base, head),
        "admission": _admission(base, head),
        "policy": {
            "new": [dict(zip(("enforcement", "policy", "urn", "message"), f)) for f in sorted(new_f - old_f)],
            "resolved": [dict(zip(("enforcement", "policy", "urn", "message"), f)) for f in sorted(old_f - new_f)],
        },
    }
    data["operations"] = operations(base, head, data["resources"])
    data["empty"] = is_empty(data)
    return data


def is_empty(data: dict[str, Any]) -> bool:
    r = data["resources"]
    return not any(r[k] for k in ("added", "changed", "replaced", "deleted")) and not any(
        data[k] for k in ("capacity", "clusterQueues", "teams", "priorities")
    ) and not _cost_changes(data["cost"]) and not (
        data["policy"]["new"] or data["policy"]["resolved"]
    ) and not (data["admission"]["workloads"] or data["admission"]["queues"])


def _cost_changes(cost: dict[str, Any]) -> bool:
    return cost["compared"] and (cost["pools"] or cost["before"] != cost["after"])


# -- admission ---------------------------------------------------------------------------------


def _admission(base: Render, head: Render) -> dict[str, Any]:
    """The admission model's answers that change (gke_ai_batch/synth/report/admission.py writes them into
    admission.json): a sample of both renders whose verdict changes, with the model's reason,
    and each ClusterQueue's largest admissible workload before → after. A sample or queue of one
    render only is an added or deleted resource, listed there."""
    if base.admission is None or head.admission is None:
        return {"compared": False, "workloads": {}, "queues": {}}
    old_w, new_w = base.admission.get("workloads") or {}, head.admission.get("workloads") or {}
    old_q, new_q = base.admission.get("queues") or {}, head.admission.get("queues") or {}
    return {
        "compared": True,
        "workloads": {k: v for k, v in _changed_map(old_w, new_w).items()
                      if k in old_w and k in new_w and _verdict(v["before"]) != _verdict(v["after"])},
        "queues": {k: v for k, v in _changed_map(old_q, new_q).items() if k in old_q and k in new_q},
    }


def _verdict(v: Any) -> tuple:
    return (v.get("admissible"), v.get("reason")) if isinstance(v, dict) else (None, None)


# The columns of the largest-workload table: accelerators first, as the report's capacity.
_RESOURCE_ORDER = (catalogue.TPU_RESOURCE, catalogue.GPU_RESOURCE, "cpu", "memory")


def _most(limits: Any) -> dict[tuple[str, str], str]:
    """admission.json's limits of one queue, (flavor, resource) -> the most it admits, without
    the zeros: a resource a flavor has none of (`nvidia.com/gpu` of a TPU flavor) is no limit a
    reviewer reads."""
    out = {}
    for key, v in (limits or {}).items() if isinstance(limits, dict) else ():
        most = v.get("most") if isinstance(v, dict) else None
        flavor, _, resource = key.partition("/")
        if most is not None and str(most) not in ("0", "0.0"):
            out[(flavor, resource)] = most if isinstance(most, str) else json.dumps(most)
    return out


def largest_table(queues: dict[str, Any]) -> list[str]:
    """Per cluster queue and flavor whose largest admissible workload changes, the most of each
    resource it covers, before → after (one value where it holds); none of the zeros."""
    rows: list[tuple[str, str, dict[str, str]]] = []
    for name, change in queues.items():
        old, new = _most(change["before"]), _most(change["after"])
        for flavor in dict.fromkeys(f for f, _ in [*new, *old]):
            cells = {}
            for key in dict.fromkeys(k for k in [*old, *new] if k[0] == flavor):
                b, a = old.get(key), new.get(key)
                cells[key[1]] = b if b == a else f"{b or DASH} → {a or DASH}"
            if any(old.get((flavor, r)) != new.get((flavor, r)) for r in cells):
                rows.append((name, flavor, cells))
    if not rows:
        return []
    seen = {r for _, _, cells in rows for r in cells}
    columns = [r for r in _RESOURCE_ORDER if r in seen] + sorted(seen - set(_RESOURCE_ORDER))
    return table(["cluster queue", "flavor", *map(code, columns)],
                 [[code(q), code(f), *(cells.get(r, "") for r in columns)] for q, f, cells in rows],
                 ["l", "l", *("r" for _ in columns)])


# -- what `pulumi up` will run ------------------------------------------------------------------


def operations(base: Render, head: Render, res: dict[str, Any]) -> list[dict[str, str]]:
    """The steps in the order Pulumi takes them: creates, updates and replacements in the order
    the program registers its resources, then deletions of what the program no longer
    registers, dependents first (pulumi/pulumi pkg/resource/deploy/step_generator.go,
    GenerateDeletes). Each names what it does to running work."""
    kinds = {u: k for k in ("added", "changed", "replaced") for u in res[k]}
    refused = set(res["protected"])
    steps = []
    for r in head.resources:
        kind = kinds.get(r["urn"])
        if kind is not None:
            steps.append(_step(kind, r, res["details"].get(r["urn"], []), r["urn"] in refused))
    old_order = [r for r in base.resources if r["urn"] in set(res["deleted"])]
    steps += [_step("deleted", r, [], r["urn"] in refused) for r in reversed(old_order)]
    return steps


def _step(kind: str, r: dict[str, Any], changes: list[dict[str, Any]], refused: bool = False) -> dict[str, str]:
    name, type_ = r["name"], r["type"]
    dbr = bool((r.get("options") or {}).get("deleteBeforeReplace"))
    op = {"added": "create", "changed": "update", "replaced": "replace", "deleted": "delete"}[kind]
    note, doc = "", ""
    if type_ == NODE_POOL:
        if kind == "added":
            note, doc = "slow: GKE provisions the pool's nodes", "pool-create"
        elif kind == "deleted":
            note, doc = "**disruptive**: GKE drains the pool's nodes; running pods are evicted", "pool-delete"
        elif kind == "replaced":
            note = ("**disruptive, capacity gap**: the old pool is deleted (pods evicted) before the new one exists"
                    if dbr else "**disruptive**: a new pool is created, then the old one deleted (pods evicted)")
            doc = "delete-before-replace" if dbr else "pool-delete"
        else:
            note, doc = _in_place(r, changes)
    elif type_ == CLUSTER and kind in ("replaced", "deleted"):
        note, doc = "**disruptive**: the cluster and all its node pools are deleted", "cluster"
    elif type_ == CLUSTER and kind == "changed":
        note, doc = _in_place(r, changes)
    elif type_ in HELM_RELEASES and kind != "deleted":
        note, doc = "Helm upgrade: the controller rolls; Helm does not upgrade CRDs of a chart's crds/ folder", "helm"
    if op == "replace" and dbr and not note:
        note, doc = "delete before replace: a gap while it is recreated", "delete-before-replace"
    if refused:
        note = "**refused while protected**" + (f"; once lifted, {note}" if note else "")
    return {"operation": op, "urn": r["urn"], "type": type_, "name": name, "note": note, "doc": DOCS.get(doc, doc)}


def _in_place(r: dict[str, Any], changes: list[dict[str, Any]]) -> tuple[str, str]:
    """The note of an in-place update of a cluster or node pool: its most disruptive field's
    class (gke_ai_batch/domain/gke_updates.py), naming the fields of that class."""
    update = gke_updates.worst(gke_updates.update_of(r["type"], _unindexed(c["path"])) for c in changes)
    fields = ", ".join(code(c["path"]) for c in changes if c.get("effect") == update.effect)
    if update.effect == gke_updates.RECREATES_NODES:
        which = "every node of every node pool" if r["type"] == CLUSTER else "every node of the pool"
        return f"**disruptive**: GKE recreates {which} ({fields}); running pods stop", update.doc
    if update.effect == gke_updates.CONTROL_PLANE:
        location = (r.get("inputs") or {}).get("location")
        zonal = isinstance(location, str) and regions.ZONE_RX.fullmatch(location) is not None
        return ((f"**control plane restarts** ({fields}): a zonal cluster's Kubernetes API is unavailable for minutes"
                 if zonal else f"slow: the control plane restarts ({fields}), one replica at a time (regional: the API stays up)"),
                update.doc)
    return "in place: nodes and the control plane keep running", ""


# -- diff.md ----------------------------------------------------------------------------------


def _short(urn: str) -> str:
    parsed = urns.parse(urn)
    return f"{parsed.name} ({parsed.type})"


# A table cell's value, at most this many characters.
WIDTH = 80
# How much of what two long values share is shown before the first character they differ in.
CONTEXT = 20


def _value(v: Any) -> str:
    return _cells(v, v)[0] if v is not None else DASH


def _cells(before: Any, after: Any) -> tuple[str, str]:
    """Two cells, which differ wherever the values do: two long values are shown from a little
    before their first difference (a dashboard's JSON changes past its first 80 characters),
    and values whose text is the same (`1` and `"1"`) as JSON."""
    texts = [None if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in (before, after)]
    if texts[0] == texts[1] and before != after:
        texts = [None if v is None else json.dumps(v, sort_keys=True) for v in (before, after)]
    b, a = texts
    if b is not None and a is not None and max(len(b), len(a)) > WIDTH:
        same = len(os.path.commonprefix([b, a]))
        start = max(0, same - CONTEXT)
        b, a = (("…" if start else "") + x[start:] for x in (b, a))
    return _cut(b), _cut(a)


def _cut(text: str | None) -> str:
    if text is None:
        return DASH
    return code(text if len(text) <= WIDTH else text[: WIDTH - 1] + "…")


def _price(pool: dict[str, Any], side: str) -> str:
    """A pool's cost on one side: none where the pool is not there, "no price" where it is but
    cost.json could not price it."""
    absent = pool.get("change") == ("new" if side == "before" else "removed")
    return DASH if absent else "no price" if pool[side] is None else _usd(pool[side])


def _finding_subject(urn: str) -> str:
    try:
        return _short(urn)
    except urns.UrnError:  # a stack-level finding
        return urn


def _usd(v: Any) -> str:
    return DASH if v is None else f"${v:,.2f}"


def _delta(before: Any, after: Any, change: str | None = None) -> str:
    if change:
        return change
    if isinstance(before, (int, float)) and isinstance(after, (int, float)):
        d = after - before
        return f"{'+' if d >= 0 else '−'}{abs(d):,.2f}" if isinstance(d, float) else f"{d:+d}"
    return ""


def _said(verdict: Any) -> str:
    if not isinstance(verdict, dict):
        return DASH
    return "✅ admissible" if verdict.get("admissible") else f"❌ never: {verdict.get('reason')}"


def _effect(change: dict[str, Any]) -> str:
    effect = change.get("effect") or gke_updates.IN_PLACE
    if effect == gke_updates.IN_PLACE:
        return effect
    return f"**{effect}**" + (f" ([docs]({change['doc']}))" if change.get("doc") else "")


def markdown(stack: str, data: dict[str, Any]) -> str:
    lines = [f"## `{stack}`: changes against the base render", ""]
    if data.get("newStack"):
        lines += ["**New stack:** the base branch has no render of it; everything below is created.", ""]
    if data.get("removedStack"):
        return "\n".join(lines + _removed(data)) + "\n"
    cost, adm = data["cost"], data["admission"]
    if data["empty"]:
        return "\n".join(lines + ["No changes: the render matches the base render.", *_uncompared(cost, adm), ""])
    res = data["resources"]
    counts = ", ".join(f"{len(res[k])} {k}" for k in ("added", "changed", "replaced", "deleted") if res[k])
    if cost["compared"]:
        lines.append(f"**Resources:** {counts or 'none changed'}. **Cost** per 30 days at maximum size: "
                     f"{_usd(cost['before'])} → {_usd(cost['after'])}.")
    else:
        lines.append(f"**Resources:** {counts or 'none changed'}. "
                     "Cost is not compared: the base render has no `cost.json` (written since this diff).")
    if res["protected"]:
        lines += ["", f"**Protected resources deleted or replaced:** {', '.join(code(_short(u)) for u in res['protected'])}: "
                  "`pulumi up` refuses to delete or replace them until protection is lifted "
                  "(`pulumi state unprotect <urn>`, in its own reviewed change)."]
    if data["operations"]:
        rows = [[str(i), s["operation"], code(_short(s["urn"])), s["note"] + (f" ([docs]({s['doc']}))" if s["doc"] else "")]
                for i, s in enumerate(data["operations"], 1)]
        lines += ["", "### What `pulumi up` will do", "", *table(["#", "operation", "resource", "effect"], rows)]
    if res["details"]:
        rows = []
        for kind in ("replaced", "changed"):
            for urn in res[kind]:
                for c in res["details"][urn]:
                    named = f" ({', '.join(map(code, c['names']))})" if c.get("names") else ""
                    rows.append([code(_short(urn)), code(c["path"]) + named, *_cells(c["before"], c["after"]),
                                 "**replaces**" if c["replaces"] else _effect(c)])
        lines += ["", "### Properties that change", "", *table(["resource", "property", "before", "after", "effect"], rows)]
    if data["capacity"]:
        rows = []
        for name, c in data["capacity"].items():
            b, a = c["before"] or {}, c["after"] or {}
            rows.append([code(name)] + [f"{b.get(k, DASH)} → {a.get(k, DASH)}" for k in ("slices", "vms", "accelerators")])
        lines += ["", "### Capacity per flavor", "", *table(["flavor", "slices", "VMs", "chips / GPUs"], rows)]
    if data["clusterQueues"]:
        rows = []
        for name, q in data["clusterQueues"].items():
            b, a = q["before"] or {}, q["after"] or {}
            if b.get("cohort") != a.get("cohort"):
                rows.append([code(name), "cohort", _value(b.get("cohort")), _value(a.get("cohort"))])
            bq, aq = b.get("quotas") or {}, a.get("quotas") or {}
            for key in sorted(set(bq) | set(aq)):
                for limit in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                    x, y = (bq.get(key) or {}).get(limit), (aq.get(key) or {}).get(limit)
                    # A flavor that comes or goes lists every covered resource, at 0 where it has none.
                    if x != y and not (limit == "nominalQuota" and {x, y} <= {None, 0, "0"}):
                        rows.append([code(name), f"{code(key)} {limit}", *_cells(x, y)])
            if not b or not a:
                rows.append([code(name), "queue", "—" if not b else "exists", "removed" if not a else "added"])
        lines += ["", "### Cluster queues", "", *table(["cluster queue", "what", "before", "after"], rows)]
    if adm["workloads"]:
        rows = [[code(k), _said(v["before"]), _said(v["after"])] for k, v in adm["workloads"].items()]
        lines += ["", "### Admission verdicts that change", "", *table(["sample", "before", "after"], rows)]
    largest = largest_table(adm["queues"])
    if largest:
        lines += ["", "### Largest workload a cluster queue can admit", "",
                  "Per flavor whose limit changes: its nominal quota plus what the cohort can lend, within "
                  "`borrowingLimit` (`admission.json`); a resource the flavor has none of is left out.", "", *largest]
    if not adm["compared"]:
        lines += ["", "Admission verdicts are not compared: the base render has no `admission.json` (written since this diff)."]
    for key, title, head in (("teams", "Teams (LocalQueue → ClusterQueue)", "local queue"), ("priorities", "Priorities", "class")):
        if data[key]:
            rows = [[code(k), _value(v["before"]), _value(v["after"])] for k, v in data[key].items()]
            lines += ["", f"### {title}", "", *table([head, "before", "after"], rows)]
    if _cost_changes(cost):
        rows = [[code(k), _price(v, "before"), _price(v, "after"), _delta(v["before"], v["after"], v.get("change"))]
                for k, v in data["cost"]["pools"].items()]
        c = data["cost"]
        rows.append(["**total**", c["shown"]["before"], c["shown"]["after"], _delta(c["before"], c["after"])])
        lines += ["", "### Cost per 30 days at maximum size (USD, list price)", "",
                  *table(["pool", "before", "after", "change"], rows, ["l", "r", "r", "r"])]
    for key, title in (("new", "New policy findings"), ("resolved", "Resolved policy findings")):
        if data["policy"][key]:
            lines += ["", f"### {title}", ""] + [
                f"- {v['enforcement']}: {v['policy']}: {code(_finding_subject(v['urn']))}: {v['message']}"
                for v in data["policy"][key]]
    return "\n".join(lines) + "\n"


def _uncompared(cost: dict[str, Any], adm: dict[str, Any]) -> list[str]:
    """What an empty diff could not compare: a base rendered before synth wrote these files."""
    missing = [name for name, part in (("cost.json", cost), ("admission.json", adm)) if not part["compared"]]
    if not missing:
        return []
    what = {1: "Cost is" if missing == ["cost.json"] else "Admission verdicts are", 2: "Cost and admission verdicts are"}
    return [f"{what[len(missing)]} not compared: the base render has no {' or '.join(map(code, missing))} (written since this diff)."]


def _removed(data: dict[str, Any]) -> list[str]:
    """A stack the change removes: what its base render had. Removing a stack file destroys
    nothing (the deploy workflow skips a listed stack without one), so no operations."""
    res, cost = data["resources"], data["cost"]
    lines = [f"**Removed stack:** the change deletes its stack file. Its {len(res['deleted'])} resources stay deployed "
             "until the stack is destroyed (`pulumi destroy`, then `pulumi stack rm`); the base render had:", "",
             f"**Cost** per 30 days at maximum size: {_usd(cost['before'])} (list price)."]
    rows = [[code(k), _usd(v["before"])] for k, v in cost["pools"].items() if v["before"] is not None]
    if rows:
        lines += ["", *table(["pool", "per 30 days at maximum size"], rows, ["l", "r"])]
    rows = [[code(name)] + [str((c["before"] or {}).get(k, DASH)) for k in ("slices", "vms", "accelerators")]
            for name, c in data["capacity"].items()]
    if rows:
        lines += ["", "### Capacity per flavor", "", *table(["flavor", "slices", "VMs", "chips / GPUs"], rows)]
    return lines


def files(stack: str, base: Render, head: Render, new: bool = False, removed: bool = False) -> dict[str, str]:
    data = compute(base, head)
    if new:
        data["newStack"] = True
    if removed:
        data["removedStack"], data["operations"] = True, []
    return {"diff.md": markdown(stack, data), "diff.json": json.dumps(data, indent=2, sort_keys=True) + "\n"}
