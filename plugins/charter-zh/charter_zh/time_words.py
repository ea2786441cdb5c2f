"""The words of the ``time`` extractor: three scans and what each word found means.

A word is one ``Token``: a role that says what may follow it (``times`` chains them) and the
``Step``\\ s it contributes. Roles:

====  ===================================================  ===========================
role  words                                                may be followed by
====  ===================================================  ===========================
Y     a year: 去年, 2024年                                 H, M, MD
H     a half or quarter: 上半年, 一季度, 第二季度, Q2        (a Q2 needs a Y before it)
M     a month, maybe a tenth of it: 5月, 十二月份, 5月底      -
MD    a month and a day: 5月1日                            T, C
R     a period standing alone: 上个月, 下周, 月底, 去年底     -
D     a day: 明天, 下周二, 周五, 下个月5号                   T, C
DT    a day and a part of it: 今晚, 明早                    C
T     a part of the day: 下午                              C
C     a clock time: 3点, 10点半, 8:30, 十点                 -
O     an offset or a recent period: 3天后, 近一年            -
====  ===================================================  ===========================
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import NamedTuple

from charter_zh._common import cn2an_value
from charter_zh.time_expr import Step

CN = "零〇一二两三四五六七八九十百"
_CN_SET = frozenset(CN)
_CN_YEAR_DIGITS = frozenset("〇零一二三四五六七八九")
# Characters at least one of which every time word holds: a text with none has no time.
KEYS = "年月季周期拜天日晚早晨午夜点时钟Qq"

_YEARS = {"大前年": -3, "前年": -2, "去年": -1, "上年": -1, "上一年": -1, "今年": 0, "本年": 0}
_YEARS |= {"明年": 1, "来年": 1, "下一年": 1, "后年": 2, "大后年": 3}
_MONTHS = {"上上个月": -2, "上个月": -1, "上月": -1, "本月": 0, "这个月": 0, "这月": 0}
_MONTHS |= {"下个月": 1, "下月": 1, "下下个月": 2}
_QUARTERS = {"上个季度": -1, "上一季度": -1, "上季度": -1, "本季度": 0, "这个季度": 0}
_QUARTERS |= {"这一季度": 0, "这季度": 0, "下个季度": 1, "下一季度": 1, "下季度": 1}
_WEEK_PREFIXES = {"上上个": -2, "上上": -2, "上个": -1, "上": -1, "这个": 0, "这": 0, "本": 0}
_WEEK_PREFIXES |= {"下个": 1, "下": 1, "下下个": 2, "下下": 2}
_WEEK_UNITS = ("周", "星期", "礼拜")
DAY_WORDS = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "今天": 0, "今日": 0}
DAY_WORDS |= {"明天": 1, "明日": 1, "后天": 2, "大后天": 3}
POD_WORDS = {"凌晨": 0, "早上": 1, "早晨": 1, "清晨": 1, "上午": 2, "中午": 3, "下午": 4}
POD_WORDS |= {"傍晚": 5, "晚上": 6, "晚间": 6, "夜里": 7, "夜间": 7}
DAY_POD_WORDS = {"今晚": (0, 6), "明晚": (1, 6), "昨晚": (-1, 6), "今早": (0, 1), "明早": (1, 1)}
DAY_POD_WORDS |= {"今晨": (0, 1), "明晨": (1, 1)}
_PARTS = {"月初": Step("xun", 1), "月底": Step("xun", 3), "月末": Step("xun", 3)}
_PARTS |= {"年初": Step("month", 1), "年底": Step("month", 12), "年末": Step("month", 12)}
XUN = {"初": 1, "上旬": 1, "中旬": 2, "下旬": 3, "底": 3, "末": 3}
_WEEKDAYS = {c: i for i, c in enumerate("一二三四五六日")} | {"天": 6}
_WEEKDAYS |= {str(i + 1): i for i in range(7)}
_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week"}
_UNITS |= {"礼拜": "week", "个礼拜": "week", "个月": "month", "年": "year", "小时": "hour"}
_UNITS |= {"个小时": "hour", "钟头": "hour", "个钟头": "hour", "分钟": "minute"}
_DIRS = {"后": 1, "之后": 1, "以后": 1, "前": -1, "之前": -1, "以前": -1}
_DIRS |= {"内": 0, "之内": 0, "以内": 0}
_RECENT_UNITS = {"天": (1, "day"), "日": (1, "day"), "周": (1, "week"), "星期": (1, "week")}
_RECENT_UNITS |= {"礼拜": (1, "week"), "月": (1, "month"), "年": (1, "year")}
_RECENT_UNITS |= {"季度": (3, "month")}
_HALVES = {"小时": (30, "minute"), "个小时": (30, "minute"), "钟头": (30, "minute")}
_HALVES |= {"个钟头": (30, "minute"), "年": (6, "month"), "个月": (15, "day")}

# Characters after which a standalone word means something else: 每周一 (every Monday), 三年底,
# 接近3年 (nearly three years), 正月初一 (a lunar month).
_NOT_BEFORE_PART = frozenset("0123456789" + CN + "个岁每上下本这前去今明后来几正腊冬")
_NOT_BEFORE_WEEKDAY = frozenset("0123456789" + CN + "个每上下本这几")
_NOT_BEFORE_NEAR = frozenset("接将附靠临贴亲相")
# 周 followed by these is a cycle, an anniversary, a weekly magazine... not a week.
_NOT_AFTER_WEEK = frozenset("期年岁边围转刊报")


class Meaning(NamedTuple):
    """What a word means, whatever its place in the text (so it is cached by the word)."""

    role: str
    steps: tuple[Step, ...]
    needs_year: bool = False  # Q2 alone is a question number, not a quarter
    weak: bool = False  # 一点 in Chinese numerals: "a little" unless a part of the day leads


class Token(NamedTuple):
    """A word at ``text[start:end]`` and its meaning (NamedTuples: built per word, cheaply)."""

    start: int
    end: int
    role: str
    steps: tuple[Step, ...]
    needs_year: bool = False
    weak: bool = False


def _alternation(heads: dict[str, str]) -> str:
    """Alternatives each led by a literal character (so ``re`` skips to candidates at C
    speed), longer heads first so none is cut short by a shorter one."""
    return "|".join(re.escape(h) + tail for h, tail in sorted(heads.items(), key=_longest))


def _longest(item: tuple[str, str]) -> tuple[int, str]:
    return (-len(item[0]), item[0])


_NUM = rf"(?:[0-9]{{1,3}}|[{CN}]{{1,4}})"
_DIR = "之后|以后|之前|以前|之内|以内|后|前|内"
_UNITS_LONGEST_FIRST = sorted(_UNITS, key=len, reverse=True)
_UNIT = "|".join(_UNITS_LONGEST_FIRST)
_XUN = "上旬|中旬|下旬|初|底|末"
_MONTH_TAIL = rf"份?(?:{_XUN}|(?:[0-9]{{1,2}}|[{CN}]{{1,3}})[日号])?"
_CLOCK_TAIL = rf"(?:点钟?|时)(?:[0-9]{{1,2}}分?|[{CN}]{{1,3}}分|半|一刻|三刻)?"

_WORD_HEADS: dict[str, str] = {}
_WORD_HEADS |= {w: "度?(?:初|底|末)?" for w in _YEARS}
_WORD_HEADS |= {"上半年": "度?", "下半年": "度?"} | dict.fromkeys(_QUARTERS, "")
_WORD_HEADS |= {w: _MONTH_TAIL for w in _MONTHS} | dict.fromkeys(_PARTS, "")
_WORD_HEADS |= {p + u: "(?:[一二三四五六日天1-7]|末)?" for p in _WEEK_PREFIXES for u in _WEEK_UNITS}
_WORD_HEADS |= {
    "周": "[一二三四五六日天末]",
    "星期": "[一二三四五六日天]",
    "礼拜": "[一二三四五六日天]",
}
_WORD_HEADS |= dict.fromkeys([*DAY_WORDS, *DAY_POD_WORDS, *POD_WORDS], "")
_WORD_HEADS |= {"第": "[一二三四1-4]季度", "Q": "[1-4](?![0-9A-Za-z])", "q": "[1-4](?![0-9A-Za-z])"}
_RECENT = rf"的?(?:{_NUM}|半)个?(?:天|日|周|星期|礼拜|月|年|季度)"
_WORD_HEADS |= {"最近": _RECENT, "近": _RECENT, "过去": _RECENT}
_WORD_HEADS |= {"半": rf"(?:个小时|个钟头|小时|钟头|年|个月)(?:{_DIR})"}
_HEAD_KEYS = frozenset(_WORD_HEADS)
_MAX_HEAD = max(map(len, _WORD_HEADS))

_NUMERIC_ALTERNATIVES = (
    "(?:{n}{{0,2}}(?:{unit})(?:{dir})",
    "|{year}{{3}}(?:年度?(?:初|底|末|[Qq][1-4](?![0-9A-Za-z]))?|[Qq][1-4](?![0-9A-Za-z]))",
    "|{n}?月{month}|{n}?{clock}{colon}|季度)",
)


def _numeric(lead: str, n: str, year: str, colon: str) -> str:
    """A scan led by one class (a digit, or a Chinese numeral); the lookbehind after the first
    character refuses a number that continues another one."""
    body = "".join(_NUMERIC_ALTERNATIVES).format(
        n=n, unit=_UNIT, dir=_DIR, year=year, month=_MONTH_TAIL, clock=_CLOCK_TAIL, colon=colon
    )
    return lead + body


@cache
def _scans() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The three scans, compiled on first use: the word scan alone takes ``re`` some ten
    milliseconds, which ``import charter_zh.plugin`` should not pay."""
    digits = _numeric(
        r"[0-9](?<![0-9A-Za-z.:,/\-][0-9])",
        "[0-9]",
        "[0-9]",
        r"|[0-9]?:[0-5][0-9](?![0-9]|:[0-9])",
    )
    numerals = _numeric(f"[{CN}](?<![{CN}][{CN}])", f"[{CN}]", "[〇零一二三四五六七八九]", "")
    return re.compile(_alternation(_WORD_HEADS)), re.compile(digits), re.compile(numerals)


