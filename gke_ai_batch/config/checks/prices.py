"""Negotiated prices (docs/cost.md)."""

from __future__ import annotations

from typing import Iterator

from gke_ai_batch.domain import autopilot_prices, catalogue
from gke_ai_batch.config.base import RuleError
from gke_ai_batch.config.checks import check


@check("prices")
def prices(cfg, ctx) -> Iterator[RuleError]:
    """A price names what the pricing prices (gke_ai_batch/domain/pricing.py): a rate for
    anything else would silently price nothing."""
    for name in cfg.prices:
        if name in catalogue.TPU_GENERATIONS or name in catalogue.GPU_TYPES:
            continue
        if name.startswith(autopilot_prices.OVERRIDE_PREFIX):
            resource = name[len(autopilot_prices.OVERRIDE_PREFIX):]
            if resource not in autopilot_prices.UNITS:
                yield RuleError(("prices", name), f"{name!r}: Autopilot bills {', '.join(autopilot_prices.UNITS)}; "
                                f"name one as {autopilot_prices.OVERRIDE_PREFIX}RESOURCE")
            continue
        problem = cfg.catalogue.machine_type_problem(name)
        if problem:
            yield RuleError(
                ("prices", name),
                f"{name!r} is neither a TPU generation ({', '.join(catalogue.TPU_GENERATIONS)}), a GPU type "
                f"({', '.join(catalogue.GPU_TYPES)}), a machine type nor an Autopilot rate "
                f"({autopilot_prices.OVERRIDE_PREFIX}RESOURCE): {problem}",
            )
