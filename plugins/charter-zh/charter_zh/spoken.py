"""Amounts as people say them: lower-case Chinese numerals, digits mixed with 千/万, and
approximate forms.

A *numeral* is a run of lower-case Chinese numerals (``八百``, ``三千五``, ``一万二千``,
``两千``), or Arabic digits with a multiplier and maybe more (``2千``, ``1.5万``, ``2万5``), read
with ``cn2an`` (its "smart" mode, which also reads the mixed forms and the spoken abbreviations
三千五 = 3500, 一万二 = 12000). What ``cn2an`` would read but no one says as an amount is refused
first: digit-by-digit runs (``一二三四``), a run that starts with a unit (``万一``, ``千万别``,
``百分之``), ``十`` alone.

*Approximate* amounts are read with ``Item.attrs["approximate"] = True``: a number followed by
来, 多, 余 or 几 (``八百来块``, ``五百多``, ``3000余元``, ``三千几``), or a range of two
neighbouring digits (``两三千`` = 2000, ``七八百`` = 700: the lower end). ``大概3000``,
``3000左右`` are not approximate: the customer names the amount.

Two readers use this module:

* ``marked_amounts`` — amounts with a currency marker (``五百块``, ``两千元``, ``一万二千块钱``,
  ``2万5千元``, ``八百来块``, ``500多元``): the ``money`` extractor adds them to its Arabic ones.
  ``块`` as a measure word (``三块蛋糕``, ``一块去``) and 元 in words (``一元二次方程``,
  ``二元论``) are not money.
* ``SpokenAmountExtractor`` (``spoken_amount``) — bare amounts, no marker (``八百``,
  ``三千五``, ``1.5万``, ``800`` in ``转800给李四``): what a money slot reads when ``money``
  finds nothing. Not amounts: a card tail (``尾号6666``, ``6666那张卡``), a date, time or count
  (``2024年``, ``3月5号``, ``8点``, ``三个``, ``两张``, ``五天``), a phone, card or order number
  (more than seven integer digits, or digits in groups: ``6222 0268``), a percentage
  (``5%``, ``百分之五十``), an ordinal (``第三千``), a number glued to ASCII (``A100``), a
  number with a currency marker (``money``'s), anything inside a link.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation

from charter.contracts.rules import Item, ValueKind
from charter_zh._common import ASCII_ALNUM, cn2an_value, is_cjk, non_overlapping
from charter_zh.web import outside_links

CN_DIGITS = "零〇一二两三四五六七八九"
CN_UNITS = "十百千万亿"
_CN = CN_DIGITS + CN_UNITS
_DIGIT_VALUE = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ARABIC = r"[0-9]+(?:\.[0-9]+)?"
# a numeral: Arabic digits (maybe with a fraction), Chinese numerals, or digits then numerals
# (2万5千, 3千5: one digit after a unit, maybe its own unit)
_NUMERAL = rf"(?:{_ARABIC})?[{_CN}]+(?:[0-9](?![0-9.])[{_CN}]*)*|{_ARABIC}"
_APPROX = "来多余几"
# what money's Arabic reader already reads: digits, maybe a multiplier
_ARABIC_ONLY = re.compile(rf"{_ARABIC}(?:万亿|千万|百万|万|千|亿)?")
_UPPER_NUMERALS = frozenset("零壹贰叁肆伍陆柒捌玖拾佰仟萬億貳參陸")
# full-width digits read as ASCII (one character for one: spans stay those of the text)
FOLD = str.maketrans("０１２３４５６７８９．", "0123456789.")
_FULL_WIDTH = re.compile("[０-９．]")


def fold(text: str) -> str:
    """``text`` with full-width digits and point as ASCII (``translate`` only when there are
    some: it costs tens of µs on a reply's length)."""
    return text.translate(FOLD) if _FULL_WIDTH.search(text) else text


_MARKED = re.compile(
    rf"(?P<num>{_NUMERAL})(?P<approx>[{_APPROX}]?)(?P<suffix>块钱|块|元|美元|美金)"
)
# 块 is a measure word (三块蛋糕) unless one of these, or no CJK character, follows it
_KUAI_FOLLOWERS = frozenset("钱的左了吧呢啊呀吗哦嘛就都也还起以多给到转打汇")
# 元 in words, not money: 一元化, 二元论, 一元二次方程, 一元复始
_YUAN_WORDS = frozenset("化论次素宵旦老首帅朝代气")
_USD = frozenset({"美元", "美金"})


@functools.lru_cache(maxsize=2048)
def numeral_value(run: str) -> tuple[Decimal, bool] | None:
    """The value of a numeral and whether it is a range (``两三千``: 2000, True); None when the
    run is no amount (``一二三四``, ``万一``, ``十``, a malformed run)."""
    if not run or run[0] in "零〇" or run[0] in "百千万亿":
        return None
    cn = [c for c in run if c in _CN]
    if not cn:  # Arabic only
        try:
            return Decimal(run), False
        except InvalidOperation:
            return None
    ranged = False
    chars = list(run)
    for i in range(len(chars) - 1):
        a, b = chars[i], chars[i + 1]
        if a in _DIGIT_VALUE and b in _DIGIT_VALUE and a not in "零〇" and b not in "零〇":
            # two digits side by side: a range of neighbours (两三千, 三五百), else no amount
            if ranged or not 0 < _DIGIT_VALUE[b] - _DIGIT_VALUE[a] <= 2:
                return None
            ranged = True
            chars[i + 1] = ""
    if ranged and (not chars[-1] or chars[-1] not in CN_UNITS):
        return None  # 三五 alone, 一万两三: no range of an amount
    text = "".join(chars)
    if text[0].isdigit() and not any(c in CN_UNITS for c in text):
        return None  # 3五: digits glued to a numeral
    try:
        value = cn2an_value(text, "smart")
    except Exception:  # cn2an signals malformed input with assorted exception types
        return None
    return Decimal(str(value)), ranged


def _item(
    text: str, start: int, end: int, value: Decimal, unit: str, attrs: dict[str, object]
) -> Item:
    written = text[start:end]
    dot = written.find(".")
    decimals = 0
    if dot >= 0:
        decimals = len(written[dot + 1 :]) - len(written[dot + 1 :].lstrip("0123456789"))
    return Item(start, end, written, value, unit, decimals, attrs)


def _approximate(approx: str, ranged: bool) -> bool:
    return bool(approx) or ranged


def marked_amounts(text: str) -> list[Item]:
    """Spoken amounts with a currency marker that ``money``'s Arabic reader leaves out."""
    folded = fold(text)
    out: list[Item] = []
    for m in _MARKED.finditer(folded):
        num, approx, suffix = m["num"], m["approx"], m["suffix"]
        if not approx and _ARABIC_ONLY.fullmatch(num):
            continue  # 100元, 1.2万元: money's own
        if approx == "几" and num[-1] not in CN_UNITS:
            continue  # 三几块
        start, end = m.start(), m.end()
        if start and (folded[start - 1] in ASCII_ALNUM or folded[start - 1] in "._,"):
            continue
        if start and (folded[start - 1] in _UPPER_NUMERALS or folded[start - 1] in "第几"):
            continue
        if suffix == "块" and end < len(folded):
            nxt = folded[end]
            if is_cjk(nxt) and nxt not in _KUAI_FOLLOWERS and "钱" not in folded[end : end + 3]:
                continue  # 三块蛋糕; but 三万块闲钱 is money
        if (
            suffix == "元"
            and end < len(folded)
            and (folded[end] in _YUAN_WORDS or folded[end] in _CN)
        ):
            continue  # 一元化, 一元二次方程
        read = numeral_value(num)
        if read is None:
            continue
        value, ranged = read
        attrs: dict[str, object] = {
            "symbol": None,
            "prefix": None,
            "suffix": suffix,
            "grouped": False,
            "spoken": True,
        }
        if _approximate(approx, ranged):
            attrs["approximate"] = True
        unit = "USD" if suffix in _USD else "元"
        out.append(_item(text, start, end, value, unit, attrs))
    return out


# ---- bare amounts ----------------------------------------------------------------------------

_BARE = re.compile(rf"(?P<num>{_NUMERAL})(?P<approx>[{_APPROX}]?)")
MAX_DIGITS = 7  # 9,999,999: a longer run of digits is a phone, card or order number
# what may stand between a context word and the number: 尾号是 6789, 卡号：1234
_LINK = re.compile(r"[是为:：\s]*$")
# a number after these is an identifier, a date part or a share, not an amount
_NOT_AFTER = (
    "尾号",
    "后四位",
    "后4位",
    "末四位",
    "末4位",
    "尾数",
    "卡号",
    "号码",
    "编号",
    "单号",
    "订单",
    "订单号",
    "手机",
    "电话",
    "密码",
    "验证码",
    "账号",
    "工号",
    "房间",
    "星期",
    "礼拜",
    "周",
    "第",
    "百分之",
    "千分之",
    "之",
    "点",
)
# a date before the number: 5月3, 2024年5
_DATE_BEFORE = re.compile(r"(?:[0-9]{1,4}|[〇零一二两三四五六七八九十]{1,4})[年月]$")
# a number before these is a date, time, count, measure, share or card, not an amount
_MEASURES = frozenset(
    "年月日号点时分秒天周个次张位件份期岁楼层只条本台套瓶盒袋斤克米里倍成折度%％人名家间口辆"
    "页章节集部首句遍趟届代元块美卡:：/-.·_"
)
_NOT_BEFORE = ("那张", "这张", "的卡", "尾号", "小时", "分钟", "公斤", "公里", "结尾", "开头")
_PREFIX_MARKS = ("¥", "￥", "$", "RMB", "CNY", "USD", "人民币")


def _context_refuses(folded: str, start: int, end: int) -> bool:
    before = folded[:start]
    link = _LINK.search(before[-8:]) if before else None
    head = before[: len(before) - (len(link.group()) if link else 0)]
    if before:
        ch = before[-1]
        if ch in ASCII_ALNUM or ch in ".,_-/:：·" or ch in _UPPER_NUMERALS:
            return True
        if ch == " " and len(before) > 1 and before[-2] in ASCII_ALNUM:
            return True  # 6222 0268: digits in groups
        if any(head.endswith(w) for w in _NOT_AFTER) or before.endswith(_PREFIX_MARKS):
            return True
        if _DATE_BEFORE.search(head[-6:]):
            return True
    if end < len(folded):
        ch = folded[end]
        if ch in ASCII_ALNUM or ch in _MEASURES or folded.startswith(_NOT_BEFORE, end):
            return True
        if ch == " " and end + 1 < len(folded) and folded[end + 1] in ASCII_ALNUM:
            return True  # 6222 0268
        if ch == "," and end + 1 < len(folded) and folded[end + 1].isdigit():
            return True  # 1,2345
    return False


def bare_amounts(text: str) -> tuple[Item, ...]:
    """Amounts said without a currency marker, in yuan; approximate ones marked."""
    folded = fold(text)
    out: list[Item] = []
    for m in _BARE.finditer(folded):
        num, approx = m["num"], m["approx"]
        start, end = m.span("num")
        if not any(c in _CN for c in num):
            integer = num.split(".")[0]
            if len(integer) > MAX_DIGITS or (integer[0] == "0" and len(integer) > 1):
                continue
            if "." in num and len(num) - len(integer) - 1 > 2:
                continue
        elif not any(c in CN_UNITS for c in num) or num == "十":
            continue  # 五, 一二三, 十: no amount without more
        if approx == "几" and num[-1] not in CN_UNITS:
            approx = ""
        after = m.end() if approx else end
        if _context_refuses(folded, start, after):
            continue
        read = numeral_value(num)
        if read is None:
            continue
        value, ranged = read
        attrs: dict[str, object] = {"spoken": True}
        if _approximate(approx, ranged):
            attrs["approximate"] = True
        out.append(_item(text, start, after, value, "元", attrs))
    if not out:
        return ()
    return non_overlapping(outside_links(text, out))


class SpokenAmountExtractor:
    """Bare amounts as said, in yuan: ``八百``, ``三千五``, ``一万二``, ``1.5万``, ``800``."""

    name: str = "spoken_amount"
    value_kind: ValueKind = "number"
    has_units: bool = True

    def extract(self, text: str) -> tuple[Item, ...]:
        return bare_amounts(text)

    def canonical(self, item: Item) -> str | None:
        """Two decimals and 元 (``三千五`` → ``3500.00元``); None for an approximate amount."""
        if item.attrs.get("approximate") or not isinstance(item.value, Decimal):
            return None
        return f"{item.value:.2f}元"
