"""Example counts that follow the Hypothesis profile (the root conftest registers them).

A test that asks for a number of examples writes ``@settings(max_examples=examples(300))``:
300 in the ``ci`` profile (``make test``, CI: never fewer than the test asks), a tenth of it
in ``dev`` (``make test-fast``, the inner loop).
"""

from __future__ import annotations

from hypothesis import settings

DEV_SHARE = 10


def examples(n: int) -> int:
    if settings.get_current_profile_name() == "dev":
        return max(1, n // DEV_SHARE)
    return n
