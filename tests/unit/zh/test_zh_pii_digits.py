"""``charter_zh.pii_digits``: runs of grouped digits, what each is by its checks, and the
letters glued before one."""

from __future__ import annotations

import pytest

from charter_zh.pii_digits import glued_to_label, grouped_kind, stretches


@pytest.mark.parametrize(
    ("written", "kind"),
    [
        ("138/1234/5678", "phone"),
        ("138_1234_5678", "phone"),
        ("138，1234，5678", "phone"),
        ("138 / 1234 / 5678", "phone"),
        ("1 3 8 1 2 3 4 5 6 7 8", "phone"),  # digit by digit
        ("+86 138 1234 5678", "phone"),
        ("110105/19491231/002X", "id_card"),
        ("1101 0519 4912 3100 2X", "id_card"),  # the check character in the last group
        ("6222_0268_1539_8387", "bank_card"),
        ("6217 0000 0012 3456 6", None),  # 17 digits in fours, failing Luhn
        ("1.3.8.1234.5678", None),  # one digit between points: a version
        ("139.196.12.100", None),  # an IP address
        ("18.913.440.208", "phone"),  # 913 and 440: no IP address
        ("2026/12/07", None),
        ("13812345678/13912345678", None),  # two numbers: cut by ``stretches``
    ],
)
def test_grouped_kind(written: str, kind: str | None) -> None:
    assert grouped_kind(written) == kind


@pytest.mark.parametrize(
    ("text", "glued"),
    [
        ("ID1", True),
        ("tel1", True),
        ("cardNo1", True),
        ("VX1", True),
        ("v1", True),
        ("SO1", False),
        ("SKU1", False),
        ("手机1", None),
        ("No.1", None),
    ],
)
def test_glued_to_label(text: str, glued: bool | None) -> None:
    assert glued_to_label(text, len(text) - 1) is glued


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("我要2，138/1234/5678", [("2，138/1234/5678", None), ("138/1234/5678", "phone")]),
        (
            "13812345678、186/1234/5678",
            [
                ("13812345678、186/1234/5678", None),
                ("13812345678", "phone"),
                ("186/1234/5678", "phone"),
            ],
        ),
        ("编号13812345678-02", [("13812345678-02", None)]),  # no list: a code with a suffix
        ("SO2026051200012345", []),
        ("tel13812345678", [("13812345678", "phone")]),
    ],
)
def test_stretches(text: str, found: list[tuple[str, str | None]]) -> None:
    assert [(s.written, s.kind) for s in stretches(text)] == found