@lru_cache(maxsize=1024)
def number(written: str) -> int | None:
    """An Arabic or Chinese numeral (``12``, ``十二``, ``两``, ``二〇二四``) as an int."""
    if written.isascii():
        return int(written) if written.isdigit() else None
    try:
        value = cn2an_value(written, "normal")
    except Exception:  # cn2an signals malformed input with assorted exception types
        return None
    return int(value) if value == int(value) else None


def scan(text: str) -> list[Token]:
    """The time words of ``text``, in order, never overlapping (the earlier, then the longer,
    wins)."""
    words, digits, numerals = _scans()
    found: list[Token] = []
    for m in words.finditer(text):
        start, end = m.span()
        before = text[start - 1] if start else ""
        meaning = _word(m.group(), before, text[end : end + 1])
        if meaning is not None:
            found.append(Token(start, end, *meaning))
    for pattern in (digits, numerals):
        for m in pattern.finditer(text):
            meaning = _number_word(m.group())
            if meaning is not None:
                start, end = m.span()
                found.append(Token(start, end, *meaning))
    found.sort(key=_order)
    out: list[Token] = []
    last = 0
    for token in found:
        if token.start >= last:
            out.append(token)
            last = token.end
    return out


def _order(token: Token) -> tuple[int, int]:
    return (token.start, -token.end)


