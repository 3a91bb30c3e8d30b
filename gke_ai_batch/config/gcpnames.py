"""Names and references that Google Cloud checks: project ids, Compute Engine resource names,
and the reference forms (a name, a partial path, a self link) the config takes for a network,
a subnetwork or a reservation. One home for each rule, so every key that takes such a value
refuses what Google would refuse, with the same words."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gke_ai_batch.domain.regions import REGION_RX

# Project ids: 6 to 30 lowercase letters, digits or hyphens, starting with a letter, not ending
# with a hyphen (https://cloud.google.com/resource-manager/docs/creating-managing-projects,
# "Before you begin": project ID requirements); legacy domain-scoped projects carry a
# "domain:" prefix. The id reaches resource names, service account emails and file paths, so
# nothing else may pass.
PROJECT_ID = r"(?:[a-z0-9.-]+\.[a-z]+:)?[a-z][-a-z0-9]{4,28}[a-z0-9]"
PROJECT_ID_RX = re.compile(PROJECT_ID, re.ASCII)
PROJECT_ID_RULE = "6 to 30 lowercase letters, digits or '-', starting with a letter, not ending with '-'"

# Compute Engine resource names (networks, subnetworks, reservations, reservation blocks):
# RFC 1035 labels, 1 to 63 characters, [a-z]([-a-z0-9]*[a-z0-9])?
# (https://cloud.google.com/compute/docs/naming-resources#resource-name-format).
GCE_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
GCE_NAME_RX = re.compile(GCE_NAME, re.ASCII)
GCE_NAME_RULE = (
    "1 to 63 lowercase letters, digits or '-', starting with a letter and not ending with '-' "
    "(Compute Engine resource names, RFC 1035)"
)

# The reference forms pulumi-gcp (the Terraform provider's field helpers) accepts for a
# cluster's network and subnetwork and turns into the relative name GKE's API takes:
# hashicorp/terraform-provider-google google/tpgresource/field_helpers.go, ParseGlobalFieldValue
# ("networks": https://www.googleapis.com/compute/<version>/projects/P/global/networks/N,
# projects/P/global/networks/N, global/networks/N, N) and ParseRegionalFieldValue
# ("subnetworks": .../projects/P/regions/R/subnetworks/S, projects/P/regions/R/subnetworks/S,
# regions/R/subnetworks/S, S).
_SELF_LINK = r"(?:https://(?:www|compute)\.googleapis\.com/compute/(?:v1|beta|alpha)/)"
_NETWORK_RX = re.compile(
    rf"(?:(?:{_SELF_LINK}?projects/(?P<project>{PROJECT_ID})/)?global/networks/)?(?P<name>{GCE_NAME})", re.ASCII
)
_SUBNETWORK_RX = re.compile(
    rf"(?:(?:{_SELF_LINK}?projects/(?P<project>{PROJECT_ID})/)?regions/(?P<region>[a-z0-9-]+)/subnetworks/)?"
    rf"(?P<name>{GCE_NAME})",
    re.ASCII,
)
NETWORK_FORMS = "a network name, global/networks/NAME, projects/PROJECT/global/networks/NAME or its self link"
SUBNETWORK_FORMS = (
    "a subnetwork name, regions/REGION/subnetworks/NAME, projects/PROJECT/regions/REGION/subnetworks/NAME "
    "or its self link"
)

# A node pool's specific reservation: a reservation of the cluster's project by name, or a
# shared one of another project as projects/P/reservations/R (Compute Engine
# ReservationAffinity.values: "either a name to a reservation in the same project or
# projects/different-project/reservations/some-reservation-name"), optionally narrowed to one
# of its blocks, R/reservationBlocks/B, and to one sub-block of that,
# R/reservationBlocks/B/reservationSubBlocks/S (GKE docs how-to/consuming-reservations, "Consume a
# specific reservation block"; AI-Hypercomputer/xpk src/xpk/core/reservation.py parse_reservation,
# which takes exactly these forms). Every part is a Compute Engine name.
_RESERVATION_RX = re.compile(
    rf"(?:projects/(?P<project>{PROJECT_ID})/reservations/)?(?P<name>{GCE_NAME})"
    rf"(?:/reservationBlocks/(?P<block>{GCE_NAME})(?:/reservationSubBlocks/(?P<sub_block>{GCE_NAME}))?)?",
    re.ASCII,
)
RESERVATION_FORMS = (
    "a reservation name, projects/PROJECT/reservations/NAME for a shared one, either optionally "
    "followed by /reservationBlocks/BLOCK and then /reservationSubBlocks/SUBBLOCK"
)


@dataclass(frozen=True)
class ReservationRef:
    """The parts of a reservation reference; project None: the cluster's project."""

    name: str
    project: str | None = None
    block: str | None = None
    sub_block: str | None = None


