"""Reservations beyond a name (docs/capacity-types.md#reservations): ANY_RESERVATION, a specific
reservation shared from another project, blocks and sub-blocks, calendar mode, and what a
reservation holds (zone, VM count, machine type). Each rule is refused by synth first (exit 2, at
its key with file:line) next to a near miss it accepts; the accepted forms render as GKE takes
them, and the report says what happens when a reservation has no room and what the owner of a
shared one must grant."""

from __future__ import annotations

import copy

import pytest

from conftest import base_config, by_name, synth_config, synth_stack
from gke_ai_batch.config import load
from support.diagnostics import assert_names

NS = "gke-ai-batch"
NODE_POOL = "gcp:container/nodePool:NodePool"
TPU7X = {"name": "ir", "tpu": {"version": "tpu7x", "topology": "2x2x2"}, "capacity": "reservation", "zones": ["us-central1-c"]}
V5P = {"name": "v5p", "tpu": {"version": "v5p", "topology": "2x2x1"}, "capacity": "reservation", "zones": ["us-central1-a"]}
V5E = {"name": "v5e", "tpu": {"version": "v5e", "topology": "2x4"}, "capacity": "reservation", "zones": ["us-central1-a"]}
H100 = {"name": "h100", "gpu": {"type": "nvidia-h100-80gb", "count": 8}, "capacity": "reservation", "maxNodes": 2,
        "zones": ["us-central1-a"]}
L4 = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8", "capacity": "reservation",
      "maxNodes": 4, "zones": ["us-central1-a"]}
V6E_B = {"name": "v6e", "tpu": {"version": "v6e", "topology": "2x4"}, "capacity": "reservation", "zones": ["us-central1-b"]}
CPU = {"name": "cpu", "machineType": "n2-standard-8", "capacity": "reservation", "maxNodes": 3, "zones": ["us-central1-a"]}


def pool(base: dict, reservation) -> dict:
    return {**copy.deepcopy(base), "reservation": reservation}


def stack(*pools: dict) -> dict:
    return base_config(nodePools=list(pools))


