"""The diff of a render against a base render of the same stack (`python -m synth STACK --base DIR`):
diff.md and diff.json, beside the render.

Everything here is read from the files synth wrote (resources.json, cost.json, policy.json,
manifests.yaml) of both renders: the replacement rules are synth/report/replacement.py's, the
recorded pools and flavors are parsed by the admission model's functions (gke_ai_batch/model/facts.py) and
the prices are cost.json's, so the diff says what the report and the policy pack say."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.domain import catalogue, gke_updates, regions
from policy import rules
from policy.rules.base import CLUSTER, HELM_RELEASES, NODE_POOL, RESOURCE_FLAVOR, by_cluster, dig, of_type
from gke_ai_batch.model.facts import cluster_facts, pool_facts, selects

from . import yamlread
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


class _Shape(Exception):
    """A parsed file that departs from what synth writes, at `where`."""

    def __init__(self, where: str, kind: str):
        super().__init__(f"{where} is not {'an' if kind[0] in 'aeiou' else 'a'} {kind} as synth writes it")


_KINDS = {dict: "object", list: "list", str: "string"}


def _expect(value: Any, kind: type, where: str, optional: bool = False) -> Any:
    if (value is None and optional) or isinstance(value, kind):
        return value
    raise _Shape(where, _KINDS[kind])


def _number(value: Any, where: str) -> None:
    """A price: a finite number or null (cost.json writes null for a pool it cannot price)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise _Shape(where, "number")


def _check_resources(value: Any) -> None:
    for i, r in enumerate(_expect(value, list, "resources.json")):
        where = f"resources.json[{i}]"
        _expect(r, dict, where)
        for key in ("urn", "type", "name"):
            _expect(r.get(key), str, f"{where}.{key}")
        for key in ("inputs", "options"):
            _expect(r.get(key), dict, f"{where}.{key}", optional=True)


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
                    value = json.loads(files[name], parse_constant=_no_constant)
                else:
                    value = _yaml_documents(files[name])
                _CHECKS[name](value)
            except (ValueError, RecursionError, yaml.YAMLError) as exc:
                what = "JSON" if name.endswith(".json") else "YAML"
                detail = "nested too deeply" if isinstance(exc, RecursionError) else _one_line(exc)
                raise DiffError(f"is not {what}: {detail}", _at(where, name)) from None
            except _Shape as exc:
                raise DiffError(str(exc), _at(where, name)) from None
            except yamlread.YamlError as exc:
                [problem] = exc.problems
                why = "is not YAML: nested too deeply" if problem.rule == "yaml.depth" else f"is refused: line {problem.line}: {problem.message}"
                raise DiffError(why, _at(where, name)) from None
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
        return {r["urn"].split("::")[0].split(":")[-1] for r in self.resources if r["urn"].startswith("urn:pulumi:")}


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


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf paths of a mapping; lists are compared whole, as a provider compares a block list."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _under(path: str, keys) -> bool:
    return any(path == k or path.startswith(k + ".") or k.startswith(path + ".") for k in keys)


def _property_changes(before: dict, after: dict) -> tuple[list[dict[str, Any]], bool]:
    options = after.get("options") or {}
    ignored = options.get("ignoreChanges") or []
    old, new = _flatten(before.get("inputs") or {}), _flatten(after.get("inputs") or {})
    force = list(FORCE_NEW.get(after["type"], ())) + list(options.get("replaceOnChanges") or [])
    if after["type"].startswith("kubernetes:"):
        force += KUBERNETES_FORCE_NEW
    changes = []
    for path in sorted(set(old) | set(new)):
        if old.get(path) == new.get(path) or _under(path, ignored):
            continue
        replaces = _under(path, force)
        change = {"path": path, "before": old.get(path), "after": new.get(path), "replaces": replaces}
        if not replaces and after["type"] in gke_updates.UPDATES:
            update = gke_updates.update_of(after["type"], path)
            change["effect"], change["doc"] = update.effect, update.doc
        changes.append(change)
    return changes, any(c["replaces"] for c in changes)


def _resources(base: Render, head: Render) -> dict[str, Any]:
    old = {r["urn"]: r for r in base.resources}
    new = {r["urn"]: r for r in head.resources}
    out: dict[str, Any] = {"added": [], "changed": [], "replaced": [], "deleted": [], "details": {}}

    def protected(urn: str) -> bool:
        return any(((x.get(urn) or {}).get("options") or {}).get("protect") for x in (old, new))

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
        out[key].sort(key=lambda u: (not protected(u), u))
    out["protected"] = sorted(u for u in set(old) | set(new) if protected(u) and u not in _unchanged(out, old, new))
    return out


def _unchanged(out: dict, old: dict, new: dict) -> set[str]:
    moved = {u for k in ("added", "changed", "replaced", "deleted") for u in out[k]}
    return (set(old) | set(new)) - moved


# -- capacity, queues, teams, priorities ------------------------------------------------------


