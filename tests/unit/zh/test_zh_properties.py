"""Property tests: no extractor raises, every item is a true, ordered, disjoint span, every
``time`` expression resolves to a span, and every PII match is a true, ordered, disjoint span."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.contracts.rules import Extractor, Item
from charter_zh.plugin import EXTRACTORS, PII_RECOGNIZERS
from tests.support.hypo import examples

# Characters the extractors care about, so random texts actually reach their deeper branches.
_INTERESTING = (
    "0123456789.,-/:+()%％¥￥$@ 　\n"
    "元块钱万亿千百角分整人民币美金RMBUSDCNY"
    "零壹贰叁肆伍陆柒捌玖拾佰仟圆貳參陸萬億一二三四五六七八九十两点百分之"
    "年月日号httpswww.comexample"
    "财税〔〕[]【】（）公告第令国家税务总局政部发函"
    "布洛芬缓释胶囊阿莫西林ibuprofenIBUPROFEN扑热息痛"
    "Xx省市区县州旗盟浙江杭州西湖北京朝阳吉林南昌路街道号栋室单元小区的"
    "去今明前后天周星期礼拜季度上下半本这个近最过内凌晨早晚午点时分刻底初旬Qq"
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
                "11010519491231002X",
                "110105 19491231 002X",
                "6222021234567890128",
                "4111 1111 1111 1111",
                "4111-1111-1111-1111",
                "浙江省杭州市西湖区文三路90号",
                "北京朝阳区建国路8号3栋2单元302",
                "杭州西湖区",
                "吉林省吉林市",
                "阳泉市城区",
                "去年一季度",
                "明天10点前",
                "后天下午3点半",
                "下周二",
                "三天后",
                "2024年第二季度",
                "2024Q2",
                "月底前",
                "近一年",
                "今晚8:30",
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
    e
    for e in EXTRACTORS
    if e.name
    in {"money", "percent", "date", "phone", "tax_doc", "id_card", "bank_card", "address", "time"}
]


@pytest.mark.parametrize("extractor", _DIGIT_READERS, ids=lambda e: e.name)
@settings(max_examples=examples(300), deadline=None)
@given(text=TEXTS)
def test_no_item_inside_an_address(extractor: Extractor, text: str) -> None:
    addresses = _BY_NAME["url"].extract(text) + _BY_NAME["email"].extract(text)
    for item in extractor.extract(text):
        assert not any(a.start < item.end and item.start < a.end for a in addresses), item


@pytest.mark.parametrize("extractor", EXTRACTORS, ids=lambda e: e.name)
@settings(max_examples=examples(300), deadline=None)
@given(text=TEXTS)
def test_never_raises_and_spans_are_true(extractor: Extractor, text: str) -> None:
    items = extractor.extract(text)
    _check_items(text, items)
    assert extractor.extract(text) == items  # pure: the same text gives the same items
    for item in items:
        canonical = extractor.canonical(item)
        assert canonical is None or isinstance(canonical, str)


@settings(max_examples=examples(300), deadline=None)
@given(text=TEXTS)
def test_time_expressions_resolve(text: str) -> None:
    for item in _BY_NAME["time"].extract(text):
        for reference in (datetime(2024, 5, 22, 15), datetime(2023, 12, 31, 23, 59)):
            span = item.value.resolve(reference)
            assert span.start < span.end or item.value.bound == "before", (item, span)


@settings(max_examples=examples(300), deadline=None)
@given(text=TEXTS)
def test_pii_matches_are_true_ordered_disjoint_spans(text: str) -> None:
    for recognizer in PII_RECOGNIZERS:
        last_end = 0
        for match in recognizer.recognize(text):
            assert 0 <= last_end <= match.start < match.end <= len(text)
            assert text[match.start : match.end] == match.text
            assert match.kind == recognizer.kind
            last_end = match.end
