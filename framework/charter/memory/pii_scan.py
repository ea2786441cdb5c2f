"""Personal data in a text, handled by the memory policy's rules (stage (b) of the write
pipeline, ``charter.memory.pipeline``). Every installed PII recognizer
(``registry.pii_recognizers``) runs over the text in its NFKC form (``charter.text.unicode_norm``:
``１３８１２３４５６７８`` is read as ``13812345678``), each match mapped back to the characters
as typed, so the redaction replaces them whatever their width. Each match is handled by the
policy's rule for its kind:

* ``redact``: replaced by the rule's token, else the recognizer's placeholder (``[ID]``);
* ``generalize``: replaced by the coarser form the recognizer gives (an address by its
  district, ``浙江省杭州市西湖区``), or redacted when the kind has none;
* ``drop``: the whole fact is not stored (``Scan.dropped`` names the kind, never the value);
* ``keep``: left as it is (and encrypted when its level says so).

A kind without a rule is redacted with its recognizer's placeholder at level ``L3``: unknown
personal data is treated as the most sensitive, never kept by default. Matches of different
recognizers that overlap are one span and the strictest action among them applies (drop >
redact > generalize > keep). A text stored in clear (``in_clear``: a key, an entity reference,
a transcript) keeps no personal data whose level is encrypted: there such a ``keep`` is
redacted. Within a turn's scope (``heard``), what the turn's input held is found again,
literally, in every text scanned (``charter.memory.pii_heard``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass

from charter.compile.specs.memory import MemoryPolicy, PiiAction
from charter.contracts.pii import PiiMatch, PiiRecognizer
from charter.memory import pii_heard
from charter.text.unicode_norm import normalize

UNRULED_LEVEL = "L3"
_STRICTNESS: Mapping[str, int] = {"keep": 0, "generalize": 1, "redact": 2, "drop": 3}


@dataclass(frozen=True)
class Scan:
    """A text with its personal data handled: ``text`` is safe to store (unless ``dropped``
    names kinds whose rule drops the fact); ``levels`` are the levels of everything found."""

    text: str
    kinds: tuple[str, ...]
    levels: tuple[str, ...]
    dropped: tuple[str, ...]


@dataclass(frozen=True)
class _Decision:
    match: PiiMatch
    action: PiiAction
    level: str
    token: str


class PiiHandler:
    """The policy's PII rules applied to texts with the installed recognizers."""

    def __init__(self, policy: MemoryPolicy, recognizers: Iterable[PiiRecognizer]) -> None:
        self.policy = policy
        self.recognizers = tuple(recognizers)
        self._placeholders: dict[str, str] = {}
        for r in self.recognizers:
            self._placeholders.setdefault(r.kind, r.placeholder)

    def _decide(self, m: PiiMatch, in_clear: bool) -> _Decision:
        rule = self.policy.pii.get(m.kind)
        placeholder = self._placeholders.get(m.kind) or f"[{m.kind.upper()}]"
        if rule is None:
            return _Decision(m, "redact", UNRULED_LEVEL, placeholder)
        action: PiiAction = rule.action
        if action == "keep" and in_clear and self.policy.encrypted(rule.level):
            action = "redact"  # kept personal data may only be stored encrypted
        return _Decision(m, action, rule.level, rule.token or placeholder)

    def recognize(self, text: str) -> list[PiiMatch]:
        """Every recognizer's matches in ``text``, found in its NFKC form (full-width digits
        and letters read as the ASCII ones, ``charter.text.unicode_norm``) and reported with the
        spans and the characters of ``text`` as given: a recognizer written for ``138…``
        finds ``１３８…`` too, and what is replaced is what the user typed."""
        norm = normalize(text)
        found = [m for r in self.recognizers for m in r.recognize(norm.text)]
        found += pii_heard.literal_matches(norm.text)
        return [_written(m, text, *norm.original(m.start, m.end)) for m in found]

    def heard(self, text: str) -> AbstractContextManager[None]:
        """The scope of a turn whose input is ``text``: the personal data found in it is
        found again, literally, in every text scanned until the scope ends (a slot value
        without the words that said what it is, a reply echoing it; ``pii_heard``)."""
        recognizers = self.recognizers
        return pii_heard.heard(
            lambda t: [m for r in recognizers for m in r.recognize(t)], normalize(text).text
        )

    @staticmethod
    def hear(kind: str, value: str) -> None:
        """Within a turn's scope, ``value`` is personal data of ``kind`` wherever it occurs."""
        pii_heard.hear(kind, value)

    def scan(self, text: str, *, in_clear: bool) -> Scan:
        """``in_clear``: the text will not be encrypted (a key, a reference, a transcript)."""
        found = self.recognize(text)
        if not found:
            return Scan(text, (), (), ())
        decisions = [self._decide(m, in_clear) for m in found]
        decisions.sort(key=lambda d: (d.match.start, -d.match.end))
        out: list[str] = []
        dropped: list[str] = []
        pos = 0
        i = 0
        while i < len(decisions):
            # one span: this match and every later one that starts inside the span so far
            group = [decisions[i]]
            start, end = decisions[i].match.start, decisions[i].match.end
            i += 1
            while i < len(decisions) and decisions[i].match.start < end:
                group.append(decisions[i])
                end = max(end, decisions[i].match.end)
                i += 1
            worst = max(group, key=lambda d: _STRICTNESS[d.action])
            dropped += (d.match.kind for d in group if d.action == "drop")
            out.append(text[pos:start])
            out.append(_replacement(text, start, end, worst, group))
            pos = end
        out.append(text[pos:])
        kinds = tuple(sorted({d.match.kind for d in decisions}))
        levels = tuple(sorted({d.level for d in decisions}))
        return Scan("".join(out), kinds, levels, tuple(sorted(set(dropped))))


def _written(m: PiiMatch, text: str, start: int, end: int) -> PiiMatch:
    """``m`` at the span ``start:end`` of ``text`` as given, with its characters."""
    if (start, end) == (m.start, m.end) and m.text == text[start:end]:
        return m
    return PiiMatch(start, end, text[start:end], m.kind, m.generalised)


def _replacement(text: str, start: int, end: int, worst: _Decision, group: list[_Decision]) -> str:
    if worst.action == "keep":
        return text[start:end]
    if worst.action == "generalize":  # drop and redact fall through to the token
        whole = [
            d.match.generalised
            for d in group
            if d.match.generalised and (d.match.start, d.match.end) == (start, end)
        ]
        if whole:
            return whole[0]
    return worst.token
