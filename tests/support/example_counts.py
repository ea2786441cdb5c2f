"""The examples each property test ran, printed in the terminal summary (a pytest plugin,
loaded by the root conftest).

A property counts its examples in the ``example_counter`` fixture (``tests/property``). Under
pytest-xdist each worker counts its own and hands them to the controller in
``workeroutput`` when it stops; the controller adds them up and prints the summary.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

EXAMPLES = pytest.StashKey[Counter[str]]()
_OUTPUT_KEY = "charter_example_counts"


def counter(config: pytest.Config) -> Counter[str]:
    return config.stash.setdefault(EXAMPLES, Counter())


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_OUTPUT_KEY] = dict(counter(session.config))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller: a worker stopped; add its counts."""
    counts = getattr(node, "workeroutput", {}).get(_OUTPUT_KEY)
    if counts:
        counter(node.config).update(counts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = terminalreporter.config.stash.get(EXAMPLES, None)
    if not counts:
        return
    terminalreporter.write_sep("-", "hypothesis examples run")
    examples = {k: v for k, v in counts.items() if not k.startswith("known crash")}
    for name, n in sorted(examples.items()):
        terminalreporter.write_line(f"{n:6d}  {name}")
    terminalreporter.write_line(f"{sum(examples.values()):6d}  total")
    for name, n in sorted(counts.items()):
        if name.startswith("known crash"):
            terminalreporter.write_line(f"{n:6d}  {name} (see the xfail tests)")
