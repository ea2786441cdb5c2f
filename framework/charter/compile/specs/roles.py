"""A role slot: a value found by the words around it, whichever side of the verb it stands on.

``goals.yaml`` declares the words (``role: {before: [给, 向, 往, 到], after: [那边, 卡上],
kind: name}``) and ``read_role`` finds, in order of place, each value of the kind that follows a
``before`` word or precedes an ``after`` word: ``转800给李四``, ``给李四转800``, ``汇800到李四``,
``李四那边打800``, ``往李四卡上打八百`` all give 李四. Between a ``before`` word and the value
may stand a link (``收款人是李四``, ``收款人换成李四``, ``收款人：李四``): ``LINK``.

Kinds (``ROLE_KINDS``), each a built-in shape of value:

* ``name`` — a Chinese personal name: 2–4 Han characters, as short as the text allows, that
  end where a name can end (the end of the text, punctuation or a non-Han character, an
  ``after`` word, a verb, particle, pronoun or numeral: ``张三转``, ``张三的卡``, ``张三五百``)
  and start where a name can start; never a pronoun, a kinship word or a word of time
  (``我妈``, ``自己``, ``妈妈``, ``时候``): those are left to the question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import regex

ROLE_KINDS = ("name",)

# what may stand between a before word and the value: 收款人是 / 换成 / ： 李四
LINK = regex.compile(r"\s*(?:是|为|叫做|叫|改成|改为|换成|换为|改到|换到)?\s*[:：]?\s*")
_HAN = regex.compile(r"\p{Han}")
# a name ends before one of these: a verb, a particle, a pronoun, a numeral, a preposition
_STOP = frozenset(
    "转汇打付支寄还送发借存取给向往到把被的了吧呢吗啊呀哦嘛那这哪我你您他她它咱卡账和跟与及同"
    "说先再就也都请让零〇一二两三四五六七八九十百千万亿块元"
)
# ... or one of these words (张三银行卡, 李四账户); a name starts after one of these (麻烦李四)
_STOP_WORDS = ("银行", "账户", "帐户", "支付宝", "微信", "麻烦", "帮忙", "帮我", "那边", "这边")
# no name starts with these: pronouns, demonstratives, particles, prepositions, numerals (but
# surnames among the stops do: 付, 向, 万, 于)
_NOT_FIRST = (_STOP - frozenset("付向万于")) | frozenset("谁某自别对大每各本该此其是在个位")
# words that are no names though they look like one
_NOT_NAMES = (
    "妈妈",
    "爸爸",
    "老婆",
    "老公",
    "儿子",
    "女儿",
    "哥哥",
    "姐姐",
    "弟弟",
    "妹妹",
    "爷爷",
    "奶奶",
    "父母",
    "家人",
    "朋友",
    "同事",
    "老板",
    "客户",
    "对方",
    "别人",
    "大家",
    "时候",
    "今天",
    "明天",
    "后天",
    "昨天",
    "现在",
    "下周",
    "月底",
    "年底",
)


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    value: str


def _han(ch: str) -> bool:
    return _HAN.match(ch) is not None


def _name_like(candidate: str) -> bool:
    return (
        all(_han(c) for c in candidate)
        and candidate[0] not in _NOT_FIRST
        and not candidate.startswith(_NOT_NAMES)
    )


def _ends(text: str, at: int, after: Iterable[str]) -> bool:
    if at >= len(text):
        return True
    ch = text[at]
    return (
        not _han(ch)
        or ch in _STOP
        or text.startswith(_STOP_WORDS, at)
        or any(text.startswith(w, at) for w in after)
    )


def _starts(text: str, at: int, before: Iterable[str]) -> bool:
    if at <= 0:
        return True
    head = text[:at]
    ch = head[-1]
    return (
        not _han(ch)
        or ch in _STOP
        or head.endswith(_STOP_WORDS)
        or any(head.endswith(w) for w in before)
    )


def name_after(text: str, pos: int, after: tuple[str, ...]) -> Found | None:
    """The shortest name at ``pos`` that ends where a name can end."""
    for size in (2, 3, 4):
        end = pos + size
        if end > len(text):
            return None
        candidate = text[pos:end]
        if not _name_like(candidate):
            return None  # a longer one starts the same way
        if _ends(text, end, after):
            return Found(pos, end, candidate)
    return None


def name_before(text: str, end: int, before: tuple[str, ...]) -> Found | None:
    """The shortest name ending at ``end`` that starts where a name can start."""
    for size in (2, 3, 4):
        start = end - size
        if start < 0:
            return None
        candidate = text[start:end]
        if not _han(candidate[0]):
            return None
        if _name_like(candidate) and _starts(text, start, before):
            return Found(start, end, candidate)
    return None


def _occurrences(text: str, words: tuple[str, ...]) -> list[tuple[int, str]]:
    found = []
    for word in words:
        at = text.find(word)
        while at != -1:
            found.append((at, word))
            at = text.find(word, at + 1)
    return found


def read_role(text: str, kind: str, before: tuple[str, ...], after: tuple[str, ...]) -> list[Found]:
    """Each value of ``kind`` next to a ``before`` or ``after`` word, in order of place; a
    value found from both sides once."""
    if kind not in ROLE_KINDS:
        return []
    found: dict[int, Found] = {}
    for at, word in _occurrences(text, before):
        link = LINK.match(text, at + len(word))
        pos = link.end() if link is not None else at + len(word)
        got = name_after(text, pos, after)
        if got is not None:
            found.setdefault(got.start, got)
    for at, _ in _occurrences(text, after):
        got = name_before(text, at, before)
        if got is not None:
            found.setdefault(got.start, got)
    return [found[k] for k in sorted(found)]
