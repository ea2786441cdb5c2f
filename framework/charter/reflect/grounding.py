"""Is every fact an answer states taken from what the turn gave the model?

A small model invents balances, dates and order numbers that look right. ``ungrounded`` finds each
amount, upper-case amount, percent, date, phone, e-mail address, URL, ID number, bank card, tax
document number, identifier and status word in a text that no *ground* backs: the grounds are
the texts the turn gave (skill results, recalled memories, the user's input, the pack's
constants), gathered by the caller.

How an item is backed, by the kind of its extractor (``GROUNDED_KINDS``, each used when the
registry has it):

* numbers (``money``, ``money_upper``, ``percent``): a ground item of the same family with the
  same value and unit, compared as Decimals (``¥12,345.60`` is backed by ``12345.6元`` and by
  ``壹万贰仟叁佰肆拾伍元陆角``: ``money`` and ``money_upper`` are one family);
* ``date``: a ground date agreeing on every part the answer writes (``5月1日`` is backed by
  ``2024-05-01``; ``2024年5月1日`` is not backed by ``5月1日``, whose year is unknown);
* text kinds (``phone``, ``url``, ...): a ground item with the same value (NFKC), or the text as
  written occurring in a ground;
* ``identifier`` (``charter.reflect.identifier``, language-neutral): the code occurring in a
  ground (NFKC); codes inside an item of a typed kind above are that item's business;
* statuses: a word of the caller's vocabulary (the skills' enum values: 已发货, 运输中...)
  occurring in a ground.

Full-width digits and letters are read as ASCII on both sides (``１２３４５元`` is ``12345元``).
The extractors are pure, so what they find in a ground is cached: a retry with the same grounds
does not extract them again, and a kind the answer does not mention is never extracted from them.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any, cast

from charter.compile.literals import fold_width
from charter.contracts.rules import Extractor, Item, as_decimal
from charter.reflect.identifier import IdentifierExtractor

GROUNDED_KINDS = (
    "money",
    "money_upper",
    "percent",
    "date",
    "phone",
    "email",
    "url",
    "id_card",
    "bank_card",
    "tax_doc",
)
IDENTIFIER = "identifier"
STATUS = "status"
NUMBER = "number"
# what the typed kinds leave: a time of day (9:00), a scaled number (150万), a number of two or
# more digits (30天, 5.5小时) — an invented opening hour or fee is as wrong as an invented amount
_NUMBERS = re.compile(
    r"(?<![0-9.:])[0-9]{1,2}:[0-9]{2}(?![0-9])"
    r"|(?<![0-9.,])[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?(?![0-9])"
    r"|(?<![0-9.,])[0-9]+(?:\.[0-9]+)?\s*[万亿千](?![0-9])"
    r"|(?<![0-9.,])[0-9]{2,}(?:\.[0-9]+)?(?![0-9])"
)
# kinds whose values back each other: an answer may spell the skill's ¥12,345.60 in upper case
_FAMILY = {"money_upper": ("money", "money_upper"), "money": ("money", "money_upper")}
_CORE_IDENTIFIER = IdentifierExtractor()


@dataclass(frozen=True, slots=True)
class Ungrounded:
    """A piece of the text no ground backs: its kind (an extractor name, ``"identifier"`` or
    ``"status"``), the text as written, and where."""

    kind: str
    text: str
    span: tuple[int, int]


@lru_cache(maxsize=1024)
def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _extract(extractor: Extractor, text: str) -> tuple[Item, ...]:
    try:
        return _cached_extract(cast(Hashable, extractor), text)
    except TypeError:  # an unhashable extractor: correct, only not cached
        return extractor.extract(text)


@lru_cache(maxsize=1024)
def _cached_extract(extractor: Hashable, text: str) -> tuple[Item, ...]:
    return cast(Extractor, extractor).extract(text)


def _key(item: Item, value_kind: str) -> Any:
    if value_kind == "number":
        return (as_decimal(item.value), item.unit)
    if value_kind == "text":
        return nfkc(str(item.value))
    return item.value


def _date_backed(value: Any, grounds: Iterable[Any]) -> bool:
    parts = (value.year, value.month, value.day) if isinstance(value, date) else tuple(value)
    for g in grounds:
        have = (g.year, g.month, g.day) if isinstance(g, date) else tuple(g)
        if all(p is None or p == h for p, h in zip(parts, have, strict=True)):
            return True
    return False


class _Grounds:
    """The grounds of one call, with what each kind finds in them extracted on demand."""

    def __init__(self, texts: Sequence[str], extractors: Mapping[str, Extractor]) -> None:
        if isinstance(texts, str):  # one text, not its characters
            texts = (texts,)
        self.texts = tuple(fold_width(t) for t in texts if t)
        self.extractors = extractors
        self._keys: dict[str, frozenset[Any]] = {}
        self._dates: dict[str, tuple[Any, ...]] = {}
        self._normal: tuple[str, ...] | None = None

    def occurs(self, text: str) -> bool:
        if self._normal is None:
            self._normal = tuple(nfkc(t) for t in self.texts)
        needle = nfkc(text)
        return any(needle in g for g in self._normal)

    def _items(self, kind: str) -> Iterable[tuple[Extractor, Item]]:
        for name in _FAMILY.get(kind, (kind,)):
            ext = self.extractors.get(name)
            if ext is not None:
                for t in self.texts:
                    yield from ((ext, item) for item in _extract(ext, t))

    def backs(self, kind: str, item: Item) -> bool:
        value_kind = self.extractors[kind].value_kind
        if value_kind == "date":
            if kind not in self._dates:
                self._dates[kind] = tuple(i.value for _, i in self._items(kind))
            return _date_backed(item.value, self._dates[kind])
        if kind not in self._keys:
            self._keys[kind] = frozenset(_key(i, e.value_kind) for e, i in self._items(kind))
        if _key(item, value_kind) in self._keys[kind]:
            return True
        return value_kind == "text" and self.occurs(item.text)


@lru_cache(maxsize=64)
def _status_pattern(vocabulary: tuple[str, ...]) -> re.Pattern[str] | None:
    words = sorted({nfkc(w) for w in vocabulary if w}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words))) if words else None


class _Covered:
    """Spans of typed items, asked whether a span overlaps one of them (in log time)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        spans.sort()
        self.starts = [s for s, _ in spans]
        self.reach = list(itertools.accumulate((e for _, e in spans), max))

    def overlaps(self, span: tuple[int, int]) -> bool:
        i = bisect.bisect_left(self.starts, span[1])  # the spans starting before span ends
        return i > 0 and self.reach[i - 1] > span[0]


