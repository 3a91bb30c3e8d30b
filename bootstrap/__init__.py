"""gke-ai-batch-bootstrap: the one-time GCP set-up that lets GitHub Actions preview and deploy
the main program's stacks (docs/bootstrap.md). A Pulumi project of its own (bootstrap/Pulumi.yaml)
whose modules live in this package: model (config), resources (what it creates), grants (the IAM
it renders, as a table), synth (the offline render)."""
