"""The policy rules as plain functions over what a program registers: `rules` holds the checks,
shared by synth (gke_ai_batch.synth.policy) and the CrossGuard pack; `crossguard` wraps them for
the Pulumi CLI (the pack folder policy/ of the repository serves them); `levels` reads per-stack
enforcement. Importing this package loads neither pydantic nor the Pulumi SDK: the pack's
virtualenv has only pulumi-policy and pulumi."""
