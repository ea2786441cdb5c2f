"""Statements about the user's past, and whether stored memories back them (ARCHITECTURE §7,
the hallucination interceptor; seed 003 §4).

``user_claim`` finds what an answer says the user said or did before: ``您上周提到想换成大额存单``,
``您之前反馈过物流太慢``, ``您刚才说的订单``. A claim is 您 (or 你), optionally a time word
(上周, 之前, 刚才, 昨天...), then a verb of saying or asking (提到, 说过, 反馈过, 咨询过,
告诉过我们...), then what was said, up to the end of the clause. Without a time word the verb
must itself speak of the past (提到, 说过, 反馈过 — not 说, which is as often 您说得对). The
item's value is what the user supposedly said, without 的/了 and punctuation at its edges; a
content of fewer than three characters (您提到的需求) says nothing checkable and is no claim.

``backed_by_memory(subject, memories)`` is true when every claim of the subject is backed by a
memory: ``memories`` is what the turn gives under a context path (a list of texts, or of
mappings with a ``value``, ``summary`` or ``text``), and a claim is backed by a memory holding at
least half of the claim's character pairs (at least one pair; CJK text has no words to compare,
and pairs survive the small rewordings an answer makes: 想换大额存单 / 想换成大额存单). A text
without claims is always backed; a claim with no memories never is.

Deliberately not matched: the assistant's own past (我们之前说过), third persons (客户反映),
and the future (您可以告诉我们).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from charter.contracts.rules import ArgKind, Item, ValueKind

_TIME = (
    "上周|上次|上回|之前|以前|此前|刚才|刚刚|昨天|前天|前几天|上个月|上月|去年|曾经|早些时候|那天"
)
_PAST_VERB = (
    "提到过|提到|提过|说过|讲过|反馈过|反映过|咨询过|问过|告诉过我们|告诉过我|表示过|投诉过|留言说"
)
_ANY_VERB = _PAST_VERB + "|说|讲|问|反馈|反映|咨询|告诉我们|告诉我|表示|投诉"
# One pattern per pronoun, each led by its literal character: `re` then skips to each 您 in C,
# where a pattern led by a class or a lookbehind would be tried at every position of the text
# (ten times slower on a 500-character answer). 你 is rare in service answers: its pattern
# only runs when the text has one.
_CLAIM_BODY = (
    rf"(?:(?P<time>{_TIME})(?:的时候)?(?:曾|也|还)?(?P<verb1>{_ANY_VERB})"
    rf"|(?:曾|也|还)?(?P<verb2>{_PAST_VERB}))[的了]?[，,：: ]?"
    r"(?P<content>[^。！？!?；;\n，,]{1,40})"
)
_CLAIM_NIN = re.compile("您" + _CLAIM_BODY)
_CLAIM_NI = re.compile("你" + _CLAIM_BODY)
_NOT_BEFORE = "我他她它"  # 我们您... is not about the user
# fewer characters than this say nothing checkable (您提到的需求, 您说的问题)
MIN_CONTENT = 3
_EDGE = "的了，,：: "
_PAIR_CHARS = re.compile(r"[\u4e00-\u9fff]|[0-9A-Za-z]+")


class UserClaimExtractor:
    """What an answer says the user said before; the value is the content of the claim."""

    name: str = "user_claim"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if "您" not in text and "你" not in text:
            return ()
        matches = list(_CLAIM_NIN.finditer(text))
        if "你" in text:
            matches = sorted([*matches, *_CLAIM_NI.finditer(text)], key=lambda m: m.start())
        items: list[Item] = []
        end = 0
        for m in matches:
            at = m.start()
            if at < end or (at and text[at - 1] in _NOT_BEFORE):
                continue
            content = m["content"].strip(_EDGE)
            if len(content) >= MIN_CONTENT:
                items.append(Item(at, m.end(), m.group(), content))
                end = m.end()
        return tuple(items)

    def canonical(self, item: Item) -> str | None:
        """None: a claim is backed or not; there is nothing to reformat."""
        return None


def _pairs(text: str) -> set[str]:
    tokens = _PAIR_CHARS.findall(text)
    return {a + b for a, b in itertools.pairwise(tokens)} or set(tokens)


def _texts(memories: Any) -> list[str]:
    if memories is None:
        return []
    if isinstance(memories, str):
        return [memories]
    if isinstance(memories, Mapping):
        memories = [memories]
    out = []
    for m in memories if isinstance(memories, Iterable) else ():
        if isinstance(m, str):
            out.append(m)
        elif isinstance(m, Mapping):
            out += [str(m[k]) for k in ("value", "summary", "text", "key") if m.get(k)]
    return out


def backed(claim: str, memories: Sequence[str]) -> bool:
    wanted = _pairs(claim)
    if not wanted:
        return True
    return any(len(wanted & _pairs(memory)) * 2 >= len(wanted) for memory in memories)


class BackedByMemory:
    """``backed_by_memory(output, memory.facts)``: every claim about the user's past is backed."""

    name: str = "backed_by_memory"
    params: Sequence[ArgKind] = ("value",)

    def __init__(self) -> None:
        self.claims = UserClaimExtractor()

    def __call__(self, text: str, *args: Any) -> bool:
        claims = self.claims.extract(text)
        if not claims:
            return True
        memories = _texts(args[0] if args else None)
        return all(backed(str(c.value), memories) for c in claims)
