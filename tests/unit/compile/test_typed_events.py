"""The typed model of responses.yaml has a field for each goal event the compiler knows: an event
missing there would be read as no template at all, silently."""

from __future__ import annotations

from charter.compile import response_spec as R
from charter.pack.typed.responses import EVENTS


def test_the_model_knows_every_event() -> None:
    assert EVENTS == R.EVENTS
