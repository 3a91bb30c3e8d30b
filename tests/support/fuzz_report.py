"""How many stack config fuzzing cases ran (tests/test_fuzz_config.py), in pytest's terminal summary.

A plugin that tests/conftest.py registers in every pytest process. Under pytest-xdist the cases
run in the workers, whose terminal output nobody sees: each worker hands its counts to the
controller (xdist's `workeroutput`), which adds them up and prints the section.
"""

from __future__ import annotations

from collections import Counter

import pytest

_KEY = "stack-config-fuzz"


class FuzzReport:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.seconds: Counter[str] = Counter()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_KEY] = {"counts": dict(self.counts), "seconds": dict(self.seconds)}

    # A hook of pytest-xdist, absent under -p no:xdist: optional, so that its absence is no error.
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        sent = getattr(node, "workeroutput", {}).get(_KEY)
        if sent:
            self.counts.update(sent["counts"])
            self.seconds.update(sent["seconds"])

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.counts:
            return
        tr = terminalreporter
        tr.write_sep("-", "stack config fuzzing (tests/test_fuzz_config.py)")
        groups = {
            "valid stacks": ["valid"],
            "of which refused as never runnable (admission model)": ["valid:unrunnable"],
            "lenient stacks (accepted and deployable, or refused)": ["lenient"],
            "mutated stacks": [k for k in self.counts if k.startswith("mutation:")],
            "CLI runs": ["cli"],
        }
        for title, keys in groups.items():
            total = sum(self.counts[k] for k in keys)
            if not total:
                continue
            line = f"{title}: {total} cases in {sum(self.seconds[k] for k in keys):.1f}s"
            if title == "mutated stacks":
                line += " (" + ", ".join(f"{k.split(':', 1)[1]} {self.counts[k]}" for k in sorted(keys)) + ")"
            tr.write_line(line)


REPORT = FuzzReport()
