"""The dialogue act of an input while a confirmation or a slot question is pending: a yes
(好的呀 / 行，办吧 / ok), a no (不对 / 不行), a stop (算了 / 先别办了 / 我再想想), a correction
(不对，是3000 / 金额改成3000) or anything else (the planner decides whether that answers the slot).

Customers answer a yes/no question in dozens of ways, so a list of whole answers can never be
complete; they answer it in short runs of cue words, fillers and particles, so an input is read
as such a run: an act is recognised only when every clause consists of lexicon cues, fillers
(嗯/吧/呀/那/就/请/谢谢...) and verbs of doing (办/转/提交...), never because 好 or 是 occurs
somewhere in a longer sentence (是我妈妈的卡, 好像不太对). Longest cue first, so negation reads
right: 没问题 / 不错 are yes, 不 + a yes (不好, 不可以) is no, 不/别 + a verb (不转了, 别办了)
is a stop.

Precedence, for inputs mixing acts: CORRECT > CANCEL > DENY > AFFIRM. CORRECT is a change verb
with new content (改成李四), or a no followed by a value (不对，是3000 / 不是张三是李四), or a yes
with 但是/不过 and a value. CANCEL ("don't do it", the customer withdraws: 不用/不要/算了/取消/
等等/停/再想想/不+verb) beats DENY ("that is wrong", a plain no: 不/不是/不对/不行/错了/no),
which beats AFFIRM (好的，先别办了 is a stop). A question is no answer: 可以吗？/ 是不是... /
好不好用 / 确定吗 are OTHER. A verb of doing is a yes only beside a yes cue, or with 吧 or 马上
(办吧, 马上转): 转账 alone names an intent, it does not confirm one.

Pure and deterministic: NFKC-normalised, lower-cased text; one phrase table per lexicon."""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import regex


class Act(enum.StrEnum):
    AFFIRM = "affirm"
    DENY = "deny"
    CANCEL = "cancel"
    CORRECT = "correct"
    OTHER = "other"


@dataclass(frozen=True)
class Lexicon:
    """The cue phrases of each act (lower case); a phrase in two lists takes the stronger act."""

    affirm: tuple[str, ...]
    deny: tuple[str, ...]
    cancel: tuple[str, ...]

    def extended(
        self,
        *,
        affirm: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        cancel: tuple[str, ...] = (),
    ) -> Lexicon:
        """This lexicon with a pack's additions (``acts:`` in goals.yaml); self is unchanged."""
        return Lexicon(
            self.affirm + tuple(affirm), self.deny + tuple(deny), self.cancel + tuple(cancel)
        )


def _words(*lines: str) -> tuple[str, ...]:
    """Space-separated phrases; ``_`` is a space inside a phrase (go_ahead)."""
    return tuple(w.replace("_", " ") for line in lines for w in line.split())


BUILTIN = Lexicon(
    affirm=_words(
        "是 是的 对 对的 对头 没错 没问题 没毛病 不错 正确 确认 确定 确认无误 同意 好 好的 好滴",
        "好哒 好嘞 好勒 好咧 好d 嗯 恩 嗯呢 嗯呐 嗯哪 行 可以 阔以 中 成 妥 得嘞 要得 要 需要",
        "继续 当然 肯定 必须 就这么办 就这样办 照办 按这个来 麻烦了 麻烦你了 麻烦您了 有劳 太好了",
        "ok okay okey k yes yeah yep yup y sure fine good correct right go go_ahead of_course",
        "no_problem",
    ),
    deny=_words(
        "不 不是 不对 不行 不好 不可以 不成 不中 不妥 不同意 不确认 不正确 不合适 不能 不愿意",
        "不接受 否 没 错 错了 有误 搞错了 弄错了 写错了 打错了 填错了 没有 拒绝",
        "no nope nah n not wrong",
    ),
    cancel=_words(
        "不用 不要 不需要 不必 没必要 不了 不想 先不 先别 别 甭 算了 算啦 罢了 免了 拉倒 取消",
        "撤销 撤回 放弃 停 停下 停止 暂停 打住 等等 等一下 等下 再想想 我再想想 考虑考虑 想想",
        "考虑一下 再考虑 再说 以后再说 回头再说 下次再说 改天 没事 没事了",
        "cancel stop wait nevermind never_mind no_need forget_it",
    ),
)

