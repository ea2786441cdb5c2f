"""AES-GCM encryption of memory values at the pack's sensitive levels (ARCHITECTURE §7).

The key is 256 bits, given explicitly or read, base64-encoded, from the environment variable
the policy names (``key_env``, ``CHARTER_MEMORY_KEY`` by default). When the policy encrypts any
level and no usable key is there, ``load_key`` raises ``MemoryKeyError`` at start-up: a memory
layer that would have to encrypt never falls back to storing plaintext.

Ciphertext format (``VERSION`` 1), stored as standard base64 (ASCII, padded)::

    version (1 byte, 0x01) | nonce (12 random bytes) | AES-256-GCM ciphertext + 16-byte tag

The associated data binds a ciphertext to the row it was written for: the version byte, then
the owning ``user_id`` and the fact's ``key``, each as a 4-byte big-endian length and its UTF-8
bytes (length-prefixed, so ``("ab", "c")`` and ``("a", "bc")`` differ). A value copied into
another user's row, or under another key, fails authentication instead of decrypting.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping

from charter.compile.specs.memory import MemoryPolicy

VERSION = 1
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


def associated_data(user_id: str, fact_key: str) -> bytes:
    """What a ciphertext is bound to (see the module docstring)."""
    out = bytearray([VERSION])
    for part in (user_id, fact_key):
        data = part.encode("utf-8")
        out += len(data).to_bytes(4, "big") + data
    return bytes(out)


class ValueCipher:
    """Encrypts and decrypts memory values with one key; safe to share between threads."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise MemoryKeyError(f"a memory key has {KEY_BYTES} bytes, not {len(key)}")
        # cryptography is the `memory` extra (ARCHITECTURE §2): validating packs never needs it
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise MemoryKeyError(
                "encrypting memory needs the cryptography package: pip install 'charter[memory]'"
            ) from None
        self._aead = AESGCM(key)

    def encrypt(self, plaintext: str, *, user_id: str, fact_key: str) -> str:
        nonce = os.urandom(NONCE_BYTES)  # random 96-bit nonces: safe far beyond 2^32 values
        sealed = self._aead.encrypt(
            nonce, plaintext.encode("utf-8"), associated_data(user_id, fact_key)
        )
        return base64.b64encode(bytes([VERSION]) + nonce + sealed).decode("ascii")

    def decrypt(self, token: str, *, user_id: str, fact_key: str) -> str:
        try:
            blob = base64.b64decode(token, validate=True)
        except (binascii.Error, ValueError):
            raise DecryptionError("not an encrypted memory value (bad base64)") from None
        if len(blob) < 1 + NONCE_BYTES + TAG_BYTES or blob[0] != VERSION:
            raise DecryptionError("not an encrypted memory value (unknown format)")
        nonce, sealed = blob[1 : 1 + NONCE_BYTES], blob[1 + NONCE_BYTES :]
        from cryptography.exceptions import InvalidTag

        try:
            plain = self._aead.decrypt(nonce, sealed, associated_data(user_id, fact_key))
        except InvalidTag:
            raise DecryptionError(
                "the value does not decrypt: another key, another user's or key's row, or damaged"
            ) from None
        return plain.decode("utf-8")
