"""``phone``: Chinese phone numbers, validated by ``phonenumbers`` with region ``CN``.

Mobiles (``13812345678``, ``138-1234-5678``, ``+86 138 1234 5678``), landlines
(``010-12345678``, ``(0755)12345678``, ``（0755）12345678``) and 400/800 service numbers. The value
is the E.164 form (``+8613812345678``).

A cheap regex finds digit runs (with spaces, hyphens and brackets) holding at least seven
digits. Each candidate is first parsed and validated whole (``phonenumbers.parse`` +
``is_valid_number``, ~25 µs); only a run with separators that is not one valid number goes to
``PhoneNumberMatcher`` (~100 µs), whose offsets are relative to the candidate and index Python
``str`` positions (it works on ``str``, not on UTF-16). Results are cached per candidate
string, since service texts repeat the same hotline over and over.

Deliberately not matched:

* numbers glued to ASCII letters/digits (``ID13812345678``), inside a longer digit run
  (``订单号2023051812345678``) or followed by ``-`` and more digits (``13812345678-02``, a code);
* numbers run together with stray digits across a space (``2 138 1234 5678``): the run is not
  one valid number and the matcher does not split it;
* dates and times in any numeric form (``2024-05-01``, ``20240501``, ``2024-05-27 14:09``);
* numbers phonenumbers does not consider valid for China (``12345``, ``95588`` short codes);
* anything inside a URL or an e-mail address (``13812345678@qq.com``, ``https://x.cn/13812345678``):
  it is part of the address (``web.outside_links``).
"""

from __future__ import annotations

import re
from functools import lru_cache

import phonenumbers

from charter.contracts.rules import Item, ValueKind
from charter_zh._common import ASCII_ALNUM, DIGITS, non_overlapping
from charter_zh.web import outside_links

# Led by a digit class so the scan skips prose quickly; an opening bracket or a + before the
# first digit is added by hand.
_CANDIDATE = re.compile(r"[0-9][0-9 ()（）\-]{5,28}[0-9]")
# a date, with the hour of a time after it (下单时间2024-05-27 14:09: the run stops at ":")
_DATE_LIKE = re.compile(
    r"[12][0-9]{3}(?:[-/. ]?[01]?[0-9][-/. ]?[0-3]?[0-9](?: [0-2]?[0-9])?)?"
    r"|[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?"
)
_E164 = phonenumbers.PhoneNumberFormat.E164


def _whole(candidate: str) -> str | None:
    """E.164 of the candidate read as one number, or None; parse + validate is the fast path."""
    try:
        number = phonenumbers.parse(candidate, "CN")
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return str(phonenumbers.format_number(number, _E164))


def _matched(candidate: str) -> tuple[tuple[int, int, str], ...]:
    found: list[tuple[int, int, str]] = []
    for match in phonenumbers.PhoneNumberMatcher(candidate, "CN"):
        e164 = phonenumbers.format_number(match.number, _E164)
        found.append((match.start, match.end, e164))
    return tuple(found)


@lru_cache(maxsize=4096)
def _scan(candidate: str) -> tuple[tuple[int, int, str], ...]:
    """Phones in a candidate as (start, end, E.164), offsets relative to the candidate."""
    try:
        whole = _whole(candidate)
        if whole is not None:
            return ((0, len(candidate), whole),)
        if candidate.isdigit():
            return ()  # a phone inside a bare digit run is glued to the digits around it
        # Several numbers, or a number plus stray digits, in one run: let the matcher split it.
        return _matched(candidate)
    except Exception:  # a library bug on odd input must not take the checker down
        return ()


class PhoneExtractor:
    """Valid CN phone numbers; the value is E.164."""

    name: str = "phone"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        items: list[Item] = []
        for cand in _CANDIDATE.finditer(text):
            base = cand.start()
            if base > 0 and text[base - 1] in "(（":
                base -= 1
            if base > 0 and text[base - 1] == "+":
                base -= 1
            raw = text[base : cand.end()]
            if sum(ch in DIGITS for ch in raw) < 7:
                continue
            for rel_start, rel_end, e164 in _scan(raw):
                start, end = base + rel_start, base + rel_end
                if not self._standalone(text, start, end):
                    continue
                written = text[start:end]
                if _DATE_LIKE.fullmatch(written):
                    continue
                items.append(Item(start, end, written, e164, None, None, {}))
        if not items:
            return ()
        return non_overlapping(outside_links(text, items))

    @staticmethod
    def _standalone(text: str, start: int, end: int) -> bool:
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        return (
            before not in ASCII_ALNUM
            and before not in "+-"
            and after not in ASCII_ALNUM
            and not (after == "-" and text[end + 1 : end + 2].isdigit())
        )

    def canonical(self, item: Item) -> str | None:
        """None: a phone number is reported, never rewritten."""
        return None
