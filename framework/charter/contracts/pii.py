"""Personal data recognizers (ARCHITECTURE §7, the memory write pipeline): what one finds in a
text, and how a text is redacted with what was found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class PiiMatch:
    """Personal data found in a text.

    ``generalised`` is the coarser form a policy may keep instead of the value (an address
    generalised to its district: ``浙江省杭州市西湖区``), or None when the kind can only be
    redacted.
    """

    start: int
    end: int
    text: str
    kind: str
    generalised: str | None = None

    def exposes(self, start: int, end: int, value: str) -> bool:
        """Whether ``value``, found at ``start:end`` of the same text, gives away this personal
        data: it overlaps the match and is not as coarse as the policy may keep anyway (杭州
        out of 浙江省杭州市西湖区文三路90号 locates nobody)."""
        if not (start < self.end and self.start < end):
            return False
        return not (self.generalised and value and value in self.generalised)


@runtime_checkable
class PiiRecognizer(Protocol):
    """Finds one kind of personal data. ``placeholder`` replaces a redacted match (``[ID]``,
    ``[PHONE]``); matches are in order and never overlap. A recognizer may also carry
    ``examples`` (sentences holding one value of its kind, as users write them): validation
    tries slot regexes on them (CH308)."""

    name: str
    kind: str
    placeholder: str

    def recognize(self, text: str) -> tuple[PiiMatch, ...]: ...


def redact(text: str, matches: Sequence[PiiMatch], placeholders: Mapping[str, str]) -> str:
    """``text`` with each match replaced by its kind's placeholder (later matches first, so the
    spans stay valid). Overlapping matches keep the first."""
    out: list[str] = []
    pos = 0
    for m in sorted(matches, key=lambda m: (m.start, -m.end)):
        if m.start < pos:
            continue
        out.append(text[pos : m.start])
        out.append(placeholders.get(m.kind, f"[{m.kind.upper()}]"))
        pos = m.end
    out.append(text[pos:])
    return "".join(out)
