"""Acceptance (issue 5, acceptance 1, the fact channel): no query of one user ever returns a
memory of another.

1,000 users hold near-identical memories: the same keys; values that are identical (a redacted
phone is ``[PHONE]`` for everyone) or differ by one digit; entity ids (order numbers, repair
tickets) that differ from a neighbour's by one digit; user ids that are prefixes of each other
(``u1``, ``u10``, ``u100``). Then, for 300 seeded random (attacker, victim) pairs, the attacker
asks through every step of the fact ladder for the victim's memories in the victim's own terms:
``get`` each of the victim's keys, ``by_entity`` with the victim's entity ids (and their
one-digit neighbours), ``by_intent`` with the victim's intents, ``search_text`` with the
victim's exact wording. Every fact returned must be one of the attacker's own rows. Afterwards
no audit row of any user names another user's memory.

Runs on a SQLite file and on PostgreSQL (database ``test``, a fresh schema, skipped when no
server is reachable).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from charter.memory.facts import FactStore
from charter.memory.records import Accessor, Fact, PreparedFact
from tests.postgres import fresh_schema

USERS = 1000
PAIRS = 300
SEED = 20240501


def memories(n: int) -> list[PreparedFact]:
    """User n's facts: the same keys as everyone's, values a digit away from a neighbour's."""
    user = f"u{n}"

    def fact(key: str, value: str, **more: str) -> PreparedFact:
        return PreparedFact(
            user_id=user,
            key=key,
            value=value,
            memory_type="fact",
            level="L1",
            encrypted=False,
            confidence=0.9,
            source="user_confirmed",
            domain="default",
            valid_until=None,
            entity_ref=more.get("entity_ref"),
            intent_type=more.get("intent_type"),
        )

    return [
        fact("phone", "[PHONE]"),
        fact("delivery_address", f"上海市浦东新区 张江路{n % 10}号"),
        fact(
            "order_status",
            f"订单 ORD{2024050000 + n} 已发货",
            entity_ref=f"ORD{2024050000 + n}",
            intent_type="track_order",
        ),
        fact("preferred_size", "M" if n % 2 else "L", intent_type="shopping"),
        fact(
            "complaint",
            f"宽带故障 报修单 W2024{n:05d} 城西花园{n % 7}栋",
            entity_ref=f"W2024{n:05d}",
            intent_type="complaint",
        ),
    ]


def populate(url: str) -> dict[str, set[str]]:
    """Write every user's facts through the store; each user's fact ids."""
    owned: dict[str, set[str]] = {}
    with FactStore(url) as store:
        for n in range(USERS):
            me = Accessor(f"u{n}", "agent")
            owned[me.user_id] = {store.write(me, f).id for f in memories(n)}
    return owned


def attack(store: FactStore, attacker: str, victim: int) -> list[Fact]:
    """Everything the attacker gets asking for the victim's memories in the victim's terms."""
    me = Accessor(attacker, "agent")
    theirs = memories(victim)
    found: list[Fact | None] = []
    for f in theirs:
        found.append(store.get(me, f.key))
        if f.entity_ref is not None:
            neighbours = {f.entity_ref, f.entity_ref[:-1] + str((int(f.entity_ref[-1]) + 1) % 10)}
            for ref in sorted(neighbours):
                found += store.by_entity(me, ref)
        if f.intent_type is not None:
            found += store.by_intent(me, f.intent_type, limit=10)
        found += store.search_text(me, f.value.split(), limit=10)
        found += store.search_text(me, [f.value, f.key], limit=10)
    return [f for f in found if f is not None]


def check_isolation(url: str) -> None:
    owned = populate(url)
    rng = random.Random(SEED)
    returned = 0
    with FactStore(url) as store:
        for _ in range(PAIRS):
            a, v = rng.sample(range(USERS), 2)
            attacker = f"u{a}"
            for fact in attack(store, attacker, v):
                returned += 1
                assert fact.user_id == attacker, (attacker, v, fact)
                assert fact.id in owned[attacker], (attacker, v, fact)
        # the attackers did get their own memories back: the queries were not empty-handed
        assert returned > PAIRS * 10
        with store.engine.connect() as conn:
            crossed = conn.execute(
                sa.text(
                    "SELECT count(*) FROM memory_audit a JOIN memory_fact f "
                    "ON a.memory_id = f.id WHERE a.user_id <> f.user_id"
                )
            ).scalar_one()
    assert crossed == 0


def test_no_user_ever_gets_another_users_facts_on_sqlite(tmp_path: Path) -> None:
    check_isolation(f"sqlite:///{tmp_path / 'isolation.db'}")


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema("charter_isolation") as url:
        yield url


def test_no_user_ever_gets_another_users_facts_on_postgresql(pg_url: str) -> None:
    check_isolation(pg_url)