def parse_reservation(value: str) -> ReservationRef | None:
    m = _RESERVATION_RX.fullmatch(value)
    return None if m is None else ReservationRef(m["name"], m["project"], m["block"], m["sub_block"])


def reservation_reference(ref: ReservationRef) -> str:
    """The value GKE takes under compute.googleapis.com/reservation-name: the name alone in the
    cluster's project, projects/P/reservations/R for another's, then the block and sub-block."""
    out = ref.name if ref.project is None else f"projects/{ref.project}/reservations/{ref.name}"
    if ref.block is not None:
        out += f"/reservationBlocks/{ref.block}"
        if ref.sub_block is not None:
            out += f"/reservationSubBlocks/{ref.sub_block}"
    return out


_PARTS_RULE = f"names are {GCE_NAME_RULE}; PROJECT is a project id"


def is_project_id(value: object) -> bool:
    return isinstance(value, str) and bool(PROJECT_ID_RX.fullmatch(value))


def project_id_problem(value: str) -> str | None:
    if is_project_id(value):
        return None
    return f"{value!r} is not a Google Cloud project id: {PROJECT_ID_RULE}"


def check_project_id(value: str) -> str:
    problem = project_id_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def check_gce_name(value: str, what: str = "name") -> str:
    if not GCE_NAME_RX.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a Compute Engine name: {GCE_NAME_RULE}")
    return value


@dataclass(frozen=True)
class Reference:
    """What a network or subnetwork reference names: the project and region it says (None
    where it leaves them to the cluster's), and the resource's name."""

    name: str
    project: str | None = None
    region: str | None = None


def parse_network(value: str) -> Reference | None:
    m = _NETWORK_RX.fullmatch(value)
    return Reference(m["name"], m["project"]) if m else None


def parse_subnetwork(value: str) -> Reference | None:
    m = _SUBNETWORK_RX.fullmatch(value)
    if m is None or (m["region"] is not None and not REGION_RX.fullmatch(m["region"])):
        return None
    return Reference(m["name"], m["project"], m["region"])


def subnetwork_project_problem(network: Reference, subnetwork: Reference | None, project: str | None = None) -> str | None:
    """Why GKE would refuse a cluster on this network and subnetwork ("Subnetwork ... is not valid
    for Network ...", hashicorp/terraform-provider-google#7895): a subnetwork belongs to a network
    of its own project (Shared VPC included: the host project holds both;
    https://cloud.google.com/vpc/docs/shared-vpc). A reference without a project names one of
    the cluster's `project` (the provider resolves it so: ParseGlobalFieldValue and
    ParseRegionalFieldValue above), and the network defaults to that project's "default".
    None when the projects agree or one of them is not known."""
    if subnetwork is None:
        return None
    network_project, subnetwork_project = network.project or project, subnetwork.project or project
    if network_project is None or subnetwork_project is None or network_project == subnetwork_project:
        return None
    if network.project is None:
        hint = f"; for a Shared VPC name the host project's network: projects/{subnetwork_project}/global/networks/{network.name}"
    elif subnetwork.project is None:
        region = subnetwork.region or "REGION"
        hint = (f"; for a Shared VPC name the host project's subnetwork: "
                f"projects/{network_project}/regions/{region}/subnetworks/{subnetwork.name}")
    else:
        hint = ""
    return (
        f"the subnetwork is in project {subnetwork_project!r} and the network in {network_project!r}: "
        f"a subnetwork is in its network's project, and a reference without a project names the cluster's{hint}"
    )


def check_network(value: str) -> str:
    if parse_network(value) is None:
        raise ValueError(f"{value!r} is not a network reference: {NETWORK_FORMS}; {_PARTS_RULE}")
    return value


def check_subnetwork(value: str) -> str:
    if parse_subnetwork(value) is None:
        raise ValueError(
            f"{value!r} is not a subnetwork reference: {SUBNETWORK_FORMS}; {_PARTS_RULE}"
        )
    return value


def check_reservation(value: str) -> str:
    if parse_reservation(value) is None:
        raise ValueError(f"{value!r} is not a reservation reference: {RESERVATION_FORMS}; {_PARTS_RULE}")
    return value
