"""The ecommerce executing skill ``return_request`` called directly on fresh instances: the
requests it accepts with every field, the refusals with their codes and exact words, the 7-day
window counted from the data's dates (never the wall clock), the kinds the ecommerce pack's
return-exchange intent can give, and the numbering."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter_skills._data import load
from charter_skills.ecommerce import RETURN_KINDS, OrderLookup, ReturnRequest

ROOT = Path(__file__).resolve().parents[3]
ECOMMERCE = ROOT / "domains" / "ecommerce"


@pytest.mark.parametrize(
    ("args", "result"),
    [
        (
            {"order_id": "DD202405030002", "kind": "退货", "reason": "质量问题"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405030002",
                "kind": "退货",
                "refund": "1299.00",
                "return_reason": "质量问题",
                "summary": "已为订单DD202405030002提交退货申请（原因：质量问题），"
                "售后申请号SH-20240508-0001。审核通过后请按页面提示寄回商品，"
                "退款1,299.00元将在商家收到退货后原路退回。",
            },
        ),
        (
            {"order_id": "DD202405030002", "kind": "退货退款"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405030002",
                "kind": "退货",
                "refund": "1299.00",
                "summary": "已为订单DD202405030002提交退货申请，售后申请号SH-20240508-0001。"
                "审核通过后请按页面提示寄回商品，退款1,299.00元将在商家收到退货后原路退回。",
            },
        ),
        (
            {"order_id": "DD202405040006", "kind": "换货", "reason": "尺码不合适", "size": "XL码"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405040006",
                "kind": "换货",
                "size": "XL码",
                "return_reason": "尺码不合适",
                "summary": "已为订单DD202405040006提交换货申请（换成XL码，原因：尺码不合适），"
                "售后申请号SH-20240508-0001。审核通过后请按页面提示寄回商品，"
                "商家收到后将为您发出新商品。",
            },
        ),
        (
            {"order_id": "DD202405040006", "kind": "换货"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405040006",
                "kind": "换货",
                "summary": "已为订单DD202405040006提交换货申请，售后申请号SH-20240508-0001。"
                "审核通过后请按页面提示寄回商品，商家收到后将为您发出新商品。",
            },
        ),
    ],
)
def test_a_request_that_is_accepted(args: dict[str, Any], result: dict[str, Any]) -> None:
    assert ReturnRequest()(args) == result


@pytest.mark.parametrize(
    ("order_id", "kind", "code", "reason"),
    [
        (
            "DD202405010001",
            "退货",
            "not_delivered",
            "订单DD202405010001当前状态为已发货，只有已签收的订单才能申请退货，请在签收后再申请",
        ),
        (
            "DD202405050003",
            "退货",
            "not_delivered",
            "订单DD202405050003当前状态为待发货，只有已签收的订单才能申请退货，"
            "未发货的订单可在“我的订单”中直接取消，款项会原路退回",
        ),
        (
            "DD202405060004",
            "换货",
            "not_delivered",
            "订单DD202405060004当前状态为已取消，只有已签收的订单才能申请换货",
        ),
        (
            "DD202404200005",
            "退货",
            "expired",
            "订单DD202404200005于2024-04-22签收，已超过7天的退换货期限（截至2024-04-29），"
            "如商品有质量问题，请联系人工客服处理",
        ),
        (
            "DD209912310000",
            "退货",
            "not_found",
            "没有查到订单DD209912310000，请核对订单号后再试",
        ),
    ],
)
def test_a_request_the_rules_refuse(order_id: str, kind: str, code: str, reason: str) -> None:
    assert ReturnRequest()({"order_id": order_id, "kind": kind}) == {
        "status": "rejected",
        "code": code,
        "reason": reason,
        "order_id": order_id,
        "kind": kind,
        "summary": f"{kind}申请没有提交：{reason}。",
    }


@pytest.mark.parametrize(
    ("today", "status"),
    [
        ("2024-05-04", "accepted"),  # the day it was signed for
        ("2024-05-11", "accepted"),  # the seventh day after
        ("2024-05-12", "rejected"),
    ],
)
def test_the_window_is_seven_days_from_delivery(today: str, status: str) -> None:
    out = ReturnRequest(today=today)({"order_id": "DD202405030002", "kind": "退货"})
    assert out["status"] == status
    if status == "accepted":
        assert out["request_no"] == f"SH-{today.replace('-', '')}-0001"
    else:
        assert out["reason"] == (
            "订单DD202405030002于2024-05-04签收，已超过7天的退换货期限（截至2024-05-11），"
            "如商品有质量问题，请联系人工客服处理"
        )


def test_today_is_the_data_s_date() -> None:
    assert ReturnRequest().today == load("orders")["as_of"] == "2024-05-08"


def test_a_size_is_kept_for_an_exchange_only() -> None:
    out = ReturnRequest()({"order_id": "DD202405030002", "kind": "退货", "size": "XL码"})
    assert "size" not in out and "换成" not in out["summary"]


def test_numbers_count_up_per_instance_and_refusals_take_none() -> None:
    request = ReturnRequest()
    numbers = [
        request({"order_id": "DD202405030002", "kind": "退货"}).get("request_no"),
        request({"order_id": "DD202405010001", "kind": "退货"}).get("request_no"),  # refused
        request({"order_id": "DD202405040006", "kind": "换货"}).get("request_no"),
    ]
    assert numbers == ["SH-20240508-0001", None, "SH-20240508-0002"]


def test_the_kinds_of_the_return_exchange_intent() -> None:
    """The contract takes the intent's 退货, 换货 and 退货退款 (a return); 仅退款 and 退款 are
    refused by its enum (a refund alone is asked for in 我的订单)."""
    goals = yaml.safe_load((ECOMMERCE / "goals.yaml").read_text(encoding="utf-8"))
    intent = next(i for i in goals["intents"] if i["id"] == "return-exchange")
    slot = next(s for s in intent["slots"] if s["name"] == "kind")
    m = re.fullmatch(r"\(\?P<value>([^()]+)\)", slot["regex"])
    assert m is not None
    contract = yaml.safe_load((ECOMMERCE / "skills" / "return_request.yaml").read_text("utf-8"))
    assert contract["effect"] == "execute"
    enum = contract["input_schema"]["properties"]["kind"]["enum"]
    assert set(enum) == set(RETURN_KINDS)
    assert set(m[1].split("|")) - set(enum) == {"仅退款", "退款"}


def test_the_new_orders_are_found_by_order_lookup() -> None:
    out = OrderLookup()({"order_id": "DD202405040006"})
    assert out["summary"] == (
        "订单DD202405040006当前状态为已签收，商品：运动卫衣（L码）×1，实付259.00元。"
    )
    delivered = [o for o in load("orders")["orders"] if o["status"] == "已签收"]
    assert all("delivered_at" in o for o in delivered)
