"""The finance reference skills called directly: the demo corpus and accounts, the filters,
the summaries (which must never claim results they do not hold) and the amount in capitals."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from charter.contracts.skills import SkillContext
from charter.skills.guard import SUCCESS_CLAIM
from charter_skills._data import money, upper
from charter_skills.finance import MAX_RESULTS, AccountBalance, PolicySearch, policies
from charter_zh.formatters import MoneyUpper


def titles(result: dict[str, Any]) -> list[str]:
    return [r["title"] for r in result["results"]]


def test_the_corpus_covers_2020_to_2023_and_three_sources() -> None:
    corpus = policies()
    assert len(corpus) == 30
    assert {p.year for p in corpus} == {2020, 2021, 2022, 2023}
    assert {p.source for p in corpus} == {"national", "province_A", "province_B"}
    assert max(len(p.summary) for p in corpus) <= 200
    assert len({p.id for p in corpus}) == 30


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"keyword": "新能源", "year_range": [2021, 2023]},
            ["省份A新能源汽车下乡消费补贴实施方案", "关于延续新能源汽车免征车辆购置税政策的公告"],
        ),
        (
            {"keyword": "新能源", "year_range": [2020, 2020]},
            ["关于完善新能源汽车推广应用财政补贴政策的通知"],
        ),
        ({"keyword": "稳岗补贴", "region": "province_B"}, ["省份B一次性留工培训补助发放办法"]),
        (
            {"keyword": "稳岗补贴", "scope": "national"},
            [
                "关于继续实施失业保险稳岗返还政策的通知",
                "关于做好失业保险稳岗位提技能防失业工作的通知",
            ],
        ),
        (
            {"keyword": "扣除 子女教育"},
            ["关于提高个人所得税有关专项附加扣除标准的通知", "个人所得税专项附加扣除操作办法"],
        ),
        ({"keyword": "量子计算"}, []),
    ],
)
def test_policy_search_filters(args: dict[str, Any], expected: list[str]) -> None:
    assert titles(PolicySearch()(args)) == expected


def test_policy_search_keeps_the_newest_five_and_says_how_many_there_were() -> None:
    result = PolicySearch()({"keyword": "补贴"})
    assert len(result["results"]) == MAX_RESULTS == 5
    assert result["total"] == 11
    dates = [r["effective_date"] for r in result["results"]]
    assert dates == sorted(dates, reverse=True)
    assert (
        result["summary"]
        == "在2020-2023年国家及各省的政策中共检索到11份与“补贴”相关的文件，以下是最新的5份。"
    )


def test_an_empty_search_does_not_claim_success() -> None:
    result = PolicySearch()({"keyword": "量子计算", "region": "province_A"})
    assert result["results"] == []
    assert result["summary"] == (
        "在2020-2023年省份A的政策中未检索到与“量子计算”相关的文件，可以换个关键词或调整年份范围后再试。"
    )
    assert SUCCESS_CLAIM.search(result["summary"]) is None


@pytest.mark.parametrize(
    ("tail", "summary"),
    [
        (
            "1234",
            "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。",
        ),
        ("5678", "尾号5678的定期存款账户余额为¥200,000.00（贰拾万元整），数据截至2024-05-01。"),
        ("0021", "尾号0021的活期储蓄账户余额为¥0.50（伍角），数据截至2024-05-01。"),
        (
            "9009",
            "尾号9009的信用卡账户余额为-¥3,560.25（负叁仟伍佰陆拾元贰角伍分），数据截至2024-05-01。",
        ),
        (  # the card of transfer's daily-limit case
            "3377",
            "尾号3377的活期储蓄账户余额为¥150,000.00（壹拾伍万元整），数据截至2024-05-01。",
        ),
        ("0000", "没有查到卡号后四位为0000的账户，请核对后重新输入。"),
    ],
)
def test_account_balance(tail: str, summary: str) -> None:
    result = AccountBalance()({"account_tail": tail})
    assert result["summary"] == summary
    assert len(result["results"]) == (0 if tail == "0000" else 1)


def test_account_balance_result_fields() -> None:
    assert AccountBalance()({"account_tail": "1234"})["results"] == [
        {
            "account_tail": "1234",
            "account_type": "活期储蓄",
            "balance": "12345.60",
            "balance_upper": "壹万贰仟叁佰肆拾伍元陆角",
            "currency": "CNY",
            "as_of": "2024-05-01",
        }
    ]


@pytest.mark.parametrize(
    ("clock_set", "day"),
    [(False, "2024-05-01"), (True, "2027-03-02")],  # the wall clock keeps the data's as_of
)
def test_the_balance_is_as_of_the_turns_day_when_the_clock_was_set(
    clock_set: bool, day: str
) -> None:
    told = SkillContext(datetime(2027, 3, 2, 9, 0, tzinfo=timezone(timedelta(hours=8))), clock_set)
    result = AccountBalance()({"account_tail": "0021"}, context=told)
    assert result["summary"] == f"尾号0021的活期储蓄账户余额为¥0.50（伍角），数据截至{day}。"
    assert result["results"][0]["as_of"] == day


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        ("0", "零元整"),
        ("0.05", "伍分"),
        ("0.50", "伍角"),
        ("10.50", "壹拾元伍角"),
        ("100", "壹佰元整"),
        ("1005", "壹仟零伍元整"),
        ("1010.01", "壹仟零壹拾元零壹分"),
        ("12345.60", "壹万贰仟叁佰肆拾伍元陆角"),
        ("110000", "壹拾壹万元整"),
        ("200000.00", "贰拾万元整"),
        ("10005000", "壹仟万伍仟元整"),
        ("100000005.07", "壹亿零伍元零柒分"),
        ("-3560.25", "负叁仟伍佰陆拾元贰角伍分"),
    ],
)
def test_upper_case_amounts(amount: str, words: str) -> None:
    assert upper(money(amount)) == words
    assert upper(money(amount)) == MoneyUpper().format(amount)  # charter-zh's form


@pytest.mark.parametrize(
    ("value", "cents"), [(19.9, "19.90"), ("0.125", "0.13"), (3, "3.00"), (Decimal("2.5"), "2.50")]
)
def test_money_rounds_to_the_cent(value: Any, cents: str) -> None:
    assert str(money(value)) == cents


def test_a_missing_keyword_raises() -> None:
    with pytest.raises(KeyError):
        PolicySearch()({})
