"""CrossGuard entry point: `pulumi preview --policy-pack policy --policy-pack-config
policy/config/<stack>.json`. The CLI runs this file (runpy, as __main__) in the pack's own
virtualenv; it only serves the policies that policy.crossguard builds from policy.rules."""

import sys
from pathlib import Path

# The rules read components.catalogue, the table the program derives pools from: put the
# repository root, not just this folder, on the path.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pulumi_policy import PolicyPack

from policy.crossguard import PACK_ENFORCEMENT, PACK_NAME, policies

POLICIES = policies()

if __name__ == "__main__":
    # Starts the analyzer's gRPC server and serves until the engine is done.
    PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=PACK_ENFORCEMENT)
