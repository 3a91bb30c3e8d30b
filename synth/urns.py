"""`python -m synth.urns [STACK ...]` in a checkout: gke_ai_batch.synth.urns's command."""

import sys

from gke_ai_batch.synth.urns import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
