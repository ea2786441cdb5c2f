"""Issue 33, item 4: forget reaches the disk.

A user of the finance pack asks for an invoice whose tax number is a personal ID (sealed in
the goal's context) under a company name holding a marker word (樱桃), and asks a question
with the marker; another user does the same with another word (菠萝). Then the first is
forgotten over HTTP.

* SQLite: right after the forget, with the service still running, the database file and its
  WAL are read as bytes. The WAL is empty (checkpointed and truncated); the file holds none of
  the user's markers — in UTF-8, UTF-16 or JSON's ``\\u`` escapes —, nor their id, nor the
  ciphertexts and the wrapped data key read before the forget. The other user's marker is
  there (the scan can fail).
* PostgreSQL: a dead tuple, a WAL segment or a backup keeps bytes a forget cannot reach, so the
  sealed values are copied out before the forget, as a backup would have them. Before it they
  decrypt; after it none does — neither in the process that forgot nor in a new one holding
  the memory key —, because the user's data key is gone from the database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from charter.agent import Agent
from charter.agent.parts import GOAL_SLOT
from charter.memory.crypto import ValueCipher, decode_key, forgotten_id
from charter.memory.user_keys import KeyDestroyed, UserKeys
from charter.store.privacy import SEALED
from tests.support.serve import KEY, MakeService, Service

TYPO_ID = "110101199003071234"
OTHER_ID = "110101199003075678"
GONE, KEPT = "樱桃", "菠萝"


def converse(svc: Service, user: str, word: str, tax_id: str) -> None:
    for text in (
        f"开票，抬头是{word}科技有限公司，税号是身份证号{tax_id}",
        "是",
        f"{word}味的理财产品有哪些",
    ):
        r = svc.turn("acme", user, text, session_id=f"s-{user}")
        assert r.status_code == 200, r.text


def encodings(word: str) -> list[bytes]:
    """The forms a text may take in a database file."""
    escaped = json.dumps(word).strip('"').encode("ascii")  # \u6a31\u6843
    return [word.encode("utf-8"), word.encode("utf-16-le"), escaped, escaped.upper()]


def agent_of(svc: Service) -> Agent:
    agent: Agent = svc.client.app.state.service.agent  # type: ignore[attr-defined]
    return agent


def sealed_copies(url: str, user: str) -> list[tuple[str, str, str]]:
    """(token, user, what it is bound to) of every sealed value of ``user``: the encrypted
    facts and the sealed goal slots, read as a backup would hold them."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            facts = conn.execute(
                sa.text(
                    "SELECT value, key FROM memory_fact WHERE user_id = :u AND encrypted"
                    " ORDER BY id"
                ),
                {"u": user},
            ).all()
            slots = conn.execute(
                sa.text(
                    "SELECT c.slots FROM goal_context c JOIN goal_tree t ON t.id = c.goal_id"
                    " WHERE t.user_id = :u"
                ),
                {"u": user},
            ).scalars()
            goal = [
                v[SEALED]
                for row in slots
                for v in (json.loads(row) if isinstance(row, str) else row).values()
                if isinstance(v, dict) and SEALED in v
            ]
    finally:
        engine.dispose()
    return [(v, user, k) for v, k in facts] + [(t, user, GOAL_SLOT) for t in goal]


@pytest.mark.slow  # six turns of the finance pack over HTTP, files read whole (about 3 s)
def test_sqlite_file_and_wal_hold_nothing_of_the_user_after_forget(
    service: MakeService,
) -> None:
    svc = service("sqlite", "finance")
    converse(svc, "u1", GONE, TYPO_ID)
    converse(svc, "u2", KEPT, OTHER_ID)
    copies = sealed_copies(svc.database_url, "acme:u1")
    assert len(copies) >= 2  # the tax number sealed in the goal, the invoice's facts
    keys = agent_of(svc).parts.keys
    assert keys is not None
    with keys.engine.connect() as conn:
        wrapped, key_id = conn.execute(
            sa.text("SELECT wrapped, key_id FROM user_key WHERE user_id = 'acme:u1'")
        ).one()
    db = Path(svc.database_url.removeprefix("sqlite:///"))
    wal = db.with_name(db.name + "-wal")
    before = db.read_bytes() + wal.read_bytes()
    needles = [*encodings(GONE), b"acme:u1", wrapped.encode(), key_id.encode()]
    stored = [GONE.encode(), b"acme:u1", wrapped.encode(), key_id.encode()]
    assert [n for n in stored if n not in before] == []  # the scan sees the user while they are

    r = svc.client.delete("/v1/users/u1", headers={"Authorization": "Bearer tok-acme-0123456789"})
    assert r.status_code == 200, r.text

    assert wal.stat().st_size == 0
    after = db.read_bytes()
    assert [n for n in needles if n in after] == []
    assert [t for t, _, _ in copies if t.encode() in after] == []
    assert any(form in after for form in encodings(KEPT))
    hmac_name = forgotten_id("acme:u1", decode_key(KEY, "KEY")).encode()
    assert hmac_name in after  # the forget rows name the user by the HMAC only


@pytest.mark.slow  # six turns of the finance pack over HTTP on PostgreSQL (about 3 s)
def test_postgres_copies_taken_before_forget_do_not_decrypt_after(
    service: MakeService,
) -> None:
    svc = service("postgres", "finance")
    converse(svc, "u1", GONE, TYPO_ID)
    converse(svc, "u2", KEPT, OTHER_ID)
    backup = sealed_copies(svc.database_url, "acme:u1")
    kept = sealed_copies(svc.database_url, "acme:u2")
    cipher = agent_of(svc).parts.pipeline.cipher
    assert cipher is not None
    plain = [cipher.decrypt(t, user_id=u, fact_key=k) for t, u, k in backup]
    assert TYPO_ID in plain  # the backup holds the tax number, sealed

    r = svc.client.delete("/v1/users/u1", headers={"Authorization": "Bearer tok-acme-0123456789"})
    assert r.status_code == 200, r.text

    key = decode_key(KEY, "KEY")
    later_keys = UserKeys(svc.database_url, key)  # a process started after the forget
    later = ValueCipher(key, later_keys)
    try:
        for reader in (cipher, later):
            failures = 0
            for token, user, bound in backup:
                try:
                    reader.decrypt(token, user_id=user, fact_key=bound)
                except KeyDestroyed:
                    failures += 1
            assert failures == len(backup)
            assert OTHER_ID in [later.decrypt(t, user_id=u, fact_key=k) for t, u, k in kept]
        with later_keys.engine.connect() as conn:
            holders = conn.execute(sa.text("SELECT user_id FROM user_key ORDER BY 1")).scalars()
            assert list(holders) == ["acme:u2"]
    finally:
        later_keys.dispose()
