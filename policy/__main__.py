"""CrossGuard entry point: `pulumi preview --policy-pack policy --policy-pack-config
policy/config/<stack>.json`. The CLI runs this file (runpy, as __main__) in the pack's own
virtualenv; it only serves the policies that gke_ai_batch.policy.crossguard builds from the rules
of gke_ai_batch.policy.rules, which import neither pydantic nor the Pulumi SDK."""

import sys
from pathlib import Path

# The rules read gke_ai_batch.domain.catalogue, the table the program derives pools from: put the
# repository root, not just this folder, on the path.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_USAGE = """

Serves the pack's policies to the Pulumi engine until it is done; it is not meant to be run by
hand. `python -m synth STACK` evaluates the same rules offline (policy.json)."""

if __name__ == "__main__":
    from gke_ai_batch.domain import cli

    # Only -h/--help is this file's own (under the engine the arguments are the analyzer's),
    # answered before the policy SDK and the rules load.
    cli.parser("python -m policy", __doc__ + _USAGE).parse_known_args()

from pulumi_policy import PolicyPack  # noqa: E402

from gke_ai_batch.policy.crossguard import PACK_ENFORCEMENT, PACK_NAME, policies  # noqa: E402

POLICIES = policies()

if __name__ == "__main__":
    # Starts the analyzer's gRPC server and serves until the engine is done.
    PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=PACK_ENFORCEMENT)
