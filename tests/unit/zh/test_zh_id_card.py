"""The ``id_card`` extractor. Numbers are synthetic: check characters computed here, no one's."""

from __future__ import annotations

from datetime import date

import pytest

from charter_zh.id_card import IdCardExtractor

ID = IdCardExtractor()

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def with_check(body: str) -> str:
    """The 17 digits of ``body`` and their ISO 7064 MOD 11-2 check character."""
    assert len(body) == 17 and body.isdigit()
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, _WEIGHTS, strict=True)) % 11]


def wrong_check(body: str) -> str:
    """``body`` with a check character that is not its own."""
    right = with_check(body)[-1]
    return body + ("0" if right != "0" else "1")


BEIJING = with_check("11010519491231002")  # the example of GB 11643: ends in X
HANGZHOU = with_check("33010619900101124")
SHENZHEN = with_check("44030519851015456")
LEAP_DAY = with_check("51010720000229789")
URUMQI = with_check("65010219761203001")
HONG_KONG = with_check("81000019990707123")
EARLIEST = with_check("32010619000101001")
LATEST = with_check("32010620991231001")

# text, item texts, values, birth dates
POSITIVE: list[tuple[str, list[str], list[str], list[date]]] = [
    (f"身份证号{BEIJING}", [BEIJING], [BEIJING], [date(1949, 12, 31)]),
    (
        f"身份证号{BEIJING.lower()}。",
        [BEIJING.lower()],
        [BEIJING],
        [date(1949, 12, 31)],
    ),  # lower-case x, value upper-cased
    (f"{HANGZHOU}", [HANGZHOU], [HANGZHOU], [date(1990, 1, 1)]),
    (f"证件：{SHENZHEN}，请核对", [SHENZHEN], [SHENZHEN], [date(1985, 10, 15)]),
    (f"（{LEAP_DAY}）", [LEAP_DAY], [LEAP_DAY], [date(2000, 2, 29)]),
    (f"ID: {URUMQI}", [URUMQI], [URUMQI], [date(1976, 12, 3)]),
    (f"香港居民{HONG_KONG}", [HONG_KONG], [HONG_KONG], [date(1999, 7, 7)]),
    (f"出生于1900年：{EARLIEST}", [EARLIEST], [EARLIEST], [date(1900, 1, 1)]),
    (f"{LATEST}号码", [LATEST], [LATEST], [date(2099, 12, 31)]),
    (
        f"{HANGZHOU[:6]} {HANGZHOU[6:14]} {HANGZHOU[14:]}",
        [f"{HANGZHOU[:6]} {HANGZHOU[6:14]} {HANGZHOU[14:]}"],
        [HANGZHOU],
        [date(1990, 1, 1)],
    ),  # written in 6-8-4 groups
    (
        f"甲{BEIJING}，乙{SHENZHEN}",
        [BEIJING, SHENZHEN],
        [BEIJING, SHENZHEN],
        [date(1949, 12, 31), date(1985, 10, 15)],
    ),
    (f"😀{SHENZHEN}😀", [SHENZHEN], [SHENZHEN], [date(1985, 10, 15)]),
    (f"见https://a.example.com/x {URUMQI}", [URUMQI], [URUMQI], [date(1976, 12, 3)]),
    (f"a@example.com，{LEAP_DAY}", [LEAP_DAY], [LEAP_DAY], [date(2000, 2, 29)]),
    (f"号码 {HANGZHOU}\n", [HANGZHOU], [HANGZHOU], [date(1990, 1, 1)]),
    (f"“{BEIJING}”", [BEIJING], [BEIJING], [date(1949, 12, 31)]),
]


@pytest.mark.parametrize(("text", "texts", "values", "born"), POSITIVE)
def test_id_card_finds(text: str, texts: list[str], values: list[str], born: list[date]) -> None:
    items = ID.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values
    assert [i.attrs["birth_date"] for i in items] == born
    assert [i.attrs["region"] for i in items] == [v[:6] for v in values]
    assert all(text[i.start : i.end] == i.text for i in items)
    assert all(ID.canonical(i) is None for i in items)


NEGATIVE = [
    HANGZHOU[:17],  # 17 digits
    f"证件号{HANGZHOU[:17]}。",
    f"{HANGZHOU}7",  # 19 characters: glued to one more digit
    wrong_check("33010619900101124"),
    wrong_check("11010519491231002"),
    with_check("33010619900230124"),  # 30 February
    with_check("33010619901301124"),  # month 13
    with_check("99010619900101124"),  # no province 99
    with_check("33010618991231124"),  # born 1899
    f"ID{HANGZHOU}",  # glued to ASCII letters
    f"{HANGZHOU}abc",
    f"订单号2024051{HANGZHOU}88",  # inside a longer digit run
    f"{HANGZHOU}-01",  # followed by - and digits: a code
    f"https://example.com/u/{HANGZHOU}",  # inside a URL
    f"{HANGZHOU}@example.com",  # the local part of an e-mail address
    "330106900101124",  # an old 15-digit number: no check character
    "３３０１０６１９９００１０１１２４８",  # full-width digits
    f"{HANGZHOU[:6]}  {HANGZHOU[6:14]} {HANGZHOU[14:]}",  # two spaces: not the 6-8-4 form
    f"{HANGZHOU[:6]}-{HANGZHOU[6:14]}-{HANGZHOU[14:]}",  # hyphens: not a form of the card
    "手机13812345678，订单2023051812345678",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_id_card_leaves_alone(text: str) -> None:
    assert ID.extract(text) == ()
