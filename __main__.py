"""gke-ai-batch: load the stack config, derive the plan, register the components.

`pulumi up` runs this program against a stack (stacks/Pulumi.<stack>.yaml); `python -m synth
STACK` runs it offline under a recording engine and writes what it would create. It takes no
arguments of its own."""

if __name__ == "__main__":
    # The Pulumi CLI runs this file as a script (run_name "__main__"). Only -h/--help is this
    # file's own (under the engine the arguments are the engine's), answered before pulumi and
    # pydantic load (~0.6 s).
    from gke_ai_batch.domain import cli

    cli.parser("__main__.py", __doc__).parse_known_args()

import pulumi

from gke_ai_batch.domain import pricing
from gke_ai_batch.config import ConfigError, gcp_project_problem, load_from_pulumi
from gke_ai_batch.plan import build_plan
from gke_ai_batch.plan.admission import Admission
from gke_ai_batch.plan.fleet import build_fleet_plan
from gke_ai_batch.plan.program import ProgramResult


def program() -> ProgramResult:
    """The stack program. `pulumi up` calls it below; synth calls it under its recording engine
    and reports on what it returns (gke_ai_batch/plan/program.py).

    The components (pulumi_gcp, pulumi_kubernetes: ~0.45 s of imports) are imported only once
    the config is valid: a refused stack, and --help, answer without them."""
    source = f"stacks/Pulumi.{pulumi.get_stack()}.yaml"
    project = pulumi.Config("gcp").get("project")
    # Every problem at once: gcp:project's with the stack config's.
    project_problem = [p for p in [gcp_project_problem(project)] if p]
    try:
        config = load_from_pulumi(source=source, project=project)
    except ConfigError as exc:
        raise ConfigError(project_problem + exc.findings, source) from None
    if project_problem:
        raise ConfigError(project_problem, source)
    if config.fleet is not None:
        # A fleet: a plan per worker and the manager's; each cluster's objects answer to the same
        # admission model a single-cluster stack's do, and the fleet's own rules on top.
        fleet_plan = build_fleet_plan(config, project)
        plan = fleet_plan.manager
        # The manager's model answers for its queues in the report; it runs no pods, so only the
        # workers' models can refuse (a worker's queue its nodes cannot serve).
        admission = Admission(plan, fleet_plan.multikueue)
        problems = fleet_plan.problems() + [p for w in fleet_plan.workers for p in Admission(w.plan).problems()]
        if problems:
            raise ConfigError(problems, source)
        from gke_ai_batch.components.fleet.deploy import deploy_fleet

        outputs = deploy_fleet(fleet_plan)
    else:
        fleet_plan = None
        plan = build_plan(config, project)
        # What Kueue would never admit or kube-scheduler never place is refused before any resource.
        admission = Admission(plan)
        if admission.problems():
            raise ConfigError(admission.problems(), source)
        from gke_ai_batch.components.platform import deploy

        outputs = deploy(plan)
    if config.budget is not None:
        # Recorded for the stack-budget policy, which reads it off the stack's outputs (pricing.BUDGET_OUTPUT).
        outputs[pricing.BUDGET_OUTPUT] = pricing.budget_output(config.budget, config.prices)
    for name, value in outputs.items():
        pulumi.export(name, value)
    # What synth reports on: the very plan and verdicts the program deployed.
    return ProgramResult(config=config, plan=plan, admission=admission, fleet=fleet_plan)


if __name__ == "__main__":
    program()
