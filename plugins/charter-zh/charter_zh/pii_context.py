"""What the words before a number say it is (issue 17): the context of the PII recognizers.

A checksum tells a card number from a random one, but users mistype: ``身份证号
110101199003071234`` has a wrong check character and is still the user's ID number, with one
digit wrong; ``卡号6222021234567890123`` fails Luhn and is still a card number. And a checksum
passes by chance: one order number in ten passes Luhn, so ``订单号55921074533213885`` looks like
a Mastercard. The user said what each number is; these rules listen.

A *context word* names a kind of number:

=========  ==================================================================================
kind       words
=========  ==================================================================================
id_card    公民身份号码 身份证号码 身份证号 身份证 证件号码 证件号 身份号码
bank_card  银行卡号 银行卡 信用卡号 信用卡 储蓄卡 借记卡 工资卡 银联卡 卡号
phone      手机号码 手机号 手机 电话号码 联系电话 电话 联系方式
order      快递单号 物流单号 运单号 订单编号 订单号 订单 单号 流水号
=========  ==================================================================================

A word is *in reach* of a number when it ends at most ``REACH`` (6) characters before the
number's first digit and nothing between them is a digit or ends a sentence (``。！？；`` and
their ASCII forms, a line break): ``身份证号是：1101…`` and ``卡号 6222…`` are in reach,
``身份证号已登记。6222…`` is not. Only words *before* a number count.

The rules, for a number (separators removed) with the context words in reach:

* **id_card**: a valid ID number is personal data whatever its context. After an ID word
  that is the nearest word in reach, so is an ID *shape* that fails its checks: 18
  characters (17 digits and a digit or ``X``: a wrong check character, birth date or
  province), 17 digits (one left out) or 15 (the old numbers, which carry no check).
* **phone**: a valid phone number is personal data whatever its context. After a phone word
  that is the nearest word in reach, so is any 11-digit number starting with ``1``.
* **bank_card**: with no order word in reach, a number is a card when it passes Luhn with a
  card network's prefix (the extractor's rule), and also, with a card word in reach, any
  16-19 digit number (Luhn failed, an unknown prefix such as ICBC's old ``9558``). With an
  order word in reach and no card word, it is no card, whatever its checksum: the user said
  it is an order number. With both in reach, a number passing Luhn with a network's prefix is
  a card (an order number redacted by mistake costs less than a card stored), and one failing
  it is a card only when the card word is the nearer.

Order words keep numbers from being taken for cards only: a valid ID number or mobile after
``订单号`` is still redacted (those checks seldom pass by chance, and a leak costs more).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REACH = 6
WORDS: dict[str, tuple[str, ...]] = {
    "id_card": (
        "公民身份号码",
        "身份证号码",
        "身份证号",
        "身份证",
        "证件号码",
        "证件号",
        "身份号码",
    ),
    "bank_card": (
        "银行卡号",
        "银行卡",
        "信用卡号",
        "信用卡",
        "储蓄卡",
        "借记卡",
        "工资卡",
        "银联卡",
        "卡号",
    ),
    "phone": ("手机号码", "手机号", "手机", "电话号码", "联系电话", "电话", "联系方式"),
    "order": ("快递单号", "物流单号", "运单号", "订单编号", "订单号", "订单", "单号", "流水号"),
}
_KIND = {word: kind for kind, words in WORDS.items() for word in words}
# longest first: at one position 银行卡号 wins over 银行卡, 订单号 over 订单
_WORD = re.compile("|".join(sorted(map(re.escape, _KIND), key=len, reverse=True)))
_LONGEST = max(map(len, _KIND))
_BREAK = re.compile(r"[0-9。！？；!?;\n]")


@dataclass(frozen=True)
class Context:
    """A context word in reach of a number: its kind and how many characters lie between."""

    kind: str
    gap: int


def mentions(text: str) -> bool:
    """Whether ``text`` holds any context word (so that a text without one costs one scan)."""
    return _WORD.search(text) is not None


def before(text: str, start: int) -> tuple[Context, ...]:
    """The context words in reach of a number starting at ``start``, nearest first."""
    lo = max(0, start - REACH - _LONGEST)
    found: list[Context] = []
    for m in _WORD.finditer(text, lo, start):
        gap = start - m.end()
        if gap <= REACH and not _BREAK.search(text, m.end(), start):
            found.append(Context(_KIND[m.group()], gap))
    found.sort(key=lambda c: c.gap)
    return tuple(found)


def nearest(contexts: tuple[Context, ...]) -> str | None:
    return contexts[0].kind if contexts else None


def _gap(contexts: tuple[Context, ...], kind: str) -> int | None:
    return next((c.gap for c in contexts if c.kind == kind), None)


def is_card(contexts: tuple[Context, ...], digits: str, valid: bool) -> bool:
    """Whether a number is a card number (the bank_card rule of the module docstring);
    ``valid``: it passes Luhn with a card network's prefix."""
    if not (16 <= len(digits) <= 19 and digits.isdigit()):
        return False
    card, order = _gap(contexts, "bank_card"), _gap(contexts, "order")
    if order is None:
        return valid or card is not None
    if card is None:
        return False
    return valid or card < order


def id_shape(number: str) -> bool:
    """An ID number one typo away, or an old 15-digit one (see the id_card rule)."""
    if len(number) == 18:
        return number[:17].isdigit() and (number[17].isdigit() or number[17] == "X")
    return len(number) in (15, 17) and number.isdigit()


def mobile_shape(digits: str) -> bool:
    """Eleven digits starting with 1 (see the phone rule)."""
    return len(digits) == 11 and digits.isdigit() and digits[0] == "1"
