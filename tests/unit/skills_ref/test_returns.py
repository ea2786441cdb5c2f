"""The ecommerce executing skill ``return_request`` called directly on fresh instances: the
requests it accepts with every field, the refusals with their codes and exact words, the 7-day
window counted from the data's dates (never the wall clock), the kinds the ecommerce pack's
return-exchange intent can give, the numbering, and the coupon an order was paid with: redeemed
once (an exchange ships under it again, a return refunds what was paid and gives it back while
it is valid), checked against the order's record when the goal passes it on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter_skills._data import load, money
from charter_skills.ecommerce import RETURN_KINDS, OrderLookup, ReturnRequest, _discount

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


AFTER = "审核通过后请按页面提示寄回商品，"


@pytest.mark.parametrize(
    ("args", "result"),
    [
        (
            {"order_id": "DD202405070007", "kind": "换货", "size": "XL码", "coupon_code": "USED30"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405070007",
                "kind": "换货",
                "size": "XL码",
                "coupon_code": "USED30",
                "coupon_discount": "30.00",
                "coupon_handling": "reused",
                "summary": "已为订单DD202405070007提交换货申请（换成XL码），售后申请号"
                f"SH-20240508-0001。{AFTER}商家收到后将为您发出新商品。"
                "换货商品沿用原订单的券码USED30，不会重复核销。",
            },
        ),
        (
            {"order_id": "DD202405070007", "kind": "退货", "coupon_code": "used30"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405070007",
                "kind": "退货",
                "refund": "259.00",
                "coupon_code": "USED30",
                "coupon_discount": "30.00",
                "coupon_handling": "returned",
                "summary": "已为订单DD202405070007提交退货申请，售后申请号SH-20240508-0001。"
                f"{AFTER}退款259.00元将在商家收到退货后原路退回（按实付金额退款，"
                "券码USED30抵扣的30.00元不退现金）。优惠券USED30将在退款完成后退回您的账户，"
                "有效期至2024-12-31。",
            },
        ),
        (
            # the coupon expired after the order was paid: it is not given back
            {"order_id": "DD202404280008", "kind": "退货", "coupon_code": "SPRING10"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202404280008",
                "kind": "退货",
                "refund": "79.90",
                "coupon_code": "SPRING10",
                "coupon_discount": "10.00",
                "coupon_handling": "forfeited",
                "summary": "已为订单DD202404280008提交退货申请，售后申请号SH-20240508-0001。"
                f"{AFTER}退款79.90元将在商家收到退货后原路退回（按实付金额退款，"
                "券码SPRING10抵扣的10.00元不退现金）。优惠券SPRING10已于2024-04-30过期，不予退回。",
            },
        ),
        (
            # a code carried over from another order is not applied to this one
            {"order_id": "DD202405040006", "kind": "换货", "coupon_code": "USED30"},
            {
                "status": "accepted",
                "request_no": "SH-20240508-0001",
                "order_id": "DD202405040006",
                "kind": "换货",
                "coupon_not_used": "USED30",
                "summary": "已为订单DD202405040006提交换货申请，售后申请号SH-20240508-0001。"
                f"{AFTER}商家收到后将为您发出新商品。"
                "订单DD202405040006支付时没有使用券码USED30，本次售后不涉及这张券。",
            },
        ),
    ],
)
def test_the_coupon_of_an_order_is_redeemed_once(
    args: dict[str, Any], result: dict[str, Any]
) -> None:
    assert ReturnRequest()(args) == result


def test_the_order_s_record_says_which_coupon() -> None:
    """Without a code (no lookup came before) the record's coupon is handled all the same; a
    code the order was not paid with is said, and the record's coupon still handled."""
    bare = ReturnRequest()({"order_id": "DD202405070007", "kind": "换货"})
    given = ReturnRequest()({"order_id": "DD202405070007", "kind": "换货", "coupon_code": "USED30"})
    assert bare == given
    other = ReturnRequest()({"order_id": "DD202405070007", "kind": "换货", "coupon_code": "SAVE20"})
    assert (other["coupon_not_used"], other["coupon_code"]) == ("SAVE20", "USED30")
    assert other["summary"].endswith(
        "订单DD202405070007支付时没有使用券码SAVE20，本次售后不涉及这张券。"
        "换货商品沿用原订单的券码USED30，不会重复核销。"
    )


