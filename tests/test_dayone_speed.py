"""What keeps the suite (and a user's refused run) quick: work that is only needed once a
stack is valid is not done before it."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

# Runs synth's CLI on a refused stack in this very process, then says which SDK modules it loaded.
_PROBE = """
import sys
from gke_ai_batch.synth.__main__ import main
code = main(["--config", sys.argv[1], "--out", sys.argv[2], "--quiet"])
loaded = sorted(m for m in ("pulumi_gcp", "pulumi_kubernetes", "gke_ai_batch.components") if m in sys.modules)
print(code, *loaded)
"""


def test_a_refused_stack_is_refused_before_the_cloud_sdks_load(tmp_path):
    """The stack program imports its components (pulumi_gcp, pulumi_kubernetes: about half of a
    refused run's CPU time) only once the config is valid."""
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  gcp:project: acme-ml\n  gke-ai-batch:bogus: 1\n")
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(stack), str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert "gke-ai-batch:bogus" in proc.stderr, proc.stderr
    assert proc.stdout.split() == ["2"], f"loaded before the config was refused: {proc.stdout}"
