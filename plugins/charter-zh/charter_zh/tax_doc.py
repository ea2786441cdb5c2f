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
1949–2099, and numbers written in Chinese numerals (``第十二号``).
"""

from __future__ import annotations

import re

from charter.protocols import Item, ValueKind
from charter_zh._common import non_overlapping

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
_TRIGGERS = ("〔", "[", "【", "(", "（", "［", "〖", "公告", "令")


def _item(start: int, end: int, text: str, normal: str, kind: str) -> Item:
    return Item(start=start, end=end, text=text[start:end], value=normal, attrs={"kind": kind})


def _bracketed(text: str) -> list[Item]:
    items = []
    for m in _BRACKETED.finditer(text):
        start = m.start()
        code = m["code"]
        if start > 0 and text[start - 1] in _PROVINCES:
            start -= 1
            code = text[start] + code
        normal = f"{code}〔{m['year']}〕{int(m['num'])}号"
        items.append(_item(start, m.end(), text, normal, "code"))
    return items


def _announcements(text: str) -> list[Item]:
    items = []
    for m in _ANNOUNCEMENT.finditer(text):
        bodies = " ".join(_BODY_RE.findall(m["bodies"]))
        normal = f"{bodies}公告{m['year']}年第{int(m['num'])}号"
        items.append(_item(m.start(), m.end(), text, normal, "announcement"))
    for m in _ORDER.finditer(text):
        normal = f"{m['bodies']}令第{int(m['num'])}号"
        items.append(_item(m.start(), m.end(), text, normal, "order"))
    return items


class TaxDocExtractor:
    """Tax/policy document numbers; the value is the normalised number."""

    name: str = "tax_doc"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if "号" not in text or not any(t in text for t in _TRIGGERS):
            return ()
        items = _bracketed(text)
        if "公告" in text or "令" in text:
            items += _announcements(text)
        return non_overlapping(items)

    def canonical(self, item: Item) -> str | None:
        """The normalised document number (``财税[2019]13号`` -> ``财税〔2019〕13号``)."""
        found = self.extract(item.text)
        if len(found) == 1 and (found[0].start, found[0].end) == (0, len(item.text)):
            return str(found[0].value)
        return None
