"""The text the PII recognizers scan: every way a user types a digit read as that digit, with
every span mapped back to the characters as typed (issues 16, 17 and 33).

Four steps, in order:

1. NFKC of every character whose compatibility form is a letter or a digit
   (``charter.text.unicode_norm``: ``１３８``, ``𝟏``, ``⑴``); may expand a character;
2. full-width spaces, dashes, point and plus, and the other dashes users type, folded to
   ASCII one character for one (``fold``);
3. invisible characters removed (``INVISIBLE``: zero-width space, non-joiner and joiner, word
   joiner, byte-order mark, soft hyphen, direction marks …): ``138\u200b1234\u200b5678`` is
   read ``13812345678``. A match that spans them covers them in the text as typed, so the
   redaction leaves none of its characters behind;
4. Chinese numerals read as digits, one character for one, inside a run that reads as a
   number: a run of digits (``〇零一二两三四五六七八九幺`` and ASCII ones) and the separators
   people put between groups, holding at least three Chinese numerals and touching no unit
   (``十百千万亿``) or decimal point (``点``). So ``幺三八一二三四五六七八`` is ``13812345678``
   and ``一三八 一二三四 五六七八`` is ``138 1234 5678``, while ``一五一十`` (a unit),
   ``两三个`` and the ``三`` of ``前三位`` (too short) stay words.

``View.original`` maps a span of the scanned text back to the text given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from charter.text.unicode_norm import Normalized, normalize

# full-width digits, letters, space and hyphen, and the dashes users type, folded one for one
_WIDE: dict[int, int] = {
    **{0xFF10 + i: ord("0") + i for i in range(10)},
    **{0xFF21 + i: ord("A") + i for i in range(26)},
    **{0xFF41 + i: ord("a") + i for i in range(26)},
}
_FOLD: dict[int, str | int] = {
    **_WIDE,
    **dict.fromkeys((0x3000, 0x00A0), " "),
    **dict.fromkeys((0xFF0D, 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2212), "-"),
    0xFF0E: ".",
    0xFF0B: "+",
    0xFF0F: "/",
    0xFF3F: "_",
}
# format characters that render as nothing, and the soft hyphen (shown only at a line break)
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
CN_DIGITS = "〇零一二两三四五六七八九幺"
_CN_VALUE = str.maketrans("〇零一二两三四五六七八九幺", "0012234567891")
# the separators of digit groups (also between Chinese numerals)
SEPARATOR_CHARS = " -./_，、"
_CN_RUN = re.compile(rf"[{CN_DIGITS}0-9](?:[ \-./_，、]{{0,2}}[{CN_DIGITS}0-9])*")
_UNITS = frozenset("十百千万亿点")
MIN_CN = 3  # Chinese numerals a run needs to read as a number
_NO_CN = dict.fromkeys(map(ord, CN_DIGITS))
_MAYBE = re.compile(rf"[{CN_DIGITS}](?:[ \-./_，、]{{0,2}}[{CN_DIGITS}0-9]){{2}}")


def fold(text: str) -> str:
    """``text`` with full-width digits, letters, spaces and dashes made half-width, one
    character for one (so every span of the folded text is a span of ``text``)."""
    return text.translate(_FOLD)


def _digits(text: str) -> str:
    """``text`` with the Chinese numerals of every run that reads as a number as digits."""
    if _MAYBE.search(text) is None:
        return text  # the common case: no Chinese numeral followed by two more digits
    out: list[str] = []
    pos = 0
    for m in _CN_RUN.finditer(text):
        run = m.group()
        if len(run) < MIN_CN or len(run) - len(run.translate(_NO_CN)) < MIN_CN:
            continue
        start, end = m.span()
        if (start and text[start - 1] in _UNITS) or (end < len(text) and text[end] in _UNITS):
            continue  # 一五一十, 三五百: an amount or an idiom, not digits
        out += (text[pos:start], run.translate(_CN_VALUE))
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


@dataclass(frozen=True)
class View:
    """The scanned ``text`` of a text given; ``kept[i]``: where the ``i``-th character of
    ``text`` is in the NFKC form (empty: nothing was removed)."""

    text: str
    norm: Normalized
    kept: tuple[int, ...] = ()

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text given that ``text[start:end]`` came from, invisible characters
        inside it included."""
        if self.kept and start < end:
            start, end = self.kept[start], self.kept[end - 1] + 1
        elif self.kept:
            start = end = self.kept[start] if start < len(self.kept) else len(self.norm.text)
        return self.norm.original(start, end)


@lru_cache(maxsize=64)
def view(text: str) -> View:
    """The scanned form of ``text`` (see the module docstring); the recognizers of one text
    run one after the other, so it is computed once for all of them."""
    norm = normalize(text)
    folded = fold(norm.text)
    kept: tuple[int, ...] = ()
    if INVISIBLE.search(folded):
        kept = tuple(i for i, ch in enumerate(folded) if not INVISIBLE.fullmatch(ch))
        folded = INVISIBLE.sub("", folded)
    return View(_digits(folded), norm, kept)
