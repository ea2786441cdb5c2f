"""Per-user data keys: what makes ``forget`` reach every copy of a user's sealed values.

Each user (the id as the agent keys it: ``tenant:user`` behind ``charter serve``) gets a random
256-bit data key the first time something of theirs is sealed. It is stored only wrapped —
AES-GCM under a key derived from the memory key (HKDF-SHA256, info ``WRAP_INFO``), bound to the
user id and the key's id — in ``user_key`` (component ``user_keys`` of
``charter_schema_version``). Every value sealed for the user (``crypto`` format 2) names the key
id and is encrypted under that key.

``destroy`` deletes the row (and this process's cached copy). Whatever copies of the user's
ciphertext survive the deletion of their rows — a SQLite WAL frame, a PostgreSQL page or WAL
segment not yet reused, a backup — then name a key that no longer exists anywhere: they cannot
be decrypted, with the memory key or without it. ``forget`` destroys the key first, in its own
transaction, so a forget interrupted halfway leaves the rest unreadable already.

Unwrapping costs an AES operation and a query: a key is unwrapped once per process and kept in a
bounded LRU cache. A write still reads the row's key id (one primary-key query) so that a key
destroyed by another process is never written under again: the user then gets a new key.
"""

from __future__ import annotations

import base64
import os
import threading
from collections import OrderedDict

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from charter.memory.crypto import (
    KEY_BYTES,
    KEY_ID_BYTES,
    NONCE_BYTES,
    DecryptionError,
    derive,
    forgotten_id,
)
from charter.store.clock import Clock, as_utc, utcnow
from charter.store.migrations import MigratedStore, Migration, transaction

COMPONENT = "user_keys"
WRAP_INFO = b"charter memory: user data key wrapping"
CACHE_SIZE = 4096  # users whose keys one process keeps unwrapped (32 bytes each)


class KeyDestroyed(DecryptionError):
    """The value was sealed under a user key that no longer exists: the user was forgotten."""


def _v1(conn: Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        "user_key",
        md,
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("key_id", sa.String, nullable=False),  # hex
        sa.Column("wrapped", sa.String, nullable=False),  # base64: nonce | AES-GCM(key) + tag
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn, checkfirst=False)  # an existing table here means a broken version row


MIGRATIONS: tuple[Migration, ...] = (Migration(1, "user_key", _v1),)

USER_KEY = sa.Table(
    "user_key",
    sa.MetaData(),
    sa.Column("user_id", sa.String, primary_key=True),
    sa.Column("key_id", sa.String, nullable=False),
    sa.Column("wrapped", sa.String, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
_ROW = sa.select(USER_KEY.c.key_id, USER_KEY.c.wrapped).where(
    USER_KEY.c.user_id == sa.bindparam("uid")
)


def _wrap_data(user_id: str, key_id: bytes) -> bytes:
    """What a wrapped key is bound to: a row's key cannot be moved to another user."""
    uid = user_id.encode("utf-8")
    return b"charter:user-key\x00" + key_id + len(uid).to_bytes(4, "big") + uid


class UserKeys(MigratedStore):
    """The ``user_key`` table of a database, and this process's cache of unwrapped keys.

    ``memory_key`` (32 bytes) wraps and unwraps; without it the store can only ``destroy``
    (``charter memory forget`` on a machine without the key still shreds)."""

    def __init__(
        self,
        url: str | sa.URL | Engine,
        memory_key: bytes | None,
        *,
        clock: Clock = utcnow,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        super().__init__(url, COMPONENT, MIGRATIONS)
        self._aead = None
        self._memory_key = memory_key
        if memory_key is not None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._aead = AESGCM(derive(memory_key, WRAP_INFO))
        self._clock = clock
        self._size = cache_size
        self._cache: OrderedDict[str, tuple[bytes, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self.unwrapped = 0  # keys unwrapped by this process (a cache miss each): tests read it

    @property
    def keyed(self) -> bool:
        return self._aead is not None

    def forgotten_id(self, user_id: str) -> str:
        """How the audit trail names the user once forgotten (``crypto.forgotten_id``)."""
        return forgotten_id(user_id, self._memory_key)

    def for_write(self, user_id: str) -> tuple[bytes, bytes]:
        """The user's current (key id, key), made and stored when they have none."""
        with self._engine.connect() as conn:
            row = conn.execute(_ROW, {"uid": user_id}).first()
        if row is None:
            return self._create(user_id)
        return self._open(user_id, bytes.fromhex(row.key_id), row.wrapped)

    def for_read(self, user_id: str, key_id: bytes) -> bytes:
        """The key ``key_id`` of the user; KeyDestroyed when it is not theirs any more."""
        with self._lock:
            hit = self._cache.get(user_id)
            if hit is not None and hit[0] == key_id:
                self._cache.move_to_end(user_id)
                return hit[1]
        with self._engine.connect() as conn:
            row = conn.execute(_ROW, {"uid": user_id}).first()
        if row is None or bytes.fromhex(row.key_id) != key_id:
            raise KeyDestroyed(
                "the value was sealed under a user key that was destroyed (the user was "
                "forgotten): it cannot be decrypted"
            )
        return self._open(user_id, key_id, row.wrapped)[1]

    def destroy(self, user_id: str) -> bool:
        """Delete the user's key, here and in the database; whether there was one. Committed
        at once: from now on nothing sealed for the user under it can be read."""
        with self._lock:
            self._cache.pop(user_id, None)
        with transaction(self._engine, write=True) as conn:
            gone = conn.execute(sa.delete(USER_KEY).where(USER_KEY.c.user_id == user_id))
        return bool(gone.rowcount)

    def _open(self, user_id: str, key_id: bytes, wrapped: str) -> tuple[bytes, bytes]:
        """The cached key when it is this one, else the row's unwrapped (and cached)."""
        with self._lock:
            hit = self._cache.get(user_id)
            if hit is not None and hit[0] == key_id:
                self._cache.move_to_end(user_id)
                return hit
        if self._aead is None:
            raise DecryptionError("no memory key: a user data key cannot be unwrapped")
        from cryptography.exceptions import InvalidTag

        blob = base64.b64decode(wrapped)
        nonce, sealed = blob[:NONCE_BYTES], blob[NONCE_BYTES:]
        try:
            key = self._aead.decrypt(nonce, sealed, _wrap_data(user_id, key_id))
        except InvalidTag:
            raise DecryptionError(
                "the user's data key does not unwrap: another memory key, or a damaged row"
            ) from None
        self.unwrapped += 1
        self._remember(user_id, key_id, key)
        return key_id, key

    def _create(self, user_id: str) -> tuple[bytes, bytes]:
        aead = self._aead
        if aead is None:
            raise DecryptionError("no memory key: a user data key cannot be made")
        key, key_id, nonce = (os.urandom(n) for n in (KEY_BYTES, KEY_ID_BYTES, NONCE_BYTES))
        wrapped = base64.b64encode(nonce + aead.encrypt(nonce, key, _wrap_data(user_id, key_id)))
        row = {
            "user_id": user_id,
            "key_id": key_id.hex(),
            "wrapped": wrapped.decode("ascii"),
            "created_at": as_utc(self._clock()),
        }
        try:
            with transaction(self._engine, write=True) as conn:
                conn.execute(USER_KEY.insert(), row)
        except IntegrityError:  # another process made the user's key first: use theirs
            return self.for_write(user_id)
        self._remember(user_id, key_id, key)
        return key_id, key

    def _remember(self, user_id: str, key_id: bytes, key: bytes) -> None:
        with self._lock:
            self._cache[user_id] = (key_id, key)
            self._cache.move_to_end(user_id)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
