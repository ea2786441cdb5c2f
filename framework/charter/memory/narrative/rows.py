"""The narrative table's rows: columns, times as epoch seconds, SQL quoting for LanceDB's
filters, and a row as a ``Summary``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from charter.memory.records import Summary

TABLE = "narrative"
COLUMNS = (
    "id",
    "user_id",
    "session_id",
    "kind",
    "text",
    "domain",
    "memory_type",
    "intent_type",
    "consent_source",
    "created_at",
    "valid_until",
    "status",
    "count",
    "merged_into",
    "access_count",
    "last_used_at",
    "embedder",
)


def quote(value: str) -> str:
    """A SQL string literal for LanceDB's filter language (standard SQL quoting)."""
    return "'" + value.replace("'", "''") + "'"


def epoch(at: datetime) -> float:
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def to_summary(row: Mapping[str, Any]) -> Summary:
    created = from_epoch(row["created_at"])
    assert created is not None
    return Summary(
        id=row["id"],
        user_id=row["user_id"],
        session_id=row["session_id"],
        kind=row["kind"],
        text=row["text"],
        domain=row["domain"],
        memory_type=row["memory_type"],
        intent_type=row["intent_type"],
        consent_source=row["consent_source"],
        created_at=created,
        valid_until=from_epoch(row["valid_until"]),
        status=row["status"],
        count=int(row["count"]),
        merged_into=row["merged_into"],
        access_count=int(row["access_count"]),
        last_used_at=from_epoch(row["last_used_at"]),
    )
