"""``drug``: drug names from the lexicon ``charter_zh/data/drugs.txt``, found in one pass.

Each lexicon line is ``canonical|alias|alias``; the value of an item is the canonical name, so
``扑热息痛`` and ``Paracetamol`` both yield ``对乙酰氨基酚``. Matching uses one Aho-Corasick
automaton over the lower-cased text (lower-casing is only used when it keeps every index in
place); when names overlap, the leftmost, then the longest, wins (``布洛芬缓释胶囊`` over
``布洛芬``). The automaton runs over the reversed text (see ``_build``).

Deliberately not matched: a name whose ASCII edge is glued to another ASCII letter or digit
(``ibuprofenum``, ``xaspirin``: the CJK boundary convention), names outside the lexicon
(brand names are only there when common and unambiguous), and misspellings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import resources
from types import MappingProxyType

import ahocorasick

from charter.protocols import Item, ValueKind
from charter_zh._common import ASCII_ALNUM


def parse_lexicon(lines: Iterable[str]) -> dict[str, str]:
    """Lower-cased surface form -> canonical name; the first line to claim a form keeps it."""
    names: dict[str, str] = {}
    for line in lines:
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        forms = [f.strip() for f in body.split("|") if f.strip()]
        for form in forms:
            names.setdefault(form.lower(), forms[0])
    return names


def _build(names: dict[str, str]) -> ahocorasick.Automaton:
    # Keys go in reversed and the text is scanned reversed: pyahocorasick looks a node's children
    # up linearly, and drug names share far fewer last characters than first ones (布/阿/头/…
    # vs 林/芬/唑/…), so the root, visited for nearly every character, is smaller.
    automaton = ahocorasick.Automaton()
    for key, canonical in names.items():
        automaton.add_word(key[::-1], (len(key), canonical))
    automaton.make_automaton()
    return automaton


def _glued(text: str, start: int, end: int) -> bool:
    return (start > 0 and text[start] in ASCII_ALNUM and text[start - 1] in ASCII_ALNUM) or (
        end < len(text) and text[end - 1] in ASCII_ALNUM and text[end] in ASCII_ALNUM
    )


def _unicode_cased(written: str) -> bool:
    """A non-ASCII letter that only matched after lower-casing (the Kelvin sign K -> k)."""
    return not written.isascii() and any(not ch.isascii() and ch.lower() != ch for ch in written)


def _load() -> dict[str, str]:
    text = resources.files("charter_zh").joinpath("data/drugs.txt").read_text("utf-8")
    return parse_lexicon(text.splitlines())


class DrugExtractor:
    """Drug names from a lexicon; the value is the lexicon's canonical name."""

    name: str = "drug"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def __init__(self, names: Mapping[str, str] | None = None) -> None:
        self._names = _load() if names is None else {k.lower(): v for k, v in names.items()}
        self._automaton = _build(self._names) if self._names else None

    @property
    def lexicon(self) -> Mapping[str, str]:
        """Lower-cased surface form -> canonical name."""
        return MappingProxyType(self._names)

    def extract(self, text: str) -> tuple[Item, ...]:
        if self._automaton is None or not text:
            return ()
        lowered = text.lower()
        if len(lowered) != len(text):  # İ and friends grow when lower-cased; keep indices true
            lowered = "".join(ch.lower() if ch.isascii() else ch for ch in text)
        hits: list[tuple[int, int, str]] = []
        size = len(text)
        for last, (length, canonical) in self._automaton.iter(lowered[::-1]):
            start = size - 1 - last
            end = start + length
            if _glued(text, start, end) or _unicode_cased(text[start:end]):
                continue
            hits.append((start, end, canonical))
        hits.sort(key=lambda h: (h[0], -h[1]))
        items: list[Item] = []
        last_end = 0
        for start, end, canonical in hits:
            if start >= last_end:
                items.append(Item(start=start, end=end, text=text[start:end], value=canonical))
                last_end = end
        return tuple(items)

    def canonical(self, item: Item) -> str | None:
        """None: the canonical name is the value, but swapping a drug's name is not a repair."""
        return None
