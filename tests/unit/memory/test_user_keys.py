"""Per-user data keys (issue 33): format 2 sealed under the user's key, the key stored only
wrapped by the memory key, unwrapped once per process, destroyed by forget — after which no
copy of a value sealed under it decrypts, in this process or another, on SQLite and
PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import sqlalchemy as sa

from charter.memory.crypto import (
    FORGOTTEN,
    DecryptionError,
    ValueCipher,
    derive,
    forgotten_id,
)
from charter.memory.user_keys import USER_KEY, KeyDestroyed, UserKeys

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
GONE = (
    "the value was sealed under a user key that was destroyed (the user was forgotten): it "
    "cannot be decrypted"
)


def cipher(url: str | sa.Engine, key: bytes = KEY, **kw: int) -> tuple[ValueCipher, UserKeys]:
    """What one process of an agent has: the memory key, the database's user keys."""
    keys = UserKeys(url, key, **kw)
    return ValueCipher(key, keys), keys


def key_row(keys: UserKeys, user: str) -> tuple[str, str] | None:
    with keys.engine.connect() as conn:
        query = sa.select(USER_KEY.c.key_id, USER_KEY.c.wrapped).where(USER_KEY.c.user_id == user)
        row = conn.execute(query).first()
    return (row.key_id, row.wrapped) if row is not None else None


def test_format_2_names_the_users_key_and_binds_the_row(memory_db_url: str) -> None:
    c, keys = cipher(memory_db_url)
    plain = "收款人欧阳樱桃，尾号6217"
    token = c.encrypt(plain, user_id="张三", fact_key="transfer.payee")
    blob = base64.b64decode(token, validate=True)
    row = key_row(keys, "张三")
    assert row is not None
    assert (blob[0], blob[1:9].hex()) == (2, row[0])
    assert len(blob) == 1 + 8 + 12 + len(plain.encode()) + 16
    assert plain.encode() not in blob
    assert c.decrypt(token, user_id="张三", fact_key="transfer.payee") == plain
    for user, fact_key in (("李四", "transfer.payee"), ("张三", "transfer.amount")):
        with pytest.raises(DecryptionError):
            c.decrypt(token, user_id=user, fact_key=fact_key)
    keys.dispose()


def test_the_key_is_stored_wrapped_and_only_the_memory_key_unwraps_it(
    memory_sqlite_url: str,
) -> None:
    c, keys = cipher(memory_sqlite_url)
    token = c.encrypt("上海市浦东新区", user_id="u1", fact_key="city")
    row = key_row(keys, "u1")
    assert row is not None
    assert len(base64.b64decode(row[1])) == 12 + 32 + 16  # nonce, the key, the tag
    other, other_keys = cipher(memory_sqlite_url, OTHER_KEY)
    with pytest.raises(DecryptionError) as info:
        other.decrypt(token, user_id="u1", fact_key="city")
    assert str(info.value) == (
        "the user's data key does not unwrap: another memory key, or a damaged row"
    )
    # a wrapped key moved to another user's row does not unwrap either
    with keys.engine.begin() as conn:
        conn.execute(
            USER_KEY.insert().values(
                user_id="u2", key_id=row[0], wrapped=row[1], created_at=sa.func.now()
            )
        )
    fresh_keys = UserKeys(memory_sqlite_url, KEY)
    with pytest.raises(DecryptionError, match="does not unwrap"):
        fresh_keys.for_read("u2", bytes.fromhex(row[0]))
    for k in (keys, other_keys, fresh_keys):
        k.dispose()


def test_format_1_values_sealed_before_user_keys_still_read(memory_sqlite_url: str) -> None:
    old = ValueCipher(KEY).encrypt("身份证[ID]", user_id="u1", fact_key="id")
    c, keys = cipher(memory_sqlite_url)
    assert base64.b64decode(old)[0] == 1
    assert c.decrypt(old, user_id="u1", fact_key="id") == "身份证[ID]"
    assert key_row(keys, "u1") is None  # reading a format-1 value makes no key
    keys.dispose()


