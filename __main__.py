"""gke-ai-batch: load the stack config, derive the plan, register the components."""

import pulumi

from components.config import ConfigError, load_from_pulumi
from components.plan import build_plan
from components.platform import deploy

config = load_from_pulumi(source=f"stacks/Pulumi.{pulumi.get_stack()}.yaml")
project = pulumi.Config("gcp").get("project")
if not project:
    raise ConfigError([("gcp:project", "required: the Google Cloud project to deploy into")])
# Module-level, so that synth reports on the very plan the program deployed.
plan = build_plan(config, project)
for name, value in deploy(plan).items():
    pulumi.export(name, value)
