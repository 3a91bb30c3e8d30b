"""report.md's "Quota to request": per project, region and Compute Engine quota, what the
stack's pools draw on at their maximum size, the figures worked out here by hand from the
stack files (slices × chips, nodes × GPUs, nodes × vCPUs)."""

from __future__ import annotations

import pytest
from conftest import synth_stack

from gke_ai_batch.domain import catalogue


def section(stack: str) -> str:
    text = synth_stack(stack).extra_files["report.md"]
    start = text.index("### Quota to request")
    return text[start : text.index("\n### ", start + 1)]


def to_request(stack: str) -> dict[tuple[str, str], int]:
    """(region, quota as the report names it) -> the figure, from the sums table."""
    body = section(stack).split("**To request**", 1)[1]
    out = {}
    for line in body.splitlines():
        if line.startswith("| `"):
            _, _project, region, quota, figure, _unit, _ = (c.strip() for c in line.split("|"))
            out[(region, quota)] = int(figure)
    return out


def test_prod_spot_tpus_queued_gpus_and_reservations():
    sums = to_request("prod")
    # v6e-spot: 2 slices of 8x8 (64 chips each), spot: the preemptible v6e quota.
    assert sums[("us-central1", "Preemptible TPU slices v6e (`PREEMPTIBLE_TPU_V6E`)")] == 2 * 8 * 8
    # h100-dws: up to 8 a3-highgpu-8g of 8 H100s, queued provisioning: preemptible GPUs, and
    # their 208 vCPUs each on preemptible CPUs.
    assert sums[("us-central1", "Preemptible NVIDIA H100 GPUs (`PREEMPTIBLE_NVIDIA_H100_GPUS`)")] == 8 * 8
    assert sums[("global", "GPUs (all regions) (`GPUS_ALL_REGIONS`)")] == 64
    assert sums[("us-central1", "Preemptible CPUs (`PREEMPTIBLE_CPUS`)")] == 8 * 208
    # The system pool: up to 6 e2-standard-8.
    assert sums[("us-central1", "CPUs (`CPUS`)")] == 6 * 8
    # The v5p and tpu7x pools run on reservations: nothing to request for them.
    assert not any("v5p" in q or "tpu7x" in q for _, q in sums)
    text = section("prod")
    assert "reservation `v5p-train-2026`: the reservation holds the quota; nothing to request" in text


def test_tpu_multislice_on_demand_v5e():
    # Three on-demand v5e 2x4 slices in us-west4.
    assert to_request("tpu-multislice")[("us-west4", "TPU v5 Lite PodSlice chips (`TPU_LITE_PODSLICE_V5`)")] == 3 * 2 * 4


def test_gpu_dws_and_its_auto_provisioning_limit():
    sums = to_request("gpu-dws")
    assert sums[("us-central1", "Preemptible NVIDIA H100 GPUs (`PREEMPTIBLE_NVIDIA_H100_GPUS`)")] == 4 * 8
    assert "`nvidia-h100-80gb` up to 32" in section("gpu-dws")


def test_fleet_dws_per_worker_region():
    sums = to_request("fleet-dws")
    for region in ("us-east4", "europe-west4", "us-west1"):
        assert sums[(region, "Preemptible NVIDIA H100 GPUs (`PREEMPTIBLE_NVIDIA_H100_GPUS`)")] == 4 * 8
    assert sums[("global", "GPUs (all regions) (`GPUS_ALL_REGIONS`)")] == 3 * 4 * 8
    # The flex-start v6e worker: one 2x4 slice.
    assert sums[("us-east5", "Preemptible TPU slices v6e (`PREEMPTIBLE_TPU_V6E`)")] == 8
    # The manager runs its system pool only: 2 e2-standard-4.
    assert sums[("us-central1", "CPUs (`CPUS`)")] == 2 * 4


def test_batch_autopilot_counts_the_gpus_its_workloads_ask_for():
    # team-a's Job: 3 pods × 1 T4; team-b's: 2 pods × 1 T4; Autopilot's nodes are on-demand here.
    assert to_request("batch-autopilot")[("us-central1", "NVIDIA T4 GPUs (`NVIDIA_T4_GPUS`)")] == 3 + 2
    assert "vCPU quota its nodes draw on is not known" in section("batch-autopilot")


@pytest.mark.parametrize("version", catalogue.TPU_VERSIONS)
def test_every_tpu_generation_and_gpu_type_names_its_quotas(version):
    gen = catalogue.TPU_GENERATIONS[version]
    assert gen.quota is not None and gen.preemptible_quota is not None
    assert all(g.quota_stem for g in catalogue.GPU_TYPES.values())


def test_a_machine_type_the_catalogue_does_not_size_is_listed_unsized(tmp_path):
    from conftest import base_config, synth_config

    config = base_config(cluster={"name": "t", "nodeLocations": ["us-central1-a"], "systemPool": {"machineType": "c4-standard-8"}},
                         nodePools=[{"name": "cpu", "machineType": "c4-standard-8", "maxNodes": 2}])
    result = synth_config(tmp_path, config)
    assert result.error is None and result.exit_code == 0
    text = result.extra_files["report.md"]
    assert "2 × c4-standard-8: not in the catalogue (gke_ai_batch/domain/machines.py), vCPUs unknown" in text
    assert "CPUs per VM family (vm_family: C4)" in text


def test_the_header_quota_rows_and_flavor_column_say_what_is_there():
    report = synth_stack("dev").extra_files["report.md"]
    # dev's TPU slices are in us-central1-a, its GPU and system pools in the cluster's -b.
    assert "(nodes in `us-central1-a`, `us-central1-b`)" in report.splitlines()[2]
    # One GPU per node is "1 GPU".
    assert "(1 GPUs)" not in report and "4 × g2-standard-8 (1 GPU), flexStart" in report
    # Every quota of the flavor table names its Kueue resource, with pools or without.
    flavors = report.split("### Capacity per flavor", 1)[1].split("###", 1)[0]
    quotas = [line.split("|")[-2].strip() for line in flavors.splitlines() if line.startswith("| `")]
    assert quotas == ["16 google.com/tpu", "4 nvidia.com/gpu", "4 nvidia.com/gpu"], quotas
    # The TPU quotas name their metric, but tpu7x's preemptible one, which no source here gives.
    for gen in catalogue.TPU_GENERATIONS.values():
        for quota in (gen.quota, gen.preemptible_quota):
            assert quota is not None and (quota.metric or quota is catalogue.TPU_GENERATIONS["tpu7x"].preemptible_quota), quota
    assert "Preemptible TPU v5 Lite Podslice chips (`PREEMPTIBLE_TPU_LITE_PODSLICE_V5`)" in report
