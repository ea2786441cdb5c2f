"""``tax_doc``: Chinese tax and policy document numbers (文号).

Three shapes, each normalised (value and canonical form):

* bracketed codes ``财税〔2023〕1号``, ``财税[2019]13号``, ``税总发（2017）124号``,
  ``国发【2020】5号`` -> ``财税〔2019〕13号``: brackets become 〔〕, spaces and a ``第`` before
  the number go;
* announcements ``国家税务总局公告2019年第4号``, ``财政部 税务总局公告2023年第12号``,
  ``财政部、税务总局 公告 2023 年第 12 号`` -> issuers joined by one space, no other spaces,
  ``第`` always written;
* orders ``国家税务总局令第48号``.

The issuer must be a known code (财税, 财关税, 税总发, 税总函, 国税发, 国税函, 国发, 国办发 and
similar, see ``_CODES``) or a known body (``_BODIES``); a one-character province prefix from
``_PROVINCES`` (京财税…) is kept. Deliberately not matched: unknown issuer codes (a generic
"any CJK before 〔" rule would swallow the preceding words: 根据财税〔…〕), ambiguous province
characters (新, 云, 宁, 吉 … are common word endings: 最新财税〔…〕 is 财税〔…〕), years outside
1949–2099, and numbers written in Chinese numerals (``第十二号``). Like every extractor that
reads digits, it keeps out of URLs and e-mail addresses (``web.outside_links``); with today's
issuers, all CJK, a document number cannot overlap an (ASCII) address, so that is a guard.
"""

from __future__ import annotations

import re

from charter.contracts.rules import Item, ValueKind
from charter_zh._common import DIGITS
from charter_zh.web import outside_links

_CODES = (
    "财税", "财关税", "财会", "财预", "财库", "财金", "财建", "财企", "财社", "财农", "财资",
    "财行", "财办", "财税字", "税总发", "税总函", "税总办发", "税总办函", "税总纳服发",
    "税总征科发", "税总货便函", "税总所得函", "税总财行函", "国税发", "国税函", "国税办发",
    "国税办函", "国税明电", "国税总发", "国发", "国办发", "国办函", "国函", "署税发",
    "税委会",
)  # fmt: skip
_BODIES = (
    "国家税务总局", "税务总局", "财政部", "海关总署", "国家发展改革委", "人力资源社会保障部",
    "商务部", "科技部", "民政部", "住房城乡建设部", "工业和信息化部", "生态环境部",
    "国务院关税税则委员会", "中国人民银行", "国家市场监督管理总局", "退役军人事务部",
)  # fmt: skip
# Only provinces whose abbreviation rarely ends an ordinary word (新/云/宁/吉… are left out).
_PROVINCES = frozenset("京津沪渝冀晋辽鲁豫鄂湘粤皖闽赣苏浙琼陕")


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_SP = r"[ \u3000]*"
_YEAR = r"(?P<year>19[4-9][0-9]|20[0-9]{2})"
_NUM = r"(?P<num>[0-9]{1,5})"
_BRACKETED = re.compile(
    rf"(?P<code>{_alternation(_CODES)}){_SP}[〔\[【(（［〖]{_SP}{_YEAR}{_SP}[〕\]】)）］〗]"
    rf"{_SP}第?{_SP}{_NUM}{_SP}号"
)
_BODY = _alternation(_BODIES)
_ANNOUNCEMENT = re.compile(
    rf"(?P<bodies>(?:{_BODY})(?:[ \u3000、]*(?:{_BODY}))*){_SP}公告{_SP}{_YEAR}{_SP}年"
    rf"{_SP}第?{_SP}{_NUM}{_SP}号"
)
_ORDER = re.compile(rf"(?P<bodies>{_BODY}){_SP}令{_SP}第{_SP}{_NUM}{_SP}号")
_BODY_RE = re.compile(_BODY)
_SPACES = " \u3000"
_CLOSING = frozenset("〕]】)）］〗")


def _pattern_before(text: str, end: int) -> re.Pattern[str] | None:
    """The one pattern that can end at the 号 at ``end``, told by what precedes the number:
    a closing bracket (code), 年 (announcement) or 令 (order)."""
    pos = end
    while pos > 0 and text[pos - 1] in _SPACES:
        pos -= 1
    if pos == 0 or text[pos - 1] not in DIGITS:
        return None  # 尾号, 型号, 第十二号…: the common case
    while pos > 0 and text[pos - 1] in DIGITS:
        pos -= 1
    while pos > 0 and text[pos - 1] in _SPACES:
        pos -= 1
    if pos > 0 and text[pos - 1] == "第":
        pos -= 1
        while pos > 0 and text[pos - 1] in _SPACES:
            pos -= 1
    before = text[pos - 1] if pos > 0 else ""
    if before in _CLOSING:
        return _BRACKETED
    if before == "年":
        return _ANNOUNCEMENT
    if before == "令":
        return _ORDER
    return None


def _item(text: str, m: re.Match[str], pattern: re.Pattern[str]) -> Item:
    start = m.start()
    if pattern is _BRACKETED:
        code = m["code"]
        if start > 0 and text[start - 1] in _PROVINCES:
            start -= 1
            code = text[start] + code
        normal, kind = f"{code}〔{m['year']}〕{int(m['num'])}号", "code"
    elif pattern is _ANNOUNCEMENT:
        bodies = " ".join(_BODY_RE.findall(m["bodies"]))
        normal, kind = f"{bodies}公告{m['year']}年第{int(m['num'])}号", "announcement"
    else:
        normal, kind = f"{m['bodies']}令第{int(m['num'])}号", "order"
    return Item(start, m.end(), text[start : m.end()], normal, None, None, {"kind": kind})


def _find(text: str) -> list[Item]:
    """Every document number ends with 号 and holds no other 号, so the one ending at a 号 is
    the leftmost match between the previous 号 and this one: found from the 号s (str.find is far
    cheaper than scanning the whole text with three patterns), it is what finditer would give."""
    items: list[Item] = []
    after_previous = 0
    end = text.find("号")
    while end != -1:
        pattern = _pattern_before(text, end)
        if pattern is not None:
            m = pattern.search(text, after_previous, end + 1)
            if m is not None:
                items.append(_item(text, m, pattern))
        after_previous = end + 1
        end = text.find("号", after_previous)
    return items


class TaxDocExtractor:
    """Tax/policy document numbers; the value is the normalised number."""

    name: str = "tax_doc"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if "号" not in text:
            return ()
        items = _find(text)
        if not items:
            return ()
        return tuple(outside_links(text, items))  # in order and disjoint: each ends at its 号

    def canonical(self, item: Item) -> str | None:
        """The normalised document number (``财税[2019]13号`` -> ``财税〔2019〕13号``)."""
        found = self.extract(item.text)
        if len(found) == 1 and (found[0].start, found[0].end) == (0, len(item.text)):
            return str(found[0].value)
        return None
