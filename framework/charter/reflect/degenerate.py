"""Text a small model produces when it goes wrong: an echo of its prompt, repetition, another
language, or nothing at all.

``degenerate(text, prompt=..., locale=..., grounds=...)`` finds them:

* ``echo``: a piece of at least ``ECHO_MIN`` characters the text shares with a prompt text (the
  system message, the labelled lines such as ``【当前任务】…``). Pieces that also occur in a
  ground are not echoes: quoting the skill result the prompt carries is the point of it. Found
  by looking up each window of ``ECHO_MIN`` characters of the text among the prompt's (a set
  per prompt text, cached: the system message is the same every turn).
* ``repetition``: a unit of ``MIN_UNIT``–``MAX_UNIT`` characters written at least three times in
  a row (``好的好的好的``, ``1.5.0-1.5.0-1.5.0-``) over at least ``RUN_SHARE`` of the text or
  ``RUN_CHARS`` characters, whose unit has two different letters, digits or Han characters
  (``¥1,000,000,000`` and ``——————`` are no repetition); or the same sentence (or group of
  sentences), split at line ends and 。！？!?, three times in a row. A list whose items share a
  line (``起存金额：1000元`` under each of three products) is not repetition: something else stands
  between the copies.
* ``language``: fewer than half of the letters are in the locale's script (``zh``: Han; ``ja``:
  Han and kana; ``ko``: Hangul and Han; Latin, Cyrillic, Greek, Arabic, Hebrew and Thai for the
  languages in ``SCRIPTS``). Digits and punctuation are no letters, and neither are ASCII tokens
  holding a digit, ``@`` or ``://`` or starting with ``www.`` (codes, e-mail addresses, URLs).
  Texts with fewer than ``MIN_LETTERS`` letters, and locales outside ``SCRIPTS``, are not
  judged.
* ``empty``: no letter, digit or Han character at all (only spaces, punctuation, symbols).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from charter.compile.literals import fold_width

DegenerateKind = Literal["echo", "repetition", "language", "empty"]
ECHO_MIN = 12
MIN_UNIT, MAX_UNIT = 2, 40
RUN_SHARE = 0.4  # of the text's characters (outer spaces left out)
RUN_CHARS = 60
MIN_LETTERS = 2


@dataclass(frozen=True, slots=True)
class Degenerate:
    """One problem: its kind, the offending text and its span; for a repetition also the
    repeated unit and how many times it is written."""

    kind: DegenerateKind
    text: str
    span: tuple[int, int]
    unit: str = ""
    count: int = 0


def texts_of(value: Any) -> tuple[str, ...]:
    """The texts of a turn value: a string, a list of strings, or mappings with a ``text``,
    ``content``, ``value`` or ``summary`` (prompt messages, memories)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Mapping):
        value = [value]
    out: list[str] = []
    for v in value if isinstance(value, Iterable) else ():
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, Mapping):
            out += [str(v[k]) for k in ("text", "content", "value", "summary") if v.get(k)]
    return tuple(out)


# ---- echo -----------------------------------------------------------------------------------


@lru_cache(maxsize=64)  # a set per prompt or ground text: a few hundred kB each at most
def _windows(text: str) -> frozenset[str]:
    folded = fold_width(text)
    return frozenset(folded[i : i + ECHO_MIN] for i in range(len(folded) - ECHO_MIN + 1))


def _union(texts: Sequence[str]) -> frozenset[str]:
    if isinstance(texts, str):  # one text, not its characters
        texts = (texts,)
    sets = [_windows(t) for t in texts if len(t) >= ECHO_MIN]
    return sets[0] if len(sets) == 1 else frozenset().union(*sets)


