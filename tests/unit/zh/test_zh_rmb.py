"""``charter_zh.rmb`` writes every amount exactly as ``cn2an.an2cn(..., "rmb")`` does."""

from __future__ import annotations

import random
from decimal import Decimal

import cn2an
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter_zh.rmb import MAX_DIGITS, canonical_value, integer_upper, rmb_upper
from tests.support.hypo import examples


def cn2an_rmb(amount: Decimal) -> str:
    return str(cn2an.an2cn(f"{amount:.2f}", "rmb"))


@pytest.mark.parametrize(
    ("amount", "written"),
    [
        ("5000", "伍仟元整"),
        ("30000", "叁万元整"),
        ("12345.6", "壹万贰仟叁佰肆拾伍元陆角"),
        ("0.5", "伍角"),
        ("0.05", "伍分"),
        ("0", "零元整"),
        ("1005.05", "壹仟零伍元零伍分"),
        ("100000.10", "壹拾万元壹角"),
        ("10010", "壹万零壹拾元整"),
        ("100010001.01", "壹亿零壹万零壹元零壹分"),
        ("10001000", "壹仟万壹仟元整"),  # cn2an writes no 零 between 万 and 仟
        ("2000000000", "贰拾亿元整"),
        ("-5", "负伍元整"),
    ],
)
def test_written_like_a_cheque(amount: str, written: str) -> None:
    assert rmb_upper(Decimal(amount)) == written == cn2an_rmb(Decimal(amount))


def amounts() -> list[Decimal]:
    """Amounts with zeros in every place: runs of zeros are where the rules differ."""
    rng = random.Random(18)
    out = []
    for _ in range(20_000):
        digits = rng.randint(1, MAX_DIGITS)
        whole = "".join(rng.choice("0000123456789") for _ in range(digits))
        fen = rng.choice(["00", "05", "50", "55", "01", "10"])
        out.append(Decimal(f"{int(whole)}.{fen}"))
    return out


def test_the_same_as_cn2an_on_twenty_thousand_amounts() -> None:
    wrong = [(a, rmb_upper(a), cn2an_rmb(a)) for a in amounts() if rmb_upper(a) != cn2an_rmb(a)]
    assert wrong == []


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(min_value=0, max_value=10**MAX_DIGITS - 1))
def test_integers_the_same_as_cn2an(n: int) -> None:
    assert integer_upper(str(n)) == str(cn2an.an2cn(str(n), "up"))


def test_too_many_digits_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 16 digits"):
        integer_upper("1" + "0" * MAX_DIGITS)


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(min_value=0, max_value=10**MAX_DIGITS - 1))
def test_what_is_written_reads_back_as_cn2an_reads_it(n: int) -> None:
    written = integer_upper(str(n))
    assert canonical_value(written) == n == cn2an.cn2an(written, "strict")


@pytest.mark.parametrize(
    "run",
    [
        "壹壹",
        "拾",
        "壹佰拾",
        "壹仟零零壹",
        "壹万万",
        "零壹",
        "贰拾零",
        "伍角",
        "壹仟万零壹仟",
        "一百",
    ],
)
def test_anything_else_is_left_to_cn2an(run: str) -> None:
    assert canonical_value(run) is None
