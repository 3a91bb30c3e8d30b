"""gke-ai-batch: a GKE platform for AI/ML batch work on TPUs and GPUs, as a library.

One direction of flow, each layer in its own package (docs/how-it-works.md):
domain (dependency-free facts) → config (the stack-file schema and its checks) → plan (config →
one spec per component) → model (the admission and placement model) → components (Pulumi
component resources). The policy pack imports domain and model only, so importing this package
imports nothing else."""