def ungrounded(
    text: str,
    grounds: Sequence[str],
    extractors: Mapping[str, Extractor],
    *,
    statuses: Sequence[str] = (),
) -> tuple[Ungrounded, ...]:
    """Every item of ``text`` that none of ``grounds`` backs, in order of position.

    ``extractors`` is the registry's (``Registry.extractors``): each of ``GROUNDED_KINDS`` it
    has is checked; ``identifier`` is always checked (the registry's, else the built-in one).
    ``statuses`` is the vocabulary of status words to hold to the grounds.
    """
    folded = fold_width(text)
    g = _Grounds(grounds, extractors)
    found: list[Ungrounded] = []
    covered: list[tuple[int, int]] = []
    for kind in GROUNDED_KINDS:
        ext = extractors.get(kind)
        if ext is None:
            continue
        for item in ext.extract(folded):
            span = (item.start, item.end)
            covered.append(span)
            if not g.backs(kind, item):
                found.append(Ungrounded(kind, text[item.start : item.end], span))
    typed = _Covered(list(covered))
    for item in extractors.get(IDENTIFIER, _CORE_IDENTIFIER).extract(folded):
        span = (item.start, item.end)
        if typed.overlaps(span):
            continue
        covered.append(span)
        if not g.occurs(str(item.value)):
            found.append(Ungrounded(IDENTIFIER, text[item.start : item.end], span))
    claimed = _Covered(covered)
    for m in _NUMBERS.finditer(folded):
        if not claimed.overlaps(m.span()) and not g.occurs(m.group().rstrip("万亿千 ")):
            found.append(Ungrounded(NUMBER, text[m.start() : m.end()], m.span()))
    words = (statuses,) if isinstance(statuses, str) else tuple(statuses)
    pattern = _status_pattern(words) if words else None
    if pattern is not None:
        for m in pattern.finditer(folded):
            if not g.occurs(m.group()):
                found.append(Ungrounded(STATUS, m.group(), m.span()))
    return tuple(sorted(found, key=lambda u: u.span))
