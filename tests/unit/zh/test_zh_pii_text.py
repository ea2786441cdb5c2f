"""``charter_zh.pii_text``: the text the PII recognizers scan, and its spans mapped back."""

from __future__ import annotations

import pytest

from charter_zh.pii_text import view


@pytest.mark.parametrize(
    ("text", "scanned"),
    [
        ("手机１３８１２３４５６７８", "手机13812345678"),
        ("手机138\u200b1234\u200c5678", "手机13812345678"),
        ("电话138\u00ad1234\u2060\ufeff5678", "电话13812345678"),
        ("幺三八一二三四五六七八", "13812345678"),
        ("一三八 一二三四 五六七八", "138 1234 5678"),
        ("幺八 六两三 四五六 七八九", "18 623 456 789"),
        ("一一〇一〇五一九四九一二三一零零二X", "11010519491231002X"),
        ("１３８一二三四５６７８", "13812345678"),
        ("一五一十地说了", "一五一十地说了"),  # a unit: an idiom
        ("花了一万三千八百块", "花了一万三千八百块"),
        ("三三两两", "3322"),  # digits, read as such, and no number a recognizer takes
        ("前三位一三八", "前三位138"),  # 三 alone stays a word
        ("两三个人", "两三个人"),
        ("一点五八", "一点五八"),
        ("手机\uff0f\uff3f", "手机/_"),
    ],
)
def test_scanned(text: str, scanned: str) -> None:
    assert view(text).text == scanned


@pytest.mark.parametrize(
    ("text", "span", "original"),
    [
        ("手机138\u200b1234\u200b5678", (2, 13), "138\u200b1234\u200b5678"),
        ("\u200b\u200b138", (0, 3), "138"),
        ("⑴138\u200b1", (3, 7), "138\u200b1"),  # ⑴ is three characters in NFKC
        ("幺三八", (0, 3), "幺三八"),
    ],
)
def test_spans_map_back_to_the_text_given(text: str, span: tuple[int, int], original: str) -> None:
    start, end = view(text).original(*span)
    assert text[start:end] == original
