"""``card_tail``: the last four digits of a bank card, where the words around them say so.

Matched (value: the four digits, as text): after 尾号, 卡尾号, 后四位 (卡号后四位, 后4位), 末四位,
尾数, maybe with 是/为/a colon/a space between (``尾号6789``, ``尾号是 6789``, ``后四位是6666``);
before 那张, 这张, 的卡, 张卡, 卡, 结尾, 尾号的 (``6666那张卡``, ``6666这张卡``, ``6666的卡``,
``1234结尾的``).

Not matched: four digits without such words (``6666``, ``2024年``, ``转6666给李四``), more or
fewer digits (``尾号12345``, ``尾号123``), digits glued to ASCII (``A1234卡``), a full card
number (``6222026815398387``: ``bank_card``'s). Full-width digits are read as ASCII.
"""

from __future__ import annotations

import re

from charter.contracts.rules import Item, ValueKind
from charter_zh.spoken import fold

_FOUR = re.compile(r"(?<![0-9A-Za-z])[0-9]{4}(?![0-9A-Za-z])")
_BEFORE = re.compile(r"(?:尾号|后四位|后4位|末四位|末4位|尾数)[是为:：\s]{0,2}$")
_AFTER = re.compile(r"\s?(?:那张|这张|的卡|张卡|卡|结尾|尾号的)")


class CardTailExtractor:
    """Four digits that are a card's last four, by 尾号/后四位 before or 那张卡/的卡 after."""

    name: str = "card_tail"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        folded = fold(text)
        items = []
        for m in _FOUR.finditer(folded):
            start, end = m.span()
            if _BEFORE.search(folded, max(0, start - 8), start) or _AFTER.match(folded, end):
                items.append(Item(start, end, text[start:end], m.group()))
        return tuple(items)

    def canonical(self, item: Item) -> str | None:
        return None