# (id, pool entry, key path, words): each rule, refused where GKE or Compute Engine would refuse it.
REFUSED = [
    ("any names a reservation", pool(TPU7X, {"affinity": "any", "name": "r"}),
     "nodePools[0].reservation.name", "only for a specific reservation"),
    ("any declares a zone", pool(TPU7X, {"affinity": "any", "zone": "us-central1-c"}),
     "nodePools[0].reservation.zone", "ANY_RESERVATION names none"),
    ("specific without a name", pool(TPU7X, {"project": "acme-capacity"}),
     "nodePools[0].reservation", "name the reservation"),
    ("sub-block without its block", pool(TPU7X, {"name": "r", "subBlock": "s1"}),
     "nodePools[0].reservation.subBlock", "a sub-block is named within its block"),
    ("block of a v5p reservation", pool(V5P, {"name": "r", "block": "b1"}),
     "nodePools[0].reservation.block", "TPU v5p reservations have no blocks to target"),
    ("block of an L4 reservation, written as a path", pool(L4, "r/reservationBlocks/b1"),
     "nodePools[0].reservation", "nvidia-l4 reservations have no blocks to target"),
    ("block of a CPU reservation", pool(CPU, {"name": "r", "block": "b1"}),
     "nodePools[0].reservation.block", "CPU (n2-standard-8) reservations have no blocks"),
    ("tpu7x slice larger than a sub-block",
     pool({**TPU7X, "tpu": {"version": "tpu7x", "topology": "4x4x8"}}, {"name": "r", "block": "b", "subBlock": "s"}),
     "nodePools[0].reservation.subBlock", "a 4x4x8 slice is 32 VMs and a tpu7x sub-block holds 16"),
    ("calendar mode for TPU v4", pool({**V5P, "tpu": {"version": "v4", "topology": "2x2x1"}, "zones": ["us-central2-b"]},
                                     {"name": "r", "calendar": True}),
     "nodePools[0].reservation.calendar", "not offered for TPU v4"),
    ("calendar mode for L4", pool(L4, {"name": "r", "calendar": True}),
     "nodePools[0].reservation.calendar", "not offered for nvidia-l4"),
    # Compute Engine create-future-reservations-calendar-mode, "Limitations": us-central1-a takes v5e
    # requests for serving only, of 1, 4 or 8 chips; a request holds at most 1,024 v5p chips.
    ("calendar mode for a 16-chip v5e slice in the serving zone",
     pool({**V5E, "tpu": {"version": "v5e", "topology": "4x4"}}, {"name": "r", "calendar": True}),
     "nodePools[0].reservation.calendar", "for serving only, of 1, 4, 8 chips, and a 4x4 slice is 16"),
    ("calendar mode for a 2,048-chip v5p slice",
     pool({**V5P, "tpu": {"version": "v5p", "topology": "8x16x16"}, "zones": ["us-east5-a"]}, {"name": "r", "calendar": True}),
     "nodePools[0].reservation.calendar", "holds at most 1024"),
    # Cloud TPU calendar-mode-reservation, "Limitations": v6e only in asia-northeast1-b, us-east5-a, us-east5-b.
    ("calendar mode for TPU v6e in a zone that takes no calendar request", pool(V6E_B, {"name": "r", "calendar": True}),
     "nodePools[0].reservation.calendar",
     "calendar-mode future reservations for TPU v6e only in asia-northeast1-b, us-east5-a, us-east5-b, not us-central1-b"),
    ("calendar mode for TPU7x, listed in no zone", pool(TPU7X, {"name": "r", "calendar": True}),
     "nodePools[0].reservation.calendar", "for TPU tpu7x only in no zone, not us-central1-c"),
    ("more slices than the reservation holds", pool({**TPU7X, "slices": 2}, {"name": "r", "count": 3}),
     "nodePools[0].reservation.count", "the pool needs 4 VMs (2 × 2 VMs) and the reservation holds 3"),
    ("maxNodes above the reservation's count", pool(H100, {"name": "r", "count": 1}),
     "nodePools[0].reservation.count", "the pool needs 2 VMs (maxNodes 2)"),
    ("machine type other than the reservation's", pool(H100, {"name": "r", "machineType": "a3-megagpu-8g"}),
     "nodePools[0].reservation.machineType", "holds a3-megagpu-8g VMs and the pool's nodes are a3-highgpu-8g"),
    ("zone other than the reservation's", pool(H100, {"name": "r", "zone": "us-central1-b"}),
     "nodePools[0].zones", "the reservation is in us-central1-b and the pool's nodes would be in us-central1-a"),
    ("pool over two zones, reservation in one", pool({**H100, "zones": ["us-central1-a", "us-central1-b"]},
                                                    {"name": "r", "zone": "us-central1-a"}),
     "nodePools[0].zones", "a reservation serves its own zone only"),
    ("not a zone", pool(H100, {"name": "r", "zone": "us-central1"}),
     "nodePools[0].reservation.zone", "'us-central1' is not a zone"),
    ("spot pool with a reservation", {**pool(H100, "r"), "capacity": "spot"},
     "nodePools[0].reservation", "spot pools cannot consume a reservation"),
    ("sub-block path without a block", pool(TPU7X, "r/reservationSubBlocks/s"),
     "nodePools[0].reservation", "is not a reservation reference"),
    ("owner project that is not a project id", pool(TPU7X, {"name": "r", "project": "Acme"}),
     "nodePools[0].reservation.project", "is not a Google Cloud project id"),
]

