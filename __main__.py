"""gke-ai-batch: load the stack config, derive the plan, register the components.

`pulumi up` runs this program against a stack (stacks/Pulumi.<stack>.yaml); `python -m synth
STACK` runs it offline under a recording engine and writes what it would create. It takes no
arguments of its own."""

import pulumi

from components import cli
from components.config import ConfigError, gcp_project_problem, load_from_pulumi
from components.plan import build_plan
from components.plan.admission import Admission
from components.platform import deploy

# Only -h/--help is this file's own: under an engine the arguments are the engine's or synth's.
cli.parser("__main__.py", __doc__).parse_known_args()

source = f"stacks/Pulumi.{pulumi.get_stack()}.yaml"
project = pulumi.Config("gcp").get("project")
# Every problem at once: gcp:project's with the stack config's.
project_problem = [p for p in [gcp_project_problem(project)] if p]
try:
    config = load_from_pulumi(source=source)
except ConfigError as exc:
    raise ConfigError(project_problem + exc.problems, source) from None
if project_problem:
    raise ConfigError(project_problem, source)
if config.fleet is not None:
    # Checked in full (components/config/fleet.py), not yet deployed: rendering a fleet as one
    # cluster would show a platform that is not the one the stack describes.
    raise ConfigError(
        [("gke-ai-batch:fleet", "valid, but fleets are not deployed yet (one provider per cluster and the "
          "MultiKueue objects land next); the stack's checks above all passed")],
        source,
    )
# Module-level, so that synth reports on the very plan the program deployed.
plan = build_plan(config, project)
# What Kueue would never admit or kube-scheduler never place is refused before any resource.
admission = Admission(plan)
if admission.problems():
    raise ConfigError(admission.problems(), source)
for name, value in deploy(plan).items():
    pulumi.export(name, value)
