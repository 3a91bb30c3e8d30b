"""Hostile and careless values for the day-one config rules: amounts of any size, versions and
machine types written oddly, and network references whose project is implied. Each case is
refused the way GKE, Kueue or the API server would refuse it (exit 2, the key's file:line and
the rule), never a crash, and each refusal has a near miss that renders."""

from __future__ import annotations

import pytest

from components import quantity
from conftest import base_config, synth_config
from support.diagnostics import assert_names

from test_dayone_k8srules import _gpu_stack

NS = "gke-ai-batch"


def _refused(tmp_path, config: dict, path: str, words: str) -> None:
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error or "rendered"
    assert result.recording is None
    assert_names(result.error, tmp_path / "Pulumi.test.yaml", path, words)


# -- extended resources of any size: a message, never a crash ------------------------------------


@pytest.mark.parametrize("amount", ["1e100", "9" * 40, "1e999999999", "1e9999999999999999999"])
def test_a_huge_extended_resource_is_refused_as_too_many_not_a_crash(tmp_path, amount):
    _refused(
        tmp_path, _gpu_stack(resources={"nvidia.com/gpu": amount}), f'{NS}:workloads[0].resources["nvidia.com/gpu"]',
        "GPUs per pod never fit a node with 1",
    )


@pytest.mark.parametrize("amount", ["1e-999999999", "1.00000000000000000000000000000000001", "0.0001m"])
def test_a_tiny_fraction_of_an_extended_resource_is_refused(tmp_path, amount):
    # The API server rounds a quantity up to whole milli-units (resource.Quantity.MilliValue),
    # so any positive fraction stays a fraction; Decimal's default context would round it away.
    _refused(
        tmp_path, _gpu_stack(resources={"nvidia.com/gpu": amount}), f'{NS}:workloads[0].resources["nvidia.com/gpu"]',
        "is an extended resource, counted in whole units",
    )


@pytest.mark.parametrize(
    "amount, whole",
    [("1e3", True), ("1Ki", True), ("0e-9999999999999999999", True), ("1e-9999999999999999999", False),
     ("9223372036854775806.5", False), ("1000000000n", True), ("5.", True)],
)
def test_whole_numbers_to_the_api_servers_precision(amount, whole):
    assert quantity.is_whole(amount) is whole


def test_a_whole_gpu_written_with_an_exponent_renders(tmp_path):
    result = synth_config(tmp_path, _gpu_stack(resources={"nvidia.com/gpu": "1e0"}))
    assert result.exit_code == 0, result.error
