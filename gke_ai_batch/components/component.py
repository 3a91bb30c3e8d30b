"""The base of every public component: the call itself (name, opts) is checked like its args."""

from typing import Generic, Self, TypeVar

import pulumi

from gke_ai_batch.config.errors import ArgsError, at_arg

_BARE = object()


class Component(pulumi.ComponentResource):
    """Refuses a name that is not a non-empty string and opts that are not ResourceOptions as an
    ArgsError before any check or registration. Pulumi would refuse both with a bare TypeError
    raised from deep inside the component (pulumi/resource.py, Resource.__init__: "Expected
    resource name to be a string", "Expected resource options to be a ResourceOptions instance";
    ResourceOptions.merge: "Expected opts1 to be a ResourceOptions instance"), which reads as a
    library bug rather than the caller's mistake. __new__ runs before every subclass's __init__,
    so one check covers every component. A bare cls.__new__(cls) (copy, pickle) checks nothing."""

    def __init_subclass__(cls, **kwargs):
        # help(X.__init__) would otherwise show pulumi.ComponentResource.__init__'s docstring
        # (inspect.getdoc inherits it): `t`, `remote`, `package_ref`, none of which X takes.
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not init.__doc__:
            args = init.__annotations__.get("args")
            args_name = getattr(args, "__name__", args) or "its args"
            summary = (cls.__doc__ or "").strip().split("\n\n")[0]
            init.__doc__ = (
                f"Create a {cls.__name__}. {summary}\n\n"
                f":param name: the Pulumi resource name; every child's name starts with it.\n"
                f":param args: {args_name}, checked on construction: every problem at once, as an "
                f"ArgsError at its arg path, before anything is registered.\n"
                f":param opts: pulumi.ResourceOptions; parent, provider and protect reach every child."
            )

    def __new__(cls, name=_BARE, args=None, opts=None, *rest, **kwargs):
        if name is _BARE:
            return super().__new__(cls)
        problems = []
        if not isinstance(name, str) or not name:
            problems.append(at_arg("name", f"must be a non-empty string (the Pulumi resource name), not {name!r}"))
        if opts is not None and not isinstance(opts, pulumi.ResourceOptions):
            problems.append(at_arg("opts", f"must be a pulumi.ResourceOptions or None, not {type(opts).__name__}"))
        elif opts is not None and not isinstance(opts.depends_on, (type(None), pulumi.Resource, list, tuple)):
            # Pulumi takes Input[Sequence[Input[Resource]]], but the components hand what it
            # lists to each child, after their own ([*waits, *previous]): an Output of a list
            # became one element resolving to a list, which the SDK cannot hash
            # (pulumi/runtime/_depends_on.py, _resolve_depends_on: all_deps.add(direct_dep)).
            problems.append(at_arg("opts.depends_on", f"must be a Resource or a list of them (each may be an Output of one), "
                                                f"not {type(opts.depends_on).__name__}: the component's children wait for each"))
        if problems:
            raise ArgsError(f"{cls.__name__} {name if isinstance(name, str) else repr(name)}", problems)
        return super().__new__(cls)


Spec = TypeVar("Spec")


class Planned(Component, Generic[Spec]):
    """A component the stack program also builds from its plan's spec, registered as planned and
    not checked again (gke_ai_batch/components/platform.py); a program's constructor validates its
    args, makes the same spec with the same plan functions, and registers it by `_register`."""

    def _register(self, name: str, spec: Spec, opts: pulumi.ResourceOptions | None) -> None:
        raise NotImplementedError

    @classmethod
    def from_spec(cls, name: str, spec: Spec, opts: pulumi.ResourceOptions | None = None) -> Self:
        """The component for what the stack validated and planned already: registered as planned."""
        self = cls.__new__(cls)
        self._register(name, spec, opts)
        return self