def test_a_key_is_unwrapped_once_per_process_and_the_cache_is_bounded(
    memory_sqlite_url: str,
) -> None:
    writer, writer_keys = cipher(memory_sqlite_url)
    tokens = {
        u: [writer.encrypt(f"{u}的第{i}条", user_id=u, fact_key="k") for i in range(20)]
        for u in ("u1", "u2", "u3")
    }
    reader, keys = cipher(memory_sqlite_url, cache_size=2)  # another process
    for token in tokens["u1"]:
        assert reader.decrypt(token, user_id="u1", fact_key="k").startswith("u1的第")
    assert keys.unwrapped == 1
    for u in ("u2", "u3", "u1"):  # u1 was the least recent of three: unwrapped again
        reader.decrypt(tokens[u][0], user_id=u, fact_key="k")
    assert keys.unwrapped == 4
    for k in (keys, writer_keys):
        k.dispose()


def test_destroyed_no_copy_decrypts_in_this_process_or_another(memory_db_url: str) -> None:
    c, keys = cipher(memory_db_url)
    backup = [c.encrypt(t, user_id="u1", fact_key="k") for t in ("樱桃色那件", "欧阳樱桃")]
    kept = c.encrypt("菠萝", user_id="u2", fact_key="k")
    assert keys.destroy("u1") is True
    assert keys.destroy("u1") is False
    later, later_keys = cipher(memory_db_url)  # a process started after the forget
    for reader in (c, later):
        for token in backup:
            with pytest.raises(KeyDestroyed) as info:
                reader.decrypt(token, user_id="u1", fact_key="k")
            assert str(info.value) == GONE
        assert reader.decrypt(kept, user_id="u2", fact_key="k") == "菠萝"
    # the user starts again under a new key; the old copies stay unreadable
    again = c.encrypt("芒果", user_id="u1", fact_key="k")
    assert later.decrypt(again, user_id="u1", fact_key="k") == "芒果"
    assert base64.b64decode(again)[1:9] != base64.b64decode(backup[0])[1:9]
    with pytest.raises(KeyDestroyed):
        later.decrypt(backup[0], user_id="u1", fact_key="k")
    for k in (keys, later_keys):
        k.dispose()


def test_a_key_destroyed_by_another_process_is_never_written_under_again(
    memory_sqlite_url: str,
) -> None:
    a, a_keys = cipher(memory_sqlite_url)
    b, b_keys = cipher(memory_sqlite_url)
    first = a.encrypt("樱桃", user_id="u1", fact_key="k")  # a has the key cached
    b_keys.destroy("u1")
    second = a.encrypt("樱桃", user_id="u1", fact_key="k")
    assert base64.b64decode(second)[1:9] != base64.b64decode(first)[1:9]
    assert b.decrypt(second, user_id="u1", fact_key="k") == "樱桃"
    for k in (a_keys, b_keys):
        k.dispose()


def test_a_store_without_the_memory_key_can_only_destroy(memory_sqlite_url: str) -> None:
    c, keys = cipher(memory_sqlite_url)
    token = c.encrypt("樱桃", user_id="u1", fact_key="k")
    keyless = UserKeys(memory_sqlite_url, None)
    assert keyless.keyed is False
    with pytest.raises(DecryptionError) as info:
        keyless.for_write("u2")
    assert str(info.value) == "no memory key: a user data key cannot be made"
    assert keyless.destroy("u1") is True
    with pytest.raises(KeyDestroyed):
        UserKeys(memory_sqlite_url, KEY).for_read("u1", base64.b64decode(token)[1:9])
    for k in (keys, keyless):
        k.dispose()


@pytest.mark.parametrize(
    ("user", "key"),
    [("acme:alice", KEY), ("acme:张三", KEY), ("acme:alice", OTHER_KEY)],
    ids=["ascii", "chinese", "other-key"],
)
def test_a_forgotten_user_is_named_by_an_hmac_under_the_memory_key(user: str, key: bytes) -> None:
    secret = derive(key, b"charter memory: forgotten user id")
    expected = hmac.new(secret, user.encode(), hashlib.sha256).hexdigest()
    assert forgotten_id(user, key) == f"hmac-sha256:{expected}"
    # not the bare hash a guessed id would confirm, nor the key used as it is
    assert expected != hashlib.sha256(user.encode()).hexdigest()
    assert expected != hmac.new(key, user.encode(), hashlib.sha256).hexdigest()
    assert forgotten_id(user, None) == FORGOTTEN == "forgotten"


def test_the_derived_keys_differ_by_purpose() -> None:
    wrap = derive(KEY, b"charter memory: user data key wrapping")
    audit = derive(KEY, b"charter memory: forgotten user id")
    assert len({wrap, audit, KEY}) == 3
    assert derive(KEY, b"charter memory: forgotten user id") == audit  # deterministic
