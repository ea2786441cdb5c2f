"""The one clock and the one id maker every store uses.

Stores take a ``clock`` so that tests (and the sweeper's and the lifecycle's timeouts) can move
time; the default is the wall clock in UTC. Timestamps are aware UTC datetimes everywhere: one
convention on every database keeps comparisons in SQL honest (SQLite reads them back naive,
``as_utc`` restores the zone).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Aware UTC; a naive value (SQLite reads them back so) is taken to be UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base 32, as ULIDs use
_id_lock = threading.Lock()
_id_last = [0, 0]  # milliseconds and random part of the last id this process made


def new_id() -> str:
    """A ULID: 26 characters that sort in creation order across processes to the millisecond
    and, within one process, also inside one millisecond (the random part counts up)."""
    ms = time.time_ns() // 1_000_000
    with _id_lock:
        if ms <= _id_last[0]:
            ms, rand = _id_last[0], _id_last[1] + 1
        else:
            rand = secrets.randbits(80)
        _id_last[:] = [ms, rand]
    n = (ms << 80) | rand
    return "".join(_ALPHABET[(n >> shift) & 31] for shift in range(125, -1, -5))
