"""``address``: mainland Chinese addresses, read as province / city / district / detail.

An address is a chain of administrative divisions, each inside the one before
(``浙江省杭州市西湖区``, ``北京市朝阳区``, ``浙江杭州市``, ``杭州西湖区``), optionally followed by
a street-level detail (``文三路90号``, ``城西花园3栋B单元``, ``五常街道``). The value is an
``Address``: the official names of the province, the prefecture-level city and the district
(county, county-level city, banner) as far as the text settles them, and the detail as
written. ``Address.region`` is the address generalised to its district
(``浙江省杭州市西湖区文三路90号`` -> ``浙江省杭州市西湖区``), with the levels the text left out
filled in when they are certain (``杭州市西湖区`` -> ``浙江省杭州市西湖区``). A municipality is its
own city: ``北京市朝阳区`` has province and city ``北京市``.

Divisions come from ``data/regions.txt`` (see ``charter_zh.regions``), read on the first call
of ``extract``. Addresses are anchored on names written in full: a text without one of
省市区县旗州盟 is given up after seven ``in`` tests.

Deliberately not matched:

* an address with no division written in full: ``浙江杭州`` or ``杭州文三路90号`` (``南京西路``,
  ``中山路`` and ``吉林大学`` show why a short name alone proves nothing);
* a single division without a detail (``杭州市``, ``西湖区``): a place, not an address;
* district names without their suffix (``朝阳``, ``西湖``): ordinary words as often as places;
  the five district names that are ordinary words as they stand (``城区``, ``郊区``...) only
  count next to another division;
* divisions that do not nest (``上海市南京路``: 南京 is not in 上海, so the chain ends at ``上海市``
  and ``南京路`` is detail);
* details the street grammar does not know (``人民法院``, ``附近的小区``): the address ends at the
  last division; a detail stops at the first word like 的, 在 or 和, and at punctuation;
* Hong Kong, Macau and Taiwan below the province level, and overseas addresses;
* anything inside a URL or an e-mail address (``web.outside_links``).

When a name stands for several divisions (西湖区 is in 杭州 and in 南昌), the levels the text does
not settle stay None: ``西湖区文三路90号`` has no province and no city.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import regex

from charter.contracts.rules import Item, ValueKind
from charter_zh.regions import PROVINCE, Candidates, Hit, Regions, regions
from charter_zh.web import outside_links

# A detail is a run of components: a name ending in a street or estate word (文三路, 中关村,
# 城西花园), or a number ending in a building word (90号, 3栋, B单元, 1201室). Name characters
# are CJK except the function words that end an address in running text.
# (地 is no stop: 新天地广场.)
_STOP = "的得了着过是在有和与及或而但也都就还又把被对向从到给让请您你我他她它们这那哪吗呢吧啊呀"
_NAME = rf"(?:(?![{_STOP}])[\u4e00-\u9fff])"
# Words of two characters or more may stand alone (南山区科技园); one-character ones need a name.
# The detail is matched leftmost-longest (POSIX semantics of the `regex` module), not by the first
# alternative that fits: 科技园路12号 is one street and a number, not the estate 科技园 and a
# lost 路12号, and 珞喻街道15栋 is one 街道, not the street 珞喻街 and a lost 道15栋. A detail cut
# short would leave the house number outside what PII redaction covers.
_ESTATE = (
    "工业园区|科技园区|开发区|工业园|科技园|大街|大道|街道|胡同|社区|小区|花园|家园|公寓|"
    "大厦|广场|园区|新村|大楼"
)
_STREET = "路|街|巷|弄|镇|乡|村|苑|区"  # 区 after a name: 科技园中区
_NUMBER = r"[0-9A-Za-z\-#一二三四五六七八九十百零〇]{1,6}"
_BUILDING = "号楼|号院|号|栋|幢|座|楼|层|单元|室|户|弄|巷|期|区|段|排|组|门"
_COMPONENT = rf"{_NAME}{{1,10}}(?:{_STREET})|{_NAME}{{0,10}}(?:{_ESTATE})|{_NUMBER}(?:{_BUILDING})"


@functools.cache
def _detail() -> regex.Pattern[str]:
    # compiled on first use: it takes ~30 ms, which every charter validate paid at start-up
    return regex.compile(
        rf"[ 　]?(?:{_COMPONENT}){{1,8}}(?:[0-9]{{1,5}}(?![0-9A-Za-z]))?", regex.POSIX
    )


_ANCHOR_CHARS = "省市区县旗州盟"  # the last characters of all full names (a test checks)
_ANCHOR = re.compile(f"[{_ANCHOR_CHARS}]")


@dataclass(frozen=True, slots=True)
class Address:
    """An address as far as the text settles it; ``code`` is the division code of the most
    precise level when it is certain."""

    province: str | None
    city: str | None
    district: str | None
    detail: str
    code: str | None = None

    @property
    def region(self) -> str:
        """The address cut to its district: ``浙江省杭州市西湖区``, ``北京市朝阳区``."""
        city = None if self.city == self.province else self.city
        return "".join(part for part in (self.province, city, self.district) if part)


def _settle(chain: list[Hit]) -> list[Candidates]:
    """Each level's candidates narrowed to those that nest with the levels around them."""
    levels = [hit.candidates for hit in chain]
    for i in range(1, len(levels)):
        levels[i] = tuple(c for c in levels[i] if any(p.contains(c) for p in levels[i - 1]))
    for i in range(len(levels) - 2, -1, -1):
        levels[i] = tuple(p for p in levels[i] if any(p.contains(c) for c in levels[i + 1]))
    return levels


