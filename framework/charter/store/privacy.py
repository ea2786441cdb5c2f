"""What the goal store does with personal data before a row is written (issue 16).

A goal's texts and slots are written as users typed them unless the store is given a
``GoalPrivacy``; an agent always gives one, built from its memory write pipeline, so that a
goal row holds no more personal data in clear than a memory does:

* descriptions and history triggers are ``scrub``-bed: every PII match redacted or generalised
  as the pack's memory policy says (``订单[BANK_CARD]申请退款``);
* a slot or result value holding personal data is ``seal``-ed: encrypted with the memory key
  (``{"$sealed": "…"}``, bound to the user), and ``open``-ed again when the goal's context is
  read, so a skill still gets the card number the user gave for a transfer. Without a memory
  key such a value is stored scrubbed instead: a pack whose goals must keep personal data
  needs an encryption level in its memory policy.

Values are walked recursively (a list of cards, a skill result's nested objects); keys are
never personal data by construction (they are slot names).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

SEALED = "$sealed"


def scrub_json(value: Any, scrub: Callable[[str], str]) -> Any:
    """A JSON value with every string (not the keys) run through ``scrub``."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list | tuple):
        return [scrub_json(v, scrub) for v in value]
    if isinstance(value, Mapping):
        return {k: scrub_json(v, scrub) for k, v in value.items()}
    return value


class GoalPrivacy(Protocol):
    def scrub(self, text: str) -> str:
        """``text`` safe to keep in clear."""
        ...

    def seal(self, value: Any, user_id: str) -> Any:
        """A JSON value with every string holding personal data encrypted (or scrubbed)."""
        ...

    def open(self, value: Any, user_id: str) -> Any:
        """The inverse of ``seal`` for the same user."""
        ...


class PiiGoalPrivacy:
    """``GoalPrivacy`` from a scrubber, a personal-data test and an optional cipher
    (``encrypt(text, user_id)`` / ``decrypt(token, user_id)``)."""

    def __init__(
        self,
        scrub: Callable[[str], str],
        personal: Callable[[str], bool],
        encrypt: Callable[[str, str], str] | None = None,
        decrypt: Callable[[str, str], str] | None = None,
    ) -> None:
        self._scrub = scrub
        self._personal = personal
        self._encrypt = encrypt
        self._decrypt = decrypt

    def scrub(self, text: str) -> str:
        return self._scrub(text) if text else text

    def seal(self, value: Any, user_id: str) -> Any:
        if isinstance(value, str):
            if not self._personal(value):
                return value
            if self._encrypt is None:
                return self._scrub(value)
            return {SEALED: self._encrypt(value, user_id)}
        if isinstance(value, list):
            return [self.seal(v, user_id) for v in value]
        if isinstance(value, Mapping):
            return {k: self.seal(v, user_id) for k, v in value.items()}
        return value

    def open(self, value: Any, user_id: str) -> Any:
        if isinstance(value, Mapping):
            token = value.get(SEALED)
            if len(value) == 1 and isinstance(token, str):
                if self._decrypt is None:
                    return "[SEALED]"  # a key removed since: the value cannot be read
                return self._decrypt(token, user_id)
            return {k: self.open(v, user_id) for k, v in value.items()}
        if isinstance(value, list):
            return [self.open(v, user_id) for v in value]
        return value


class NoPrivacy:
    """Values as they are: a store used on its own, in tests of the store itself."""

    def scrub(self, text: str) -> str:
        return text

    def seal(self, value: Any, user_id: str) -> Any:
        return value

    def open(self, value: Any, user_id: str) -> Any:
        return value
