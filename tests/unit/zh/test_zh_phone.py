"""The ``phone`` extractor."""

from __future__ import annotations

import pytest

from charter_zh.phone import PhoneExtractor

PHONE = PhoneExtractor()

POSITIVE = [
    ("手机13812345678", ["13812345678"], ["+8613812345678"]),
    ("138-1234-5678", ["138-1234-5678"], ["+8613812345678"]),
    ("+86 138 1234 5678", ["+86 138 1234 5678"], ["+8613812345678"]),
    ("电话：010-12345678", ["010-12345678"], ["+861012345678"]),
    ("(0755)12345678", ["(0755)12345678"], ["+8675512345678"]),
    ("（0755）12345678", ["（0755）12345678"], ["+8675512345678"]),
    ("客服热线400-123-4567", ["400-123-4567"], ["+864001234567"]),
    ("电话 010 1234 5678 转", ["010 1234 5678"], ["+861012345678"]),
    ("+8613812345678", ["+8613812345678"], ["+8613812345678"]),
    ("😀😀13812345678", ["13812345678"], ["+8613812345678"]),  # astral chars before it
    (
        "手机:13812345678/13912345678",
        ["13812345678", "13912345678"],
        ["+8613812345678", "+8613912345678"],
    ),
    ("邮箱a@example.com，电话13812345678", ["13812345678"], ["+8613812345678"]),
    ("https://x.example.com/help 13812345678", ["13812345678"], ["+8613812345678"]),
]


@pytest.mark.parametrize(("text", "texts", "values"), POSITIVE)
def test_phone_finds(text: str, texts: list[str], values: list[str]) -> None:
    items = PHONE.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values
    assert all(text[i.start : i.end] == i.text for i in items)
    assert all(PHONE.canonical(i) is None for i in items)


NEGATIVE = [
    "订单号2023051812345678",
    "ID13812345678",
    "13812345678X",
    "2024-05-01",
    "20240501",
    "2024/05/01",
    "95588",
    "12345",
    "1381234567",  # ten digits
    "我们在 2 个工作日内 100 200 300",
    "金额¥1,234.50",
    "13812345678@example.com",  # the local part of an e-mail address
    "https://x.example.com/call/13812345678",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_phone_leaves_alone(text: str) -> None:
    assert PHONE.extract(text) == ()
