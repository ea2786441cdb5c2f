"""``charter_zh.pii_split``: a number told in pieces across a sentence."""

from __future__ import annotations

import pytest

from charter_zh.pii_split import count, splits


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("手机前三位138，后八位12345678", [("138，后八位12345678", "13812345678", "phone")]),
        ("手机前3位138 后8位12345678", [("138 后8位12345678", "13812345678", "phone")]),
        (
            "手机号前七位是1381234，后四位是5678",
            [("1381234，后四位是5678", "13812345678", "phone")],
        ),
        ("手机前三位120，后八位12345678", [("120，后八位12345678", "12012345678", "phone")]),
        (
            "卡号前六位622202，后面是6815398387",
            [("622202，后面是6815398387", "6222026815398387", "bank_card")],
        ),
        (
            "身份证前六位110105，中间八位19491231，后四位002x",
            [("110105，中间八位19491231，后四位002x", "11010519491231002X", "id_card")],
        ),
        ("前三位138，后八位12345678", [("138，后八位12345678", "13812345678", "phone")]),
        ("手机前三位138，后八位1234567", []),  # 后八位 and seven digits
        ("手机前三位138，后四位5678", []),  # seven digits is no mobile
        ("订单号前八位20260512，后八位00012345", []),
        ("验证码前三位123，后三位456", []),
        ("手机前三位138。后八位12345678", []),  # the sentence ended
    ],
)
def test_splits(text: str, found: list[tuple[str, str, str]]) -> None:
    assert [(text[s.start : s.end], s.digits, s.kind) for s in splits(text)] == found


@pytest.mark.parametrize(
    ("said", "n"),
    [
        ("3", 3),
        ("三", 3),
        ("两", 2),
        ("十", 10),
        ("十一", 11),
        ("十八", 18),
        ("二十", 20),
        ("百", None),
    ],
)
def test_count(said: str, n: int | None) -> None:
    assert count(said) == n
