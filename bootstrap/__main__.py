"""gke-ai-batch-bootstrap: the Workload Identity pool and GitHub provider, the state bucket, the
secrets keys, and per main-program stack a read-only preview identity and a deployer.

`pulumi up` in bootstrap/ runs this program (docs/bootstrap.md); `python -m bootstrap.synth
STACK` runs it offline and writes what it would create. It takes no arguments of its own."""

import sys
from pathlib import Path

# Pulumi runs this file with bootstrap/ as the working folder; the package and the main
# program's config helpers (gke_ai_batch/) are imported from the repository root.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from gke_ai_batch.domain import cli  # noqa: E402

# Only -h/--help is this file's own: under an engine the arguments are the engine's or synth's.
# Answered before pulumi loads.
cli.parser("bootstrap/__main__.py", __doc__).parse_known_args()

import pulumi  # noqa: E402

from bootstrap.model import load_from_pulumi  # noqa: E402
from bootstrap.resources import deploy  # noqa: E402

# Every problem at once, before anything is registered.
config, project = load_from_pulumi(source=f"bootstrap/Pulumi.{pulumi.get_stack()}.yaml")
for name, value in deploy(config, project).items():
    pulumi.export(name, value)
