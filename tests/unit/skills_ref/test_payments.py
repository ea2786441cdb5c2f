"""The finance executing skill ``transfer`` called directly on fresh instances: every field of a
transfer that goes through (its number included), every refusal with its code and exact words,
the numbering (per instance, per day, thread-safe, refusals take none), the demo data the
rules come from, and "today" as the turn's day when its clock was set."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from stdnum import luhn

from charter.contracts.skills import SkillContext
from charter_skills._data import load, money
from charter_skills.payments import Transfer, TransferRules
from charter_zh.formatters import Amount, MoneyUpper

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "domains" / "finance" / "skills" / "transfer.yaml"


def done(**fields: Any) -> dict[str, Any]:
    base = {
        "status": "done",
        "transfer_no": "TR-20240501-0001",
        "payee": "张三",
        "card_tail": "1234",
        "date": "2024-05-01",
        "scheduled": False,
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("args", "result"),
    [
        (
            {"payee": "张三", "amount": 5000},
            done(
                amount="5000.00",
                amount_upper="伍仟元整",
                balance_after="7345.60",
                summary="已向张三转账¥5,000.00（伍仟元整），付款卡尾号1234，"
                "交易流水号TR-20240501-0001。",
            ),
        ),
        (
            {"payee": "李四", "amount": 50000, "card_tail": "5678"},
            done(
                payee="李四",
                amount="50000.00",
                amount_upper="伍万元整",
                card_tail="5678",
                balance_after="150000.00",
                summary="已向李四转账¥50,000.00（伍万元整），付款卡尾号5678，"
                "交易流水号TR-20240501-0001。",
            ),
        ),
        (
            {"payee": "李四", "amount": 2000, "date": "2024-05-02"},
            done(
                payee="李四",
                amount="2000.00",
                amount_upper="贰仟元整",
                balance_after="10345.60",
                date="2024-05-02",
                scheduled=True,
                summary="已预约于2024-05-02向李四转账¥2,000.00（贰仟元整），付款卡尾号1234，"
                "交易流水号TR-20240501-0001，届时自动转出，请在当天保持卡内余额充足。",
            ),
        ),
        (
            {"payee": "孙七", "amount": 800, "payee_card": "6217000034567897"},
            done(
                payee="孙七",
                payee_card_tail="7897",
                amount="800.00",
                amount_upper="捌佰元整",
                balance_after="11545.60",
                summary="已向孙七（收款卡尾号7897）转账¥800.00（捌佰元整），付款卡尾号1234，"
                "交易流水号TR-20240501-0001。",
            ),
        ),
        (  # the whole balance, to the cent; a float goes through its shortest repr
            {"payee": "王五", "amount": 12345.6, "date": "2024-05-01"},
            done(
                payee="王五",
                amount="12345.60",
                amount_upper="壹万贰仟叁佰肆拾伍元陆角",
                balance_after="0.00",
                summary="已向王五转账¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），付款卡尾号1234，"
                "交易流水号TR-20240501-0001。",
            ),
        ),
        (  # exactly what is left of the daily limit
            {"payee": "赵六", "amount": 20000, "card_tail": "3377"},
            done(
                payee="赵六",
                amount="20000.00",
                amount_upper="贰万元整",
                card_tail="3377",
                balance_after="130000.00",
                summary="已向赵六转账¥20,000.00（贰万元整），付款卡尾号3377，"
                "交易流水号TR-20240501-0001。",
            ),
        ),
        (  # a saved payee's new card is the one paid to, and is named by its last digits
            {"payee": "张三", "amount": 0.01, "payee_card": "6228480412345677"},
            done(
                payee_card_tail="5677",
                amount="0.01",
                amount_upper="壹分",
                balance_after="12345.59",
                summary="已向张三（收款卡尾号5677）转账¥0.01（壹分），付款卡尾号1234，"
                "交易流水号TR-20240501-0001。",
            ),
        ),
    ],
)
def test_a_transfer_that_goes_through(args: dict[str, Any], result: dict[str, Any]) -> None:
    assert Transfer()(args) == result


REFUSALS = [
    (
        {"payee": "张三", "amount": 100, "card_tail": "0021"},
        "insufficient_balance",
        "尾号0021的卡余额不足，可用余额¥0.50（伍角）",
    ),
    (
        {"payee": "张三", "amount": 12345.61},
        "insufficient_balance",
        "尾号1234的卡余额不足，可用余额¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）",
    ),
    (
        {"payee": "张三", "amount": 100, "card_tail": "9009"},
        "insufficient_balance",
        "尾号9009的卡余额不足，可用余额¥0.00（零元整）",
    ),
    (
        {"payee": "张三", "amount": 30000, "card_tail": "3377"},
        "daily_limit",
        "超出尾号3377的卡单日转账限额¥100,000.00（壹拾万元整），今日剩余额度¥20,000.00（贰万元整）",
    ),
    (
        {"payee": "张三", "amount": 20000.01, "card_tail": "3377"},
        "daily_limit",
        "超出尾号3377的卡单日转账限额¥100,000.00（壹拾万元整），今日剩余额度¥20,000.00（贰万元整）",
    ),
    (
        {"payee": "张三", "amount": 60000, "card_tail": "5678"},
        "single_limit",
        "单笔转账金额不能超过¥50,000.00（伍万元整），大额转账请到银行柜台办理",
    ),
    (
        {"payee": "孙七", "amount": 800},
        "unknown_payee",
        "孙七不在您的常用收款人中，请提供收款人的银行卡号",
    ),
    (
        {"payee": "钱多多", "amount": 1000},
        "risk",
        "风险提示，该收款账户存在交易风险，需携带本人身份证件到银行柜台办理",
    ),
    (  # the paying card is checked first, the risk list next
        {"payee": "吴有才", "amount": 999999, "card_tail": "0000"},
        "unknown_card",
        "没有找到尾号0000的付款卡，请核对卡号后四位",
    ),
    (
        {"payee": "孙七", "amount": 1000, "payee_card": "6214830012349873"},
        "risk",
        "风险提示，该收款账户存在交易风险，需携带本人身份证件到银行柜台办理",
    ),
    (
        {"payee": "孙七", "amount": 800, "payee_card": "6222020200112231"},
        "bad_card",
        "尾号2231的收款卡号校验不通过，请核对卡号后重新提供",
    ),
    (
        {"payee": "张三", "amount": 100, "date": "2024-04-30"},
        "past_date",
        "转账日期2024-04-30早于今天（2024-05-01），请选择今天或之后的日期",
    ),
]


@pytest.mark.parametrize(("args", "code", "reason"), REFUSALS)
def test_a_transfer_the_rules_refuse(args: dict[str, Any], code: str, reason: str) -> None:
    result = Transfer()(args)
    assert result == {
        "status": "rejected",
        "code": code,
        "reason": reason,
        "payee": args["payee"],
        "amount": str(money(args["amount"])),
        "summary": f"向{args['payee']}的转账没有办理：{reason}。",
    }


def test_a_scheduled_transfer_counts_no_transfer_of_today_against_the_daily_limit() -> None:
    out = Transfer()({"payee": "张三", "amount": 30000, "card_tail": "3377", "date": "2024-05-02"})
    assert (out["status"], out["scheduled"], out["transfer_no"]) == (
        "done",
        True,
        "TR-20240501-0001",
    )


def test_a_daily_limit_on_another_day_says_which_day() -> None:
    tight = Transfer(replace(TransferRules.packaged(), daily_limit=Decimal("1000.00")))
    out = tight({"payee": "张三", "amount": 1500, "date": "2024-05-03"})
    assert out["reason"] == (
        "超出尾号1234的卡单日转账限额¥1,000.00（壹仟元整），2024-05-03当日剩余额度¥1,000.00（壹仟元整）"
    )


def test_numbers_count_up_per_instance_and_refusals_take_none() -> None:
    transfer = Transfer()
    numbers = [
        transfer({"payee": "张三", "amount": 100}).get("transfer_no"),
        transfer({"payee": "孙七", "amount": 100}).get("transfer_no"),  # refused
        transfer({"payee": "李四", "amount": 100, "date": "2024-06-01"}).get("transfer_no"),
        transfer({"payee": "王五", "amount": 100}).get("transfer_no"),
    ]
    assert numbers == ["TR-20240501-0001", None, "TR-20240501-0002", "TR-20240501-0003"]
    assert Transfer()({"payee": "张三", "amount": 100})["transfer_no"] == "TR-20240501-0001"


def test_the_demo_data_is_never_changed_by_a_transfer() -> None:
    """Each call is judged against the packaged data: the outcome of a call never depends on
    the calls before it (only the number does)."""
    transfer = Transfer()
    first = transfer({"payee": "张三", "amount": 10000})
    second = transfer({"payee": "张三", "amount": 10000})
    assert first["balance_after"] == second["balance_after"] == "2345.60"
    assert second["transfer_no"] == "TR-20240501-0002"


def test_a_call_that_raises_takes_no_number() -> None:
    transfer = Transfer()
    with pytest.raises(KeyError):
        transfer({"payee": "张三"})
    assert transfer({"payee": "张三", "amount": 1})["transfer_no"] == "TR-20240501-0001"


def test_numbers_are_unique_across_threads() -> None:
    transfer = Transfer()
    got: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(50):
            number = transfer({"payee": "张三", "amount": 1})["transfer_no"]
            with lock:
                got.append(number)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == [f"TR-20240501-{n:04d}" for n in range(1, 401)]


@pytest.mark.parametrize(
    "amount", ["0.01", "0.5", "10.05", "1005", "5000", "12345.6", "49999.99", "50000", "20000"]
)
def test_amounts_are_said_as_charter_zh_formats_them(amount: str) -> None:
    """The summary's amount is what a reply template's {amount|amount} writes, and the result's
    amount_upper what {amount|money_upper} writes."""
    out = Transfer()({"payee": "张三", "amount": float(amount), "card_tail": "5678"})
    assert out["amount_upper"] == MoneyUpper().format(amount)
    said = Amount().format(amount)
    assert said is not None and f"转账{said}，" in out["summary"]


def test_the_contract_limit_is_the_data_limit() -> None:
    contract = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    assert contract["effect"] == "execute"
    assert [c["check"] for c in contract["constraints"]] == ["args.amount <= 50000"]
    assert money(load("payees")["single_limit"]) == Decimal("50000.00")


def test_the_demo_data_is_consistent() -> None:
    rules = TransferRules.packaged()
    tails = {a.tail for a in rules.accounts}
    assert rules.primary in tails
    assert set(rules.sent_today) <= tails
    assert rules.single_limit < rules.daily_limit
    cards = [p.card for p in rules.payees] + sorted(rules.risk_cards)
    assert all(luhn.is_valid(c) for c in cards)
    assert not {p.name for p in rules.payees} & rules.risk_names
    assert {"张三", "李四", "王五", "赵六"} <= {p.name for p in rules.payees}


def test_a_missing_payee_raises() -> None:
    with pytest.raises(KeyError):
        Transfer()({"amount": 100})


CST = timezone(timedelta(hours=8))
MOVED = SkillContext(datetime(2027, 3, 2, 9, 0, tzinfo=CST), clock_set=True)
WALL = SkillContext(datetime(2027, 3, 2, 9, 0, tzinfo=CST), clock_set=False)


@pytest.mark.parametrize(
    ("context", "args", "fields"),
    [
        # the wall clock: the demo's day
        (WALL, {"payee": "张三", "amount": 100}, {"transfer_no": "TR-20240501-0001"}),
        # the turn's day: today's number, today's transfer
        (
            MOVED,
            {"payee": "张三", "amount": 100},
            {"transfer_no": "TR-20270302-0001", "date": "2027-03-02", "scheduled": False},
        ),
        # the demo's day is long past: a date after the turn's day is scheduled, numbered today
        (
            MOVED,
            {"payee": "张三", "amount": 100, "date": "2027-03-05"},
            {"transfer_no": "TR-20270302-0001", "date": "2027-03-05", "scheduled": True},
        ),
    ],
)
def test_today_is_the_turns_day_when_the_clock_was_set(
    context: SkillContext, args: dict[str, Any], fields: dict[str, Any]
) -> None:
    result = Transfer()(args, context=context)
    assert {k: result[k] for k in fields} == fields


@pytest.mark.parametrize(
    ("context", "args", "code", "reason"),
    [
        (
            MOVED,
            {"payee": "张三", "amount": 100, "date": "2024-05-01"},  # the demo's own day
            "past_date",
            "转账日期2024-05-01早于今天（2027-03-02），请选择今天或之后的日期",
        ),
        (
            MOVED,
            {"payee": "张三", "amount": 30000, "card_tail": "3377"},  # sent 80000 today
            "daily_limit",
            "超出尾号3377的卡单日转账限额¥100,000.00（壹拾万元整），今日剩余额度¥20,000.00（贰万元整）",
        ),
    ],
)
def test_refusals_on_the_turns_day(
    context: SkillContext, args: dict[str, Any], code: str, reason: str
) -> None:
    result = Transfer()(args, context=context)
    assert (result["status"], result["code"], result["reason"]) == ("rejected", code, reason)


def test_what_was_sent_today_counts_only_today_on_the_turns_day() -> None:
    tomorrow = {"payee": "张三", "amount": 30000, "card_tail": "3377", "date": "2027-03-03"}
    assert Transfer()(tomorrow, context=MOVED)["status"] == "done"
