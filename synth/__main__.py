"""`python -m synth` in a checkout: the renderer is gke_ai_batch.synth (installed, the
console script `gke-ai-batch synth`); this keeps the command the docs and CI use."""

from gke_ai_batch.synth.__main__ import command

if __name__ == "__main__":
    command()
