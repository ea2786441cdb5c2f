"""A one-line, character-level diff of an expected and a got text, for Chinese replies.

Chinese has no spaces to split words on and a reply is one line, so line and word diffs say
nothing; this diffs characters (``difflib.SequenceMatcher``), except that a run of Latin letters
and digits (``DD202405010001``, ``12,345.60``, ``2024-05-01``) is one unit, so a changed amount
shows as one change rather than as digits shuffled around. Removed text is ``[-…-]``, added
text ``{+…+}`` (wdiff's notation); unchanged text far from a change is elided with ``…``:

    …余额为[-¥12,345.60-]{+¥99,999.00+}，数据截至…
"""

from __future__ import annotations

import difflib

import regex

CONTEXT = 8  # characters of unchanged text kept on each side of a change
_UNIT = regex.compile(
    r"[0-9A-Za-z０-９Ａ-Ｚａ-ｚ]+(?:[.,:/_-][0-9A-Za-z０-９Ａ-Ｚａ-ｚ]+)*|.", regex.S
)


def units(text: str) -> list[str]:
    """The text as diff units: a run of Latin letters and digits, or one character."""
    return _UNIT.findall(text)


def _shown(text: str) -> str:
    # one report line per problem: a line break in a reply must not break it
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _chunks(want: str, got: str) -> list[tuple[str, list[str], list[str]]]:
    """(tag, expected units, got units), with a lone unchanged character between two changes
    folded into them: ``[-您的卡-]{+你的账+}`` reads better than three changes."""
    a, b = units(want), units(got)
    out: list[tuple[str, list[str], list[str]]] = []
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for i, (tag, i1, i2, j1, j2) in enumerate(ops):
        old, new = a[i1:i2], b[j1:j2]
        lone = tag == "equal" and len("".join(old)) == 1 and 0 < i < len(ops) - 1
        if tag != "equal" or lone:
            if out and out[-1][0] == "change":
                out[-1] = ("change", out[-1][1] + old, out[-1][2] + new)
            else:
                out.append(("change", old, new))
        else:
            out.append(("equal", old, new))
    return out


def _fit(parts: list[str], size: int) -> int:
    """How many units from the start of ``parts`` fit in ``size`` characters (at least one)."""
    n = used = 0
    while n < len(parts) and (n == 0 or used + len(parts[n]) <= size):
        used += len(parts[n])
        n += 1
    return n


def _head(parts: list[str], size: int) -> str:
    return "".join(parts[: _fit(parts, size)])


def _tail(parts: list[str], size: int) -> str:
    return "".join(parts[len(parts) - _fit(parts[::-1], size) :])


def char_diff(want: str, got: str, context: int = CONTEXT) -> str:
    """``want`` against ``got`` on one line; "" when they are the same."""
    if want == got:
        return ""
    chunks = _chunks(want, got)
    shown: list[str] = []
    for n, (tag, old, new) in enumerate(chunks):
        text = "".join(old)
        if tag == "change":
            added = "".join(new)
            shown.append((f"[-{text}-]" if text else "") + (f"{{+{added}+}}" if added else ""))
            continue
        first, last = n == 0, n == len(chunks) - 1
        if first and len(text) > context:
            text = "…" + _tail(old, context)
        elif last and len(text) > context:
            text = _head(old, context) + "…"
        elif not first and not last and len(text) > 2 * context:
            text = _head(old, context) + "…" + _tail(old, context)
        shown.append(text)
    return _shown("".join(shown))
