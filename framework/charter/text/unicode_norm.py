"""Unicode compatibility normalisation (NFKC) of what users type, with every span of the
normalised text mapped back to the text as written (issue 17).

Personal data arrives in every width an input method produces: ``１３８１２３４５６７８``,
``身份证１１０１０５…Ｘ``, circled or parenthesised digits (``⑴``), compatibility ideographs.
Recognizers and literal matches are written for the ordinary forms, so they run over the
normalised text; what they find is then replaced in the text *as written*, whatever the width
of its characters: ``normalize(text).original(start, end)`` is the span of ``text`` that the
normalised span ``start:end`` came from.

Each character is replaced by its NFKC form when that form holds a letter or a digit (U+FF10
``０`` -> ``0``, U+FF21 ``Ａ`` -> ``A``, U+2474 ``⑴`` -> ``(1)``, U+F900 compatibility
ideographs -> the unified ones). Characters whose NFKC form is only punctuation, a symbol or a
space are left as typed: ``，`` ``：`` ``（`` end a URL or an e-mail address where their ASCII
forms would extend it (``https://a.cn/x，13812345678`` must keep the phone number outside the
link), and each recognizer folds the spaces and dashes it reads itself. Characters are
normalised one at a time, so a normalised character never straddles two written ones: a
combining mark stays a separate character (digits carry none).

The per-character table is filled on first sight of each character (``str.translate`` over a
caching mapping), so a text costs one C-level pass; spans are computed only when some
character expanded to several.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


class _Table(dict[int, str]):
    """``str.translate`` table: a code point to its replacement, computed on first use."""

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        out = unicodedata.normalize("NFKC", ch)
        if out == ch or not any(c.isalnum() for c in out):
            out = ch
        self[cp] = out
        return out


_TABLE = _Table()


@dataclass(frozen=True)
class Normalized:
    """``text`` normalised; ``starts[i]``/``ends[i]``: the span of the written text that the
    ``i``-th normalised character came from (empty tuples: one character for one)."""

    written: str
    text: str
    starts: tuple[int, ...] = ()
    ends: tuple[int, ...] = ()

    @property
    def identity(self) -> bool:
        """Whether every span of ``text`` is the same span of ``written``."""
        return not self.starts

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the written text that ``text[start:end]`` came from: whole written
        characters, so a redaction replaces every character a match touched."""
        if not self.starts:
            return start, end
        if start >= end:
            at = self.starts[start] if start < len(self.starts) else len(self.written)
            return at, at
        return self.starts[start], self.ends[end - 1]


def normalize(text: str) -> Normalized:
    """``text`` with its full-width and other compatibility characters normalised (see the
    module docstring)."""
    if text.isascii():
        return Normalized(text, text)
    out = text.translate(_TABLE)
    if len(out) == len(text):  # NFKC never maps a character to nothing: one for one
        return Normalized(text, out)
    starts: list[int] = []
    ends: list[int] = []
    for i, ch in enumerate(text):
        n = len(_TABLE[ord(ch)])
        starts += [i] * n
        ends += [i + 1] * n
    return Normalized(text, out, tuple(starts), tuple(ends))
