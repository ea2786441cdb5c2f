"""The user's rights over the fact channel: ``export`` (pinned JSON, every status, values as
stored, the audit trail) and ``forget`` (no row of the user left anywhere, checked with raw SQL;
one anonymised audit row), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Protocol

import pytest
import sqlalchemy as sa

from charter.memory.crypto import FORGOTTEN, forgotten_id
from charter.memory.facts import FactStore
from charter.memory.records import Accessor, PreparedFact

MakeFact = Callable[..., PreparedFact]
AGENT = Accessor("u1", "agent")
USER = Accessor("u1", "app", role="user")
CIPHERTEXT = "AAECAwQFBgcICQoLDA0ODw=="
KEY = bytes(range(32))  # names the forgotten user in the audit trail


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


@pytest.fixture
def store(memory_db_url: str, clock: Clock, ids: Callable[[], str]) -> Iterator[FactStore]:
    with FactStore(memory_db_url, clock=clock, ids=ids) as s:
        yield s


def fill(store: FactStore, clock: Clock, make_fact: MakeFact) -> None:
    """u1: a superseded city, an encrypted phone, an archived note; u2: one fact."""
    store.write(AGENT, make_fact("city", "上海"))
    store.write(
        AGENT,
        make_fact("phone", CIPHERTEXT, encrypted=True, level="L2", memory_type="account_fact"),
    )
    store.write(AGENT, make_fact("note", "宽带报修", entity_ref="W20240515-7732"))
    store.write(Accessor("u2", "agent"), make_fact("city", "北京", user_id="u2"))
    clock.advance(days=91)
    store.write(AGENT, make_fact("city", "杭州"))
    store.get(AGENT, "phone")
    store.archive_cold()


def test_export_is_everything_held_about_the_user(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    fill(store, clock, make_fact)
    clock.advance(minutes=1)
    data = store.export(USER)
    json.dumps(data)  # JSON-serialisable as it is
    assert list(data) == ["format", "user_id", "exported_at", "facts", "audit"]
    assert (data["format"], data["user_id"], data["exported_at"]) == (
        "charter-memory-export/1",
        "u1",
        "2024-07-31T10:01:00Z",
    )
    assert [(f["id"], f["key"], f["value"], f["status"], f["tier"]) for f in data["facts"]] == [
        ("f-001", "city", "上海", "superseded", "cold"),
        ("f-002", "phone", CIPHERTEXT, "active", "hot"),
        ("f-003", "note", "宽带报修", "archived", "cold"),
        ("f-005", "city", "杭州", "active", "hot"),
    ]
    assert data["facts"][1] == {
        "id": "f-002",
        "key": "phone",
        "value": CIPHERTEXT,
        "encrypted": True,
        "memory_type": "account_fact",
        "level": "L2",
        "domain": "default",
        "source": "user_confirmed",
        "confidence": 1.0,
        "status": "active",
        "tier": "hot",
        "weight": 1.0,
        "created_at": "2024-05-01T10:00:00Z",
        "updated_at": "2024-05-01T10:00:00Z",
        "valid_until": None,
        "entity_ref": None,
        "intent_type": None,
        "consent_source": None,
        "value_score": 0.0,
        "supersedes": None,
        "contradicts": None,
        "access_count": 1,
        "last_used_at": "2024-07-31T10:00:00Z",
    }
    assert [(a["id"] > 0, a["action"], a["memory_id"], a["reason"]) for a in data["audit"]] == [
        (True, "write", "f-001", "city"),
        (True, "write", "f-002", "phone"),
        (True, "write", "f-003", "note"),
        (True, "supersede", "f-001", "city: by f-005"),
        (True, "write", "f-005", "city: supersedes f-001"),
        (True, "read", "f-002", "get phone"),
        (True, "archive", "f-003", "note: idle over 90 days"),
        (True, "export", None, "4 facts"),
    ]
    assert data["audit"][-1] == {
        "id": data["audit"][-1]["id"],
        "at": "2024-07-31T10:01:00Z",
        "actor": "app",
        "role": "user",
        "action": "export",
        "memory_id": None,
        "allowed": True,
        "reason": "4 facts",
    }


def every_text(store: FactStore) -> list[str]:
    """Every text value in both tables, read with plain SQL."""
    out: list[str] = []
    with store.engine.connect() as conn:
        for table in ("memory_fact", "memory_audit"):
            for row in conn.execute(sa.text(f"SELECT * FROM {table}")):
                out += [v for v in row if isinstance(v, str)]
    return out


def test_forget_leaves_no_row_of_the_user(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    fill(store, clock, make_fact)
    with pytest.raises(PermissionError):
        store.forget(AGENT)  # an agent cannot; the refusal is audited (and forgotten next)
    digest = forgotten_id("u1", KEY)
    assert store.forget(USER, forgotten_as=digest) == 4
    with store.engine.connect() as conn:
        for table in ("memory_fact", "memory_audit"):
            query = sa.text(f"SELECT count(*) FROM {table} WHERE user_id = 'u1'")
            assert conn.execute(query).scalar_one() == 0, table
    texts = every_text(store)
    assert not [t for t in texts if "u1" in t or "上海" in t or "杭州" in t or CIPHERTEXT in t]
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT actor, role, action, memory_id, allowed, reason FROM memory_audit "
                "WHERE user_id = :h"
            ),
            {"h": digest},
        ).all()
    assert [tuple(r) for r in rows] == [
        ("app", "user", "forget", None, True, "4 facts, 8 audit rows")
    ]
    # u2 is untouched, and u1 starts again from nothing
    assert [
        f.value for f in store.list_facts(Accessor("u2", "ops", role="admin"), history=True)
    ] == ["北京"]
    assert store.export(USER)["facts"] == []
    assert store.get(AGENT, "city") is None


def test_forget_hashes_an_actor_that_names_the_user(store: FactStore, make_fact: MakeFact) -> None:
    store.write(AGENT, make_fact("city", "上海"))
    store.forget(Accessor("u1", "user:u1", role="user"))
    assert "u1" not in " ".join(every_text(store))
    assert [t for t in every_text(store) if FORGOTTEN in t] == [f"user:{FORGOTTEN}", FORGOTTEN]


def test_an_expired_fact_is_exported_but_never_read(
    store: FactStore, clock: Clock, make_fact: MakeFact
) -> None:
    store.write(AGENT, make_fact("state", "选尺码", memory_type="session_state"))
    clock.advance(minutes=16)
    assert store.get(AGENT, "state") is None
    exported = store.export(USER)["facts"]
    assert [(f["id"], f["status"], f["valid_until"]) for f in exported] == [
        ("f-001", "active", (clock.now - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    ]
