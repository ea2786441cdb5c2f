"""The finance pack written the way the seed article writes output checks: one function per rule.

Each rule does its own ``re.search`` / ``re.finditer`` and its own Python logic; a rule that
needs amounts, percentages or dates extracts them itself, every time (nothing is shared between
rules), and upper-case amounts are parsed with ``cn2an`` inside the rule that needs them. The
patterns are compiled once at import and each rule stops at its first failure: a reasonable
hand-written checker, not a deliberately slow one.

The extraction helpers are simpler than the ``charter-zh`` extractors (no ``块``/``RMB``/``US$``,
no glue checks), which is the seed's way too; on the sample texts they find the same items, and
``bench_check.py`` asserts that every rule gives the same pass/fail/skip as ``Engine.evaluate``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Literal, NamedTuple

import cn2an

Outcome = Literal["pass", "fail", "skip"]
Context = Mapping[str, Any]
RuleFn = Callable[[str, Context], Outcome]


class Amount(NamedTuple):
    start: int
    end: int
    text: str
    value: Decimal
    unit: str
    decimals: int


class Found(NamedTuple):
    start: int
    end: int
    text: str


# ---- extraction helpers: each rule calls the ones it needs, on every check ----------------------

_UPPER_DIGITS = "壹贰叁肆伍陆柒捌玖"
_UPPER_CHARS = f"零{_UPPER_DIGITS}拾佰仟万亿"
_UPPER_VALUE = {ch: i + 1 for i, ch in enumerate(_UPPER_DIGITS)}
_MULT = {"万": Decimal(10_000), "亿": Decimal(100_000_000)}
_NUMBER = r"\d[\d,]*+(?:\.\d++)?"

# Each pattern starts with a literal or a character class, so ``re`` skips ahead quickly.
_AMOUNT_SYMBOL = re.compile(rf"([¥￥$])\s?({_NUMBER})(万|亿)?(元|美元)?")
_AMOUNT_UNIT = re.compile(rf"({_NUMBER})\s?(万|亿)?(元|美元)")
# lower-case numerals with 元/块 after them (十万元, 三千五百块): money reads them too (issue 31)
_AMOUNT_SPOKEN = re.compile(
    r"(?<![0-9.零壹贰叁肆伍陆柒捌玖拾佰仟万亿])([一二两三四五六七八九十][零〇一二两三四五六七八九十百千万亿]*+)(元|块)"
)
_UPPER_YUAN = re.compile(
    rf"([零{_UPPER_DIGITS}拾][{_UPPER_CHARS}]*+)[元圆]"
    rf"(?:零?([{_UPPER_DIGITS}])角)?(?:零?([{_UPPER_DIGITS}])分)?整?"
)
_UPPER_JIAO = re.compile(rf"([{_UPPER_DIGITS}])角(?:零?([{_UPPER_DIGITS}])分)?")
_PERCENT = re.compile(rf"{_NUMBER}\s?[%％]")
_PERCENT_CN = re.compile(r"百分之[零〇一二两三四五六七八九十百千万\d.点]+")
_DATE_NUMERIC = re.compile(r"[12]\d{3}([-/.])\d{1,2}\1\d{1,2}")
_DATE_CHINESE = re.compile(r"(\d{1,4}+)(?: ?年 ?(\d{1,2}+))? ?月(?: ?(\d{1,2}) ?[日号])?")
_URL = re.compile(r"(?:https?://|www\.)[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_TAX_DOC = re.compile(
    r"(?:财税|财关税|税总发|税总函|国税发|国税函|国发|国办发)\s*[〔\[【(（]\s*\d{4}\s*[〕\]】)）]"
    r"\s*第?\s*\d+\s*号"
    r"|(?:国家税务总局|税务总局|财政部)(?:[\s、]*(?:国家税务总局|税务总局|财政部))*\s*公告"
    r"\s*\d{4}\s*年\s*第?\s*\d+\s*号"
    r"|国家税务总局令第\d+号"
)
_ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _amount(m: re.Match[str], num: str, mult: str | None, sym: str, unit: str | None) -> Amount:
    value = Decimal(num.replace(",", ""))
    if mult:
        value *= _MULT[mult]
    decimals = len(num.split(".")[1]) if "." in num else 0
    usd = sym == "$" or unit == "美元"
    return Amount(m.start(), m.end(), m.group(), value, "USD" if usd else "元", decimals)


def find_amounts(text: str) -> list[Amount]:
    """Arabic-digit amounts: ¥/￥/$ before the number, or 元/美元 (after 万/亿) behind it; and
    lower-case numerals before 元/块, read with cn2an."""
    out = [_amount(m, m[2], m[3], m[1], m[4]) for m in _AMOUNT_SYMBOL.finditer(text)]
    taken = {a.start + 1 for a in out} | {a.start + 2 for a in out}
    for m in _AMOUNT_UNIT.finditer(text):
        if m.start() not in taken and (m.start() == 0 or text[m.start() - 1] not in ".,"):
            out.append(_amount(m, m[1], m[2], "", m[3]))
    for m in _AMOUNT_SPOKEN.finditer(text):
        try:
            value = Decimal(str(cn2an.cn2an(m[1], "smart")))
        except Exception:  # cn2an raises assorted types on malformed numerals
            continue
        out.append(Amount(m.start(), m.end(), m.group(), value, "元", 0))
    return out


def find_upper_amounts(text: str) -> list[Decimal]:
    """Values of upper-case amounts (壹万贰仟元整, 伍角), parsed with cn2an on every call."""
    values = []
    spans = []
    for m in _UPPER_YUAN.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in _UPPER_CHARS:
            continue
        try:
            integer = int(cn2an.cn2an(m[1], "strict"))
        except Exception:  # cn2an raises assorted types on malformed numerals
            continue
        jiao = _UPPER_VALUE[m[2]] if m[2] else 0
        fen = _UPPER_VALUE[m[3]] if m[3] else 0
        values.append(Decimal(integer) + Decimal(jiao * 10 + fen) / 100)
        spans.append(m.span())
    for m in _UPPER_JIAO.finditer(text):
        if any(s <= m.start() < e for s, e in spans) or text[m.start() - 1] in _UPPER_CHARS:
            continue
        fen = _UPPER_VALUE[m[2]] if m[2] else 0
        values.append(Decimal(_UPPER_VALUE[m[1]] * 10 + fen) / 100)
    return values


def find_percents(text: str) -> list[Found]:
    found = [Found(m.start(), m.end(), m.group()) for m in _PERCENT.finditer(text)]
    return found + [Found(m.start(), m.end(), m.group()) for m in _PERCENT_CN.finditer(text)]


def find_dates(text: str) -> list[Found]:
    """Numeric (2024-05-01, 2024/5/1) and Chinese (2024年5月1日, 5月1日) dates."""
    out = []
    for m in _DATE_NUMERIC.finditer(text):
        s, e = m.span()
        if (s == 0 or text[s - 1] not in _ASCII_ALNUM) and (
            e == len(text) or text[e] not in _ASCII_ALNUM
        ):
            out.append(Found(s, e, m.group()))
    for m in _DATE_CHINESE.finditer(text):
        year, month, day = (m[1], m[2], m[3]) if m[2] else (None, m[1], m[3])
        if len(month) <= 2 and (year is None or len(year) == 4) and (year or day):
            out.append(Found(m.start(), m.end(), m.group()))
    return out


def find_urls(text: str) -> list[Found]:
    out = []
    for m in _URL.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in _ASCII_ALNUM:
            continue
        url = m.group().rstrip(".,;:!?'\"*")
        out.append(Found(m.start(), m.start() + len(url), url))
    return out


def near(text: str, start: int, end: int, words: re.Pattern[str], within: int = 20) -> bool:
    """Is one of ``words`` entirely inside ``within`` characters around [start, end)?"""
    return words.search(text, max(0, start - within), end + within) is not None


def followed_by(text: str, end: int, phrase: str) -> bool:
    """``phrase`` right after ``end``, white space skipped."""
    while end < len(text) and text[end].isspace():
        end += 1
    return text.startswith(phrase, end)


# ---- the finance pack: domains/finance + rulesets/zh-customer-service + rulesets/uncertainty ---

_ABSOLUTE = re.compile(r"肯定|绝对|100%|百分之百|保证")
_NEGATIONS = ("不", "无法", "不能", "难以", "没法", "未必")
_TAX_WORDS = re.compile(r"税率|征收率|扣除率")
_YIELD_WORDS = re.compile(r"收益|回报|年化|业绩|涨幅")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def no_absolute_terms(output: str, context: Context) -> Outcome:
    for m in _ABSOLUTE.finditer(output):
        start = m.start()
        if m.group() == "100%" and start > 0 and output[start - 1] in _ASCII_ALNUM:
            continue  # 1100% is not 100%
        if output.endswith(_NEGATIONS, 0, start) or output.startswith(("值", "金"), m.end()):
            continue
        return "fail"
    return "pass"


def price_format(output: str, context: Context) -> Outcome:
    for a in find_amounts(output):
        if a.unit != "元" or a.decimals != 2:
            return "fail"
    return "pass"


def external_link_disclaimer(output: str, context: Context) -> Outcome:
    for url in find_urls(output):
        if not followed_by(output, url.end, "（请自行核实）"):
            return "fail"
    return "pass"


def uncertainty_marker(output: str, context: Context) -> Outcome:
    memory = context.get("memory") or {}
    confidence = memory.get("min_confidence") if isinstance(memory, Mapping) else None
    low = context.get("low_confidence") is True or (
        isinstance(confidence, int | float) and confidence < 0.72
    )
    if not low:
        return "skip"
    return "pass" if "[需人工确认]" in output else "fail"


def amount_upper_and_lower(output: str, context: Context) -> Outcome:
    lower = {a.value for a in find_amounts(output)}
    upper = set(find_upper_amounts(output))
    return "pass" if lower == upper else "fail"


def date_format(output: str, context: Context) -> Outcome:
    for d in find_dates(output):
        if not _ISO_DATE.search(d.text):
            return "fail"
    return "pass"


def tax_rate_cites_policy(output: str, context: Context) -> Outcome:
    if not any(near(output, p.start, p.end, _TAX_WORDS) for p in find_percents(output)):
        return "skip"
    return "pass" if _TAX_DOC.search(output) else "fail"


def yield_disclaimer(output: str, context: Context) -> Outcome:
    if not any(near(output, p.start, p.end, _YIELD_WORDS) for p in find_percents(output)):
        return "skip"
    return "pass" if "历史业绩不预示未来表现" in output else "fail"


_CLAIM = re.compile(
    r"(?<![我他她它])[您你](?:(?:上周|上次|之前|以前|此前|刚才|刚刚|昨天|前天|前几天|上个月|曾经)"
    r"(?:提到过|提到|说过|反馈过|反映过|咨询过|问过|告诉过我们|投诉过|说|问|反馈|咨询)"
    r"|(?:提到过|提到|说过|反馈过|反映过|咨询过|问过|告诉过我们|投诉过))[的了]?[，,：: ]?"
    r"([^。！？!?；;\n，,]{1,40})"
)


def claims_backed_by_memory(output: str, context: Context) -> Outcome:
    memory = context.get("memory") or {}
    facts = memory.get("facts") if isinstance(memory, Mapping) else None
    texts = [str(f) for f in facts] if isinstance(facts, list) else []
    for m in _CLAIM.finditer(output):
        content = m.group(1).strip("的了，,：: ")
        if len(content) < 3:
            continue
        chars = re.findall(r"[\u4e00-\u9fff]|[0-9A-Za-z]+", content)
        pairs = {a + b for a, b in itertools.pairwise(chars)} or set(chars)
        if not any(
            len(pairs & {a + b for a, b in itertools.pairwise(t)}) * 2 >= len(pairs) for t in texts
        ):
            return "fail"
    return "pass"


FINANCE_RULES: dict[str, RuleFn] = {
    "no-absolute-terms": no_absolute_terms,
    "price-format": price_format,
    "external-link-disclaimer": external_link_disclaimer,
    "uncertainty-marker": uncertainty_marker,
    "claims-backed-by-memory": claims_backed_by_memory,
    "amount-upper-and-lower": amount_upper_and_lower,
    "date-format": date_format,
    "tax-rate-cites-policy": tax_rate_cites_policy,
    "yield-disclaimer": yield_disclaimer,
}


def evaluate(rules: Mapping[str, RuleFn], output: str, context: Context) -> dict[str, Outcome]:
    """Every rule's outcome, like ``Engine.evaluate``."""
    return {rid: fn(output, context) for rid, fn in rules.items()}
