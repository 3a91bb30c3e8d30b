"""What the stack program hands back to whoever called it: the protocol between `__main__.py`
and synth.

The stack program is a function, `program() -> ProgramResult` (in `__main__.py`). `pulumi up`
runs the file as a script, whose `if __name__ == "__main__":` block calls it; synth loads the
file as a module and calls the same function under its recording engine, then reports on the
config, plan and verdicts it returns instead of reading the program's module globals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: the program builds these, this module only names them
    from gke_ai_batch.config.stack import StackConfig
    from gke_ai_batch.plan import Plan
    from gke_ai_batch.plan.admission import Admission
    from gke_ai_batch.plan.fleet import FleetPlan

ENTRY = "program"
"""The name of the stack program's function (synth.engine.run's `entry`)."""


@dataclass(frozen=True)
class ProgramResult:
    config: StackConfig
    """The validated stack config: the budget and price overrides the policy pack and cost table read."""
    plan: Plan
    """The plan the program deployed (a fleet's: its manager's)."""
    admission: Admission
    """The admission model's verdicts on `plan`."""
    fleet: FleetPlan | None = None
    """A fleet stack's plan of every cluster; None for a single cluster."""
