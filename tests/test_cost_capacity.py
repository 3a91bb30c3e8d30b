"""Nothing that can create nodes is priced at $0: a ComputeClass over its priorities at the
class's limits, an Autopilot cluster's Kueue quotas at GKE's Autopilot rates (or no price with
the reason), node auto-provisioning listed as unpriced; a budget with anything unpriced is
unknown, never within; the quota table counts what a ComputeClass's priorities draw."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from conftest import ROOT, STACKS, base_config, synth_config, synth_main, synth_stack

from gke_ai_batch import synth
from gke_ai_batch.domain import autopilot_prices, price_table, pricing
from gke_ai_batch.model import computeclass, facts

L4 = [{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "maxNodes": 2}]


def _entries(result) -> dict[str, dict]:
    return {p["pool"]: p for p in result.cost["pools"]}


def _node_hour(machine: str, gpu: str | None = None, gpus: int = 0, spot: bool = False, region: str = "us-central1"):
    """A node's price as the vendored table gives it, read through pricing's own lookup."""
    cost = pricing.price_pool(pricing.PoolShape("p", region, machine, "spot" if spot else "on-demand", 1, 1,
                                                gpu_type=gpu, gpus_per_node=gpus))
    assert cost.unit_price is not None, cost.reason
    return cost.unit_price


# -- ComputeClass --------------------------------------------------------------------------------


def test_devs_l4_fallback_is_priced_at_its_dearest_priority_with_its_range():
    result = synth_stack("dev")
    fallback = _entries(result)["l4-fallback"]
    on_demand = _node_hour("g2-standard-8", "nvidia-l4", 1)
    spot = _node_hour("g2-standard-8", "nvidia-l4", 1, spot=True)
    assert fallback["kind"] == pricing.COMPUTE_CLASS and fallback["maxNodes"] == 4  # 4 GPUs of quota, 1 per node
    assert fallback["perHourMax"] == pytest.approx(4 * on_demand, abs=1e-3)
    assert fallback["range"]["perHourMax"] == pytest.approx([4 * spot, 4 * on_demand], abs=1e-3)
    assert [p["capacity"] for p in fallback["priorities"]] == ["flex-start", "spot", "on-demand"]
    assert fallback["capacity"] == "flex-start → spot → on-demand"
    # The dearest is the on-demand priority's exact price, not flex-start's upper bound of the same figure.
    assert fallback["basis"].startswith("its dearest priority (on-demand), used for the totals and the budget")
    assert result.cost["flavors"]["l4-fallback"]["perHourMax"] == pytest.approx(4 * on_demand, abs=1e-3)
    assert result.cost["total"]["perHourMax"] == pytest.approx(sum(p["perHourMax"] or 0 for p in result.cost["pools"]), abs=0.01)
    report = synth.output_files(result)["report.md"]
    assert "| `l4-fallback` (ComputeClass) | flex-start → spot → on-demand |" in report
    assert "the totals and the budget take the dearest" in report


def _class_shape(*capacities: str, nodes: int | None = 4, machine: str = "g2-standard-8", region: str = "us-central1", **kw):
    return pricing.ClassShape("c", tuple(
        pricing.PoolShape(f"c[{i}]", region, machine, cap, 0, nodes, gpu_type="nvidia-l4", gpus_per_node=1,
                          reservation="r" if cap == "reservation" else None)
        for i, cap in enumerate(capacities)), "4 nodes", **kw)


def test_a_class_with_a_priority_the_table_cannot_price_has_no_price_naming_it():
    cost = pricing.price_class(_class_shape("spot", "on-demand", region="mars-north1"))
    assert cost.unit_price is None and cost.unpriced
    assert cost.reason.startswith("priority 1 (spot): the price table") and "mars-north1" in cost.reason


def test_a_class_that_may_scale_up_anyway_has_no_upper_bound():
    cost = pricing.price_class(_class_shape("on-demand", when_unsatisfiable="ScaleUpAnyway"))
    assert cost.unpriced and "outside its priorities" in cost.reason


def test_a_reservation_priority_is_paid_by_it_and_the_rest_are_priced():
    cost = pricing.price_class(_class_shape("reservation", "spot"))
    assert cost.unit_price == pytest.approx(_node_hour("g2-standard-8", "nvidia-l4", 1, spot=True))
    assert "paid by the reservation" in cost.basis
    only = pricing.price_class(_class_shape("reservation"))
    assert only.paid_by_reservation and not only.unpriced


def test_a_class_no_quota_bounds_has_no_price():
    cost = pricing.price_class(_class_shape("on-demand", nodes=None, reason="no ClusterQueue gives quota"))
    assert cost.unpriced and cost.reason == "no ClusterQueue gives quota"


def _priority(spec: dict):
    (p,) = computeclass.class_priorities("c", {"priorities": [spec]})
    return p


@pytest.mark.parametrize("spec, quota, nodes", [
    # Full nodes hold the quota: 20 H100s on 8-GPU machines are 3 nodes.
    ({"gpu": {"type": "nvidia-h100-80gb", "count": 8}, "machineType": "a3-highgpu-8g"}, {"nvidia.com/gpu": 20}, 3),
    # A multi-host TPU priority comes in whole slices: 24 chips of v6e 4x4 (4 VMs of 4 chips) are 2 slices.
    ({"tpu": {"type": "tpu-v6e-slice", "count": 4, "topology": "4x4"}}, {"google.com/tpu": 24}, 8),
])
def test_nodes_at_the_class_limits(spec, quota, nodes):
    assert computeclass.nodes_at_limits(_priority(spec), quota)[0] == nodes


def test_a_cpu_priority_takes_the_nodes_whose_allocatable_holds_the_quota():
    cpu = facts.allocatable("e2-standard-4")["cpu"]  # millicores a node leaves to workloads
    nodes, how = computeclass.nodes_at_limits(_priority({"machineType": "e2-standard-4"}), {"cpu": 10 * cpu + 1})
    assert nodes == 11 and "allocatable per node" in how


def test_no_accelerator_quota_bounds_no_accelerator_nodes():
    p = _priority({"gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8"})
    nodes, why = computeclass.nodes_at_limits(p, {"cpu": 8000})
    assert nodes is None and "nvidia.com/gpu" in why


def test_the_class_quota_adds_every_queues_nominal_quota_for_its_flavors():
    quotas = [{"a": {"nvidia.com/gpu": 4, "cpu": "28"}, "b": {"nvidia.com/gpu": 100}}, {"a": {"nvidia.com/gpu": "2"}}]
    assert computeclass.flavor_quota(quotas, {"a"}) == {"nvidia.com/gpu": 6, "cpu": 28_000}


# -- Autopilot -----------------------------------------------------------------------------------


def _autopilot_config(quotas: dict, labels: dict | None = None, **keys) -> dict:
    config = copy.deepcopy(yaml.safe_load((ROOT / "stacks" / "Pulumi.batch-autopilot.yaml").read_text())["config"])
    config["gke-ai-batch:clusterQueues"][0]["flavors"][0]["quotas"] = quotas
    config["gke-ai-batch:workloads"] = []
    if labels:
        config["gke-ai-batch:flavors"][0]["nodeLabels"] = labels
    for key, value in keys.items():
        config[f"gke-ai-batch:{key}"] = value
    return config


def test_batch_autopilot_lists_its_gpu_quota_as_unpriced_not_zero():
    result = synth_stack("batch-autopilot")
    flavor = _entries(result)["default-flavor"]
    assert flavor["kind"] == pricing.AUTOPILOT and flavor["unitPrice"] is None
    assert "nvidia.com/gpu" in flavor["reason"] and "autopilot:nvidia.com/gpu" in flavor["reason"]
    assert result.cost["total"]["unpriced"] == ["kueue-autopilot/default-flavor"]
    assert result.cost["total"]["complete"] is False
    report = synth.output_files(result)["report.md"]
    assert "**Not priced**: `kueue-autopilot/default-flavor`" in report
    assert "| **total** | — | — | — | — | — | — | — |" in report  # no $0.00


def test_an_autopilot_cpu_quota_is_priced_at_the_general_purpose_rates(tmp_path):
    result = synth_config(tmp_path, _autopilot_config({"cpu": 10, "memory": "40Gi"}))
    assert result.exit_code == synth.EXIT_OK, result.diagnostics
    flavor = _entries(result)["default-flavor"]
    cpu, memory = (autopilot_prices.RATES[("general-purpose", r, "us-central1")][0] for r in ("cpu", "memory"))
    assert flavor["unitPrice"] == pytest.approx(10 * cpu + 40 * memory)
    assert flavor["perHourMin"] == 0  # nothing requested, nothing billed
    assert autopilot_prices.SOURCE in flavor["basis"] and result.cost["total"]["complete"]


def test_an_autopilot_spot_flavor_takes_the_spot_rates(tmp_path):
    result = synth_config(tmp_path, _autopilot_config({"cpu": 10, "memory": "40Gi"}, {"cloud.google.com/gke-spot": "true"}))
    assert result.exit_code == synth.EXIT_OK, result.diagnostics
    cpu, memory = (autopilot_prices.RATES[("general-purpose", r, "us-central1")][1] for r in ("cpu", "memory"))
    assert _entries(result)["default-flavor"]["unitPrice"] == pytest.approx(10 * cpu + 40 * memory)


def test_autopilot_rates_can_be_given_for_what_the_table_lacks(tmp_path):
    prices = {"autopilot:cpu": 0.05, "autopilot:memory": 0.006, "autopilot:nvidia.com/gpu": 0.4,
              "autopilot:ephemeral-storage": 0.0001}
    result = synth_config(tmp_path, _autopilot_config(
        {"cpu": 10, "memory": "10Gi", "nvidia.com/gpu": 10, "ephemeral-storage": "10Gi"}, prices=prices))
    assert result.exit_code == synth.EXIT_OK, result.diagnostics
    flavor = _entries(result)["default-flavor"]
    assert flavor["unitPrice"] == pytest.approx(10 * 0.05 + 10 * 0.006 + 10 * 0.4 + 10 * 0.0001)
    assert sorted(flavor["overrides"]) == sorted(prices)


def test_an_autopilot_cluster_without_queue_quota_is_listed_unpriced(tmp_path):
    config = _autopilot_config({})
    for key in ("clusterQueues", "flavors", "teams"):
        config.pop(f"gke-ai-batch:{key}")
    result = synth_config(tmp_path, config)
    assert result.exit_code == synth.EXIT_OK, result.diagnostics
    assert result.cost["total"]["unpriced"] == ["kueue-autopilot/Autopilot Pods"]


def test_an_autopilot_rate_for_something_autopilot_does_not_bill_is_a_config_error(tmp_path):
    result = synth_config(tmp_path, base_config(nodePools=L4, prices={"autopilot:pods": 1.0}))
    assert result.exit_code == synth.EXIT_INVALID_CONFIG
    assert "autopilot:RESOURCE" in "\n".join(str(d.to_json()) for d in result.diagnostics)


# -- node auto-provisioning ------------------------------------------------------------------------


def test_node_auto_provisioning_is_listed_unpriced_with_its_limits():
    result = synth_stack("gpu-dws")
    nap = _entries(result)["node auto-provisioning"]
    assert nap["kind"] == pricing.AUTO_PROVISIONING and nap["perHourMax"] is None
    assert "cpu 1024, memory 8192 GB, nvidia-h100-80gb 32" in nap["reason"]
    assert "≥ $" in synth.output_files(result)["report.md"]


# -- budget ----------------------------------------------------------------------------------------


def _budget(result):
    return [v for v in result.violations if v["policy"] == "stack-budget"]


def test_a_budget_with_an_unpriced_item_is_unknown_never_within(tmp_path):
    config = _autopilot_config({"cpu": 1, "memory": "1Gi", "nvidia.com/gpu": 1}, budget=1_000_000)
    result = synth_config(tmp_path, config)
    assert result.cost["budgetVerdict"]["verdict"] == pricing.UNKNOWN
    assert result.cost["budgetVerdict"]["unpriced"][0]["item"] == "kueue-autopilot/default-flavor"
    report = synth.output_files(result)["report.md"]
    assert "(within it)" not in report and "Budget: $1,000,000.00 per 30 days at maximum size (unknown:" in report
    (finding,) = _budget(result)
    assert finding["enforcement"] == "advisory" and result.exit_code == synth.EXIT_OK  # advisory: a warning
    assert "is unknown" in finding["message"] and "kueue-autopilot/default-flavor" in finding["message"]
    assert "gke-ai-batch:prices" in finding["message"]


def test_a_pool_the_table_cannot_price_makes_the_budget_unknown(tmp_path, monkeypatch):
    real = pricing.price_pool

    def no_l4_row(shape, overrides=None):  # the table without the L4 pool's row
        cost = real(shape, overrides)
        return cost if shape.pool != "l4" else pricing.PoolCost(**{**cost.__dict__, "unit_price": None, "reason": "no row"})

    monkeypatch.setattr(pricing, "price_pool", no_l4_row)
    result = synth_config(tmp_path, base_config(nodePools=L4, budget=1_000_000))
    assert result.cost["budgetVerdict"]["verdict"] == pricing.UNKNOWN
    assert result.cost["budgetVerdict"]["unpriced"] == [{"item": "test/l4", "reason": "no row"}]
    assert "not priced: test/l4 (no row)" in _budget(result)[0]["message"]


def test_a_mandatory_budget_fails_on_unknown(tmp_path, monkeypatch):
    from gke_ai_batch.policy import levels

    monkeypatch.setattr(levels, "for_stack", lambda stack: {"stack-budget": "mandatory"})
    result = synth_config(tmp_path, _autopilot_config({"cpu": 1, "nvidia.com/gpu": 1}, budget=1_000_000))
    assert [v["enforcement"] for v in _budget(result)] == ["mandatory"]
    assert result.exit_code == synth.EXIT_POLICY_VIOLATION


def test_a_fully_priced_stack_is_within_and_reservations_do_not_make_it_unknown(tmp_path):
    within = synth_config(tmp_path, base_config(nodePools=L4, budget=1_000_000))
    assert within.cost["budgetVerdict"]["verdict"] == pricing.WITHIN and not _budget(within)
    assert "(within it)" in synth.output_files(within)["report.md"]
    prod = synth_stack("prod").cost
    assert prod["total"]["complete"] and len(prod["total"]["reserved"]) == 3


def test_judge_budget():
    def t(hour: float, unpriced: tuple[str, ...] = ()):
        return pricing.Total(hour, hour * 720, 0, 0, unpriced)

    assert pricing.judge_budget(t(1), 1000).state == pricing.WITHIN
    assert pricing.judge_budget(t(1, ("x",)), 1000).state == pricing.UNKNOWN
    assert pricing.judge_budget(t(2, ("x",)), 1000).state == pricing.OVER  # already over what is priced


# -- quota ---------------------------------------------------------------------------------------


def _to_request(report: str) -> str:
    return report.split("**To request**", 1)[1].split("###", 1)[0]


def test_devs_quota_table_counts_the_on_demand_l4_fallback():
    report = synth.output_files(synth_stack("dev"))["report.md"]
    request = _to_request(report)
    assert "| `acme-ml-dev` | us-central1 | NVIDIA L4 GPUs (`NVIDIA_L4_GPUS`) | 4 | GPUs |" in request
    # The pool's 4 plus the class's flex-start and spot priorities, which share its 4 nodes: 8, not 12.
    assert "| `acme-ml-dev` | us-central1 | Preemptible NVIDIA L4 GPUs (`PREEMPTIBLE_NVIDIA_L4_GPUS`) | 8 | GPUs |" in request
    assert "| `l4-fallback (ComputeClass)` | NVIDIA L4 GPUs (`NVIDIA_L4_GPUS`) | 4 | GPUs | priority 3, onDemand:" in report


# -- done when -------------------------------------------------------------------------------------


def _zero_for_nodes(cost: dict) -> list[str]:
    """Entries that can create nodes yet show $0.00 at their maximum."""
    return [p["pool"] for p in cost["pools"]
            if p["perHourMax"] == 0 and (p["maxNodes"] is None or p["maxNodes"] > 0)]


@pytest.mark.parametrize("stack", STACKS)
def test_no_shipped_stack_prices_what_can_create_nodes_at_zero(stack):
    cost = synth_stack(stack).cost
    assert _zero_for_nodes(cost) == []
    assert cost["total"]["complete"] == (cost["total"]["unpriced"] == [])
    for name, flavor in cost["flavors"].items():
        assert flavor["perHourMax"] > 0 or flavor["unpriced"] or flavor["reserved"], name


def test_the_existing_cluster_example_prices_nothing_at_zero(tmp_path):
    out = tmp_path / "out"
    run = synth_main("--program", "examples/existing-cluster", "--config", "examples/existing-cluster/Pulumi.dev.yaml",
                     "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert _zero_for_nodes(json.loads((out / "cost.json").read_text())) == []


def test_the_cost_header_still_names_the_table():
    assert f"price table of {price_table.DATE}" in synth.output_files(synth_stack("dev"))["report.md"]
