"""``time``: relative and absolute time expressions (时间表达), left unresolved.

Matched, each a ``TimeExpr`` (``charter_zh.time_expr``) resolved later against a reference:

* years: ``去年``, ``前年``, ``今年``, ``明年``, ``上年``, ``2024年``, ``二〇二四年``; halves and
  quarters (``今年上半年``, ``去年一季度``, ``2024年第二季度``, ``2024Q2``, ``上季度``); year
  ends (``去年底``, ``年初``);
* months: ``上个月``, ``本月``, ``下下个月``, ``5月``, ``十二月份``, ``2024年5月``; their tenths
  (``月初``, ``月底``, ``下个月中旬``, ``5月底``) and days (``下个月5号``, ``5月1日``);
* weeks: ``上周``, ``下周二``, ``本周五``, ``这个星期天``, ``周末``, ``礼拜三``;
* days: ``今天``, ``明天``, ``后天``, ``大前天``, ``今晚``; then a part of the day and a clock
  time (``后天下午3点``, ``明天10点半``, ``今晚8:30``, ``下午3点``);
* offsets: ``3天后``, ``三天后``, ``两周后``, ``三个月后``, ``1年前``, ``半小时后``, ``3天内``;
  recent periods: ``近一年``, ``最近7天``, ``过去三个月``;
* a deadline or start after the expression: ``明天10点前``, ``月底前``, ``下午3点以后``.

Chinese numerals are read with ``cn2an``. The module docstring of ``time_expr`` says how each
expression resolves, and the week convention: weeks start on Monday, ``下周二`` is the Tuesday
of the next week.

Deliberately not matched:

* clock times without a day, a part of the day or a deadline (``3点``, ``以下三点``: too often
  a count; ``10:30`` or ``10:30前`` alone: a ratio or a score as often), and ``一点`` in Chinese
  numerals unless a part of the day comes first (``今天一点也不冷``);
* a bare day of the month (``8号``: a house number as often as a date), ``N天``, ``N年`` or
  ``N个月`` without 后/前/内 (a duration, not a time), ``3月后`` (March, not three months);
* working days (``3个工作日内``: they need a holiday calendar), lunar dates (``正月初一``),
  festivals (``国庆``), vague words (``最近``, ``将来``, ``几天后``);
* impossible dates and times (``2023年2月29日``, ``13月``, ``25点``) and years outside
  1900-2099; ``周期`` and ``周年`` are no weeks, ``每周一`` and ``每月底`` no single time;
* anything inside a URL or an e-mail address (``web.outside_links``).

Three scans find the words: one for the words led by a fixed character (去年, 下周...), one for
those led by an Arabic digit, one for those led by a Chinese numeral; each pattern starts with a
literal or a class so ``re`` skips other characters at C speed. Adjacent words then chain
(``去年`` + ``一季度``, ``后天`` + ``下午`` + ``3点``).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache

from charter.contracts.rules import Item, ValueKind
from charter_zh.time_expr import Step, TimeExpr, TimeSpan, pm_hour
from charter_zh.time_words import KEYS, Token, scan
from charter_zh.web import outside_links

__all__ = ["TimeExtractor", "resolve"]

_KEYS = re.compile(f"[{KEYS}]")
# What may follow each role in one expression (the table in ``time_words``).
_FOLLOWS = {"Y": ("H", "M", "MD"), "MD": ("T", "C"), "D": ("T", "C"), "DT": ("C",), "T": ("C",)}
# Steps a deadline (前) may follow: a year or a quarter before 前 is more often "years ago".
_BOUNDABLE = frozenset(
    {"month", "month_rel", "xun", "day", "week_rel", "weekday", "weekend", "day_rel"}
    | {"part_of_day", "clock"}
)


def _with_part_of_day(clock: Token, part: int) -> Token:
    """The clock read on a 12-hour dial after part of the day ``part`` (下午3点: 15:00)."""
    step = clock.steps[0]
    hour, minute = divmod(step.value, 60)
    steps = (Step("clock", pm_hour(part, hour) * 60 + minute, step.unit),)
    return Token(clock.start, clock.end, clock.role, steps)


# 前 and 后 alone are also the first characters of words: 前往 (go to), 前后 (around), 后来...
_NOT_AFTER_BEFORE = frozenset("往进来去夕景面者述台端列沿线后天年")
_NOT_AFTER_AFTER = frozenset("来面续期台端者悔天年方边勤果")


def _bound_at(text: str, end: int) -> tuple[str, int] | None:
    """``("before" | "after", length)`` of a deadline word at ``end``, or None."""
    for word, kind, guard in (
        ("之前", "before", None),
        ("以前", "before", None),
        ("前", "before", _NOT_AFTER_BEFORE),
        ("之后", "after", None),
        ("以后", "after", None),
        ("后", "after", _NOT_AFTER_AFTER),
    ):
        if text.startswith(word, end):
            following = text[end + len(word) : end + len(word) + 1]
            if guard is None or following not in guard:
                return kind, len(word)
            return None
    return None


def _chains(tokens: list[Token]) -> list[list[Token]]:
    """Adjacent tokens joined while each may follow the one before."""
    chains: list[list[Token]] = []
    for token in tokens:
        if chains:
            last = chains[-1][-1]
            if token.start == last.end and token.role in _FOLLOWS.get(last.role, ()):
                chains[-1].append(token)
                continue
        chains.append([token])
    return chains


def _normalised(chain: list[Token]) -> list[Token] | None:
    """The chain with clock hours read after their part of the day, cut before a weak clock
    (一点 without a part of the day); None when nothing of it is a time."""
    out: list[Token] = []
    for token in chain:
        before = out[-1] if out else None
        if token.role == "C" and before is not None and before.role in ("T", "DT"):
            token = _with_part_of_day(token, before.steps[-1].value)
        elif token.role == "C" and token.weak:
            break
        out.append(token)
    if not out or out[0].needs_year or (len(out) == 1 and out[0].role == "T"):
        return None
    return out


def _real_date(chain: list[Token]) -> bool:
    """A written year, month and day must form a date (2023年2月29日 does not)."""
    if len(chain) < 2 or chain[1].role != "MD" or chain[0].steps[0].kind != "year_abs":
        return True
    (year,), (month, day) = chain[0].steps, chain[1].steps
    try:
        date(year.value, month.value, day.value)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=4096)
def _expr(steps: tuple[Step, ...], bound: str | None) -> TimeExpr:
    """Expressions are immutable: the same words share one (a frozen dataclass is dear)."""
    return TimeExpr(steps, bound)


def _item(text: str, chain: list[Token]) -> Item | None:
    tokens = _normalised(chain)
    if tokens is None or not _real_date(tokens):
        return None
    steps = tokens[0].steps if len(tokens) == 1 else tuple(s for t in tokens for s in t.steps)
    start, end = tokens[0].start, tokens[-1].end
    bound = None
    if end < len(text) and text[end] in "之以前后" and steps[-1].kind in _BOUNDABLE:
        found = _bound_at(text, end)
        if found is not None and (found[0] == "before" or steps[-1].kind == "clock"):
            bound, end = found[0], end + found[1]
    if tokens[0].role == "C" and (bound != "before" or ":" in text[start:end]):
        return None  # a bare clock time is a count as often as a time, unless a deadline
    return Item(start, end, text[start:end], _expr(steps, bound), None, None, {})


class TimeExtractor:
    """Time expressions; the value is an unresolved ``TimeExpr`` (see ``resolve``)."""

    name: str = "time"
    value_kind: ValueKind = "date"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if _KEYS.search(text) is None:
            return ()
        items: list[Item] = []
        for chain in _chains(scan(text)):
            item = _item(text, chain)
            if item is not None:
                items.append(item)
        if not items:
            return ()
        return tuple(outside_links(text, items))

    def canonical(self, item: Item) -> str | None:
        """None: a relative time has no canonical form without a reference date."""
        return None


_EXTRACTOR = TimeExtractor()


def resolve(text: str, reference: datetime) -> list[TimeSpan]:
    """The spans of the time expressions of ``text``, said at ``reference``, in order.
    Expressions that fall outside the years ``datetime`` holds are left out."""
    spans: list[TimeSpan] = []
    for item in _EXTRACTOR.extract(text):
        try:
            spans.append(item.value.resolve(reference))
        except ValueError:
            continue
    return spans