def test_an_order_without_a_coupon_says_nothing_of_coupons() -> None:
    for kind in ("退货", "换货"):
        out = ReturnRequest()({"order_id": "DD202405030002", "kind": kind})
        assert not [k for k in out if k.startswith("coupon")]
        assert "券" not in out["summary"]


def test_a_refused_request_handles_no_coupon() -> None:
    out = ReturnRequest(today="2024-05-15")(
        {"order_id": "DD202405070007", "kind": "退货", "coupon_code": "USED30"}
    )
    assert out["status"] == "rejected" and out["code"] == "expired"
    assert not [k for k in out if k.startswith("coupon")]


def test_a_coupon_is_given_back_while_it_is_valid() -> None:
    """The coupon's validity is counted on "today" too: DD202405070007's USED30 is valid to
    2024-12-31, so a return within the window gives it back; SPRING10 ended on 2024-04-30."""
    returned = ReturnRequest(today="2024-05-14")(
        {"order_id": "DD202405070007", "kind": "退货", "coupon_code": "USED30"}
    )
    assert returned["coupon_handling"] == "returned"
    forfeited = ReturnRequest(today="2024-05-09")({"order_id": "DD202404280008", "kind": "退货"})
    assert forfeited["coupon_handling"] == "forfeited"


def test_the_coupons_of_the_orders_agree_with_coupons_json() -> None:
    """Each coupon an order was paid with is a coupon of coupons.json, used on that order,
    valid the day the order was placed, over its threshold, and worth the discount the order
    records; the amount is what was paid: the items less the discount."""
    coupons = {c["code"]: c for c in load("coupons")["coupons"]}
    paid_with = [o for o in load("orders")["orders"] if o.get("coupon")]
    assert {o["order_id"] for o in paid_with} == {"DD202405070007", "DD202404280008"}
    for order in paid_with:
        coupon = coupons[order["coupon"]["code"]]
        total = sum(money(i["price"]) * i["quantity"] for i in order["items"])
        assert coupon["used_on"] == order["order_id"]
        assert order["created_at"] <= coupon["valid_until"]
        assert total >= money(coupon["min_amount"])
        assert _discount(coupon, total) == money(order["coupon"]["discount"])
        assert money(order["amount"]) == total - money(order["coupon"]["discount"])
    assert {c["used_on"] for c in coupons.values() if "used_on" in c} == {
        o["order_id"] for o in paid_with
    }


def test_the_coupon_goes_from_the_order_query_to_the_return() -> None:
    """goals.yaml: order-query keeps the lookup's coupon code as order_coupon, where
    return-exchange finds it (inherited from its parent, or carried from the session), and
    passes it to return_request as coupon_code, an argument the contract declares."""
    goals = yaml.safe_load((ECOMMERCE / "goals.yaml").read_text(encoding="utf-8"))
    intents = {i["id"]: i for i in goals["intents"]}
    path = intents["order-query"]["skill"]["keep"]["order_coupon"]
    result = OrderLookup()({"order_id": "DD202405070007"})
    value: Any = result
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    assert value == "USED30"
    returns = intents["return-exchange"]
    assert "order_coupon" in returns["inherits"]
    slot = next(s for s in returns["slots"] if s["name"] == "order_coupon")
    assert slot["carry"] == "session" and not slot.get("required")
    assert returns["skill"]["args"]["coupon_code"] == "{order_coupon}"
    contract = yaml.safe_load((ECOMMERCE / "skills" / "return_request.yaml").read_text("utf-8"))
    assert "coupon_code" in contract["input_schema"]["properties"]
    assert "coupon_code" not in contract["input_schema"]["required"]


def test_order_lookup_says_the_coupon_an_order_was_paid_with() -> None:
    out = OrderLookup()({"order_id": "DD202405070007"})
    assert out["results"][0]["coupon"] == {"code": "USED30", "discount": "30.00"}
    assert out["summary"] == (
        "订单DD202405070007当前状态为已签收，商品：连帽外套（L码）×1，"
        "实付259.00元（券码USED30抵扣30.00元）。"
    )
    assert "coupon" not in OrderLookup()({"order_id": "DD202405040006"})["results"][0]
