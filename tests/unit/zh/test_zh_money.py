"""The ``money`` extractor: what it finds, what it leaves alone, and its canonical form."""

from __future__ import annotations

from decimal import Decimal

import pytest

from charter_zh.money import MoneyExtractor
from charter_zh.money_upper import MoneyUpperExtractor

MONEY = MoneyExtractor()

# text, item texts, values, unit, decimals (unit and decimals of every item)
POSITIVE = [
    ("共计¥1,234.50", ["¥1,234.50"], ["1234.50"], "元", [2]),
    ("仅需￥99", ["￥99"], ["99"], "元", [0]),
    ("价格1234.5元", ["1234.5元"], ["1234.5"], "元", [1]),
    ("合计1,234.50 元。", ["1,234.50 元"], ["1234.50"], "元", [2]),
    ("贷款1.2万元", ["1.2万元"], ["12000"], "元", [1]),
    ("融资3亿元", ["3亿元"], ["300000000"], "元", [0]),
    ("人民币100元整", ["人民币100元"], ["100"], "元", [0]),
    ("RMB 100", ["RMB 100"], ["100"], "元", [0]),
    ("才100块", ["100块"], ["100"], "元", [0]),
    ("花了100块钱", ["100块钱"], ["100"], "元", [0]),
    ("100块的东西", ["100块"], ["100"], "元", [0]),
    # before a kind of money (闲钱, 零花钱, 私房钱), 块 is money, not a measure word
    ("我有5000块闲钱", ["5000块"], ["5000"], "元", [0]),
    ("手上有三万块闲钱", ["三万块"], ["30000"], "元", [0]),
    ("两千块私房钱", ["两千块"], ["2000"], "元", [0]),
    ("赔付3块5。", ["3块5"], ["3.5"], "元", [1]),
    ("赔付3块5毛", ["3块5毛"], ["3.5"], "元", [1]),
    ("单价3元5角", ["3元5角"], ["3.5"], "元", [1]),
    ("3块5一斤", ["3块5"], ["3.5"], "元", [1]),
    ("苹果3块5斤", ["3块"], ["3"], "元", [0]),  # three yuan for five jin
    ("3元5件起批", ["3元"], ["3"], "元", [0]),  # 元 takes a 角 only when it is said
    ("¥1.2万起", ["¥1.2万"], ["12000"], "元", [1]),
    ("CNY88.8", ["CNY88.8"], ["88.8"], "元", [1]),
    ("5千元以内", ["5千元"], ["5000"], "元", [0]),
    ("¥10.50，20.00元", ["¥10.50", "20.00元"], ["10.50", "20.00"], "元", [2, 2]),
    ("¥999.00和¥1,200.00", ["¥999.00", "¥1,200.00"], ["999.00", "1200.00"], "元", [2, 2]),
    ("$5.99", ["$5.99"], ["5.99"], "USD", [2]),
    ("US$1,000", ["US$1,000"], ["1000"], "USD", [0]),
    ("约100美元", ["100美元"], ["100"], "USD", [0]),
    ("100 USD", ["100 USD"], ["100"], "USD", [0]),
    # next to a link, not inside it: the URL stops at the full-width comma or the space
    ("链接https://x.example.com/pay，金额100元", ["100元"], ["100"], "元", [0]),
    ("详见https://x.example.com/fee ¥5", ["¥5"], ["5"], "元", [0]),
    ("邮箱pay@example.com，转账RMB100", ["RMB100"], ["100"], "元", [0]),
]


@pytest.mark.parametrize(("text", "texts", "values", "unit", "decimals"), POSITIVE)
def test_money_finds(
    text: str, texts: list[str], values: list[str], unit: str, decimals: list[int]
) -> None:
    items = MONEY.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == [Decimal(v) for v in values]
    assert all(isinstance(i.value, Decimal) for i in items)
    assert {i.unit for i in items} == {unit}
    assert [i.decimals for i in items] == decimals
    assert all(text[i.start : i.end] == i.text for i in items)


