"""Regenerate schema/upstream-extra/cloud.google.com/v1/ComputeClass.json from GKE's ComputeClass CRD.

    python scripts/vendor_computeclass.py SOURCE

SOURCE is a checkout of github.com/GoogleCloudPlatform/compute-class-api (its
cloud.google.com_computeclasses.yaml, the controller-gen output of api/cloud.google.com/v1/types.go,
is read) or that YAML itself. This script downloads nothing.

The v1 openAPIV3Schema is kept as upstream writes it, except that only the fields below remain
(the ones this project emits, gke_ai_batch/plan/computeclasses.py, and those its rules are
about): the test helper rejects every other field, as `kubectl apply --validate=strict` would a
field the CRD lacks, so a new field is added here before it is emitted. A CEL rule is dropped
with the fields it reads: each dropped rule only constrains a field that is gone, so on what
remains it holds. Without the cut, every one of the CRD's ~70 rules would need a Python twin in
tests/support/manifests.py BUILTIN_CEL_RULES.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "schema" / "upstream-extra" / "cloud.google.com" / "v1" / "ComputeClass.json"
CRD_FILE = "cloud.google.com_computeclasses.yaml"

# The fields kept: a name maps to the fields kept under it (an array's under its items), or to
# None to keep the node whole.
PRIORITY = {
    "machineFamily": None, "machineType": None, "minCores": None, "minMemoryGb": None, "spot": None,
    "flexStart": {"enabled": None},
    "gpu": {"type": None, "count": None, "driverVersion": None},
    "tpu": {"type": None, "count": None, "topology": None},
    "reservations": {
        "affinity": None,
        "specific": {"name": None, "project": None, "zones": None, "reservationBlock": None},
    },
    "maxRunDurationSeconds": None, "nodeLabels": None, "taints": None,
    "storage": {"localSSDCount": None},
}
KEEP = {
    "apiVersion": None, "kind": None, "metadata": None,
    "spec": {
        "description": None, "whenUnsatisfiable": None,
        "nodePoolAutoCreation": {"enabled": None},
        "priorities": PRIORITY,
    },
}


def property_names(node: Any) -> set[str]:
    """Every property name declared at or below this schema node."""
    out: set[str] = set()
    if isinstance(node, dict):
        out |= set(node.get("properties") or ())
        for child in (node.get("properties") or {}).values():
            out |= property_names(child)
        out |= property_names(node.get("items"))
    return out


def prune(node: dict[str, Any], keep: dict[str, Any]) -> dict[str, Any]:
    node = dict(node)
    if node.get("type") == "array":
        node["items"] = prune(node["items"], keep)
        return node
    props = node.get("properties") or {}
    missing = set(keep) - set(props)
    if missing:
        raise SystemExit(f"the CRD has no {sorted(missing)} here: update KEEP")
    kept = {k: (v if keep[k] is None else prune(v, keep[k])) for k, v in props.items() if k in keep}
    gone = property_names(node) - property_names({"properties": kept})
    node["properties"] = kept
    if "required" in node:
        node["required"] = [r for r in node["required"] if r in kept]
    rules = [r for r in node.get("x-kubernetes-validations") or () if not reads_any(r["rule"], gone)]
    if rules:
        node["x-kubernetes-validations"] = rules
    else:
        node.pop("x-kubernetes-validations", None)
    return node


def reads_any(rule: str, names: set[str]) -> bool:
    return any(re.search(rf"\.{re.escape(n)}\b", rule) for n in names)


def schema_of(source: Path) -> dict[str, Any]:
    path = source / CRD_FILE if source.is_dir() else source
    crd = yaml.safe_load(path.read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    return prune(version["schema"]["openAPIV3Schema"], KEEP)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help=f"a compute-class-api checkout, or its {CRD_FILE}")
    args = parser.parse_args(argv)
    TARGET.write_text(json.dumps(schema_of(args.source), indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
