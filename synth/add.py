"""`python -m synth.add NAME` in a checkout: gke_ai_batch.synth.add's command."""

import sys

from gke_ai_batch.synth.add import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
