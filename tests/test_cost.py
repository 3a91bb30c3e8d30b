"""What a stack costs: the vendored price table against the catalog rows it came from, cost.json
and the report's Cost table for every shipped stack, gke-ai-batch:prices overrides, the
stack-budget policy, and no price (with the reason) where the table has none."""

from __future__ import annotations

import csv
import importlib.util
import json

import pytest
from conftest import ROOT, STACKS, base_config, synth_config, synth_stack

from gke_ai_batch import synth
from gke_ai_batch.domain import price_table, pricing

FIXTURE = ROOT / "tests" / "fixtures" / "skypilot_gcp_vms_rows.csv"
# The skypilot-catalog commit the fixture's rows were copied from (catalogs/v8/gcp/vms.csv).
CATALOG_COMMIT = "006059e0f18acb1341e22a27751e9f80df6ba92f"
# The rows of Google's Cloud Billing Catalog, as exported in Cyclenerd/google-cloud-pricing-cost-calculator
# pricing.yml at this commit (generated 2026-08-20), that the table is made from.
BILLING_FIXTURE = ROOT / "tests" / "fixtures" / "billing_pricing_rows.yml"
BILLING_COMMIT = "dac31281f2a4575f0a8bff20ac04fc71a5ff2190"
POOL_KEYS = {"pool", "capacity", "unit", "unitPrice", "perHourMax", "per30DaysMax"}


def _refresh():
    spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "scripts" / "refresh_prices.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(accelerator: str = "", machine: str = "", region: str = "us-central1") -> dict[str, str]:
    with FIXTURE.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Region"] == region
                and (r["AcceleratorName"] == accelerator if accelerator else r["InstanceType"] == machine)]
    assert rows, (accelerator, machine, region)
    return rows[0]


def test_tpu_v6e_price_is_the_catalog_row_per_chip():
    # tpu-v6e-8: 8 chips (v6e slices are named by chips).
    row = _row("tpu-v6e-8")
    on_demand, spot, source = price_table.PRICES[("tpu", "v6e", "us-central1")][:3]
    assert source == "skypilot"
    assert on_demand == pytest.approx(float(row["Price"]) / 8) == pytest.approx(2.7)
    assert spot == pytest.approx(float(row["SpotPrice"]) / 8)


def test_tpu_v5p_price_is_the_catalog_row_per_chip():
    # tpu-v5p-5120: 5120 TensorCores, two per v5p chip, so 2560 chips.
    row = _row("tpu-v5p-5120")
    on_demand, spot = price_table.PRICES[("tpu", "v5p", "us-central1")][:2]
    assert on_demand == pytest.approx(float(row["Price"]) / 2560) == pytest.approx(4.2)
    assert spot == pytest.approx(float(row["SpotPrice"]) / 2560, abs=1e-6)


def test_h100_machine_price_is_googles_whole_machine_row():
    # Google bills a3-highgpu-8g whole (8 H100s and 6 TB of Local SSD included): $88.49 per hour in
    # us-central1 in the Cloud Billing Catalog export of 2026-08-20, not the catalog's VM row plus 8 GPUs.
    vm, gpus = _row(machine="a3-highgpu-8g"), _row("H100")
    cost = pricing.price_pool(pricing.PoolShape("h100", "us-central1", "a3-highgpu-8g", "on-demand", 0, 2,
                                                gpu_type="nvidia-h100-80gb", gpus_per_node=8))
    assert cost.unit == "node-hour"
    assert cost.unit_price == pytest.approx(88.49, abs=0.005)
    assert float(vm["Price"]) + float(gpus["Price"]) == pytest.approx(43.07, abs=0.005)  # what the catalog rows say
    assert cost.per_30_days_max == pytest.approx(cost.unit_price * 2 * 720, abs=0.01)


def test_vendored_table_is_what_the_refresh_script_makes_of_the_rows(tmp_path):
    out = tmp_path / "price_table.py"
    assert _refresh().main([str(FIXTURE), "--commit", CATALOG_COMMIT, "--billing", str(BILLING_FIXTURE),
                            "--billing-commit", BILLING_COMMIT, "--catalog-date", price_table.SOURCE_DATES["skypilot"],
                            "--date", price_table.DATE, "--out", str(out)]) == 0
    assert (ROOT / "gke_ai_batch" / "domain" / "price_table.py").read_text() == out.read_text()
    assert CATALOG_COMMIT in price_table.SOURCE and BILLING_COMMIT in price_table.SOURCE


def test_refresh_script_refuses_a_path_that_is_no_catalog(tmp_path, capsys):
    assert _refresh().main([str(tmp_path), "--commit", CATALOG_COMMIT, "--billing", str(BILLING_FIXTURE),
                            "--billing-commit", BILLING_COMMIT, "--out", str(tmp_path / "t.py")]) == 2
    assert "catalogs/v8/gcp/vms.csv" in capsys.readouterr().err
    assert not (tmp_path / "t.py").exists()


def test_a_region_the_table_lacks_gives_the_reason_not_a_number():
    cost = pricing.price_pool(pricing.PoolShape("sys", "us-central2", "e2-standard-4", "on-demand", 1, 3))
    assert cost.unit_price is None and cost.per_hour_max is None and cost.per_30_days_max is None
    assert cost.reason == f"the price table ({price_table.DATE}) has no machine price for e2-standard-4 in us-central2"
    assert cost.as_json()["unitPrice"] is None and cost.as_json()["reason"] == cost.reason


