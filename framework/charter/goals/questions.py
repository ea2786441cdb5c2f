"""What a question asks for: its kind (how much, when, where, how, why, which, who), read from
its question words.

A polite request in Chinese is a yes/no question (能帮我挂个号吗 / 还有号吗); a question with a
question word asks for a fact (挂号费多少 / 报告多久能出来 / 在哪取药). Customers ask for an
intent with the question words its examples use (余额还剩多少 for a balance query, 快递到哪了 for
a parcel's whereabouts), so a question whose kind no example of an intent shares is about the
intent, not a request of it: the FAQ or the unanswered reply answers (``hearing.asked_about``).

Pure and deterministic: NFKC-normalised, lower-cased text."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

import regex

# 怎么/咋 asks why when a negation or a 'still/again' follows, maybe after a stretch of time
# (快递怎么还没到 / 怎么三天没更新 / 咋又扣钱了): a complaint, not a question of method. 还 is
# 'still' except before what is repaid (怎么还款 / 怎么还信用卡 ask how).
_WHY = (
    r"(?:怎么|咋)(?:[\d一二两三四五六七八九十几]+(?:天|个?小时|周|个?星期|个?月)|到现在|这么久|都)?"
    r"(?:还(?![款钱贷账信清])|没|又|老|一直|总|会|回事)"
)
# kind → its question words; 几 + a measure asks how much, 几点/几天/几号 when
_KINDS: dict[str, regex.Pattern[str]] = {
    "why": regex.compile(rf"为什么|为啥|干嘛|{_WHY}"),
    "how much": regex.compile(r"多少(?!天|时间)|多贵|几[块元毛个次粒片瓶盒斤岁位]|什么价|啥价"),
    "when": regex.compile(
        r"多久|多长时间|多少天|什么时候|啥时候|什么时间|啥时间|何时|几点|几天|几号|哪天|哪一天|几时"
    ),
    "where": regex.compile(r"哪里|哪儿|在哪|到哪|去哪|什么地方|啥地方|几楼|哪个窗口|哪栋"),
    "how": regex.compile(r"怎么|咋|怎样|如何|什么流程|要带什么|需要什么"),
    "which": regex.compile(r"哪[个些种家位一款](?!窗口)|什么科|啥科"),
    "who": regex.compile(r"谁"),
}
# the kinds that ask a fact about a thing (its price, its time, its place): asked of an intent
# none of whose examples ask it, the question is about the intent. How and why ask for help
# (头疼怎么办 / 快递怎么还没到), which and who choose among what the intent gives.
FACTS = frozenset({"how much", "when", "where"})
# an action (a transfer, a booking, a suspension) is asked for with a request, never with how it
# is done: 怎么停机 / 如何挂号 ask about it
ABOUT_ACTION = FACTS | {"how"}
# words that ask the agent to do something, beside any question (帮我挂个号，哪个医生好); where
# to see or look something up asks to be shown it (转账记录在哪里看 / 物流哪里能查)
_ASKS_FOR = regex.compile(
    r"帮我|帮忙|给我|替我|麻烦|我要|我想(?!问|知道|了解|咨询)|想要|(?<![申邀聘宴恳提敬])请(?!问|教)"
    r"|可以帮|能帮|能不能帮"
    r"|(?:哪里|哪儿|在哪)(?:能|可以|才能)?(?:看|查)"
)


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def kinds(text: str) -> frozenset[str]:
    """The kinds of question ``text`` asks with question words; empty for a yes/no question
    (能帮我约吗), a statement or a request."""
    norm = _norm(text)
    found = {k for k, pattern in _KINDS.items() if pattern.search(norm)}
    if "why" in found and not _KINDS["how"].search(_KINDS["why"].sub("", norm)):
        found.discard("how")  # the 怎么 of a why
    return frozenset(found)


def asks_for(text: str) -> bool:
    """``text`` asks the agent to do something (帮我 / 麻烦 / 我要 / 请...), whatever else it
    asks."""
    return bool(_ASKS_FOR.search(_norm(text)))


def kinds_of(examples: Iterable[str]) -> frozenset[str]:
    """Every kind of question the ``examples`` ask."""
    return frozenset(k for e in examples for k in kinds(e))


__all__ = ["ABOUT_ACTION", "FACTS", "asks_for", "kinds", "kinds_of"]
