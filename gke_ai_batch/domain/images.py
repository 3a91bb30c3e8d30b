"""Container image references: what is pinned and what is not.

Pure data and functions, so that the config layer and the policy pack (which has no pydantic)
judge an image alike."""

from __future__ import annotations

import re
from typing import NamedTuple

# The reference grammar of distribution/reference (github.com/distribution/reference,
# regexp.go): [domain[:port]/]path-component(/path-component)*[:tag][@digest]. A tag is at
# most 128 word characters, '.' and '-', not starting with '.' or '-'.
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE_RX = re.compile(
    rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?",
    re.ASCII,
)
# Registries address content by its sha256 (OCI image spec, descriptor.md "Digests": sha256 is
# the one algorithm every implementation must support), written in lowercase hex.
_SHA256_RX = re.compile(r"sha256:[0-9a-f]{64}", re.ASCII)
MUTABLE_TAG = "latest"
PIN_HINT = "pin a version tag (e.g. perl:5.40) or a digest (image@sha256:<64 hex digits>)"


class ImageRef(NamedTuple):
    name: str
    tag: str | None
    digest: str | None


def parse(image: str) -> ImageRef | None:
    """The parts of an image reference, or None when it is not one."""
    m = _REFERENCE_RX.fullmatch(image) if isinstance(image, str) else None
    if m is None or len(image) > 255 + 128 + 80:
        return None
    name = f"{m['domain']}/{m['path']}" if m["domain"] else m["path"]
    return ImageRef(name, m["tag"], m["digest"])


def has_digest(image: str) -> bool:
    ref = parse(image)
    return ref is not None and ref.digest is not None and bool(_SHA256_RX.fullmatch(ref.digest))


def pin_problem(image: str) -> str | None:
    """Why an image is not pinned to one build, or None when it is. An untagged image means
    :latest to the container runtime (Kubernetes docs, concepts/containers/images: "If you
    don't specify a tag, Kubernetes assumes you mean the tag latest"), and :latest moves under
    a running platform: two nodes of one slice can run different code."""
    ref = parse(image)
    if ref is None:
        return f"{image!r} is not a container image reference ([registry/]path[:tag][@sha256:digest])"
    if ref.digest is not None:
        if not _SHA256_RX.fullmatch(ref.digest):
            return f"{image!r}: the digest must be sha256:<64 lowercase hex digits>"
        return None
    if ref.tag is None:
        return f"{image!r} has no tag, which means :latest; {PIN_HINT}"
    if ref.tag == MUTABLE_TAG:
        return f"{image!r} uses :latest, which moves to whatever was pushed last; {PIN_HINT}"
    return None
