"""gke-ai-batch's CrossGuard policy pack. `rules` holds the checks as plain functions, shared
with synth; `crossguard` wraps them for the Pulumi CLI; `levels` reads per-stack enforcement."""