def _agreed(values: set[str | None]) -> str | None:
    return values.pop() if len(values) == 1 else None


def _address(data: Regions, chain: list[Hit], detail: str) -> Address:
    deepest = _settle(chain)[-1]
    provinces: set[str | None] = set()
    cities: set[str | None] = set()
    districts: set[str | None] = set()
    for region in deepest:
        province = data.province_of(region)
        city = data.prefecture_of(region)
        provinces.add(province.name)
        if city is None and region.level == PROVINCE and region.name.endswith("市"):
            city = region  # a municipality is its own city
        cities.add(city.name if city is not None else None)
        districts.add(region.name if region.level > 1 else None)
    code = deepest[0].code if len(deepest) == 1 else None
    return Address(_agreed(provinces), _agreed(cities), _agreed(districts), detail, code)


class AddressExtractor:
    """Chinese addresses; the value is an ``Address`` (province, city, district, detail)."""

    name: str = "address"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        for ch in _ANCHOR_CHARS:
            if ch in text:
                break
        else:
            return ()
        data = regions()
        items: list[Item] = []
        last_end = 0
        for anchor in _ANCHOR.finditer(text):
            if anchor.start() < last_end:
                continue
            item = self._at(data, text, anchor.end(), last_end)
            if item is not None:
                items.append(item)
                last_end = item.end
        if not items:
            return ()
        return tuple(outside_links(text, items))

    @staticmethod
    def _at(data: Regions, text: str, end: int, lo: int) -> Item | None:
        """The address around the full name ending at ``end``, not starting before ``lo``."""
        hit = data.full_ending_at(text, end, lo)
        if hit is None:
            return None
        chain = [hit]
        while len(chain) < 3:
            before = data.ending_at(text, chain[0].start, lo, chain[0].candidates)
            if before is None:
                break
            chain.insert(0, before)
        while len(chain) < 3:
            after = data.starting_at(text, chain[-1].end, chain[-1].candidates)
            if after is None:
                break
            chain.append(after)
        start, end = chain[0].start, chain[-1].end
        m = _detail().match(text, end)
        detail = m.group().lstrip(" 　") if m is not None else ""
        if len(chain) < 2 and not detail:
            return None
        if m is not None:
            end = m.end()
        value = _address(data, chain, detail)
        attrs = {"code": value.code} if value.code is not None else {}
        return Item(start, end, text[start:end], value, None, None, attrs)

    def canonical(self, item: Item) -> str | None:
        """None: an address is reported (or generalised by a PII policy), never rewritten."""
        return None
