"""Personal data *heard* during a turn, matched literally wherever it is written again (issue
17).

A recognizer decides from the words around a number: ``身份证号110101199003071234`` is an ID
number with a wrong check character because ``身份证号`` says so. The same digits then travel
without their words: a slot captures them (``tax_id``), a reply template echoes them (``税号
110101199003071234``), a fact is written with them as its value. Read alone, they are any 18
digits. So what the recognizers found in the user's input is remembered for the turn, and
every later text of the turn is searched for it literally:

* ``heard(recognize, text)`` opens the turn's scope (a ``ContextVar``: each thread and task
  has its own, so concurrent turns of other users never see it) and remembers the matches of
  ``text``; the scope closes when the ``with`` ends, and the values are gone;
* ``hear(kind, value)`` adds one value within the scope (a slot value the goal store kept
  sealed and opened again: it is personal data by construction);
* ``literal_matches(text)``: where a remembered value occurs in ``text``, in the NFKC form
  the recognizers read and with up to two separators (space, ``-``, ``.``, ideographic space,
  full-width hyphen) between its characters: ``1101 0119 9003 0712 34`` is the same number.

Values shorter than ``MIN_LENGTH`` characters (separators removed) are not remembered: a
card's last four digits are no more personal than any four digits. Outside a scope nothing is
remembered and nothing matched: a fact written by ``charter memory`` or a test runs exactly as
before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from charter.contracts.pii import PiiMatch
from charter.text.unicode_norm import normalize

MIN_LENGTH = 6
_SEPARATORS = " -.\u3000\uff0d"
_GAP = r"[ \-.\u3000\uff0d]{0,2}"


@dataclass(frozen=True)
class _Heard:
    kind: str
    generalised: str | None
    pattern: re.Pattern[str]


_SCOPE: ContextVar[dict[str, _Heard] | None] = ContextVar("charter_pii_heard", default=None)


def _squeezed(value: str) -> str:
    return "".join(ch for ch in value if ch not in _SEPARATORS).upper()


def hear(kind: str, value: str, generalised: str | None = None) -> None:
    """Remember ``value`` (in its NFKC form) as personal data of ``kind`` for the rest of the
    turn; nothing outside a turn's scope."""
    scope = _SCOPE.get()
    if scope is None:
        return
    key = _squeezed(normalize(value).text)
    if len(key) < MIN_LENGTH or key in scope:
        return
    body = _GAP.join(re.escape(ch) for ch in key)
    pattern = re.compile(rf"(?<![0-9A-Za-z]){body}(?![0-9A-Za-z])", re.IGNORECASE)
    scope[key] = _Heard(kind, generalised, pattern)


@contextmanager
def heard(recognize: Callable[[str], Iterable[PiiMatch]], text: str) -> Iterator[None]:
    """The scope of one turn, remembering the personal data ``recognize`` finds in ``text``
    (both in NFKC form, see ``PiiHandler.heard``)."""
    token = _SCOPE.set({})
    try:
        for m in recognize(text):
            hear(m.kind, m.text, m.generalised)
        yield
    finally:
        _SCOPE.reset(token)


def literal_matches(text: str) -> list[PiiMatch]:
    """Where the values heard in this turn occur in ``text`` (already in NFKC form)."""
    scope = _SCOPE.get()
    if not scope:
        return []
    return [
        PiiMatch(m.start(), m.end(), m.group(), h.kind, h.generalised)
        for h in scope.values()
        for m in h.pattern.finditer(text)
    ]