def _token(role: str, *steps: Step, needs_year: bool = False) -> Meaning:
    return Meaning(role, steps, needs_year)


@lru_cache(maxsize=4096)
def _word(written: str, before: str, after: str) -> Meaning | None:
    """The meaning of a word led by a fixed character, between ``before`` and ``after``."""
    head = next(
        written[:k] for k in range(min(_MAX_HEAD, len(written)), 0, -1) if written[:k] in _HEAD_KEYS
    )
    rest = written[len(head) :]
    token = _token

    if head in _YEARS:
        n = _YEARS[head]
        rest = rest.removeprefix("度")
        if not rest:
            return token("Y", Step("year", n))
        return token("R", Step("year", n), Step("month", 1 if rest == "初" else 12))
    if head in ("上半年", "下半年"):
        return token("H", Step("half", 1 if head == "上半年" else 2))
    if head in _QUARTERS:
        return token("R", Step("quarter_rel", _QUARTERS[head]))
    if head in _MONTHS:
        tail = _month_tail(rest)
        if tail is None:
            return None
        return token("D" if tail[1] else "R", Step("month_rel", _MONTHS[head]), *tail[0])
    if head in _PARTS:
        return None if before in _NOT_BEFORE_PART else token("R", _PARTS[head])
    if head in DAY_WORDS:
        return token("D", Step("day_rel", DAY_WORDS[head]))
    if head in DAY_POD_WORDS:
        n, part = DAY_POD_WORDS[head]
        return token("DT", Step("day_rel", n), Step("part_of_day", part))
    if head in POD_WORDS:
        return token("T", Step("part_of_day", POD_WORDS[head]))
    if head in ("周", "星期", "礼拜"):
        if before in _NOT_BEFORE_WEEKDAY:
            return None
        if rest == "末":
            return token("R", Step("weekend", 0))
        return token("D", Step("weekday", _WEEKDAYS[rest]))
    if head[-1] in "周期拜":  # 上周, 下个星期, 本礼拜
        n = _WEEK_PREFIXES[head[: -1 if head.endswith("周") else -2]]
        if not rest:
            return None if after in _NOT_AFTER_WEEK else token("R", Step("week_rel", n))
        if rest == "末":
            return token("R", Step("week_rel", n), Step("weekend", 0))
        return token("D", Step("week_rel", n), Step("weekday", _WEEKDAYS[rest]))
    if head == "第":
        return token("H", Step("quarter", int(number(rest[0]) or 0)))
    if head in ("Q", "q"):
        return token("H", Step("quarter", int(rest)), needs_year=True)
    if head == "半":
        unit = rest.rstrip("之以后前内")
        count, unit_name = _HALVES[unit]
        return _offset(count, unit_name, _DIRS[rest[len(unit) :]])
    # 最近, 近, 过去: a recent period
    if head == "近" and before in _NOT_BEFORE_NEAR:
        return None
    return _recent(rest.removeprefix("的"))


