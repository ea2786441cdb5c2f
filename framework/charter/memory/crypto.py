"""AES-GCM encryption of memory values at the pack's sensitive levels (ARCHITECTURE §7).

The key is 256 bits, given explicitly or read, base64-encoded, from the environment variable
the policy names (``key_env``, ``CHARTER_MEMORY_KEY`` by default). When the policy encrypts any
level and no usable key is there, ``load_key`` raises ``MemoryKeyError`` at start-up: a memory
layer that would have to encrypt never falls back to storing plaintext.

Ciphertext formats, stored as standard base64 (ASCII, padded)::

    1: version (0x01) | nonce (12 random bytes) | AES-256-GCM ciphertext + 16-byte tag
    2: version (0x02) | key id (8 bytes) | nonce (12 random bytes) | ciphertext + tag

Format 1 is encrypted under the memory key itself; format 2 under the owning user's data key
(``charter.memory.user_keys``), which ``forget`` destroys: what an agent seals is format 2,
format 1 is what it sealed before user keys existed, and what a cipher with no user keys
(a pipeline on its own, without a database) seals. Both are read.

The associated data binds a ciphertext to the row it was written for: the version byte, then
the owning ``user_id`` and the fact's ``key``, each as a 4-byte big-endian length and its UTF-8
bytes (length-prefixed, so ``("ab", "c")`` and ``("a", "bc")`` differ). A value copied into
another user's row, or under another key, fails authentication instead of decrypting.

Keys for other purposes are derived from the memory key with HKDF-SHA256, each under its own
``info`` label (``derive``): the key that wraps user keys, and the per-deployment secret that
names a forgotten user in the audit trail (``forgotten_id``: an HMAC, so that a guessed id can
be confirmed only by someone who holds the memory key).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import Protocol

from charter.compile.specs.memory import MemoryPolicy

VERSION = 1
USER_KEY_VERSION = 2
KEY_ID_BYTES = 8  # a user key's id in format 2
AUDIT_INFO = b"charter memory: forgotten user id"
FORGOTTEN = "forgotten"  # a forgotten user's audit row when no memory key names them
KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
MAKE_KEY = 'python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"'


class MemoryKeyError(RuntimeError):
    """The memory encryption key is missing or unusable; the message says how to fix it."""


class DecryptionError(ValueError):
    """A stored value cannot be decrypted: wrong key, another row's value, or damaged."""


def decode_key(text: str | bytes, source: str) -> bytes:
    """A 256-bit key from its base64 text (or the raw 32 bytes). ``source`` names where it came
    from in the error; the key itself never appears in a message."""
    if isinstance(text, bytes) and len(text) == KEY_BYTES:
        return text
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MemoryKeyError(
            f"{source} is not valid base64 ({exc}); it must hold a base64-encoded 256-bit key, "
            f"made for example with: {MAKE_KEY}"
        ) from None
    if len(raw) != KEY_BYTES:
        raise MemoryKeyError(
            f"{source} decodes to {len(raw)} bytes, not {KEY_BYTES}: it must hold a "
            f"base64-encoded 256-bit key, made for example with: {MAKE_KEY}"
        )
    return raw


def load_key(
    policy: MemoryPolicy,
    key: str | bytes | None = None,
    environ: Mapping[str, str] | None = None,
) -> bytes | None:
    """The key the memory layers encrypt with: ``key`` when given (base64 text or 32 raw
    bytes), else the environment variable ``policy.key_env``. None when the policy encrypts
    no level and no key was given. Raises MemoryKeyError when the policy encrypts a level and
    the key is missing, and whenever a key is there but malformed."""
    if key is not None:
        return decode_key(key, "the memory key passed in")
    env = os.environ if environ is None else environ
    text = env.get(policy.key_env, "")
    if text.strip():
        return decode_key(text, f"the environment variable {policy.key_env}")
    if not policy.encrypt_levels:
        return None
    levels = ", ".join(sorted(policy.encrypt_levels))
    raise MemoryKeyError(
        f"no memory encryption key: the memory policy encrypts values at {levels}, so set the "
        f"environment variable {policy.key_env} to a base64-encoded 256-bit key, made for "
        f"example with: {MAKE_KEY}"
    )


