"""The price table covers every shape the catalogue knows where a source has a row: the
refresh script selects every TPU generation and GPU type of domain/catalogue.py and every
machine type of domain/machines.py, and more figures are checked against their source rows
(Google's Cloud Billing Catalog export for machine types, skypilot-catalog for TPUs and T4s)."""

from __future__ import annotations

import csv
import io

import pytest

from gke_ai_batch.domain import catalogue, machines, price_table, pricing
from test_cost import BILLING_FIXTURE, _refresh, _row

HEADER = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice\n"


def _billing(machine: str, region: str = "us-central1") -> tuple[float, float]:
    with BILLING_FIXTURE.open() as f:
        return _refresh().read_billing(f)[1][(machine, region)]


def test_t4_is_priced_per_gpu_from_its_two_gpu_row():
    row = _row("T4")
    assert row["AcceleratorCount"] == "2"
    assert price_table.PRICES[("gpu", "nvidia-tesla-t4", "us-central1")][:3] == (
        pytest.approx(float(row["Price"]) / 2), pytest.approx(float(row["SpotPrice"]) / 2), "skypilot")


def test_an_a100_machine_is_googles_whole_machine_row_where_the_catalog_agrees():
    # a2-highgpu-1g in us-central1: $3.673385 in the billing catalogue, the catalog's VM row plus its A100 to the cent.
    hour, spot = _billing("a2-highgpu-1g")
    row = price_table.PRICES[("vm", "a2-highgpu-1g", "us-central1")]
    assert (row.on_demand, row.source, row.gpus) == (pytest.approx(hour), "billing", 1) and hour == pytest.approx(3.673385)
    assert hour == pytest.approx(float(_row(machine="a2-highgpu-1g")["Price"]) + float(_row("A100")["Price"]), abs=1e-4)
    assert "on-demand" not in row.note.split(",")


def test_an_n1_node_with_t4s_is_the_machine_row_plus_its_gpus():
    vm, gpus = _billing("n1-standard-8"), _row("T4")
    cost = pricing.price_pool(pricing.PoolShape("t4", "us-central1", "n1-standard-8", "spot", 0, 3,
                                                gpu_type="nvidia-tesla-t4", gpus_per_node=2))
    assert cost.unit_price == pytest.approx(vm[1] + float(gpus["SpotPrice"]))
    assert cost.reason == ""


def test_a_cpu_machine_outside_the_shipped_stacks_is_priced():
    hour, spot = _billing("t2d-standard-32", "us-east5")
    assert price_table.PRICES[("vm", "t2d-standard-32", "us-east5")][:3] == (pytest.approx(hour), pytest.approx(spot), "billing")


def test_the_script_selects_every_catalogue_shape_and_every_machine_type():
    # One made-up row per name the catalogue knows, in a region it knows: each is kept; a
    # machine type or accelerator it does not know is not.
    refresh = _refresh()
    lines = [f"{m},1.0,1.0,,,,us-central1,us-central1-a,1.0,0.5" for m in machines.known_names()]
    lines += [f",,,{name},1,,us-central1,us-central1-a,1.0,0.5" for name in refresh.GPU_NAMES.values()]
    lines += [f",,,{stem}-{per * 8},1,,us-central1,us-central1-a,8.0,4.0" for stem, per in refresh.TPU_NAMES.values()]
    lines += ["m1-ultramem-40,40.0,961.0,,,,us-central1,us-central1-a,1.0,0.5", ",,,P100,1,,us-central1,us-central1-a,1.0,0.5"]
    table = refresh.extract(csv.DictReader(io.StringIO(HEADER + "\n".join(lines) + "\n")))
    assert {name for kind, name, _ in table if kind == "vm"} >= set(machines.known_names())
    assert {name for kind, name, _ in table if kind == "gpu"} == set(catalogue.GPU_TYPES)
    # tpu7x has no catalog name: it keeps no price, with the reason.
    assert {name for kind, name, _ in table if kind == "tpu"} == set(catalogue.TPU_GENERATIONS) - {"tpu7x"}
    assert ("vm", "m1-ultramem-40", "us-central1") not in table


def test_tpu7x_has_no_price_and_says_why():
    cost = pricing.price_pool(pricing.PoolShape("ir", "us-central1", "tpu7x-standard-4t", "on-demand", 0, 1,
                                                tpu_version="tpu7x", chips_per_node=4))
    assert cost.unit_price is None
    assert cost.reason == f"the price table ({price_table.DATE}) has no TPU chip price for tpu7x in us-central1"
