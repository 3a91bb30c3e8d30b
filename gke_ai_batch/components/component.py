"""The base of every public component: the call itself (name, opts) is checked like its args."""

import pulumi

from gke_ai_batch.config.errors import ArgsError

_BARE = object()


class Component(pulumi.ComponentResource):
    """Refuses a name that is not a non-empty string and opts that are not ResourceOptions as an
    ArgsError before any check or registration. Pulumi would refuse both with a bare TypeError
    raised from deep inside the component (pulumi/resource.py, Resource.__init__: "Expected
    resource name to be a string", "Expected resource options to be a ResourceOptions instance";
    ResourceOptions.merge: "Expected opts1 to be a ResourceOptions instance"), which reads as a
    library bug rather than the caller's mistake. __new__ runs before every subclass's __init__,
    so one check covers every component. A bare cls.__new__(cls) (copy, pickle) checks nothing."""

    def __new__(cls, name=_BARE, args=None, opts=None, *rest, **kwargs):
        if name is _BARE:
            return super().__new__(cls)
        problems = []
        if not isinstance(name, str) or not name:
            problems.append(("name", f"must be a non-empty string (the Pulumi resource name), not {name!r}"))
        if opts is not None and not isinstance(opts, pulumi.ResourceOptions):
            problems.append(("opts", f"must be a pulumi.ResourceOptions or None, not {type(opts).__name__}"))
        if problems:
            raise ArgsError(f"{cls.__name__} {name if isinstance(name, str) else repr(name)}", problems)
        return super().__new__(cls)
