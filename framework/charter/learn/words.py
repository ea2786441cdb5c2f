"""The words by which a user says the last answer was wrong (seed 001 §3.1), shared by the
turn loop (fallbacks count negations) and the reflection triggers."""

from __future__ import annotations

import re

NEGATIONS = (
    "不对",
    "错了",
    "不是这个",
    "不是这样",
    "重新来",
    "重来",
    "不是我要的",
    "答非所问",
    "没用",
    "你理解错了",
)


# the same characters saying something else: the user's own mistake (我转错了账户, 我记错了),
# something not yet used (还没用过), 不对劲 / 不对称
_NOT_NEGATION = re.compile(
    r"我[^，。！？,.!?]{0,4}错了|没用过|没用完|没用上|不对劲|不对称|不对外|不对应|对不对"
)


def is_negation(text: str) -> bool:
    """Does the user say the last answer was wrong (seed 001 §3.1: 不对 / 错了 / 重新来)?"""
    t = _NOT_NEGATION.sub("", text.strip())
    return any(word in t for word in NEGATIONS)
