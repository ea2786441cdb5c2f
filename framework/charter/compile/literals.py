"""Every literal of every rule in one Aho-Corasick automaton, scanned once per text.

CJK has no word boundaries, so the rule is per side: a literal that starts (ends) with an ASCII
letter or digit only matches where the neighbouring character on that side is not one; a CJK
literal never requires a boundary (``绝对`` matches inside ``绝对安全``).

A literal that starts or ends with a digit is a number, and a number is read whole: ``100%``
is not found in ``1,100%`` (a thousands separator), ``0.100%`` (a decimal point) or ``-100%``
(a signed number), and ``100`` is not found in ``100.5``. A sign after a digit is a range or a
date (``1-100%``, ``2024-100``), not a sign, and does not protect the literal.

Text and literals are compared with full-width digits, letters, ``－``, ``．`` and ``％`` read
as their ASCII forms (``保您１００％满意`` holds ``100%``, ``ＶＩＰ`` is ``VIP``): the fold is one
character for one, so spans found are spans of the text as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import ahocorasick

Hits = dict[int, list[tuple[int, int]]]

# One-to-one, so spans found in the folded text are spans of the original: full-width digits,
# letters, hyphen, full stop and per cent sign become ASCII (the other full-width forms are left
# alone: the Chinese comma ，must not become a thousands separator).
WIDTH_FOLD = str.maketrans(
    {
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF10, 0xFF1A)},
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF21, 0xFF3B)},
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF41, 0xFF5B)},
        "－": "-",
        "．": ".",
        "％": "%",
    }
)
_WIDE = re.compile("[\uff05\uff0d\uff0e\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_SEPARATORS = frozenset(".,")  # inside a number: 1,100 and 0.100
_SIGNS = frozenset("+-−")


def fold_width(text: str) -> str:
    """Full-width digits and letters as ASCII, position for position."""
    # translate looks every character up in a dict: skip it for the usual text with none
    return text.translate(WIDTH_FOLD) if _WIDE.search(text) else text


def is_ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _inside_number_left(text: str, start: int) -> bool:
    """The digit at ``start`` continues a number begun before it (1,100 / 0.100 / -100)."""
    if start == 0:
        return False
    before = text[start - 1]
    if before in _SEPARATORS:
        return start >= 2 and _is_digit(text[start - 2])
    if before in _SIGNS:
        return start < 2 or not is_ascii_alnum(text[start - 2])
    return False


def _inside_number_right(text: str, end: int) -> bool:
    """The digit before ``end`` is followed by more of its number (100.5 / 1,000)."""
    return end + 1 < len(text) and text[end] in _SEPARATORS and _is_digit(text[end + 1])


class LiteralTable:
    """Literal string -> id, and the automaton over all of them."""

    def __init__(self, literals: Iterable[str]) -> None:
        self.literals: tuple[str, ...] = tuple(sorted(set(lit for lit in literals if lit)))
        self.ids = {lit: i for i, lit in enumerate(self.literals)}
        # folded literal -> (ids of the literals folding to it, length, needs left boundary,
        # needs right boundary, number on the left, number on the right)
        words: dict[str, list[int]] = {}
        for i, lit in enumerate(self.literals):
            words.setdefault(fold_width(lit), []).append(i)
        self._automaton: ahocorasick.Automaton | None = None
        if words:
            automaton = ahocorasick.Automaton()
            for word, ids in words.items():
                meta = (
                    tuple(ids),
                    len(word),
                    is_ascii_alnum(word[0]),
                    is_ascii_alnum(word[-1]),
                    _is_digit(word[0]),
                    _is_digit(word[-1]),
                )
                automaton.add_word(word, meta)
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
        text = fold_width(text)
        n = len(text)
        for end_idx, (ids, length, left, right, num_left, num_right) in self._automaton.iter(text):
            start = end_idx - length + 1
            end = end_idx + 1
            if left and start > 0 and is_ascii_alnum(text[start - 1]):
                continue
            if right and end < n and is_ascii_alnum(text[end]):
                continue
            if num_left and _inside_number_left(text, start):
                continue
            if num_right and _inside_number_right(text, end):
                continue
            for lid in ids:
                occ = hits.get(lid)
                if occ is None:
                    hits[lid] = [(start, end)]
                else:
                    occ.append((start, end))
        return hits
