"""The ``bank_card`` extractor. Numbers are synthetic: Luhn digits computed here."""

from __future__ import annotations

import pytest

from charter_zh.bank_card import BankCardExtractor

CARD = BankCardExtractor()


def luhn_sum(digits: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10


def with_luhn(body: str) -> str:
    """``body`` and the check digit that makes it pass Luhn."""
    return next(body + c for c in "0123456789" if luhn_sum(body + c) == 0)


def failing_luhn(body: str) -> str:
    return next(body + c for c in "0123456789" if luhn_sum(body + c) != 0)


def grouped(number: str, sep: str = " ") -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


UNIONPAY_19 = with_luhn("622202123456789012")
UNIONPAY_16 = with_luhn("622848001234567")
VISA = with_luhn("411111111111111")
MASTERCARD = with_luhn("555555555555444")
MASTERCARD_2 = with_luhn("222100000000000")
JCB = with_luhn("352800000000000")
UNIONPAY_17 = with_luhn("6217000000123456")
UNIONPAY_18 = with_luhn("62170000001234567")

# text, item texts, values
POSITIVE: list[tuple[str, list[str], list[str]]] = [
    (f"卡号{UNIONPAY_19}", [UNIONPAY_19], [UNIONPAY_19]),
    (f"卡号：{UNIONPAY_16}。", [UNIONPAY_16], [UNIONPAY_16]),
    (f"{VISA}", [VISA], [VISA]),
    (f"Visa {VISA} 到期", [VISA], [VISA]),
    (f"万事达{MASTERCARD}", [MASTERCARD], [MASTERCARD]),
    (f"新号段{MASTERCARD_2}", [MASTERCARD_2], [MASTERCARD_2]),
    (f"JCB卡 {JCB}", [JCB], [JCB]),
    (f"{UNIONPAY_17}", [UNIONPAY_17], [UNIONPAY_17]),
    (f"{UNIONPAY_18}", [UNIONPAY_18], [UNIONPAY_18]),
    (f"尾号见{grouped(UNIONPAY_19)}", [grouped(UNIONPAY_19)], [UNIONPAY_19]),
    (f"{grouped(VISA)}", [grouped(VISA)], [VISA]),
    (f"卡号{grouped(UNIONPAY_16, '-')}", [grouped(UNIONPAY_16, "-")], [UNIONPAY_16]),
    (f"{grouped(UNIONPAY_17)}", [grouped(UNIONPAY_17)], [UNIONPAY_17]),
    (
        f"主卡{VISA}，副卡{UNIONPAY_19}",
        [VISA, UNIONPAY_19],
        [VISA, UNIONPAY_19],
    ),
    (f"（{MASTERCARD}）", [MASTERCARD], [MASTERCARD]),
    (f"见https://a.example.com/pay {VISA}", [VISA], [VISA]),
    (f"{UNIONPAY_19}\n", [UNIONPAY_19], [UNIONPAY_19]),
]


@pytest.mark.parametrize(("text", "texts", "values"), POSITIVE)
def test_bank_card_finds(text: str, texts: list[str], values: list[str]) -> None:
    items = CARD.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values
    assert [i.attrs["grouped"] for i in items] == [not t.isdigit() for t in texts]
    assert all(text[i.start : i.end] == i.text for i in items)
    assert all(CARD.canonical(i) is None for i in items)


_ID = "11010519491231002X"

NEGATIVE = [
    failing_luhn("622202123456789012"),  # the check digit is wrong
    f"订单号{failing_luhn('622848001234567')}",
    "订单号2023051812345678",  # passes Luhn, but starts with a date: no card network's prefix
    with_luhn("955880000000000"),  # prefix 9: no card network
    with_luhn("123456789012345"),  # prefix 1
    with_luhn("202405180000000"),  # prefix 20: below Mastercard's 2221
    with_luhn("27210000000000"),  # 15 digits
    with_luhn("62220212345678901234"),  # 21 digits
    f"{VISA}0",  # a longer digit run
    f"9{UNIONPAY_16}",
    f"NO{VISA}",  # glued to ASCII letters
    f"{VISA}X",
    f"{VISA}-12",  # followed by - and digits: a code
    f"{grouped(VISA)} 1234",  # the groups go on
    f"{VISA[:4]} {VISA[4:8]}-{VISA[8:12]} {VISA[12:]}",  # mixed separators
    f"{VISA[:6]} {VISA[6:]}",  # groups of other sizes
    with_luhn("6222021234"),  # 11 digits: too short
    f"https://pay.example.com/card/{VISA}",  # inside a URL
    f"{VISA}@example.com",  # inside an e-mail address
    "手机13812345678",
    "2024-05-01 12:30",
    _ID,
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_bank_card_leaves_alone(text: str) -> None:
    assert CARD.extract(text) == ()


def test_an_id_number_passing_luhn_is_no_card() -> None:
    """An 18-digit resident ID number whose digits happen to pass Luhn stays an ID number."""
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    for seq in range(1000):
        body = f"33010619900101{seq:03d}"
        check = "10X98765432"[sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11]
        number = body + check
        if check != "X" and luhn_sum(number) == 0:
            break
    else:  # pragma: no cover
        pytest.fail("no ID number passing Luhn in the range")
    assert CARD.extract(f"号码{number}") == ()
    # 18 digits whose "birth date" is month 13 are no ID number: a card, when they pass Luhn
    not_an_id = with_luhn(number[:10] + "1399" + number[14:17])
    assert [i.value for i in CARD.extract(not_an_id)] == [not_an_id]