def echo_spans(
    text: str, prompt: Sequence[str], grounds: Sequence[str] = ()
) -> list[tuple[int, int]]:
    """Spans of ``text`` it shares with a prompt text (at least ``ECHO_MIN`` characters), less
    what a ground also holds."""
    said = _union(prompt)
    if not said or len(text) < ECHO_MIN:
        return []
    folded = fold_width(text)
    hits = [i for i in range(len(folded) - ECHO_MIN + 1) if folded[i : i + ECHO_MIN] in said]
    if hits and grounds:
        held = _union(grounds)
        hits = [i for i in hits if folded[i : i + ECHO_MIN] not in held]
    spans: list[tuple[int, int]] = []
    for i in hits:
        if spans and i <= spans[-1][1]:
            spans[-1] = (spans[-1][0], i + ECHO_MIN)
        else:
            spans.append((i, i + ECHO_MIN))
    return spans


# ---- repetition -----------------------------------------------------------------------------

_ALNUM = re.compile(r"[^\W_]")
_SENTENCE = re.compile(r"[^\n。！？!?]+")
_EDGES = " \t\r\u3000，,、；;：:…~～-—*#>·•\"'“”‘’"


def _unit_ok(unit: str) -> bool:
    return len(set(_ALNUM.findall(unit))) >= 2


def _run_at(text: str, p: int) -> tuple[int, int, int] | None:
    """The longest stretch of three or more copies of an acceptable unit that has two copies
    from ``p``, as ``(start, end, unit length)``; the shorter unit on a tie."""
    best: tuple[int, int, int] | None = None
    probe = text[p : p + MIN_UNIT]
    q = text.find(probe, p + MIN_UNIT, p + MAX_UNIT + MIN_UNIT)
    while q != -1:
        size = q - p
        if text[p:q] == text[q : q + size]:
            start, end = p, q + size
            while start and text[start - 1] == text[start - 1 + size]:
                start -= 1
            while end < len(text) and text[end] == text[end - size]:
                end += 1
            end = start + (end - start) // size * size  # whole copies
            longer = best is None or end - start > best[1] - best[0]
            if longer and end - start >= 3 * size and _unit_ok(text[start : start + size]):
                best = (start, end, size)
        q = text.find(probe, q + 1, p + MAX_UNIT + MIN_UNIT)
    return best