def _month_tail(rest: str) -> tuple[tuple[Step, ...], bool] | None:
    """The steps after a month (a tenth, or a day) and whether they name a day."""
    rest = rest.removeprefix("份")
    if not rest:
        return (), False
    if rest in XUN:
        return (Step("xun", XUN[rest]),), False
    day = number(rest[:-1])
    if day is None or not 1 <= day <= 31:
        return None
    return (Step("day", day),), True


def _offset(count: int, unit: str, direction: int) -> Meaning:
    if direction == 0:
        return Meaning("O", (Step("within", count, unit),))
    return Meaning("O", (Step("offset", direction * count, unit),))


def _recent(rest: str) -> Meaning | None:
    half = rest.startswith("半")
    digits = rest[: len(rest) - len(rest.lstrip("0123456789" + CN))] if not half else "半"
    unit = rest[len(digits) :].removeprefix("个")
    if half:
        if unit not in ("年", "月"):
            return None
        count, name = (6, "month") if unit == "年" else (15, "day")
    else:
        n = number(digits)
        if n is None or n < 1:
            return None
        factor, name = _RECENT_UNITS[unit]
        count = n * factor
    return Meaning("O", (Step("recent", count, name),))


_MAX_DAY = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@lru_cache(maxsize=4096)
def _number_word(written: str) -> Meaning | None:
    """The meaning of a word led by a numeral; the scan checked what comes before it."""
    digits = written[0].isdigit()
    size = 1
    numeral = "0123456789" if digits else _CN_SET
    while size < len(written) and written[size] in numeral:
        size += 1
    n_text, rest = written[:size], written[size:]
    n = number(n_text)
    if n is None:
        return None
    if rest.startswith("季度"):
        return Meaning("H", (Step("quarter", n),)) if 1 <= n <= 4 else None
    if size == 4 and rest[:1] in ("年", "Q", "q"):
        return _year(n_text, n, rest)
    if rest.startswith("月"):
        tail = _month_tail(rest[1:])
        if not 1 <= n <= 12 or tail is None:
            return None
        steps, has_day = tail
        if has_day and steps[0].value > _MAX_DAY[n]:
            return None
        return Meaning("MD" if has_day else "M", (Step("month", n), *steps))
    if rest[:1] in ("点", "时", ":"):
        return _clock(n, rest, n_text)
    unit = next(u for u in _UNITS_LONGEST_FIRST if rest.startswith(u))
    return _offset(n, _UNITS[unit], _DIRS[rest[len(unit) :]])


def _year(n_text: str, n: int, rest: str) -> Meaning | None:
    if not (n_text.isdigit() or all(c in _CN_YEAR_DIGITS for c in n_text)):
        return None
    if not 1900 <= n <= 2099:
        return None
    rest = rest.removeprefix("年").removeprefix("度")
    year = Step("year_abs", n)
    if not rest:
        return Meaning("Y", (year,))
    if rest[0] in "Qq":
        return Meaning("R", (year, Step("quarter", int(rest[1]))))
    return Meaning("R", (year, Step("month", 1 if rest == "初" else 12)))


def _clock(hour: int, rest: str, n_text: str) -> Meaning | None:
    minutes_text = rest.lstrip(":点钟时").removesuffix("分")
    if not minutes_text:
        minute, unit = 0, "hour"
    elif minutes_text in ("半", "一刻", "三刻"):
        minute, unit = {"半": 30, "一刻": 15, "三刻": 45}[minutes_text], "minute"
    else:
        parsed = number(minutes_text)
        if parsed is None:
            return None
        minute, unit = parsed, "minute"
    if not (0 <= hour <= 24 and 0 <= minute < 60) or (hour == 24 and minute):
        return None
    weak = n_text == "一" and unit == "hour"
    return Meaning("C", (Step("clock", hour * 60 + minute, unit),), weak=weak)
