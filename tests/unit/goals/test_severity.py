"""The degree an input gives its complaint (charter.goals.severity): mild words keep the
examples from opening a safety intent alone; severe ones keep their recall-first slack."""

from __future__ import annotations

import pytest

from charter.goals.severity import mild, severe


@pytest.mark.parametrize(
    ("text", "is_mild", "is_severe"),
    [
        ("宝宝有点发热，要紧吗", True, False),
        ("手指划了个小口子，流了点血", True, False),
        ("脚扭了，肿了一点", True, False),
        ("嗓子稍微有些疼", True, False),
        ("不太严重，就是痒", True, False),
        ("头痛得像要炸开，从来没这么痛过", False, True),
        ("突然说不出话", False, True),
        ("肚子疼得受不了", False, True),
        ("越来越疼了", False, True),
        ("孩子吞了一颗纽扣电池", False, False),
        ("有些人说吃这个药会过敏", False, False),  # 有些人: no degree
        ("约下午一点", False, False),  # 一点 of the clock
        ("ｓｏｍｅ有点ｄｉｚｚｙ", True, False),  # full-width folded
    ],
)
def test_the_degree_of_a_complaint(text: str, is_mild: bool, is_severe: bool) -> None:
    assert (mild(text), severe(text)) == (is_mild, is_severe)
