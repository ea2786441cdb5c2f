"""Every literal of every rule in one Aho-Corasick automaton, scanned once per text.

CJK has no word boundaries, so the rule is per side: a literal that starts (ends) with an ASCII
letter or digit only matches where the neighbouring character on that side is not one; a CJK
literal never requires a boundary (``绝对`` matches inside ``绝对安全``).
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick

Hits = dict[int, list[tuple[int, int]]]


def is_ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


class LiteralTable:
    """Literal string -> id, and the automaton over all of them."""

    def __init__(self, literals: Iterable[str]) -> None:
        self.literals: tuple[str, ...] = tuple(sorted(set(lit for lit in literals if lit)))
        self.ids = {lit: i for i, lit in enumerate(self.literals)}
        # (id, length, needs left boundary, needs right boundary)
        self._meta = tuple(
            (i, len(lit), is_ascii_alnum(lit[0]), is_ascii_alnum(lit[-1]))
            for i, lit in enumerate(self.literals)
        )
        self._automaton: ahocorasick.Automaton | None = None
        if self.literals:
            automaton = ahocorasick.Automaton()
            for i, lit in enumerate(self.literals):
                automaton.add_word(lit, self._meta[i])
            automaton.make_automaton()
            self._automaton = automaton

    def __getstate__(self) -> tuple[str, ...]:
        return self.literals

    def __setstate__(self, state: tuple[str, ...]) -> None:
        self.__init__(state)  # type: ignore[misc]

    def scan(self, text: str) -> Hits:
        """Every boundary-respecting occurrence of every literal, overlapping ones included."""
        hits: Hits = {}
        if self._automaton is None or not text:
            return hits
        n = len(text)
        for end_idx, (lid, length, left, right) in self._automaton.iter(text):
            start = end_idx - length + 1
            end = end_idx + 1
            if left and start > 0 and is_ascii_alnum(text[start - 1]):
                continue
            if right and end < n and is_ascii_alnum(text[end]):
                continue
            occ = hits.get(lid)
            if occ is None:
                hits[lid] = [(start, end)]
            else:
                occ.append((start, end))
        return hits
