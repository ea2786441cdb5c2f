"""Per-text evaluation state: the texts, the context, and what has been computed once.

One ``Env`` per checked text. The literal scan and each extractor run at most once per subject
and are shared by every rule that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from charter.compile.literals import Hits, LiteralTable
from charter.protocols import Extractor, Item, as_decimal

SubjectKey = str  # "output", "input" or a dotted context path


class Env:
    __slots__ = (
        "_hits",
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
            found = self.cached_items[(extractor, key)] = self.extractors[extractor].extract(text)
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
