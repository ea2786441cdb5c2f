"""The literal table: boundaries per side, numbers read whole, full-width folded."""

from __future__ import annotations

import pytest

from charter.compile.literals import LiteralTable, fold_width

TABLE = LiteralTable(["100%", "100％", "VIP", "绝对", "100"])


def found(text: str) -> list[tuple[str, str]]:
    hits = TABLE.scan(text)
    return sorted((TABLE.literals[i], text[s:e]) for i, spans in hits.items() for s, e in spans)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("保您100%满意", [("100", "100"), ("100%", "100%"), ("100％", "100%")]),
        ("保您１００％满意", [("100", "１００"), ("100%", "１００％"), ("100％", "１００％")]),
        ("涨幅1,100%", []),
        ("涨幅1100%", []),
        ("年化0.100%", []),
        ("回撤-100%", []),
        ("回撤－１００％", []),
        ("1-100%之间", [("100", "100"), ("100%", "100%"), ("100％", "100%")]),
        ("共100.5元", []),
        ("共1,000元", []),
        ("共100，5元", [("100", "100")]),  # the Chinese comma separates, it is no digit group
        ("您是ＶＩＰ会员", [("VIP", "ＶＩＰ")]),
        ("VIPS", []),
        ("绝对安全", [("绝对", "绝对")]),
    ],
)
def test_scan(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


def test_the_fold_keeps_positions_and_leaves_chinese_punctuation() -> None:
    assert fold_width("ＡＢ１２－３．５，。％") == "AB12-3.5，。%"
    text = "没有全角字符"
    assert fold_width(text) is text


def test_a_pickled_table_scans_the_same() -> None:
    import pickle

    again = pickle.loads(pickle.dumps(TABLE))
    assert again.scan("保您１００％满意") == TABLE.scan("保您１００％满意")
