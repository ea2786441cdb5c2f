"""The shape of an input, apart from the intents it names: a yes or a no to a question
(是 / 好的，继续 / Y, 不 / 不用了 / N: step 1 of ``charter.goals.planner``), or a follow-up's
elliptical form (那…呢, 换成…, a value with little else: what lets an input with no intent
redo the session's last request)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex

_YES = frozenset(
    {"是", "是的", "好", "好的", "好啊", "可以", "行", "确认", "继续", "对", "嗯", "y", "yes", "ok"}
)
_NO = frozenset(
    {
        "否",
        "不",
        "不是",
        "不用",
        "不用了",
        "不要",
        "不要了",
        "不了",
        "不需要",
        "算了",
        "取消",
        "n",
        "no",
    }
)
_WORDS = regex.compile(r"[\s。，,.!！?？~～、；;]+")


# extractors whose values turn up in any sentence (明天, 100元): alone they are no follow-up
COMMON = ("time", "money")


_FOLLOW = regex.compile(r"^(?:那么?|那就|还有|换成|改成|改为|换|再)|呢[\p{P}\s]*$")


def elliptical(text: str, found: Mapping[str, Any]) -> bool:
    """The input is a follow-up's shape: 那…呢, 换成…, or its values with at most three other
    characters (卡号是…)."""
    if _FOLLOW.search(text.strip()):
        return True
    rest = text
    for value in found.values():
        for v in value if isinstance(value, list) else [value]:
            rest = rest.replace(str(v), "")
    return len(regex.sub(r"[\p{P}\s]", "", rest)) <= 3


def yes_or_no(text: str) -> bool | None:
    """True for a yes (是 / 好的，继续 / Y), False for a no (不 / 不用了 / N), else None."""
    words = [w for w in _WORDS.split(text.strip().lower()) if w]
    if words and all(w in _YES for w in words):
        return True
    if words and words[0] in _NO and all(w in _NO or w in _YES for w in words):
        return False
    return None
