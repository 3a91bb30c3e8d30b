"""What keeps the test suite quick without changing what its tests prove: the faster tools it
leans on write what the slower ones did."""

from __future__ import annotations

import yaml

import pytest

from conftest import ROOT, STACKS
from synth import yamlread


# Scalars the fuzzers draw: what YAML 1.1 or yaml.v2 reads as another type, quotes, non-ASCII,
# control characters, a line longer than the emitters' width.
ODD = {"config": {"a": ["yes", "n", "1e3", "0x1F", "", " lead", "a: b", "#x", "é", "\x00\t", "x" * 200, "~", None, 1.5, True]}}


def _config(stack: str):
    return ODD if stack == "odd" else yamlread.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()).data


@pytest.mark.parametrize("stack", [*STACKS, "odd"])
def test_stack_files_are_written_as_pyyamls_own_emitter_writes_them(stack):
    """yamlread.dump uses libyaml's emitter (the tests write thousands of stack files); its text
    is the pure-Python emitter's, byte for byte, and reads back as what was written."""
    config = _config(stack)
    assert yamlread._StackDumper.__mro__[1] is getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class PureDumper(yaml.SafeDumper):
        pass

    PureDumper.add_representer(str, yamlread._represent_str)
    text = yamlread.dump(config)
    assert text == yaml.dump(config, Dumper=PureDumper, sort_keys=False, allow_unicode=False)
    assert yamlread.load(text).data == config
