"""``rephrase`` mode: the model may reword a composed reply (ARCHITECTURE §5a). The rewording
replaces the composed text only when it passes every check a model answer passes and keeps
every amount, date, identifier and status the composed text states — checked both ways with the
grounding check: the rewording may state nothing the composed text (or the turn) does not, and
the composed text may state nothing the rewording lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from charter.contracts.models import Message
from charter.reflect.grounding import ungrounded

if TYPE_CHECKING:
    from charter.agent.parts import Parts

SYSTEM = (
    "把下面这段客服回复改写得更自然、更简洁。所有金额、日期、编号和状态必须原样保留，"
    "不能增加新的信息。只输出改写后的回复。"
)


def request(composed: str) -> list[Message]:
    return [Message("system", SYSTEM), Message("user", composed)]


def lost(p: Parts, composed: str, rephrased: str) -> list[str]:
    """What the composed text states that the rewording no longer does."""
    missing = ungrounded(
        composed, [rephrased], p.registry.extractors, statuses=p.responses.statuses
    )
    return list(dict.fromkeys(m.text for m in missing))