# politeness, particles and adverbs that carry no act of their own
_FILLERS = _words(
    "啊 呀 吧 呗 哈 哦 噢 喔 嘛 啦 了 的 滴 哒 额 呃 哎 诶 欸 唉 那 那就 那么 那个 就 请 麻烦",
    "谢谢 谢了 多谢 感谢 辛苦 辛苦了 不好意思 对不起 抱歉 我 你 您 先 还是 暂时 目前 现在 都",
    "也 真 太 再 这个 这么 这样 帮我 给我 一下 掉 过去 马上 立刻 立即 赶紧 赶快 快 快点 尽快 直接",
    "并 并且 根本 完全 确实 的确 真的 实在 绝对",
    "please thanks thank you",
)
# verbs of doing: 办吧 is a yes, 别办了 a stop, 办 alone neither
_VERBS = _words(
    "办 办理 转 转账 付 付款 支付 交 缴 提交 弄 做 搞 处理 执行 操作 发 发送 寄 下单 买 订",
    "预约 开通 来 去",
)
_NEGATORS = frozenset({"不", "别", "甭", "不要", "不用", "先不", "先别", "不想", "不必", "没"})
_WANT = frozenset({"要", "需要", "想要"})
_IMPERATIVE = frozenset({"吧", "呗", "马上", "立刻", "立即", "赶紧", "赶快", "快"})
_STRENGTH = {Act.AFFIRM: 1, Act.DENY: 2, Act.CANCEL: 3}
_ACT_KINDS = frozenset(a.value for a in _STRENGTH)

_LONGEST_ANSWER = 40  # characters in one clause: longer is a sentence, not a cue run
_SPACE = regex.compile(r"\s+")
_SPLIT = regex.compile(r"[\p{P}\p{S}\n]+")
# questions: a question mark, a final 吗/么, an A-not-A (好不好, 是不是; 不要不要 is none), 行不
_QUESTION = regex.compile(
    r"\?|[吗么](?:[\p{P}\s]|$)|(?<!不)((?:(?!不)\p{Han}){1,2})不\1"
    r"|(?:是|好|行|对|可以|要|能)不(?:[\p{P}\s]|$)"
    r"|多少|多久|多长时间|什么|啥|怎么|怎样|咋|如何|为啥|为什么|谁|哪|是否|几[点个天号岁]"
)
# a change verb; it corrects when new content follows (改成李四, 换成明天)
_CHANGE = regex.compile(
    r"改成|改为|改到|换成|换为|换到|更正为|更改为|修改为|修改成|改用|应该是|应该为|应该转|应该给"
    r"|应是|而是|其实是|实际是"
)
_NOT_BUT = regex.compile(r"不是(?!$)[^是]*?[^不]是.")  # 不是张三，是李四
_IS_NOT = regex.compile(r"^(?:应该)?是[^是不，,]+[，,]?(?:而)?不是.")  # 是皮肤科不是口腔科
_DENY_END = regex.compile(
    r"(?:不对|不是|(?<![没不])错了?|有误|不正确|[搞弄写打填]错了|no|wrong)[啊呀哦啦嘛了\s]*$"
)
_CONTRAST = regex.compile(r"^(?:但是|不过|可是|但|只是)")
# a new value: a number, or 是/为/叫/改/换 with something after it
_VALUE = regex.compile(
    r"\d|[零一二两三四五六七八九十百千万亿]{2,}|[一二两三四五六七八九十][块元]"
    r"|(?:是|为|叫|转给|转到|改|换)\p{Han}"
)


@lru_cache(maxsize=32)
def _table(lexicon: Lexicon) -> tuple[dict[str, str], int]:
    """Each phrase's kind (an act's value, ``fill`` or ``verb``) and the longest phrase."""
    kinds: dict[str, str] = {}
    for kind, words in (("fill", _FILLERS), ("verb", _VERBS)):
        kinds.update(dict.fromkeys(words, kind))
    for act in (Act.AFFIRM, Act.DENY, Act.CANCEL):  # ascending strength: the stronger overwrites
        words = getattr(lexicon, act.value)
        kinds.update({_norm(w): act.value for w in words if _norm(w)})
    return kinds, max(map(len, kinds))