# The near miss of each rule above, accepted.
ACCEPTED = [
    ("any matching reservation", pool(TPU7X, {"affinity": "any"})),
    ("specific with a name and owner project", pool(TPU7X, {"name": "r", "project": "acme-capacity"})),
    ("sub-block within its block", pool(TPU7X, {"name": "r", "block": "b1", "subBlock": "s1"})),
    ("block of an H100 reservation", pool(H100, {"name": "r", "block": "b1"})),
    ("block of an H200 (A3 Ultra) reservation, written as a path", pool(
        {**H100, "gpu": {"type": "nvidia-h200-141gb", "count": 8}, "zones": ["us-central1-b"]},
        "projects/acme-capacity/reservations/a3u/reservationBlocks/b1/reservationSubBlocks/s1")),
    ("v5p reservation without a block", pool(V5P, {"name": "r"})),
    ("tpu7x slice of one sub-block",
     pool({**TPU7X, "tpu": {"version": "tpu7x", "topology": "4x4x4"}}, {"name": "r", "block": "b", "subBlock": "s"})),
    ("calendar mode for TPU v5e", pool(V5E, {"name": "r", "calendar": True})),
    ("calendar mode for H100", pool(H100, {"name": "r", "calendar": True})),
    ("slices the reservation holds exactly", pool({**TPU7X, "slices": 2}, {"name": "r", "count": 4})),
    ("maxNodes at the reservation's count", pool(H100, {"name": "r", "count": 2})),
    ("the reservation's machine type", pool(H100, {"name": "r", "machineType": "a3-highgpu-8g"})),
    ("the reservation's zone", pool(H100, {"name": "r", "zone": "us-central1-a"})),
    ("reservation pool (not spot) with a reservation", pool(H100, "r")),
]


