"""Property tests: no extractor raises, and every item is a true, ordered, disjoint span."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.protocols import Extractor, Item
from charter_zh.plugin import EXTRACTORS

# Characters the extractors care about, so random texts actually reach their deeper branches.
_INTERESTING = (
    "0123456789.,-/:+()%％¥￥$@ 　\n"
    "元块钱万亿千百角分整人民币美金RMBUSDCNY"
    "零壹贰叁肆伍陆柒捌玖拾佰仟圆貳參陸萬億一二三四五六七八九十两点百分之"
    "年月日号httpswww.comexample"
    "财税〔〕[]【】（）公告第令国家税务总局政部发函"
    "布洛芬缓释胶囊阿莫西林ibuprofenIBUPROFEN扑热息痛"
    "İK\u212a😀"
)
TEXTS = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=_INTERESTING, max_size=200),
    st.lists(
        st.sampled_from(
            [
                "¥1,234.50",
                "1.2万元",
                "壹万贰仟元整",
                "伍角",
                "3.5%",
                "百分之三点五",
                "2024年5月1日",
                "2024-05-01",
                "https://a.com/x",
                "www.b.cn",
                "a@b.com",
                "http://b.cn/2024/05/01",
                "13812345678@qq.com",
                "https://c.cn/rate/3.5%",
                "13812345678",
                "(0755)12345678",
                "财税〔2019〕13号",
                "国家税务总局公告2019年第4号",
                "布洛芬缓释胶囊",
                "ibuprofen",
            ]
        )
        | st.text(alphabet=_INTERESTING, max_size=5),
        max_size=12,
    ).map("".join),
)


def _check_items(text: str, items: tuple[Item, ...]) -> None:
    assert isinstance(items, tuple)
    last_end = 0
    for item in items:
        assert isinstance(item, Item)
        assert 0 <= item.start < item.end <= len(text)
        assert text[item.start : item.end] == item.text
        assert item.start >= last_end, "items overlap or are out of order"
        last_end = item.end


_BY_NAME = {e.name: e for e in EXTRACTORS}
# The extractors that read digits: none of their items may sit inside a URL or e-mail address.
_DIGIT_READERS = [
    e for e in EXTRACTORS if e.name in {"money", "percent", "date", "phone", "tax_doc"}
]


@pytest.mark.parametrize("extractor", _DIGIT_READERS, ids=lambda e: e.name)
@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_no_item_inside_an_address(extractor: Extractor, text: str) -> None:
    addresses = _BY_NAME["url"].extract(text) + _BY_NAME["email"].extract(text)
    for item in extractor.extract(text):
        assert not any(a.start < item.end and item.start < a.end for a in addresses), item


@pytest.mark.parametrize("extractor", EXTRACTORS, ids=lambda e: e.name)
@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_never_raises_and_spans_are_true(extractor: Extractor, text: str) -> None:
    items = extractor.extract(text)
    _check_items(text, items)
    assert extractor.extract(text) == items  # pure: the same text gives the same items
    for item in items:
        canonical = extractor.canonical(item)
        assert canonical is None or isinstance(canonical, str)