def test_reservation_is_paid_by_the_reservation_with_its_size():
    cost = pricing.price_pool(pricing.PoolShape("v5p", "us-central1", "ct5p-hightpu-4t", "reservation", 16, 16,
                                                tpu_version="v5p", chips_per_node=4, reservation="r1"))
    assert cost.unit_price is None and cost.reason == "paid by the reservation r1: 16 nodes, 64 chips"


@pytest.mark.parametrize("stack", STACKS)
def test_every_render_writes_cost_json_and_a_cost_table(stack):
    result = synth_stack(stack)
    files = synth.output_files(result)
    data = json.loads(files["cost.json"])
    assert data["table"] == {"date": price_table.DATE, "source": price_table.SOURCE}
    for pool in data["pools"]:
        assert POOL_KEYS <= set(pool), pool
        assert pool["unit"] in ("chip-hour", "node-hour", pricing.QUOTA_HOUR)
        assert (pool["unitPrice"] is None) == ("reason" in pool), pool
    report = files["report.md"]
    assert "### Cost" in report and f"price table of {price_table.DATE}" in report
    assert price_table.SPOT_NOTE in report  # the spot figures' dates, and that spot prices move daily
    assert "| **total** |" in report
    assert data["total"]["per30DaysMax"] == pytest.approx(sum(p["per30DaysMax"] or 0 for p in data["pools"]), abs=0.05)


def test_prod_prices_tpus_per_chip_and_reservations_as_paid():
    data = json.loads(synth.output_files(synth_stack("prod"))["cost.json"])
    pools = {p["pool"]: p for p in data["pools"]}
    assert pools["v6e-spot-0"]["unit"] == "chip-hour" and pools["v6e-spot-0"]["capacity"] == "spot"
    assert pools["v5p-train-0"]["unitPrice"] is None
    assert pools["v5p-train-0"]["reason"].startswith("paid by the reservation v5p-train-2026")
    assert pools["h100-dws"]["basis"] == pricing.DWS_BASIS
    assert pools["system"]["unit"] == "node-hour" and pools["system"]["unitPrice"] is not None
    assert set(data["flavors"]) >= {"tpu-v6e-slice-8x8-spot", "nvidia-h100-80gb-queued"}


def _l4_stack(**keys):
    return base_config(
        nodePools=[{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}],
        **keys,
    )


def test_prices_override_the_table_and_the_report_names_them(tmp_path):
    result = synth_config(tmp_path, _l4_stack(prices={"g2-standard-8": 0.25, "nvidia-l4": 0.5}))
    assert result.exit_code == synth.EXIT_OK, result.diagnostics
    pool = next(p for p in result.cost["pools"] if p["pool"] == "l4")
    assert pool["unitPrice"] == pytest.approx(0.75) and pool["overrides"] == ["g2-standard-8", "nvidia-l4"]
    report = result.extra_files["report.md"]
    assert "Overridden by `gke-ai-batch:prices`: `g2-standard-8` $0.2500, `nvidia-l4` $0.5000." in report


def test_a_price_for_nothing_priceable_is_a_config_error(tmp_path):
    result = synth_config(tmp_path, _l4_stack(prices={"v9z": 1.0}))
    assert result.exit_code == synth.EXIT_INVALID_CONFIG
    text = "\n".join(str(d.to_json()) for d in result.diagnostics)
    assert "prices.v9z" in text and "neither a TPU generation" in text


def _budget(result):
    return [v for v in result.violations if v["policy"] == "stack-budget"]


def test_budget_rule_fires_over_budget_and_is_quiet_under(tmp_path):
    over = synth_config(tmp_path, _l4_stack(budget=100))
    (violation,) = _budget(over)
    assert violation["enforcement"] == "advisory" and over.exit_code == synth.EXIT_OK
    assert "over the budget of $100.00 (gke-ai-batch:budget" in violation["message"]
    assert "Budget: $100.00 per 30 days at maximum size (over it)." in over.extra_files["report.md"]
    under = synth_config(tmp_path, _l4_stack(budget=1_000_000))
    assert _budget(under) == []
    assert _budget(synth_config(tmp_path, _l4_stack())) == []


def test_budget_rule_blocks_where_the_stacks_policy_config_makes_it_mandatory(tmp_path, monkeypatch):
    from gke_ai_batch.policy import levels

    monkeypatch.setattr(levels, "for_stack", lambda stack: {"stack-budget": "mandatory"})
    result = synth_config(tmp_path, _l4_stack(budget=100))
    assert [v["enforcement"] for v in _budget(result)] == ["mandatory"]
    assert result.exit_code == synth.EXIT_POLICY_VIOLATION


def test_a_fleets_pools_are_told_apart_by_cluster():
    data = json.loads(synth.output_files(synth_stack("fleet-dws"))["cost.json"])
    keys = [(p["cluster"], p["pool"]) for p in data["pools"]]
    assert len(keys) == len(set(keys)) and sum(p == "system" for _, p in keys) > 1
    assert "| `fleet-us-east4/h100-dws` | queued |" in synth.output_files(synth_stack("fleet-dws"))["report.md"]
