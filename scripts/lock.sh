#!/usr/bin/env bash
# Compiles the top-level inputs (*.in) into the hashed lock files that every install uses:
#   requirements-dev.in    -> requirements-dev.txt    (runtime + tests and tools)
#   requirements.in        -> requirements.txt        (runtime: what `pulumi up` installs)
#   policy/requirements.in -> policy/requirements.txt (the CrossGuard pack's own venv)
#   requirements-pip.in    -> requirements-pip.txt    (pip itself, installed first in CI's venvs)
# The dev lock is resolved first and constrains the other two, so a package in two locks has one
# version in both: the runtime packages that `pulumi up` and the pack install are the ones the
# tests ran with.
# Extra arguments go to every compile, e.g. `--upgrade-package certifi`.
# Needs the network (PyPI) and uv, which requirements-dev.txt installs into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
uv=${UV:-.venv/bin/uv}

compile() {
    # --universal: one lock for Linux, macOS and Windows (platform-only packages carry markers);
    # --python-version 3.11: the oldest Python the locks must serve.
    "$uv" pip compile --quiet --generate-hashes --universal --python-version 3.11 \
        --custom-compile-command "scripts/lock.sh" "$@"
}

compile requirements-dev.in -o requirements-dev.txt "$@"
compile requirements.in --constraint requirements-dev.txt -o requirements.txt "$@"
compile policy/requirements.in --constraint requirements-dev.txt -o policy/requirements.txt "$@"
compile requirements-pip.in -o requirements-pip.txt "$@"
