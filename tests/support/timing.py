"""Where the suite's time goes, printed after every run (a pytest plugin, loaded by the root
conftest): the seconds spent in each test directory (setup, call and teardown, summed over
the workers), its number of tests and its share, and the run's wall time.

With ``--durations=30`` (``make test`` and ``make test-durations`` pass it) pytest also lists
the thirty slowest tests: together they show where a new cost came from. Under xdist the
reports reach the controller, which alone prints.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

import pytest


@dataclass(eq=False)  # registered as a plugin: hashed by identity
class DirectoryTimes:
    started: float = field(default_factory=time.monotonic)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    tests: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        directory = path.rsplit("/", 1)[0] if "/" in path else "."
        self.seconds[directory] += report.duration
        self.tests[directory].add(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.seconds:
            return
        total = sum(self.seconds.values())
        wall = time.monotonic() - self.started
        workers = getattr(terminalreporter.config.option, "numprocesses", None) or 1
        terminalreporter.write_sep("=", "time per test directory")
        terminalreporter.write_line(f"{'seconds':>9}  {'share':>6}  {'tests':>6}  directory")
        for directory, seconds in sorted(self.seconds.items(), key=lambda kv: -kv[1]):
            count = len(self.tests[directory])
            share = seconds / total if total else 0.0
            terminalreporter.write_line(f"{seconds:9.1f}  {share:6.1%}  {count:6d}  {directory}")
        terminalreporter.write_line(
            f"{total:9.1f}  in tests, {wall:.1f} s wall time with {workers} worker(s)"
        )


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        return
    config.pluginmanager.register(DirectoryTimes(), "charter-directory-times")
