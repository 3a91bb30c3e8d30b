"""The IAM a bootstrap recording grants, as plain rows (member, role, resource, condition), and
the iam.md table synth writes from them. Pure functions of a synth.engine.Recording."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Each IAM member resource type, and how to name the resource it grants on.
_GRANT_TYPES = {
    "gcp:projects/iAMMember:IAMMember": lambda i: f"projects/{i.get('project')}",
    "gcp:serviceaccount/iAMMember:IAMMember": lambda i: str(i.get("serviceAccountId")),
    "gcp:storage/bucketIAMMember:BucketIAMMember": lambda i: f"buckets/{i.get('bucket')}",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": lambda i: str(i.get("cryptoKeyId")),
}

STATEFUL_TYPES = (
    "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
    "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
    "gcp:serviceaccount/account:Account",
    "gcp:storage/bucket:Bucket",
    "gcp:kms/keyRing:KeyRing",
    "gcp:kms/cryptoKey:CryptoKey",
)
"""What `production` protects: deleting any of these loses state or identity that cannot be recreated as it was."""


@dataclass(frozen=True)
class Grant:
    member: str
    role: str
    resource: str
    condition: str | None
    """The condition's CEL expression, if any."""

    @property
    def project_wide(self) -> bool:
        return self.resource.startswith("projects/") and "/" not in self.resource[len("projects/") :]


def grants(recording: Any) -> list[Grant]:
    """Every IAM grant the recording registers, in registration order."""
    out = []
    for r in recording.resources:
        resource = _GRANT_TYPES.get(r.type)
        if resource is None:
            continue
        condition = r.inputs.get("condition")
        out.append(Grant(r.inputs["member"], r.inputs["role"], resource(r.inputs), condition.get("expression") if condition else None))
    return out


def identity(member: str, accounts: dict[str, str]) -> str:
    """A member as a person reads it: `dev/preview` for a bootstrap service account."""
    email = member.removeprefix("serviceAccount:")
    return accounts.get(email, member)


def service_accounts(recording: Any) -> dict[str, str]:
    """email -> '<stack>/<preview|deployer>' for the accounts the recording creates."""
    out = {}
    for r in recording.resources:
        if r.type == "gcp:serviceaccount/account:Account":
            # Resources of a stack are named <stack>/<name> (bootstrap/resources.py StackAccess).
            out[f"{r.inputs['accountId']}@{r.inputs['project']}.iam.gserviceaccount.com"] = r.name
    return out


def render_markdown(recording: Any) -> str:
    accounts = service_accounts(recording)
    lines = [
        "# IAM granted by the bootstrap",
        "",
        "| identity | role | resource | condition |",
        "|---|---|---|---|",
    ]
    rows = sorted(grants(recording), key=lambda g: (identity(g.member, accounts), g.role, g.resource))
    for g in rows:
        cells = [identity(g.member, accounts), g.role, g.resource, g.condition or ""]
        lines.append("| " + " | ".join(f"`{c}`" if c else "" for c in (c.replace("|", "\\|") for c in cells)) + " |")
    lines.append("")
    return "\n".join(lines)
