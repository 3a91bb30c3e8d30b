"""The stack's cross-key rules, each a small function registered with `@check`.

A check is `fn(cfg: StackConfig, ctx: Context) -> Iterable[RuleError]`, about one top-level
key (`key`, for the docs and tests/test_checks_registry.py). StackConfig's validator runs every
check in registry order, then sorts the problems by the stack's keys (`stack_order`): one
entry's problems keep the order their checks ran in. The order is MODULES, then each module's
checks in the order they are defined; adding a rule is one function with `@check` in the
module of its concern (a new concern: a new module, named in MODULES).

A stack with shape errors (a wrong type, an unknown key) still gets every rule that can run
(`partial_problems`): its invalid keys and list entries are `Unknown`, and a check that reads
one stops there, keeping what it found before (that depended on valid values only). An
`@entry` rule covers each valid entry of a list that has invalid ones, which the key's
checks, stopping at the first invalid entry, may not reach; a rule across a list's entries (a
name declared twice) walks its `valid` entries, so it holds among those.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

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
_entry_rules: list[Check] = []


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


def entry(key: str, *, on_manager: bool = True):
    """Register `fn(cfg, ctx, i, entry)` as the rules about one entry of the list `key`, paths
    from the stack's root: run on each valid entry of a list that has invalid ones (on a valid
    list the key's checks cover every entry). It reads of the stack only the narrow facts the
    entry's rules need, so an invalid key it does not need does not stop it."""

    def register(fn):
        _entry_rules.append(Check(fn, key, on_manager))
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
    for c in _applying(registry(), cfg, worker):
        yield from c.fn(cfg, ctx)


def _applying(found: list[Check], cfg, worker: bool = False) -> list[Check]:
    """The checks that apply to cfg: on a fleet's manager not those checked per worker."""
    # `is not None` answers on a partial stack too: an invalid fleet is still a fleet.
    return [c for c in found if not ((worker and not c.per_worker) or (cfg.fleet is not None and not c.on_manager))]


def stack_problems(cfg, ctx: Context) -> list[RuleError]:
    """Every problem of the stack, in the order of its keys."""
    order = stack_order(type(cfg))
    return sorted(problems(cfg, ctx), key=lambda p: order(p.path))


def stack_order(stack_type) -> Callable[[Sequence], tuple[float, float]]:
    """The sort key of a key path: by top-level key as the stack model declares them (an
    unknown key after them all), then by entry (a key's problems about the whole list after
    its entries'). Sorts are stable, so one entry's problems keep the order they were found in."""
    order = {field.alias or name: i for i, (name, field) in enumerate(stack_type.model_fields.items())}

    def key(path: Sequence) -> tuple[float, float]:
        if not path:
            return -1, -1
        head, *rest = path
        entry = rest[0] if rest and isinstance(rest[0], int) else math.inf
        return order.get(head, len(order)), entry

    return key


class Unknowable(Exception):
    """A rule read a value that failed validation (`Unknown`): what it would say is unknown."""


class Unknown:
    """An invalid key or list entry of a partial stack. Reading it in any way (an attribute,
    truth, length, iteration, comparison, hashing, formatting, isinstance) raises Unknowable;
    only `is None` answers, correctly: a value was given."""

    __slots__ = ("where",)

    def __init__(self, where: tuple):
        object.__setattr__(self, "where", where)

    def _unknown(self, *args: Any, **kwargs: Any):
        raise Unknowable(object.__getattribute__(self, "where"))

    @property
    def __class__(self):  # isinstance() asks for it when the type alone does not answer
        self._unknown()

    __getattr__ = __setattr__ = __call__ = _unknown
    __bool__ = __len__ = __iter__ = __contains__ = __getitem__ = _unknown
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _unknown  # type: ignore[assignment]
    __str__ = __repr__ = __format__ = __int__ = __float__ = __index__ = _unknown  # type: ignore[assignment]
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __or__ = __ror__ = _unknown


def valid(entries: Iterable[Any]) -> list[tuple[int, Any]]:
    """Each entry of a list that validated, with its index: every entry of a valid stack; on a
    partial stack its invalid entries (Unknown) are left out, so a rule across entries (a name
    declared twice) still judges the others, and never on what it cannot see."""
    return [(i, e) for i, e in enumerate(entries) if type(e) is not Unknown]


def known(found: Iterable[RuleError]) -> list[RuleError]:
    """The problems a check finds before it reads an Unknown value: each depends on valid
    values only, so it holds whatever the invalid ones are."""
    out: list[RuleError] = []
    try:
        for problem in found:
            out.append(problem)
    except Unknowable:
        pass
    return out


def partial_problems(cfg, ctx: Context, holed: Mapping[str, str]) -> list[RuleError]:
    """Every problem the rules can find in a stack whose invalid keys and entries are Unknown,
    unsorted: each check up to its first read of one, and the @entry rules on every valid
    entry of the lists in `holed` (key -> field name), which have invalid entries."""
    found: list[RuleError] = []
    for c in _applying(registry(), cfg):  # registry() also imports the @entry rules
        found += known(c.fn(cfg, ctx))
    for c in _applying([c for c in _entry_rules if c.key in holed], cfg):
        entries = valid(getattr(cfg, holed[c.key]))
        for n, (i, e) in enumerate(entries):
            # A copy of an earlier entry repeats its problems (the key's checks say "declared twice").
            if all(e != other for _, other in entries[:n]):
                found += known(c.fn(cfg, ctx, i, e))
    return found
