"""gke-ai-batch's CrossGuard policy pack: PulumiPolicy.yaml, __main__.py (the entry point the
Pulumi CLI runs), its requirements and the per-stack enforcement in config/. The rules are
gke_ai_batch.policy's, shared with synth."""
