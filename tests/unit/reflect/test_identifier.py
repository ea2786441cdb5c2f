"""The built-in ``identifier`` extractor: ASCII codes, not amounts, dates or quantities."""

from __future__ import annotations

import pytest

from charter.compile.literals import fold_width
from charter.contracts.rules import Extractor
from charter.reflect.identifier import IdentifierExtractor

EXTRACTOR = IdentifierExtractor()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("订单DD202405010001已发货", [("DD202405010001", "DD202405010001", 2)]),
        ("优惠码SAVE20，尾号1234的卡", [("SAVE20", "SAVE20", 3), ("1234", "1234", 12)]),
        ("统一社会信用代码91110108MA01ABCD2X", [("91110108MA01ABCD2X", "91110108MA01ABCD2X", 8)]),
        ("工单A-1023已受理", [("A-1023", "A-1023", 2)]),
        ("尾号１２３４", [("１２３４", "1234", 2)]),
        ("编号ＤＤ２０２４－７", [("ＤＤ２０２４－７", "DD2024-7", 2)]),
        ("热线400-820-8820", [("400-820-8820", "400-820-8820", 2)]),
        ("代码x-1234-结尾", [("x-1234", "x-1234", 2)]),
        # amounts, percents, dates, quantities and words are not codes
        ("2024-05-01", []),
        ("2024-05", []),
        ("05-01", []),
        ("2024年", []),
        ("1000元", []),
        ("5000 块", []),
        ("共2500人", []),
        ("2024款新品", []),
        ("1200%", []),
        ("¥12345", []),
        ("$ 1000", []),
        ("RMB1000", []),
        ("12345.60", []),
        ("12,3456", []),
        ("10:30-11:30", []),
        ("2024/05/01", []),
        ("VIP Wi-Fi 5G", []),
        ("A1B", []),
        ("1.5.0-1.5.0-1.5.0", []),
        ("ID13812345678", [("ID13812345678", "ID13812345678", 0)]),
        ("x1234y", [("x1234y", "x1234y", 0)]),
    ],
)
def test_extract(text: str, found: list[tuple[str, str, int]]) -> None:
    assert [(i.text, i.value, i.start) for i in EXTRACTOR.extract(text)] == found


def test_shape() -> None:
    assert isinstance(EXTRACTOR, Extractor)
    assert (EXTRACTOR.name, EXTRACTOR.value_kind, EXTRACTOR.has_units) == (
        "identifier",
        "text",
        False,
    )
    assert EXTRACTOR.extract("") == ()
    (item,) = EXTRACTOR.extract("尾号１２３４")
    assert EXTRACTOR.canonical(item) == "1234"


def test_fold_width_keeps_positions() -> None:
    assert fold_width("ＡＢ１２－３．５，。％") == "AB12-3.5，。%"
    text = "没有全角字符"
    assert fold_width(text) is text