@pytest.mark.parametrize("entry, path, words", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_reservation_rule_refuses_at_the_key(tmp_path, entry, path, words):
    result = synth_config(tmp_path, stack(entry))
    assert result.exit_code == 2, result.error
    assert result.recording is None, "nothing may be registered"
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", f"{NS}:{path}", words)


@pytest.mark.parametrize("entry", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_reservation_rule_near_miss_is_accepted(entry):
    cfg = stack(entry)
    values = {k.split(":", 1)[1]: v for k, v in cfg.items() if k.startswith(f"{NS}:")}
    load(values, region=cfg["gcp:region"], project=cfg["gcp:project"])


def test_near_miss_calendar_mode_in_a_zone_the_catalogue_or_the_stack_lists_renders(tmp_path):
    east5 = base_config(nodePools=[pool({**V6E_B, "zones": ["us-east5-b"]}, {"name": "r", "calendar": True})])
    east5["gcp:region"] = "us-east5"
    east5["gke-ai-batch:cluster"]["nodeLocations"] = ["us-east5-b"]
    assert synth_config(tmp_path, east5).exit_code == 0
    # An 8-chip v5e slice in the serving zone: the sizes it takes.
    assert synth_config(tmp_path, stack(pool(V5E, {"name": "r", "calendar": True}))).exit_code == 0
    # A zone Compute Engine takes requests in since the catalogue's date: the stack vouches for it.
    vouched = stack(pool(V6E_B, {"name": "r", "calendar": True}))
    vouched["gke-ai-batch:catalogue"] = {"zones": {"us-central1-b": {"calendar": ["v6e"]}}}
    result = synth_config(tmp_path, vouched)
    assert result.exit_code == 0, result.error
    assert "extends zone us-central1-b: v6e in calendar mode" in result.extra_files["report.md"]


def test_every_reservation_problem_of_a_pool_is_listed_at_once(tmp_path):
    entry = {**pool(V5P, {"name": "r", "block": "b", "count": 1, "machineType": "n2-standard-8"}), "slices": 2}
    result = synth_config(tmp_path, stack(entry))
    assert result.exit_code == 2
    for path in ("reservation.block", "reservation.count", "reservation.machineType"):
        assert f"{NS}:nodePools[0].{path}:" in result.error, (path, result.error)


def _affinity(result, name: str) -> dict:
    return by_name(result, NODE_POOL, name)["inputs"]["nodeConfig"]["reservationAffinity"]


def test_any_shared_and_block_render_as_gke_takes_them(tmp_path):
    config = stack(
        pool(TPU7X, {"project": "acme-capacity", "name": "ironwood", "block": "b1", "subBlock": "s1",
                     "zone": "us-central1-c", "count": 2}),
        pool(V5E, {"affinity": "any"}),
        pool(H100, "projects/acme-capacity/reservations/h100/reservationBlocks/b2"),
    )
    result = synth_config(tmp_path, config)
    assert result.exit_code == 0, result.error
    assert _affinity(result, "ir-0") == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/acme-capacity/reservations/ironwood/reservationBlocks/b1/reservationSubBlocks/s1"],
    }
    # ANY_RESERVATION takes no key or values.
    assert _affinity(result, "v5e-0") == {"consumeReservationType": "ANY_RESERVATION"}
    # A reference written as a string is passed as written.
    assert _affinity(result, "h100")["values"] == ["projects/acme-capacity/reservations/h100/reservationBlocks/b2"]
    report = result.extra_files["report.md"]
    section = report[report.index("### Reservations"):report.index("### Maintenance")]
    assert "| `v5e` | `v5e-0` | `ANY_RESERVATION` | — |" in section
    assert "on-demand VMs (on-demand price and quota)" in section
    assert "no node: the sub-block only, no on-demand fallback" in section
    assert ("project `acme-capacity` must share reservation `ironwood` (`us-central1-c`) with `test-project`" in section)
    assert "--zone=us-central1-c --add-share-with=test-project" in section
    # ANY_RESERVATION falls back to on-demand: it draws on-demand quota and is priced on-demand.
    quota = report[report.index("### Quota to request"):]
    assert "on-demand when no matching reservation has room (ANY_RESERVATION)" in quota
    assert "TPU v5 Lite PodSlice chips" in quota and "Preemptible TPU v5 Lite" not in quota
    costs = {c["pool"]: c for c in result.cost["pools"]}
    assert costs["v5e-0"]["unitPrice"] is not None, "ANY_RESERVATION is priced on-demand"
    assert costs["v5e-0"]["basis"].startswith("on-demand list price when no matching reservation has room")
    assert costs["ir-0"]["reason"].startswith("paid by the reservation projects/acme-capacity/reservations/ironwood")


def test_no_reservation_section_without_a_reserved_pool(tmp_path):
    result = synth_config(tmp_path, stack({**copy.deepcopy(CPU), "capacity": "onDemand"}))
    assert result.exit_code == 0, result.error
    assert "### Reservations" not in result.extra_files["report.md"]


def test_shipped_stacks_consume_any_reservation_and_a_shared_block():
    prod = synth_stack("prod")
    assert _affinity(prod, "tpu7x-train-0")["values"] == [
        "projects/acme-capacity/reservations/ironwood-2026/reservationBlocks/ironwood-2026-block-1"
    ]
    assert _affinity(prod, "v5p-train-0")["values"] == ["v5p-train-2026"]
    assert "must share reservation `ironwood-2026` (`us-central1-c`) with `acme-ml-prod`" in prod.extra_files["report.md"]
    multislice = synth_stack("tpu-multislice")
    assert _affinity(multislice, "nodepool-0") == {"consumeReservationType": "ANY_RESERVATION"}


def test_component_takes_the_mapping_as_reservation_spec():
    from gke_ai_batch.components.nodepools import TpuSlices
    from gke_ai_batch.config.errors import ArgsError

    ref = {"name": "c", "location": "us-central1", "project": "p", "node_locations": ["us-central1-c"]}
    with pytest.raises(ArgsError) as caught:
        TpuSlices("ir", {"cluster": ref, "version": "tpu7x", "topology": "2x2x2", "capacity": "reservation",
                         "reservation_spec": {"name": "r", "sub_block": "s", "zone": "us-central1-b", "colour": "x"}})
    text = str(caught.value)
    assert "args.reservation_spec.colour: unknown arg" in text
    with pytest.raises(ArgsError) as caught:
        TpuSlices("ir", {"cluster": ref, "version": "tpu7x", "topology": "2x2x2", "capacity": "reservation",
                         "reservation_spec": {"name": "r", "sub_block": "s"}})
    assert "args.reservation_spec.sub_block: a sub-block is named within its block" in str(caught.value)
    with pytest.raises(ArgsError) as caught:
        TpuSlices("ir", {"cluster": ref, "version": "tpu7x", "topology": "2x2x2", "capacity": "reservation",
                         "reservation_spec": {"name": "r", "zone": "us-central1-b"}})
    assert "args.zones: the reservation is in us-central1-b" in str(caught.value)
