"""Runs of digits in groups, as users type ID, card and mobile numbers (issues 16 and 33).

A *run* is digits in groups with separators between them: one of ``- . / _ ， 、`` with a
space on either side or not, or one or two spaces (``110105-19491231-002X``,
``138/1234/5678``, ``6222_0268_1539_8387``, ``138，1234，5678``, ``6222  0268 …``), maybe led
by a country code (``+86 138 …``) and ended by an ID number's check character ``X``. A run is
read as one number with its separators removed; what it is comes from the checks alone
(``kind``): an ID number with its check character and birth date, a card number passing Luhn
with a network's prefix, a mobile number.

* A run that is none of these is cut where it lists (``，`` ``、`` ``/``) and each stretch
  between such cuts that is one is taken, longest first: ``2，13812345678`` (a count, then a
  mobile), ``13812345678、139/1234/5678`` (two mobiles). A number with a suffix or stray
  digits after a space or a hyphen (``13812345678-02``, ``2 138 1234 5678``) is a code.
* Groups hold two digits or more, except the last (a 17-digit card in fours ends in one) and
  a number spelt digit by digit (``1 3 8 1 …``): ``v1.3.8.1234.5678`` is a version string.
* Four numbers up to 255 between points are an IP address (``139.196.12.100``).
* A run glued to ASCII letters is read only when the letters are labels
  (``LABELS``: ``ID``, ``No``, ``tel``, ``vx``, ``card`` … in any case and combination:
  ``ID110105…``, ``tel13812345678``, ``cardNo6222…``); ``SO2026…`` or ``SF1234…`` are order and
  tracking codes. A run glued to a digit, or followed by a letter or a digit, is no run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stdnum import luhn

from charter_zh.bank_card import issued
from charter_zh.id_card import id_number

_SEP = r"(?: ?[\-./_，、] ?| {1,2})"
GROUPED = re.compile(
    rf"(?<![0-9+])(?:\+?86[ \-]{{0,2}})?[0-9](?:{_SEP}?[0-9]){{9,}}(?:{_SEP}?[Xx])?"
    r"(?![0-9A-Za-z])"
)
_GROUP = re.compile(r"\+?[0-9]+[Xx]?|[Xx]")
LABELS = re.compile(
    r"(?:id|no|num|tel|phone|mobile|mob|cell|vx|wx|v|wechat|weixin|card|acct|account)+",
    re.IGNORECASE,
)
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_LISTS = re.compile("[，、/]")
MAX_GROUPS = 24  # a longer run is cut into stretches of at most this many groups


def is_mobile(digits: str) -> bool:
    return len(digits) == 11 and digits[0] == "1" and digits[1] in "3456789"


def squeezed(written: str) -> str:
    """The characters of a written number without its separators, ``x`` upper-cased."""
    return "".join(ch for ch in written if ch.isalnum() or ch == "+").upper()


def kind_of(digits: str) -> str | None:
    """The kind of personal data a number (separators removed) is by its checks; or None."""
    if digits.startswith("+86"):
        return "phone" if is_mobile(digits[3:]) else None
    if len(digits) == 18 and id_number(digits) is not None:
        return "id_card"
    if not digits.isdigit():
        return None
    if 16 <= len(digits) <= 19 and issued(digits) and luhn.is_valid(digits):
        return "bank_card"
    if is_mobile(digits) or (len(digits) == 13 and digits[:2] == "86" and is_mobile(digits[2:])):
        return "phone"
    return None


def grouped_kind(written: str) -> str | None:
    """The kind of a run of grouped digits as written (see the module docstring); or None."""
    groups = _GROUP.findall(written)
    return _groups_kind(written, groups) if groups else None


def _groups_kind(written: str, groups: list[str]) -> str | None:
    sizes = [len(g.lstrip("+")) for g in groups]
    if len(groups) > 1 and min(sizes[:-1]) < 2 and max(sizes) > 1:
        return None  # v1.3.8.1234.5678
    if (
        len(groups) == 4
        and all(g.isdigit() and int(g) <= 255 for g in groups)
        and set(_SEPARATORS.findall(written)) == {"."}
    ):
        return None  # an IP address
    return kind_of(squeezed(written))


_SEPARATORS = re.compile(r"[\-./_，、]| (?! )")


def glued_to_label(text: str, start: int) -> bool | None:
    """Whether a run at ``start`` is glued to ASCII letters that are labels (True), to others
    (False), or to none (None)."""
    end = start
    while start > 0 and text[start - 1] in _ASCII_LETTERS:
        start -= 1
    if start == end:
        return None
    return LABELS.fullmatch(text, start, end) is not None


@dataclass(frozen=True)
class Stretch:
    """A run, or whole groups of one, read as a number: where, as written, without
    separators, and its kind by its checks (None: none, maybe the words before say)."""

    start: int
    end: int
    written: str
    digits: str
    kind: str | None


def stretches(text: str) -> list[Stretch]:
    """Every run of ``text`` (a view's text), whole; and for a run that is no number by its
    checks, the stretches of its groups that are, longest first, never overlapping."""
    out: list[Stretch] = []
    for m in GROUPED.finditer(text):
        if glued_to_label(text, m.start()) is False:
            continue
        written = m.group()
        kind = grouped_kind(written)
        out.append(Stretch(m.start(), m.end(), written, squeezed(written), kind))
        if kind is None:
            out += _cut(text, m.start(), m.end())
    return out


def _cut(text: str, start: int, end: int) -> list[Stretch]:
    spans = [(g.start(), g.end()) for g in _GROUP.finditer(text, start, end)]
    n = len(spans)
    # a stretch starts and ends where the run lists (，、/) or at the run's ends
    ends = [i + 1 == n or _LISTS.search(text, spans[i][1], spans[i + 1][0]) for i in range(n)]
    starts = [i == 0 or ends[i - 1] for i in range(n)]
    taken: list[tuple[int, int]] = []
    for length in range(min(n - 1, MAX_GROUPS), 0, -1):
        for i in range(n - length + 1):
            if not (starts[i] and ends[i + length - 1]):
                continue
            a, b = spans[i][0], spans[i + length - 1][1]
            if any(a < y and x < b for x, y in taken):
                continue
            written = text[a:b]
            kind = _groups_kind(written, [text[x:y] for x, y in spans[i : i + length]])
            if kind is not None:
                taken.append((a, b))
    return [
        Stretch(a, b, text[a:b], squeezed(text[a:b]), grouped_kind(text[a:b]))
        for a, b in sorted(taken)
    ]
