"""Facts once taken from secondary sources, now read from upstream (docs/verification.md): each
test fails if the fact slides back to what the secondary source said."""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

from conftest import ROOT, synth_config
from support import manifests as M
from support.diagnostics import assert_names

CLASS = {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "c"},
         "spec": {"priorities": [{"machineType": "n2-standard-8"}], "whenUnsatisfiable": "DoNotScaleUp"}}


def _with_priority(**fields):
    out = copy.deepcopy(CLASS)
    out["spec"]["priorities"][0].update(fields)
    return out


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("cel", ["celpy", "builtin"])
def test_compute_class_schema_is_the_upstream_crds(cel):
    """GKE's own CRD (GoogleCloudPlatform/compute-class-api) takes what the reference page left
    out (AnyThenFail, autoinstall-disabled) and refuses what it did not say (a taint without an
    effect, a value its pattern rejects, the reserved 'ek' family); both CEL engines agree."""
    v = M.Validator(cel=cel)
    assert v.validate(CLASS) == []
    taken = (
        _with_priority(reservations={"affinity": "AnyThenFail"}),
        _with_priority(machineType="g2-standard-8", gpu={"type": "nvidia-l4", "count": 1,
                                                         "driverVersion": "autoinstall-disabled"}),
    )
    for manifest in taken:
        assert v.validate(manifest) == [], manifest["spec"]["priorities"]
    refused = (
        (_with_priority(taints=[{"key": "k", "value": "v1"}]), "effect"),
        (_with_priority(taints=[{"key": "k", "value": "-v", "effect": "NoSchedule"}]), "does not match"),
        ({**copy.deepcopy(CLASS), "spec": {**CLASS["spec"], "priorities": [{"machineFamily": "ek"}]}},
         "MachineFamily cannot be equal to 'ek'"),
        (_with_priority(machineType="ek-standard-8"), "MachineType cannot start with 'ek' prefix"),
    )
    for manifest, words in refused:
        problems = v.validate(manifest)
        assert any(words in p for p in problems), (manifest["spec"]["priorities"], problems)


def test_vendoring_keeps_the_fields_emitted_and_drops_rules_on_fields_cut(tmp_path):
    """scripts/vendor_computeclass.py keeps the listed fields verbatim, and a CEL rule only while
    every field it reads is kept (a rule on a dropped field would refuse nothing that remains)."""
    vendor = _script("vendor_computeclass")
    keep_rule = {"rule": "!(has(self.machineFamily) && has(self.machineType))", "message": "both"}
    cut_rule = {"rule": "has(self.podFamily) ? has(self.spot) : true", "message": "pod family"}
    priority = {"type": "object", "x-kubernetes-validations": [keep_rule, cut_rule],
                "properties": {name: {"type": "string"} for name in
                               ("machineFamily", "machineType", "podFamily")}}
    crd = {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
        "type": "object", "required": ["spec", "status"],
        "properties": {"spec": {"type": "object", "properties": {
            "priorities": {"type": "array", "items": priority}}}, "status": {"type": "object"}}}}}]}}
    source = tmp_path / vendor.CRD_FILE
    source.write_text(json.dumps(crd))
    vendor.KEEP = {"spec": {"priorities": {"machineFamily": None, "machineType": None}}}
    out = vendor.schema_of(tmp_path)
    assert out["required"] == ["spec"]
    item = out["properties"]["spec"]["properties"]["priorities"]["items"]
    assert sorted(item["properties"]) == ["machineFamily", "machineType"]
    assert item["x-kubernetes-validations"] == [keep_rule]
    vendor.KEEP = {"spec": {"priorities": {"gpu": None}}}
    with pytest.raises(SystemExit, match="gpu"):
        vendor.schema_of(tmp_path)


def test_lustre_refusal_offers_the_regions_of_the_current_locations_table(tmp_path):
    """Managed Lustre's current locations table adds australia-southeast2 and europe-central2
    (read from its zh-TW and ko translations): a cluster where Lustre is not offered is refused,
    at the key, with those among the regions it is offered in."""
    from test_checkpoints import BASE, REFUSALS, config

    [(change, path, words)] = [r[1:] for r in REFUSALS if r[0] == "lustre where Managed Lustre is not offered"]
    cfg = config(BASE)
    change(cfg)
    result = synth_config(tmp_path, cfg)
    assert result.exit_code == 2, result.error
    for text in (words, "australia-southeast2,", "europe-central2,"):
        assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, text)


def test_on_demand_v6e_quota_names_its_metric():
    """v6e's on-demand chips are the TPUS_PER_TPU_FAMILY quota (Cloud TPU docs v6e-intro): the
    report names the metric beside the console's name, so it can be found by either."""
    from test_report_quota import to_request

    sums = to_request("tpu-hotswap")
    assert sums[("us-east5", "TPUs per TPU family (tpu_family: CT6E) (`TPUS_PER_TPU_FAMILY`)")] == 2 * 4 * 4
