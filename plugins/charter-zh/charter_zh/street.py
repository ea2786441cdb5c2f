"""Street addresses written without their district (issue 33): ``寄到深南大道9988号``,
``住在梅林路18号3栋2单元501室``, ``送到文三路华星大厦12楼``, ``阳光花园3栋1201室``.

``charter_zh.address`` anchors an address on a division written in full (``西湖区``); people
who send a parcel across town write the road alone. Such an address is a road or a building
(a name of one to six characters ending in ``路 街 大道 大街 巷 弄 胡同``, or of one to eight
ending in ``大厦 广场 花园 小区 公寓 家园 新村 大楼 …``) followed at once by the address
detail grammar of ``charter_zh.address`` (more roads and buildings, numbers ending in ``号 栋
幢 座 单元 室 楼 层 户 …``), holding at least one such number: a road alone (``中山路``) or a
number with no road before it (``5号线``, ``3单元``) is no address.

A name stops at the words that lead into an address (``寄到``, ``住在``, ``改成``, ``地址`` …)
and at the function words of ``charter_zh.address``, so ``收货地址改成梅林路18号`` gives
``梅林路18号``. Such an address has no district to generalise to.
"""

from __future__ import annotations

import functools
import re

import regex

from charter_zh.address import _COMPONENT, _NAME

_LEAD_WORDS = (
    "寄到|寄往|寄至|送到|送往|发到|发往|搬到|住在|家住|住址|住|地址|址|改成|改为|换成|换到|位于|就在|放在|"
    "收货|快递|麻烦|帮我|一下"
)
_ROAD = "大道|大街|胡同|路|街|巷|弄"
_BUILDING = "工业园区|科技园区|大厦|广场|花园|小区|公寓|家园|新村|大楼|社区|园区"
_NUMBERED = re.compile(
    r"[0-9A-Za-z\-#一二三四五六七八九十百零〇]{1,6}(?:号楼|号院|号|栋|幢|座|楼|层|单元|室|户)"
)
_KEYWORD = re.compile(f"(?:{_ROAD}|{_BUILDING})")
_HOUSE = re.compile("[0-9一二三四五六七八九十]{1,6}(?:号|栋|幢|座|楼|层|单元|室|户)")
_MASK = re.compile(f"(?:{_LEAD_WORDS})")


@functools.cache
def _street() -> regex.Pattern[str]:
    # compiled on first use, like charter_zh.address's detail (POSIX: leftmost-longest, so
    # 文三路华星大厦12楼 is read whole, not cut after 文三路)
    return regex.compile(
        rf"(?:{_NAME}{{1,6}}(?:{_ROAD})|{_NAME}{{1,8}}(?:{_BUILDING}))"
        rf"(?:{_COMPONENT}){{1,8}}(?:[0-9]{{1,5}}(?![0-9A-Za-z]))?",
        regex.POSIX,
    )


def streets(text: str) -> list[tuple[int, int]]:
    """The spans of the street addresses in ``text`` (a view's text), in order."""
    if _HOUSE.search(text) is None or _KEYWORD.search(text) is None:
        return []
    # the words that lead into an address are no part of its name: masked, one for one
    masked = _MASK.sub(lambda m: "，" * len(m.group()), text)
    out: list[tuple[int, int]] = []
    pos = 0
    while True:
        m = _street().search(masked, pos)
        if m is None:
            return out
        start, end = m.span()
        if _NUMBERED.search(masked, start, end):
            out.append((start, end))
        pos = end
