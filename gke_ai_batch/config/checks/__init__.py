"""The stack's cross-key rules, each a small function registered with `@check`.

A check is `fn(cfg: StackConfig, ctx: Context) -> Iterable[RuleError]`, about one top-level
key (`key`, for the docs and tests/test_checks_registry.py). StackConfig's validator runs every
check in registry order, then sorts the problems by the stack's keys (`stack_order`): one
entry's problems keep the order their checks ran in. The order is MODULES, then each module's
checks in the order they are defined; adding a rule is one function with `@check` in the
module of its concern (a new concern: a new module, named in MODULES).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from gke_ai_batch.config.base import RuleError

# The modules of checks, in the order they run.
MODULES = (
    "cluster", "kueue", "prices", "metrics", "fleet", "pools", "computeclasses", "flavors", "queues", "teams",
    "priorities", "workloads", "topology", "network", "checkpoints",
)


@dataclass(frozen=True)
class Context:
    """What a check may need beyond the config: gcp:project (config.load passes it)."""

    project: str | None = None


@dataclass(frozen=True)
class Check:
    fn: Callable[..., Iterable[RuleError]]
    key: str
    # False: skipped on a fleet's manager (its pools, queues and workloads are checked per worker).
    on_manager: bool = True
    # False: run once on the stack, not on each fleet worker's single-cluster config.
    per_worker: bool = True

    @property
    def name(self) -> str:
        return f"{self.fn.__module__.rsplit('.', 1)[-1]}.{self.fn.__name__}"


_registered: list[tuple[str, int, Check]] = []
_ordered: list[Check] = []


def check(key: str, *, on_manager: bool = True, per_worker: bool = True):
    """Register `fn` as a check about the stack key `key`."""

    def register(fn):
        package, _, module = fn.__module__.rpartition(".")
        if package != __name__ or module not in MODULES:
            # The order is MODULES': a check outside it would run nowhere (or anywhere).
            raise ValueError(f"{fn.__module__}.{fn.__name__}: checks live in {__name__}, in a module named in MODULES")
        _registered.append((module, len(_registered), Check(fn, key, on_manager, per_worker)))
        return fn

    return register


def registry() -> list[Check]:
    """Every check, in the order they run."""
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    if len(_ordered) != len(_registered):
        _ordered[:] = (c for _, _, c in sorted(_registered, key=lambda r: (MODULES.index(r[0]), r[1])))
    return _ordered


def problems(cfg, ctx: Context, *, worker: bool = False) -> Iterator[RuleError]:
    """Every check's problems, unsorted. `worker`: cfg is a fleet worker's single-cluster config."""
    for c in registry():
        if (worker and not c.per_worker) or (cfg.fleet is not None and not c.on_manager):
            continue
        yield from c.fn(cfg, ctx)


def stack_problems(cfg, ctx: Context) -> list[RuleError]:
    """Every problem of the stack, in the order of its keys."""
    order = {field.alias or name: i for i, (name, field) in enumerate(type(cfg).model_fields.items())}

    def stack_order(problem: RuleError) -> tuple[int, float]:
        # By top-level key as StackConfig declares them, then by entry (a key's problems about
        # the whole list after its entries'). The sort is stable.
        head, *rest = problem.path
        entry = rest[0] if rest and isinstance(rest[0], int) else math.inf
        return order[head], entry

    return sorted(problems(cfg, ctx), key=stack_order)
