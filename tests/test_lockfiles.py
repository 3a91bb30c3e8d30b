"""The lock files (requirements*.txt, policy/requirements.txt) stay in step with their inputs
(*.in) and stay hash-checked, without the network: scripts/lock.sh is the only thing that
writes them (docs/dependencies.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

# lock file: its input, and the lock whose versions it must share (scripts/lock.sh constrains
# the runtime and pack locks by the dev lock).
LOCKS = {
    "requirements-dev.txt": "requirements-dev.in",
    "requirements.txt": "requirements.in",
    "policy/requirements.txt": "policy/requirements.in",
}
DEV_LOCK = "requirements-dev.txt"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?:\s*;.*)?$")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def top_level_pins(in_file: str) -> dict[str, str]:
    """name -> version for every pin in an .in file and the .in files it includes (-r)."""
    path = ROOT / in_file
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith(("-c ", "--constraint ")):
            continue
        if line.startswith("-r "):
            pins.update(top_level_pins(str((path.parent / line[3:].strip()).relative_to(ROOT))))
            continue
        match = _PIN.match(line)
        assert match, f"{in_file}: {line!r} is not pinned with == (top-level inputs are exact pins)"
        pins[normalize(match[1])] = match[2]
    return pins


def lock_entries(lock: str) -> dict[str, dict]:
    """name -> {version, hashes, via} for every requirement in a lock file."""
    entries: dict[str, dict] = {}
    current = None
    for line in re.sub(r"\\\n\s*", " ", (ROOT / lock).read_text()).splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            via = stripped.lstrip("#").strip().removeprefix("via").strip()
            if current is not None and via:
                current["via"].append(via)
            continue
        if not stripped:
            continue
        requirement, *options = stripped.split(" --")
        match = _PIN.match(requirement.strip())
        assert match, f"{lock}: {requirement!r} is not an exact pin"
        hashes = {o.removeprefix("hash=") for o in options if o.startswith("hash=sha256:")}
        assert len(hashes) == len(options), f"{lock}: {match[1]} has options other than --hash: {options}"
        current = entries[normalize(match[1])] = {"version": match[2], "hashes": hashes, "via": []}
    return entries


@pytest.mark.parametrize("lock", LOCKS)
def test_every_locked_package_is_pinned_and_hashed(lock):
    entries = lock_entries(lock)
    assert entries
    unhashed = [name for name, e in entries.items() if not e["hashes"]]
    assert not unhashed, f"{lock}: no --hash for {unhashed}; run scripts/lock.sh"


@pytest.mark.parametrize("lock, in_file", LOCKS.items())
def test_every_top_level_pin_is_locked_at_its_version(lock, in_file):
    entries = lock_entries(lock)
    for name, version in top_level_pins(in_file).items():
        assert name in entries, f"{in_file} pins {name} but {lock} lacks it; run scripts/lock.sh"
        assert entries[name]["version"] == version, (
            f"{in_file} pins {name}=={version} but {lock} has {entries[name]['version']}; run scripts/lock.sh"
        )


@pytest.mark.parametrize("lock, in_file", LOCKS.items())
def test_the_lock_holds_no_top_level_package_its_inputs_dropped(lock, in_file):
    pins = top_level_pins(in_file)
    for name, entry in lock_entries(lock).items():
        from_inputs = [v for v in entry["via"] if v.startswith("-r ")]
        if from_inputs:
            assert name in pins, f"{lock} has {name} {from_inputs} but no .in pins it now; run scripts/lock.sh"


@pytest.mark.parametrize("lock", [lock for lock in LOCKS if lock != DEV_LOCK])
def test_runtime_and_pack_locks_install_what_the_tests_ran_with(lock):
    # Same version and same files (hashes) as the dev lock: `pulumi up` and the policy pack get
    # exactly the packages the suite was run with.
    dev = lock_entries(DEV_LOCK)
    for name, entry in lock_entries(lock).items():
        assert name in dev, f"{lock} has {name}, which {DEV_LOCK} does not; run scripts/lock.sh"
        assert (entry["version"], entry["hashes"]) == (dev[name]["version"], dev[name]["hashes"]), (
            f"{lock} and {DEV_LOCK} differ on {name}; run scripts/lock.sh"
        )


def install_lines() -> list[tuple[str, str]]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / ".ci" / "run", *(ROOT / ".github").rglob("*.yml")]
    return [
        (str(path.relative_to(ROOT)), line.strip())
        for path in files
        for line in path.read_text().splitlines()
        if re.search(r"pip install .*-r \S*requirements", line)
    ]


def test_every_install_from_a_lock_file_checks_hashes():
    lines = install_lines()
    assert any(path == ".ci/run" for path, _ in lines) and any(path.startswith(".github") for path, _ in lines)
    assert any(path.startswith("docs/") for path, _ in lines)
    for path, line in lines:
        assert "--require-hashes" in line, f"{path}: {line}"
        assert ".in" not in line.split("-r", 1)[1].split()[0], f"{path} installs an input, not a lock: {line}"