def derive(memory_key: bytes, info: bytes) -> bytes:
    """A 256-bit key for one purpose (``info``), derived from the memory key."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(
        memory_key
    )


def forgotten_id(user_id: str, memory_key: bytes | None) -> str:
    """How the audit trail names a forgotten user: ``hmac-sha256:<hex>`` keyed by a secret
    derived from the memory key, so the row proves that a given user was forgotten to whoever
    holds the key, and confirms no guess to anyone else; ``FORGOTTEN`` without a key."""
    if memory_key is None:
        return FORGOTTEN
    secret = derive(memory_key, AUDIT_INFO)
    mac = hmac.new(secret, user_id.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return "hmac-sha256:" + mac.hexdigest()


class UserKeySource(Protocol):
    """Per-user data keys (``charter.memory.user_keys.UserKeys``)."""

    def for_write(self, user_id: str) -> tuple[bytes, bytes]: ...
    def for_read(self, user_id: str, key_id: bytes) -> bytes: ...


def associated_data(user_id: str, fact_key: str, version: int = VERSION) -> bytes:
    """What a ciphertext is bound to (see the module docstring)."""
    out = bytearray([version])
    for part in (user_id, fact_key):
        data = part.encode("utf-8")
        out += len(data).to_bytes(4, "big") + data
    return bytes(out)


class ValueCipher:
    """Encrypts and decrypts memory values; safe to share between threads. With ``user_keys``
    attached (an agent's, on its database) it seals under each user's data key (format 2);
    without, under the memory key (format 1). It reads both."""

    def __init__(self, key: bytes, user_keys: UserKeySource | None = None) -> None:
        if len(key) != KEY_BYTES:
            raise MemoryKeyError(f"a memory key has {KEY_BYTES} bytes, not {len(key)}")
        # cryptography is the `memory` extra (ARCHITECTURE §2): validating packs never needs it
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise MemoryKeyError(
                "encrypting memory needs the cryptography package: pip install 'charter[memory]'"
            ) from None
        self._aesgcm = AESGCM
        self._aead = AESGCM(key)
        self.key = key
        self.user_keys = user_keys

    def encrypt(self, plaintext: str, *, user_id: str, fact_key: str) -> str:
        nonce = os.urandom(NONCE_BYTES)  # random 96-bit nonces: safe far beyond 2^32 values
        data = plaintext.encode("utf-8")
        if self.user_keys is None:
            sealed = self._aead.encrypt(nonce, data, associated_data(user_id, fact_key))
            return base64.b64encode(bytes([VERSION]) + nonce + sealed).decode("ascii")
        key_id, key = self.user_keys.for_write(user_id)
        aad = associated_data(user_id, fact_key, USER_KEY_VERSION)
        sealed = self._aesgcm(key).encrypt(nonce, data, aad)
        head = bytes([USER_KEY_VERSION]) + key_id + nonce
        return base64.b64encode(head + sealed).decode("ascii")

    def decrypt(self, token: str, *, user_id: str, fact_key: str) -> str:
        try:
            blob = base64.b64decode(token, validate=True)
        except (binascii.Error, ValueError):
            raise DecryptionError("not an encrypted memory value (bad base64)") from None
        head = {VERSION: 1, USER_KEY_VERSION: 1 + KEY_ID_BYTES}.get(blob[0] if blob else -1)
        if head is None or len(blob) < head + NONCE_BYTES + TAG_BYTES:
            raise DecryptionError("not an encrypted memory value (unknown format)")
        nonce, sealed = blob[head : head + NONCE_BYTES], blob[head + NONCE_BYTES :]
        aead = self._aead
        if blob[0] == USER_KEY_VERSION:
            if self.user_keys is None:
                raise DecryptionError(
                    "the value is sealed under a user data key and this cipher has none"
                )
            aead = self._aesgcm(self.user_keys.for_read(user_id, blob[1:head]))
        from cryptography.exceptions import InvalidTag

        try:
            plain = aead.decrypt(nonce, sealed, associated_data(user_id, fact_key, blob[0]))
        except InvalidTag:
            raise DecryptionError(
                "the value does not decrypt: another key, another user's or key's row, or damaged"
            ) from None
        return plain.decode("utf-8")
