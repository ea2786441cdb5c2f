"""A number told in pieces across a sentence (issue 33): ``手机前三位138，后八位12345678``,
``卡号前六位622202，后面是1234567890128``, ``身份证前六位…，中间八位…，后四位…``.

A split number starts with ``前N位`` or ``前面`` and goes on, in the same sentence, with one
piece or more each after ``中间N位``, ``后N位``, ``最后N位``, ``末N位``, ``中间``, ``后面`` or
``剩下的`` (maybe ``是``, ``为`` or a colon, and ``，`` or a space before the word). A piece
is digits, maybe with spaces or hyphens inside and, last, an ``X``; Chinese numerals are
digits already (``charter_zh.pii_text``). When a piece says how many digits it holds, it must
hold that many.

The pieces joined are one number when the words before ``前`` say what it is
(``charter_zh.pii_context``, the nearest word in reach): a phone word and eleven digits led by
``1``, an ID word and an ID number's shape, a card word and 16-19 digits; an order word, never.
With no such word the number must pass its kind's checks (``pii_digits.kind_of``). So
``订单号前八位20260512，后八位00012345`` and ``验证码前三位123，后三位456`` stay as written.

What is reported is the span from the first piece's first digit to the last piece's end: the
words between go with it, and no digit of the number is left outside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from charter_zh import pii_context
from charter_zh.pii_digits import kind_of

_N = "[0-9一二三四五六七八九十两]{1,3}"
_PIECE = r"[0-9](?:[ \-]?[0-9])*(?:[ \-]?[Xx])?"
_LINK = r"(?:的|是|为|[:：])?\s?"
_FIRST = re.compile(rf"前(?:(?P<n>{_N})位|面){_LINK}(?P<piece>{_PIECE})")
_NEXT = re.compile(
    rf"[，,、\s]{{0,2}}(?:然后|接着|再)?"
    rf"(?:(?:中间|最后|后|末)(?P<n>{_N})位|后面|剩下的?|剩余的?|中间){_LINK}(?P<piece>{_PIECE})"
)
_SMALL = dict(zip("一二三四五六七八九两", (1, 2, 3, 4, 5, 6, 7, 8, 9, 2), strict=True))


@dataclass(frozen=True)
class Split:
    start: int
    end: int
    digits: str
    kind: str


def count(said: str) -> int | None:
    """How many digits ``前N位`` says: ``3``, ``三``, ``十``, ``十一``, ``两``."""
    if said.isdigit():
        return int(said)
    if "十" not in said:
        return _SMALL.get(said) if len(said) == 1 else None
    tens, _, ones = said.partition("十")
    if (tens and tens not in _SMALL) or (ones and ones not in _SMALL):
        return None
    return _SMALL.get(tens, 1) * 10 + _SMALL.get(ones, 0)


def _digits(piece: str, said: str | None) -> str | None:
    digits = "".join(ch for ch in piece if ch not in " -").upper()
    if said is not None and count(said) != len(digits):
        return None
    return digits


def _kind(text: str, start: int, digits: str) -> str | None:
    contexts = pii_context.before(text, start)
    word = pii_context.nearest(contexts)
    if word == "phone":
        return "phone" if pii_context.mobile_shape(digits) else None
    if word == "id_card":
        return "id_card" if pii_context.id_shape(digits) or kind_of(digits) else None
    if word == "bank_card":
        return "bank_card" if 16 <= len(digits) <= 19 and digits.isdigit() else None
    if word == "order":
        return None
    return kind_of(digits)


def splits(text: str) -> list[Split]:
    """The numbers told in pieces in ``text`` (a view's text), in order."""
    if "前" not in text:
        return []
    out: list[Split] = []
    for first in _FIRST.finditer(text):
        if out and first.start() < out[-1].end:
            continue
        joined = _digits(first["piece"], first["n"])
        end = first.end()
        pieces = 1
        while joined is not None:
            more = _NEXT.match(text, end)
            if more is None:
                break
            piece = _digits(more["piece"], more["n"])
            joined = None if piece is None else joined + piece
            end = more.end()
            pieces += 1
        if joined is None or pieces < 2:
            continue
        kind = _kind(text, first.start(), joined)
        if kind is not None:
            out.append(Split(first.start("piece"), end, joined, kind))
    return out
