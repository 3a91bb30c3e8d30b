"""A hostile consumer program (issue 21): misusing the call itself (a name that is not a string,
opts that are not ResourceOptions) is an ArgsError naming what is wrong, never a TypeError or
AttributeError from inside the library."""

import pytest

from gke_ai_batch.components.batch import KueueInstall
from gke_ai_batch.components.nodepools import TpuSlices
from gke_ai_batch.components.queues import Team
from gke_ai_batch.config.errors import ArgsError
from tests.support.programs import run_program

REF = {"name": "ml", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}
TEAM = {"namespace": "x", "local_queues": [{"name": "a", "cluster_queue": "b"}]}
TPU = {"cluster": REF, "version": "v6e", "topology": "4x4"}


@pytest.mark.parametrize(
    ("make", "call", "expected"),
    [
        (Team, (5, TEAM), "Team 5: name: must be a non-empty string (the Pulumi resource name), not 5"),
        (Team, ("", TEAM), "Team : name: must be a non-empty string (the Pulumi resource name), not ''"),
        (Team, ("t", TEAM, {"protect": True}), "Team t: opts: must be a pulumi.ResourceOptions or None, not dict"),
        (TpuSlices, ("p", TPU, "x"), "TpuSlices p: opts: must be a pulumi.ResourceOptions or None, not str"),
        (KueueInstall, (None, {}), "KueueInstall None: name: must be a non-empty string (the Pulumi resource name), not None"),
    ],
)
def test_a_misused_call_is_an_args_error(make, call, expected):
    with pytest.raises(ArgsError) as refused:
        make(*call)
    assert str(refused.value) == expected
    assert [f.rule for f in refused.value.findings] == ["args"]


def test_a_misused_call_registers_nothing(tmp_path):
    recording = run_program(tmp_path, """
import pulumi
from gke_ai_batch.components.queues import Team
from gke_ai_batch.config.errors import ArgsError

try:
    Team("t", {"namespace": "x", "local_queues": [{"name": "a", "cluster_queue": "b"}]}, opts={"protect": True})
except ArgsError as e:
    pulumi.export("refused", str(e))
""")
    assert recording.outputs["refused"] == "Team t: opts: must be a pulumi.ResourceOptions or None, not dict"
    assert [r.type for r in recording.resources] == ["pulumi:pulumi:Stack"]
