"""Programs a new consumer wrote from docs/library.md alone, kept where they caught the library
saying less (or other) than the docs promise: every mistake of a component's args at once, and
a program's report telling which queues use a flavor no pool of the program backs."""

from __future__ import annotations

import pytest

from support.programs import render_program

REF = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "node_locations": ["us-east5-b"]}


def test_a_camelcase_cluster_key_is_one_problem_and_the_rest_are_still_judged():
    """A typo'd arg, a ClusterRef key spelt as the stack file spells it, and a bad topology: the
    three mistakes, each once at its arg path (library.md: "every problem at once")."""
    from gke_ai_batch import ArgsError, TpuSlices

    ref = {"name": "ml-shared", "location": "us-east5", "project": "acme-ml", "nodeLocations": ["us-east5-b"]}
    with pytest.raises(ArgsError) as caught:
        TpuSlices("v6e", {"cluster": ref, "version": "v6e", "topology": "4x5", "slice": 2})  # type: ignore[arg-type]
    paths = [path for path, _ in caught.value.problems]
    assert paths == ["args.slice", "args.cluster.nodeLocations", "args.topology"], caught.value.problems
    assert "did you mean 'node_locations'" in caught.value.problems[1][1]
    assert caught.value.problems[2][1].startswith("'4x5' is not a v6e topology")