def _norm(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def _segment(text: str, kinds: dict[str, str], longest: int) -> list[str] | None:
    """The clause cut into known phrases, longest first (没问题, not 没 + 问题), backtracking
    from a dead end (先不用了: 先 + 不用 + 了, once 先不 + 用 fails); None if no cut exists."""
    dead: set[int] = set()

    def walk(pos: int) -> list[str] | None:
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos == len(text):
            return []
        if pos not in dead:
            for end in range(min(len(text), pos + longest), pos, -1):
                if text[pos:end] in kinds and (rest := walk(end)) is not None:
                    return [text[pos:end], *rest]
            dead.add(pos)
        return None

    return walk(0) if len(text) <= _LONGEST_ANSWER else None


def _read(clause: str, lexicon: Lexicon) -> set[str] | None:
    """The kinds of a clause made of cues only (``act`` values, ``verb``, ``imperative``), or
    None when something else is in it."""
    kinds, longest = _table(lexicon)
    words = _segment(clause, kinds, longest)
    if words is None:
        return None
    out: set[str] = set()
    last = ""
    for word in words:
        kind = kinds[word]
        if kind == "verb" and last in _WANT:
            return None  # 我要转账: a request, not an answer
        if kind == "verb":
            kind = Act.CANCEL.value if last in _NEGATORS else "verb"
        if word in _IMPERATIVE:
            out.add("imperative")
        if kind != "fill":
            out.add(kind)
            last = word
    if "verb" in out and "imperative" in out:
        out.add(Act.AFFIRM.value)
    return out


def _changes(text: str, lexicon: Lexicon) -> bool:
    """A change verb with new content after it (改成李四; 能改成3000吗 too, unlike 应该是吧)."""
    for m in _CHANGE.finditer(text):
        rest = _SPLIT.sub("", text[m.end() :])
        if rest and _read(rest, lexicon) is None:
            return True
    return False


def _corrects(text: str, clauses: list[str], read: list[set[str] | None]) -> bool:
    """A value after a no (不对，是3000 / 不是张三是李四), or after a yes and 但是/不过."""
    if _NOT_BUT.search(text) or _IS_NOT.search(text):
        return True
    for i, clause in enumerate(clauses[:-1]):
        rest = "".join(clauses[i + 1 :])
        if _DENY_END.search(clause) and _VALUE.search(rest):
            return True
        if read[i] and _CONTRAST.match(clauses[i + 1]) and _VALUE.search(rest):
            return True
    return False


def act_of(text: str, lexicon: Lexicon = BUILTIN) -> Act:
    """The dialogue act of ``text`` (see the module's docstring); ``answer`` is the planner's
    to decide, it is OTHER here."""
    norm = _norm(text)
    clauses = [c.strip() for c in _SPLIT.split(norm) if c.strip()]
    if not clauses:
        return Act.OTHER
    if _changes(norm, lexicon):
        return Act.CORRECT
    if _QUESTION.search(norm):
        return Act.OTHER
    read = [_read(c, lexicon) for c in clauses]
    if any(r is None for r in read):
        return Act.CORRECT if _corrects(norm, clauses, read) else Act.OTHER
    kinds: set[str] = set()
    for r in read:
        kinds |= r or set()
    acts = [a for a in _STRENGTH if a.value in kinds]
    return max(acts, key=_STRENGTH.__getitem__, default=Act.OTHER)


# what makes the rest of an input after a leading yes or no something else than a plain
# continuation: a negation or a stop (好的，不过先别办), or a contrast
_TURN = regex.compile(r"[不别没甭否]|算了|取消|等等|等一下|停|再说|再想|但是|不过|可是|只是")


def is_question(text: str) -> bool:
    """``text`` asks something (a question mark, a final 吗, an A-not-A, 多少/什么/怎么...)."""
    return bool(_QUESTION.search(_norm(text)))


def leading(text: str, lexicon: Lexicon = BUILTIN) -> tuple[Act, str] | None:
    """The act of the cue run ``text`` starts with, and what follows it, when ``act_of``
    cannot read the whole input because content follows a plain yes or no (对，就挂这个 /
    没问题就这个时间 / 不是这个医生): None when there is no such run, the input asks or
    corrects, or the rest turns the answer around (好的，不过先别办). Whether the rest is new
    content (好的，改挂皮肤科) is the planner's to judge, against what awaits the yes."""
    norm = _norm(text)
    if not norm or _QUESTION.search(norm) or _changes(norm, lexicon):
        return None
    clauses = [c.strip() for c in _SPLIT.split(norm) if c.strip()]
    first = clauses[0]
    table, longest = _table(lexicon)
    for end in range(min(len(first), _LONGEST_ANSWER), 0, -1):
        kinds = _read(first[:end], lexicon)
        acts = [a for a in _STRENGTH if kinds and a.value in kinds]
        if not acts:
            continue
        words = _segment(first[:end], table, longest) or []
        cue = next((w for w in reversed(words) if table[w] in _ACT_KINDS), "")
        if end < len(first) and len(cue) < 2:
            return None  # 是我妈妈的卡, 对我来说: a one-character cue glued to content is a word
        rest = " ".join([first[end:].strip(), *clauses[1:]]).strip()
        act = max(acts, key=_STRENGTH.__getitem__)
        if act is Act.CANCEL:
            return None  # 等下，我先去看看包裹: a pause with a plan of one's own, no answer
        if not rest or (act is Act.AFFIRM and _TURN.search(rest)):
            return None  # nothing follows (act_of's case), or the rest turns it around
        return act, rest
    return None


_table(BUILTIN)  # built at import: the first input pays nothing
