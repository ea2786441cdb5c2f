"""Pack-supplied regular expressions, evaluated with a time bound.

A pattern a pack author writes (a DSL ``/…/``, a goal trigger's ``matches``, a slot's
``regex:``) runs on text a user or the model chose. A pattern that backtracks catastrophically
(``(a+)+$``) takes seconds to minutes on a few thousand characters, so every such evaluation
goes through :class:`BoundedPattern`, which passes the ``regex`` module's ``timeout=`` and turns
running out of time into :class:`PatternTimeout`. Each site decides what a timeout means (see
docs/runtime.md, "Bounded cost"); ``charter validate`` warns about such patterns (CH112).

The module imports nothing of Charter: the compiler and the runtime both use it.
"""

from __future__ import annotations

import logging
from typing import Any

import regex

__all__ = ["PATTERN_TIMEOUT_S", "BoundedPattern", "PatternTimeout", "bounded"]

# Far above what a sane pattern needs on a 4,000-character text (microseconds), far below what
# a user notices; a rule evaluates its pattern at most a handful of times per turn.
PATTERN_TIMEOUT_S = 0.05

_log = logging.getLogger("charter.text.patterns")


class PatternTimeout(TimeoutError):
    """A pack's pattern ran out of time on a text."""


class BoundedPattern:
    """A compiled ``regex`` pattern whose searches stop after ``timeout`` seconds."""

    __slots__ = ("_compiled", "timeout")

    def __init__(self, compiled: regex.Pattern[str], timeout: float = PATTERN_TIMEOUT_S) -> None:
        self._compiled = compiled
        self.timeout = timeout

    @property
    def pattern(self) -> str:
        return self._compiled.pattern

    @property
    def flags(self) -> int:
        return self._compiled.flags

    @property
    def groups(self) -> int:
        return self._compiled.groups

    @property
    def groupindex(self) -> Any:
        return self._compiled.groupindex

    def _timed_out(self, text: str) -> PatternTimeout:
        # the pattern is the pack's; the text is a user's and is not logged
        _log.warning(
            "pattern /%s/ ran out of time (%.2f s) on a text of %d characters",
            self._compiled.pattern[:200],
            self.timeout,
            len(text),
        )
        return PatternTimeout(f"pattern /{self._compiled.pattern[:200]}/ ran out of time")

    def search(self, text: str, pos: int = 0) -> regex.Match[str] | None:
        """The first match, or None; raises :class:`PatternTimeout`."""
        try:
            return self._compiled.search(text, pos, timeout=self.timeout)
        except TimeoutError:
            raise self._timed_out(text) from None

    def match(self, text: str, pos: int = 0) -> regex.Match[str] | None:
        try:
            return self._compiled.match(text, pos, timeout=self.timeout)
        except TimeoutError:
            raise self._timed_out(text) from None

    def fullmatch(self, text: str, pos: int = 0) -> regex.Match[str] | None:
        try:
            return self._compiled.fullmatch(text, pos, timeout=self.timeout)
        except TimeoutError:
            raise self._timed_out(text) from None

    def finditer(self, text: str) -> list[regex.Match[str]]:
        """Every match, as a list: the time bound covers the whole scan."""
        try:
            return list(self._compiled.finditer(text, timeout=self.timeout))
        except TimeoutError:
            raise self._timed_out(text) from None

    def found(self, text: str, on_timeout: bool) -> bool:
        """Whether the pattern occurs in ``text``; ``on_timeout`` when it ran out of time."""
        try:
            return self._compiled.search(text, timeout=self.timeout) is not None
        except TimeoutError:
            self._timed_out(text)
            return on_timeout

    def __repr__(self) -> str:
        return f"BoundedPattern({self._compiled.pattern!r})"


def bounded(pattern: str, flags: int = 0, timeout: float = PATTERN_TIMEOUT_S) -> BoundedPattern:
    """Compile ``pattern`` with the ``regex`` module and bound its searches."""
    return BoundedPattern(regex.compile(pattern, flags), timeout)
