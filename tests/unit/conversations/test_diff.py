"""The character-level diff of an expected and a got reply: Chinese character by character,
a run of Latin letters and digits as one unit, one line, far context elided."""

from __future__ import annotations

import pytest

from charter.text.diff import char_diff, units

BALANCE = "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。"


@pytest.mark.parametrize(
    ("want", "got", "shown"),
    [
        ("好的", "好的", ""),
        ("好的", "好的。", "好的{+。+}"),
        ("好的。", "好的", "好的[-。-]"),
        ("张三转账5000元", "李四转账3000元", "[-张三-]{+李四+}转账[-5000-]{+3000+}元"),
        # a lone unchanged character between two changes goes into them
        ("您的卡余额", "你的账余额", "[-您的卡-]{+你的账+}余额"),
        # an amount is one unit, not digits shuffled around; far context is elided
        (
            BALANCE,
            BALANCE.replace("12,345.60", "99,999.00"),
            "…储蓄账户余额为¥[-12,345.60-]{+99,999.00+}（壹万贰仟叁佰肆…",
        ),
        (
            "您好，请问有什么可以帮您？",
            "您好，请问有什么可以帮助您？",
            "…请问有什么可以帮{+助+}您？",
        ),
        ("a\nb", "a\nc", "a\\n[-b-]{+c+}"),
        ("", "新", "{+新+}"),
        ("旧", "", "[-旧-]"),
        # unchanged text between two changes longer than twice the context is elided inside
        (
            "甲一二三四五六七八九十壹贰叁肆伍陆柒捌玖拾乙",
            "丙一二三四五六七八九十壹贰叁肆伍陆柒捌玖拾丁",
            "[-甲-]{+丙+}一二三四五六七八…叁肆伍陆柒捌玖拾[-乙-]{+丁+}",
        ),
    ],
)
def test_char_diff(want: str, got: str, shown: str) -> None:
    assert char_diff(want, got) == shown


def test_units() -> None:
    assert units("订单DD202405010001于2024-05-01发货，共¥1,299.00") == [
        "订",
        "单",
        "DD202405010001",
        "于",
        "2024-05-01",
        "发",
        "货",
        "，",
        "共",
        "¥",
        "1,299.00",
    ]
    assert units("ＡＢ１２号") == ["ＡＢ１２", "号"]
