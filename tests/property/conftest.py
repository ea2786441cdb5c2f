"""Hypothesis profiles for the property tests, and a count of the examples they ran.

Profiles are registered here but never loaded globally, so other test directories keep their
own Hypothesis defaults; ``test_fuzz_pipeline.py`` builds its settings on the profile named by
``CHARTER_FUZZ_PROFILE`` (default ``ci``).

- ``ci``: derandomized (every run tries the same examples, so CI is reproducible), no deadline,
  no example database (nothing is written outside temporary directories).
- ``dev``: randomized, for hunting new crashes locally, e.g.
  ``CHARTER_FUZZ_PROFILE=dev CHARTER_FUZZ_SCALE=10 pytest tests/property``.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

_QUIET_HEALTH_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=_QUIET_HEALTH_CHECKS,
)
settings.register_profile(
    "dev",
    derandomize=False,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=_QUIET_HEALTH_CHECKS,
)

_EXAMPLES = pytest.StashKey[Counter[str]]()


@pytest.fixture(scope="session")
def example_counter(request: pytest.FixtureRequest) -> Counter[str]:
    """Examples run per property; printed in the terminal summary."""
    return request.config.stash.setdefault(_EXAMPLES, Counter())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = terminalreporter.config.stash.get(_EXAMPLES, None)
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
