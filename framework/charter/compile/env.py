"""Per-text evaluation state: the texts, the context, and what has been computed once.

One ``Env`` per checked text. The literal scan and each extractor run at most once per subject
(and per ``found in`` text) and are shared by every rule that needs them.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from charter.compile.literals import Hits, LiteralTable, fold_width
from charter.compile.primitives import ground_texts, item_key
from charter.contracts.rules import Extractor, Item, as_decimal

SubjectKey = str  # "output", "input" or a dotted context path


@dataclass(frozen=True, slots=True)
class Grounds:
    """What one extractor found in the texts of a ``found in`` path, as ``item_key`` gives it."""

    keys: frozenset[Any] = frozenset()
    loose: tuple[Any, ...] = ()  # keys that cannot be hashed, compared one by one

    def has(self, item: Item) -> bool:
        """Whether an item of equal value and unit was found."""
        key = item_key(item)
        if key is None:
            return False
        try:
            if key in self.keys:
                return True
        except TypeError:  # an unhashable value: only the loose keys can equal it
            pass
        return bool(self.loose) and key in self.loose


class Env:
    __slots__ = (
        "_ground_keys",
        "_hits",
        "cached_grounds",
        "cached_items",
        "cached_values",
        "collect",
        "context",
        "extractors",
        "input",
        "literals",
        "output",
        "spans",
        "witnesses",
    )

    def __init__(
        self,
        output: str,
        input: str,
        context: Mapping[str, Any],
        literals: LiteralTable,
        extractors: Mapping[str, Extractor],
    ) -> None:
        self.output = output
        self.input = input
        self.context = context
        self.literals = literals
        self.extractors = extractors
        self._hits: dict[SubjectKey, Hits] = {}
        # read directly by the closures on the hot path; fill through items() / values()
        self.cached_items: dict[tuple[str, SubjectKey], tuple[Item, ...]] = {}
        self.cached_values: dict[tuple[str, SubjectKey], frozenset[Decimal]] = {}
        # `found in`: per (extractor, ground path), and per (extractor, ground text) below it
        self.cached_grounds: dict[tuple[str, SubjectKey], Grounds] = {}
        self._ground_keys: dict[tuple[str, str], tuple[Any, ...]] = {}
        # evidence of a failing rule, gathered only when explaining a failure
        self.collect = False
        self.spans: list[tuple[int, int]] = []
        self.witnesses: list[Item] = []

    def hits(self, key: SubjectKey, text: str) -> Hits:
        found = self._hits.get(key)
        if found is None:
            found = self._hits[key] = self.literals.scan(text)
        return found

    def items(self, extractor: str, key: SubjectKey, text: str) -> tuple[Item, ...]:
        found = self.cached_items.get((extractor, key))
        if found is None:
            # full-width digits and letters read as ASCII, one for one, so spans stay the
            # text's; each item keeps the characters as written (a rule's `matches` and the
            # evidence see ３.５％, its value is 3.5)
            folded = fold_width(text)
            found = self.extractors[extractor].extract(folded)
            if folded is not text:
                found = tuple(dataclasses.replace(i, text=text[i.start : i.end]) for i in found)
            self.cached_items[(extractor, key)] = found
        return found

    def values(self, extractor: str, key: SubjectKey, text: str) -> frozenset[Decimal]:
        """Numeric values of an extractor's items, for ``has twin``."""
        found = self.cached_values.get((extractor, key))
        if found is None:
            vals = (as_decimal(i.value) for i in self.items(extractor, key, text))
            found = self.cached_values[(extractor, key)] = frozenset(
                v for v in vals if v is not None
            )
        return found

    def grounds(self, extractor: str, key: SubjectKey, value: Any) -> Grounds:
        """The items ``extractor`` finds in the texts of ``value``, the value at the ``found in``
        path ``key``: a string, or strings inside lists and mapping values; None has none.

        Each text is read in NFKC, so that full-width digits and signs (``１２．５％``, ``￥``)
        ground their ASCII spellings; the extractor runs once per text and extractor."""
        found = self.cached_grounds.get((extractor, key))
        if found is None:
            keys: set[Any] = set()
            loose: list[Any] = []
            for text in dict.fromkeys(ground_texts(value)):
                for k in self._keys_of(extractor, text):
                    try:
                        keys.add(k)
                    except TypeError:
                        loose.append(k)
            found = self.cached_grounds[(extractor, key)] = Grounds(frozenset(keys), tuple(loose))
        return found

    def _keys_of(self, extractor: str, text: str) -> tuple[Any, ...]:
        found = self._ground_keys.get((extractor, text))
        if found is None:
            items = self.extractors[extractor].extract(unicodedata.normalize("NFKC", text))
            keys = (item_key(i) for i in items)
            found = self._ground_keys[(extractor, text)] = tuple(k for k in keys if k is not None)
        return found

    def start_explaining(self) -> None:
        self.collect = True
        self.spans = []
        self.witnesses = []

    def stop_explaining(self) -> None:
        self.collect = False


def lookup(context: Mapping[str, Any], parts: tuple[str | int, ...]) -> Any:
    """Total path lookup: a missing key or index gives None, never an exception."""
    cur: Any = context
    for part in parts:
        if isinstance(part, int):
            if isinstance(cur, list | tuple) and -len(cur) <= part < len(cur):
                cur = cur[part]
            else:
                return None
        elif isinstance(cur, Mapping):
            cur = cur.get(part)
        else:
            return None
        if cur is None:
            return None
    return cur
