"""The count of the examples the property tests ran, printed in the terminal summary.

Their settings follow the Hypothesis profile the root conftest loads: ``ci`` (make test, a
bare ``pytest``) runs every example count as written, derandomized; ``dev`` (make test-fast)
a tenth, randomized. To hunt new crashes, scale them up:
``CHARTER_FUZZ_SCALE=10 pytest --hypothesis-profile dev tests/property``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.example_counts import counter


@pytest.fixture(scope="session")
def example_counter(request: pytest.FixtureRequest) -> Counter[str]:
    """Examples run per property; printed in the terminal summary
    (``tests/support/example_counts.py``)."""
    return counter(request.config)
