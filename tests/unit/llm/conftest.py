"""The fake server fixture of the ``openai`` backend tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.llm.fake_server import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