def _runs(text: str) -> list[Degenerate]:
    """Units repeated in a row over at least ``RUN_SHARE`` of the text or ``RUN_CHARS``.

    Such a stretch is at least ``least`` characters long and holds two copies from every one
    of its first ``least / 3`` positions (a copy is at most a third of it), so probing every
    ``least / 3``-th position finds it: about 25 probes, each one ``str.find``, on 500
    characters.
    """
    least = min(RUN_CHARS, RUN_SHARE * len(text.strip()))
    found: list[Degenerate] = []
    p, stride = 0, max(1, int(least // 3))
    while p + 2 * MIN_UNIT <= len(text):
        run = _run_at(text, p)
        if run is not None and run[1] - run[0] >= least:
            start, end, size = run
            found.append(
                Degenerate(
                    "repetition",
                    text[start:end],
                    (start, end),
                    text[start : start + size],
                    (end - start) // size,
                )
            )
            p = end
        else:
            p += stride
    return found


def _overlaps(span: tuple[int, int], found: Sequence[Degenerate]) -> bool:
    return any(span[0] < d.span[1] and d.span[0] < span[1] for d in found)


def _sentences(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _SENTENCE.finditer(text):
        raw = m.group()
        core = raw.strip(_EDGES)
        if core and _ALNUM.search(core):
            start = m.start() + raw.index(core)
            out.append((core, start, start + len(core)))
    return out


def _cycles(text: str, found: list[Degenerate]) -> None:
    """Sentences, or groups of ``k`` sentences, written three or more times in a row."""
    seq = _sentences(text)
    keys = [s[0] for s in seq]
    if len(set(keys)) > len(keys) - 2:
        return  # no sentence is written three times
    taken = [False] * len(seq)
    for k in range(1, len(seq) // 3 + 1):
        i = 0
        while i + 3 * k <= len(seq):
            block = keys[i : i + k]
            if taken[i] or keys[i + k : i + 2 * k] != block or keys[i + 2 * k : i + 3 * k] != block:
                i += 1
                continue
            count = 3
            while keys[i + count * k : i + (count + 1) * k] == block:
                count += 1
            last = i + count * k - 1
            span = (seq[i][1], seq[last][2])
            if not _overlaps(span, found):
                unit = text[seq[i][1] : seq[i + k - 1][2]]
                found.append(Degenerate("repetition", text[span[0] : span[1]], span, unit, count))
            for j in range(i, last + 1):
                taken[j] = True
            i = last + 1


def repetitions(text: str) -> list[Degenerate]:
    found = _runs(text)
    _cycles(text, found)
    return sorted(found, key=lambda d: d.span)


# ---- language and emptiness -----------------------------------------------------------------

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_LATIN = "A-Za-z\u00c0-\u024f\u1e00-\u1eff"
_LATIN_LANGUAGES = (
    "af ca cs da de en es et eu fi fr ga gl hr hu id is it lt lv ms nb nl nn no pl pt ro sk sl "
    "sq sv sw tl tr vi"
)
SCRIPTS: dict[str, str] = {
    "zh": _HAN,
    "ja": _HAN + "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "ko": _HAN + "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    **dict.fromkeys(_LATIN_LANGUAGES.split(), _LATIN),
    **dict.fromkeys(("ru", "uk", "bg", "be", "mk", "sr", "kk"), "\u0400-\u04ff"),
    "el": "\u0370-\u03ff\u1f00-\u1fff",
    "ar": "\u0600-\u06ff\u0750-\u077f",
    "fa": "\u0600-\u06ff\u0750-\u077f",
    "he": "\u0590-\u05ff",
    "th": "\u0e00-\u0e7f",
}
_SCRIPT_RE = {lang: re.compile(f"[{chars}]") for lang, chars in SCRIPTS.items()}
# letters a text of the language never has, however few: kana or Hangul in a Chinese answer is
# a model drifting into another language (ろしく), not a quotation
_NEVER = {
    "zh": re.compile(
        "[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"
    )
}
# a letter outside the script: a word character that is no digit, no _ and not in the script
_FOREIGN_RE = {lang: re.compile(rf"[^\W\d_{chars}]") for lang, chars in SCRIPTS.items()}
# ASCII tokens with a digit, an @ or :// (codes, e-mail addresses, URLs) or starting with www.
_NOT_WORDS = re.compile(r"[!-~]*(?:[0-9@]|://)[!-~]*|www\.[!-~]*", re.I)


def language_of(locale: str) -> str:
    """``zh-CN``, ``zh_Hans``, ``ZH`` -> ``zh``."""
    return locale.replace("_", "-").split("-")[0].lower()


def off_language(text: str, locale: str) -> bool:
    """Fewer than half of the letters are in the locale's script (False when not judged)."""
    lang = language_of(locale)
    foreign = _FOREIGN_RE.get(lang)
    if foreign is None:
        return False
    words = fold_width(text)
    if foreign.search(words) is None:
        return False  # the usual answer: nothing to count
    never = _NEVER.get(lang)
    if never is not None and never.search(words) is not None:
        return True
    words = _NOT_WORDS.sub(" ", words)
    letters = len(foreign.findall(words))
    expected = len(_SCRIPT_RE[lang].findall(words)) if letters else 0
    letters += expected
    return letters >= MIN_LETTERS and 2 * expected < letters


def no_content(text: str) -> bool:
    """No letter, digit or Han character."""
    return _ALNUM.search(text) is None


def degenerate(
    text: str,
    *,
    prompt: Sequence[str] = (),
    locale: str = "zh-CN",
    grounds: Sequence[str] = (),
) -> tuple[Degenerate, ...]:
    """Every problem of ``text``; an empty text has only that one."""
    if no_content(text):
        return (Degenerate("empty", text, (0, len(text))),)
    found = [Degenerate("echo", text[s:e], (s, e)) for s, e in echo_spans(text, prompt, grounds)]
    found += repetitions(text)
    if off_language(text, locale):
        found.append(Degenerate("language", text, (0, len(text))))
    return tuple(found)