def _capacity(render: Render) -> dict[str, dict[str, int]]:
    """Per ResourceFlavor, the pools its nodeLabels select, as the cost and policy rules judge it.
    A fleet's clusters each have flavors of the same names selecting their own pools: each
    cluster is judged alone (policy/rules/base.py by_cluster) and its flavors keyed `cluster/flavor`."""
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
    return {"before": old_total, "after": new_total, "pools": _changed_map(_pool_costs(base), _pool_costs(head)),
            "compared": True}


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
    """The admission model's answers that change (synth/report/admission.py writes them into
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


def _largest(limits: Any) -> str:
    if not isinstance(limits, dict):
        return DASH
    return ", ".join(f"{code(k)} {v.get('most')}" for k, v in sorted(limits.items()) if isinstance(v, dict)) or DASH


# -- what `pulumi up` will run ------------------------------------------------------------------


def operations(base: Render, head: Render, res: dict[str, Any]) -> list[dict[str, str]]:
    """The steps in the order Pulumi takes them: creates, updates and replacements in the order
    the program registers its resources, then deletions of what the program no longer
    registers, dependents first (pulumi/pulumi pkg/resource/deploy/step_generator.go,
    GenerateDeletes). Each names what it does to running work."""
    kinds = {u: k for k in ("added", "changed", "replaced") for u in res[k]}
    steps = []
    for r in head.resources:
        kind = kinds.get(r["urn"])
        if kind is not None:
            steps.append(_step(kind, r, res["details"].get(r["urn"], [])))
    old_order = [r for r in base.resources if r["urn"] in set(res["deleted"])]
    steps += [_step("deleted", r, []) for r in reversed(old_order)]
    return steps


def _step(kind: str, r: dict[str, Any], changes: list[dict[str, Any]]) -> dict[str, str]:
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
    return {"operation": op, "urn": r["urn"], "type": type_, "name": name, "note": note, "doc": DOCS.get(doc, doc)}


def _in_place(r: dict[str, Any], changes: list[dict[str, Any]]) -> tuple[str, str]:
    """The note of an in-place update of a cluster or node pool: its most disruptive field's
    class (gke_ai_batch/domain/gke_updates.py), naming the fields of that class."""
    update = gke_updates.worst(gke_updates.update_of(r["type"], c["path"]) for c in changes)
    fields = ", ".join(f"`{c['path']}`" for c in changes if c.get("effect") == update.effect)
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
    return urn.split("::")[-1] + f" ({urn.split('::')[-2].split('$')[-1]})"


def _value(v: Any) -> str:
    if v is None:
        return DASH
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return code(text if len(text) <= 80 else text[:77] + "…")


def _usd(v: Any) -> str:
    return DASH if v is None else f"${v:,.2f}"


def _delta(before: Any, after: Any) -> str:
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
        lines += ["", f"**Protected resources change:** {', '.join(code(_short(u)) for u in res['protected'])}: "
                  "`pulumi up` refuses to delete or replace them until protection is lifted."]
    if data["operations"]:
        rows = [[str(i), s["operation"], code(_short(s["urn"])), s["note"] + (f" ([docs]({s['doc']}))" if s["doc"] else "")]
                for i, s in enumerate(data["operations"], 1)]
        lines += ["", "### What `pulumi up` will do", "", *table(["#", "operation", "resource", "effect"], rows)]
    if res["details"]:
        rows = []
        for kind in ("replaced", "changed"):
            for urn in res[kind]:
                for c in res["details"][urn]:
                    rows.append([code(_short(urn)), code(c["path"]), _value(c["before"]), _value(c["after"]),
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
                    if x != y:
                        rows.append([code(name), f"{code(key)} {limit}", _value(x), _value(y)])
            if not b or not a:
                rows.append([code(name), "queue", "—" if not b else "exists", "removed" if not a else "added"])
        lines += ["", "### Cluster queues", "", *table(["cluster queue", "what", "before", "after"], rows)]
    if adm["workloads"] or adm["queues"]:
        lines += ["", "### Admission verdicts that change", ""]
        if adm["workloads"]:
            rows = [[code(k), _said(v["before"]), _said(v["after"])] for k, v in adm["workloads"].items()]
            lines += table(["sample", "before", "after"], rows)
        if adm["queues"]:
            rows = [[code(k), _largest(v["before"]), _largest(v["after"])] for k, v in adm["queues"].items()]
            lines += ["", *table(["cluster queue", "largest workload it can admit, before", "after"], rows)]
    elif not adm["compared"]:
        lines += ["", "Admission verdicts are not compared: the base render has no `admission.json` (written since this diff)."]
    for key, title, head in (("teams", "Teams (LocalQueue → ClusterQueue)", "local queue"), ("priorities", "Priorities", "class")):
        if data[key]:
            rows = [[code(k), _value(v["before"]), _value(v["after"])] for k, v in data[key].items()]
            lines += ["", f"### {title}", "", *table([head, "before", "after"], rows)]
    if _cost_changes(cost):
        rows = [[code(k), _usd(v["before"]), _usd(v["after"]), _delta(v["before"], v["after"])] for k, v in data["cost"]["pools"].items()]
        c = data["cost"]
        rows.append(["**total**", _usd(c["before"]), _usd(c["after"]), _delta(c["before"], c["after"])])
        lines += ["", "### Cost per 30 days at maximum size (USD, list price)", "",
                  *table(["pool", "before", "after", "change"], rows, ["l", "r", "r", "r"])]
    for key, title in (("new", "New policy findings"), ("resolved", "Resolved policy findings")):
        if data["policy"][key]:
            lines += ["", f"### {title}", ""] + [
                f"- {v['enforcement']}: {v['policy']}: {code(_short(v['urn']) if '::' in v['urn'] else v['urn'])}: {v['message']}"
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
