"""Storage backends for one kind of data each, chosen by configuration
(``charter_register_stores``; ARCHITECTURE §6, §7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

StoreKind = Literal["goals", "facts", "short_term", "narrative", "audit", "traces"]
STORE_KINDS: tuple[str, ...] = ("goals", "facts", "short_term", "narrative", "audit", "traces")


@runtime_checkable
class StoreFactory(Protocol):
    """A storage backend for one kind of data, chosen by configuration (``sqlite``,
    ``postgresql``, ``lancedb``...). ``create`` returns the object implementing that kind's
    store protocol."""

    name: str
    kind: str  # one of STORE_KINDS

    def create(self, options: Mapping[str, Any]) -> Any: ...
