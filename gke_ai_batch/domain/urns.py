"""Pulumi URNs, read and built in one place: everything that reads a URN (a base render's, a
policy finding's, the parent of a registration) goes through `parse`, which refuses text that
is no URN instead of splitting it blindly, and everything that builds one through `make`."""

from __future__ import annotations

from dataclasses import dataclass

# pulumi/pulumi sdk/go/common/resource/urn/urn.go (v3): urn:pulumi:STACK::PROJECT::TYPE::NAME,
# TYPE the qualified type (parent types first, joined by `$`), NAME everything after the third
# `::` (a name may itself hold `::`); IsValid asks for the prefix and at least three `::`.
PREFIX = "urn:pulumi:"
DELIMITER = "::"
TYPE_DELIMITER = "$"
SHAPE = "urn:pulumi:STACK::PROJECT::TYPE::NAME"


class UrnError(ValueError):
    """Text that is not a Pulumi URN."""


@dataclass(frozen=True)
class Urn:
    stack: str
    project: str
    qualified_type: str  # parent types first: `a:b:C$d:e:F`
    name: str

    @property
    def type(self) -> str:
        """The resource's own type: the qualified type's last part (urn.go Type)."""
        return self.qualified_type.rsplit(TYPE_DELIMITER, 1)[-1]

    def __str__(self) -> str:
        return make(self.stack, self.project, self.qualified_type, self.name)


def parse(text: object) -> Urn:
    """A Pulumi URN's parts; UrnError for anything else (no prefix, fewer than three `::`, an
    empty stack, project or type: Pulumi never builds one)."""
    if not isinstance(text, str) or not text.startswith(PREFIX):
        raise UrnError(f"{_shown(text)} is not a Pulumi URN ({SHAPE})")
    parts = text[len(PREFIX) :].split(DELIMITER, 3)
    if len(parts) != 4 or not all(parts[:3]):
        raise UrnError(f"{_shown(text)} is not a Pulumi URN ({SHAPE})")
    return Urn(*parts)


def make(stack: str, project: str, qualified_type: str, name: str) -> str:
    return PREFIX + DELIMITER.join((stack, project, qualified_type, name))


def name_of(text: str) -> str:
    """A URN's resource name, or the text itself where it is no URN (a stack-level finding)."""
    try:
        return parse(text).name
    except UrnError:
        return text


def provider_urn(reference: str) -> str:
    """The provider's URN in a provider reference `<urn>::<id>` (pulumi/pulumi
    pkg/resource/deploy/providers/reference.go ParseReference: the id follows the last `::`)."""
    return reference.rsplit(DELIMITER, 1)[0]


def _shown(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= 80 else shown[:77] + "…"
