"""Reading slot values from an input, and writing them into goals.yaml's templates.

``SlotReader.values(intent, text, now)`` reads each slot of an intent by its regex, its
extractor or its role (the words around it: ``charter.compile.specs.roles``), typed as JSON
(``slot_value``). People write slots as they say them:

* a money slot also takes an amount said without a currency when ``money`` finds none: the
  ``spoken_amount`` extractor's (``八百``, ``三千五``, ``1.5万``, ``800`` in 转800给李四) when a
  plugin registers it, else ``bare_amounts``: ``5万`` / ``3千`` anywhere (a number with 万 or 千
  and no other unit), and a plain number when the text is nothing but that number (``2000``
  answering 请问您要转账多少钱？);
* an approximate item (``attrs["approximate"]``: 八百来块, 五百多) is no value: the slot stays
  missing and its question is asked;
* a regex also reads the text as identifiers are typed loosely (``SlotReader.loosely``: ASCII
  upper-cased, then spaces and dashes between ASCII letters and digits dropped too), so
  ``dd 2024 0507 0007`` gives ``DD202405070007`` to a pattern of upper-case ids, and ``save20``
  is kept as ``SAVE20``; a loose reading never glues another number onto a value.

``fill_slots(template, values, formatters)`` writes a description or a question: ``{slot}``
as the value (a list joined by 、, ``？`` when missing), ``{slot|when}`` through the plugins'
formatters (``预约{date|when}的{department}门诊``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import regex

from charter.compile.specs import goals as S
from charter.compile.specs.roles import read_role
from charter.text.patterns import PatternTimeout, bounded

if TYPE_CHECKING:
    from charter.contracts.pii import PiiMatch, PiiRecognizer
    from charter.contracts.rules import Extractor, Formatter, Item

SLOT_REF = regex.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)((?:\|[A-Za-z_][A-Za-z0-9_]*)*)\}")
# 5万 / 3.5千 / 2万块 as an amount in yuan: a number with a multiplier and no other unit after it
_SCALED = regex.compile(
    r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)\s*(万|千)(?:块钱?|元)?(?![0-9]|\s*[年月日天个号次%％岁期份件位台张])"
)
# an answer that is nothing but an amount: 2000 / 大概5万 / 3000块吧
_ONLY = regex.compile(
    r"\s*(?:大概|大约|约|差不多|就|先)?\s*([0-9]+(?:\.[0-9]+)?)\s*(万|千)?\s*(?:块钱?|元)?"
    r"\s*(?:吧|左右|的样子)?\s*[。.！!]?\s*"
)
_SCALE = {"万": Decimal(10000), "千": Decimal(1000), None: Decimal(1)}
# the extractor a slot of an extractor falls back on when that one finds nothing (a plugin's)
SPOKEN_FALLBACK = {"money": "spoken_amount"}
# spaces and dashes people type inside an identifier: DD 2024 0507 0007, DD-202405070007
_INNER_GAPS = regex.compile(r"(?<=[0-9A-Za-z])[ \t\u3000\-‐－—]+(?=[0-9A-Za-z])")
# a value made of ASCII letters, digits and the gaps typed inside identifiers
_IDENTIFIER = regex.compile(r"[0-9A-Za-z \t\-‐－—]+")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def loose_identifiers(text: str) -> str:
    """``text`` with ASCII letters upper-cased and the spaces and dashes between ASCII letters
    and digits dropped: identifiers as their patterns spell them (``dd 2024-0507`` →
    ``DD20240507``)."""
    return _INNER_GAPS.sub("", text.translate(_UPPER))


def slot_value(value: Any, now: datetime, written: str = "") -> Any:
    """An extractor's item value as plain JSON: dates ISO (a partial date as far as it is
    known: ``--01-10``, ``2024-05``), amounts as decimal text, a time expression resolved
    against ``now`` (a day, a range of days, or a range of times); anything else (an address)
    as written."""
    if hasattr(value, "resolve"):
        span = value.resolve(now)
        start, end = span.start, span.end
        midnight = start.time() == end.time() == datetime.min.time()
        if midnight and end - start == timedelta(days=1):
            return start.date().isoformat()
        if midnight:
            return f"{start.date().isoformat()}/{(end - timedelta(days=1)).date().isoformat()}"
        return f"{start:%Y-%m-%dT%H:%M}/{end:%Y-%m-%dT%H:%M}"
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, tuple) and len(value) == 3:  # a partial date: (year, month, day)
        year, month, day = value
        if year is None and month is not None and day is not None:
            return f"--{month:02d}-{day:02d}"
        if year is not None and month is not None:
            return f"{year:04d}-{month:02d}"
    if isinstance(value, str | int | float | bool):
        return value
    return written or str(value)


def bare_amounts(text: str) -> list[str]:
    """Amounts written without a currency (``5万``, or the whole text ``2000``), in yuan."""
    folded = unicodedata.normalize("NFKC", text)
    only = _ONLY.fullmatch(folded)
    found = [(only[1], only[2])] if only else [(m[1], m[2]) for m in _SCALED.finditer(folded)]
    out = []
    for number, scale in found:
        value = Decimal(number) * _SCALE[scale]
        out.append(format(value.normalize(), "f"))
    return out


def fill_slots(
    template: str, values: Mapping[str, Any], formatters: Mapping[str, Formatter] | None = None
) -> str:
    """``{slot}`` written as its value (``？`` when missing); ``{slot|formatter}`` formatted,
    as it is when the formatter cannot write it."""

    def one(m: regex.Match[str]) -> str:
        value = values.get(m.group(1))
        if value is None:
            return "？"
        for name in (n for n in m.group(2).split("|") if n):
            formatter = (formatters or {}).get(name)
            written = formatter.format(value) if formatter is not None else None
            if written is not None:
                value = written
        return "、".join(map(str, value)) if isinstance(value, list) else str(value)

    return SLOT_REF.sub(one, template)


def _same_id(strict: str, loose: str) -> bool:
    """``loose`` is ``strict`` as its pattern spells it: the same digits, maybe upper-cased and
    more letters (202405070007 → DD202405070007, save20 → SAVE20)."""
    digits = [c for c in strict if c.isdigit()] == [c for c in loose if c.isdigit()]
    return digits and loose_identifiers(strict) in loose


def _approximate(item: Item) -> bool:
    return bool(item.attrs.get("approximate"))


class SlotReader:
    """Each slot of an intent read from a text, by its regex or its extractor.

    A regex never takes personal data: a value that overlaps what a PII recognizer finds in
    the text (a card number where an order number was expected: ``退款请打到我的银行卡
    6222026815398387``) is passed over, so it reaches no goal, description or skill call. A
    slot meant to hold such data names the extractor that reads it (``extractor: bank_card``)
    or the kinds its regex may take (``personal: [id_card]``), and the goal store keeps its
    value encrypted (``charter.store.privacy``)."""

    def __init__(
        self,
        spec: S.GoalsSpec,
        extractors: Mapping[str, Extractor],
        recognizers: Iterable[PiiRecognizer] = (),
    ) -> None:
        self.extractors = extractors
        self.recognizers = tuple(recognizers)
        self.patterns = {
            (i.id, s.name): bounded(s.regex, regex.V1)
            for i in spec.intents
            for s in i.slots
            if s.regex is not None
        }

    def values(
        self,
        intent: S.IntentSpec,
        text: str,
        now: datetime,
        preset: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        found: dict[str, Any] = {}
        personal: list[PiiMatch] | None = None
        for slot in intent.slots:
            if (slot.regex is not None or slot.role is not None) and personal is None:
                personal = self.personal(text)
            got = self.slot(intent.id, slot, text, now, personal or ())
            if got:
                found[slot.name] = got if slot.multiple else got[0]
        if preset:
            found.update(preset.get(intent.id, {}))
        return found

    def passed_over(self, iid: str, slot: S.SlotSpec, text: str) -> tuple[str, ...]:
        """The kinds of personal data the slot's regex found in ``text`` and passed over, in
        the order found: what a question for the slot may tell the user it did not keep."""
        pattern = self.patterns.get((iid, slot.name))
        if pattern is None:
            return ()
        refused = [m for m in self.personal(text) if m.kind not in slot.personal]
        if not refused:
            return ()
        group: str | int = (
            "value" if "value" in pattern.groupindex else (1 if pattern.groups else 0)
        )
        kinds: list[str] = []
        for m in pattern.finditer(text):
            start, end = m.span(group)
            for p in refused:
                if p.exposes(start, end, m.group(group)) and p.kind not in kinds:
                    kinds.append(p.kind)
        return tuple(kinds)

    def personal(self, text: str) -> list[PiiMatch]:
        """The personal data in ``text``."""
        return [m for r in self.recognizers for m in r.recognize(text)]

    def matches(
        self, iid: str, slot: S.SlotSpec, text: str, refused: Iterable[PiiMatch]
    ) -> list[Any]:
        """What the slot's regex takes from ``text``, less what exposes refused personal data."""
        pattern = self.patterns[(iid, slot.name)]
        group: str | int = (
            "value" if "value" in pattern.groupindex else (1 if pattern.groups else 0)
        )
        try:
            found = list(pattern.finditer(text))
        except PatternTimeout:  # out of time: the text gives this slot no value
            found = []
        refused = list(refused)
        return [
            m.group(group)
            for m in found
            if not any(p.exposes(*m.span(group), m.group(group)) for p in refused)
        ]

    def loosely(self, iid: str, slot: S.SlotSpec, text: str, strict: list[Any]) -> list[Any]:
        """The values of a regex slot as identifiers are typed: when the text as written gives
        none, the first of the text upper-cased and ``loose_identifiers(text)`` that gives some
        (``dd 2024 0507 0007`` → DD202405070007); when it gives some, a loose value with the
        same digits replaces an identifier (``DD-202405070007``: 202405070007 → DD202405070007,
        ``save20`` → SAVE20), never one that glues more digits on (``123456789012 345``), nor a
        value with other characters (``华为 Mate60`` stays as written)."""
        upper = text.translate(_UPPER)
        for variant in dict.fromkeys((upper, loose_identifiers(text))):
            if variant == text or not self.matches(iid, slot, variant, ()):
                continue
            refused = [m for m in self.personal(variant) if m.kind not in slot.personal]
            found = self.matches(iid, slot, variant, refused)
            if not strict:
                return found
            return [
                next((w for w in found if _same_id(str(v), str(w))), v)
                if _IDENTIFIER.fullmatch(str(v))
                else v  # 华为 Mate60 is a name as written, not an identifier to upper-case
                for v in strict
            ]
        return strict

    def slot(
        self,
        iid: str,
        slot: S.SlotSpec,
        text: str,
        now: datetime,
        personal: Iterable[PiiMatch] = (),
    ) -> list[Any]:
        raw: list[Any] = []
        refused = [m for m in personal if m.kind not in slot.personal]
        if slot.regex is not None:
            raw = self.loosely(iid, slot, text, self.matches(iid, slot, text, refused))
        elif slot.role is not None:
            role = slot.role
            for f in read_role(text, role.kind, role.before, role.after):
                if not any(p.exposes(f.start, f.end, f.value) for p in refused):
                    raw.append(f.value)
        elif slot.extractor is not None and slot.extractor in self.extractors:
            items = self.extractors[slot.extractor].extract(text)
            fallback = self.extractors.get(SPOKEN_FALLBACK.get(slot.extractor, ""))
            if not items and fallback is not None:
                items = fallback.extract(text)
            # an approximate amount (八百来块) is no value: the slot's question is asked
            raw = [slot_value(i.value, now, i.text) for i in items if not _approximate(i)]
            if not items and fallback is None and slot.extractor == "money":
                raw = bare_amounts(text)
        out: list[Any] = []
        for value in raw:
            if value is None or value == "":
                continue
            if slot.type == "number":
                try:
                    value = format(Decimal(str(value).replace(",", "")).normalize(), "f")
                except InvalidOperation:
                    continue
            if value not in out:
                out.append(value)
        return out