NEGATIVE = [
    "2024年5月1日",
    "好评率100%",
    "买了3个",
    "型号A100元",  # glued to an ASCII letter: a code, not an amount
    "壹佰2元",  # digits inside an upper-case amount
    "壹万贰仟叁佰肆拾伍元陆角",
    "一元二次方程",  # 元 in a word
    "二元论",
    "三块蛋糕",  # 块 as a measure word, in lower-case numerals too
    "我们一块去",
    "买了三个",  # a count: no currency
    "壹万元",  # upper-case: money_upper's (万 is no lower-case numeral alone)
    "壹万零贰元",
    "第三元",
    "几百块",  # no number said
    "3块蛋糕",  # 块 as a measure word
    "这个3块50",  # a spoken amount too loose to read
    "1万块5",
    "1.2万",  # no currency marker
    "100日元",
    "HK$100",
    "1,2345元",  # malformed grouping
    "¥100abc",
    "订单号2023051812345678",
    "版本1.2.3元",
    # inside a link or an e-mail address: part of the address, not an amount
    "https://x.example.com/pay?amount=100元",
    "付款链接https://pay.example.com/?p=$5",
    "www.shop.example.com/item/100元",
    "RMB100@bank.example.com",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_money_leaves_alone(text: str) -> None:
    assert MONEY.extract(text) == ()


def test_money_attrs() -> None:
    (item,) = MONEY.extract("¥12,345.6")
    assert item.attrs == {"symbol": "¥", "prefix": "¥", "suffix": None, "grouped": True}
    (item,) = MONEY.extract("1.2万元")
    assert item.attrs["symbol"] is None
    assert item.attrs["suffix"] == "万元"
    assert item.attrs["grouped"] is False
    (item,) = MONEY.extract("￥5")
    assert item.attrs["symbol"] == "￥"


CANONICAL = [
    ("¥12,345.6", "¥12,345.60"),
    ("100元", "100.00元"),
    ("1.2万元", "12000.00元"),
    ("¥99", "¥99.00"),
    ("￥99", "￥99.00"),
    ("¥1,234.567", "¥1,234.57"),
    ("¥0.125", "¥0.13"),  # half-up, not banker's rounding
    ("¥0.005", "¥0.01"),
    ("1,234.50 元", "1,234.50 元"),
    ("人民币100元", "人民币100.00元"),
    ("RMB 100", "RMB 100.00"),
    ("100块", "100.00元"),
    ("100块钱", "100.00元"),
    ("3块5", "3.50元"),
    ("3块5毛", "3.50元"),
    ("3元5角", "3.50元"),
    ("¥1.2万", "¥12000.00"),
    ("$5", "$5.00"),
    ("5美元", "5.00美元"),
]


@pytest.mark.parametrize(("written", "canonical"), CANONICAL)
def test_money_canonical(written: str, canonical: str) -> None:
    (item,) = MONEY.extract(written)
    assert MONEY.canonical(item) == canonical
    # The canonical form is itself money with the same value, two decimals, and is a fixpoint.
    (again,) = MONEY.extract(canonical)
    assert again.decimals == 2
    assert MONEY.canonical(again) == canonical


def test_money_canonical_of_foreign_item_is_none() -> None:
    (item,) = MoneyUpperExtractor().extract("壹元整")
    assert MONEY.canonical(item) is None


def test_money_and_upper_agree_on_the_spec_example() -> None:
    text = "¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）"
    (money,) = MONEY.extract(text)
    (upper,) = MoneyUpperExtractor().extract(text)
    assert money.text == "¥12,345.60"
    assert money.value == Decimal("12345.60")
    assert upper.value == Decimal("12345.6")
    assert money.value == upper.value


def test_money_and_upper_disagree_when_the_words_differ() -> None:
    text = "¥12,345.60（壹万贰仟元整）"
    (money,) = MONEY.extract(text)
    (upper,) = MoneyUpperExtractor().extract(text)
    assert upper.value == Decimal(12000)
    assert money.value != upper.value
