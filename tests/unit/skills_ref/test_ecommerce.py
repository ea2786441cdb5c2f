"""The ecommerce reference skills called directly: orders, tracking, prices and coupons from
the demo data, with the amounts to the cent and a "no" that is an answer, not a failure."""

from __future__ import annotations

from typing import Any

import pytest

from charter_skills.ecommerce import CouponCheck, LogisticsTrack, OrderLookup, ProductPrice


def test_order_lookup_returns_status_items_and_amount() -> None:
    assert OrderLookup()({"order_id": "DD202405050003"})["results"] == [
        {
            "order_id": "DD202405050003",
            "status": "待发货",
            "created_at": "2024-05-05",
            "amount": "157.50",
            "items": [
                {"sku": "SKU-C300", "name": "棉质T恤", "quantity": 3, "price": "49.00"},
                {"sku": "SKU-D400", "name": "运费险", "quantity": 1, "price": "10.50"},
            ],
        }
    ]


@pytest.mark.parametrize(
    ("order_id", "summary"),
    [
        (
            "DD202405030002",
            "订单DD202405030002当前状态为已签收，商品：智能手表×1，实付1,299.00元。",
        ),
        ("DD202405060004", "订单DD202405060004当前状态为已取消，商品：保温杯×1，实付89.90元。"),
        (  # paid with a coupon: the amount paid, and the coupon's code and discount
            "DD202404280008",
            "订单DD202404280008当前状态为已签收，商品：保温杯×1，"
            "实付79.90元（券码SPRING10抵扣10.00元）。",
        ),
        ("DD209912310000", "没有查到订单DD209912310000，请核对订单号后再试。"),
    ],
)
def test_order_lookup_summaries(order_id: str, summary: str) -> None:
    assert OrderLookup()({"order_id": order_id})["summary"] == summary


def test_logistics_track_gives_carrier_and_events_oldest_first() -> None:
    result = LogisticsTrack()({"order_id": "DD202405030002"})
    assert (result["carrier"], result["tracking_no"]) == ("京东物流", "JDV000987654321")
    assert [e["time"] for e in result["events"]] == [
        "2024-05-03 10:00",
        "2024-05-04 08:30",
        "2024-05-04 15:12",
    ]
    assert result["summary"] == (
        "订单DD202405030002由京东物流承运（运单号JDV000987654321），"
        "最新进展：2024-05-04 15:12 快件已签收，签收人：本人。"
    )


@pytest.mark.parametrize(
    ("order_id", "summary"),
    [
        ("DD202405060004", "订单DD202405060004当前状态为已取消，暂无物流信息。"),
        ("DD209912310000", "没有查到订单DD209912310000，请核对订单号后再试。"),
    ],
)
def test_logistics_track_without_events(order_id: str, summary: str) -> None:
    result = LogisticsTrack()({"order_id": order_id})
    assert (result["events"], result["summary"]) == ([], summary)


def test_product_price_with_promotion() -> None:
    assert ProductPrice()({"sku": "SKU-B200"})["results"] == [
        {
            "sku": "SKU-B200",
            "name": "智能手表",
            "price": "1299.00",
            "promotion": {"name": "满1000减100", "price": "1199.00", "valid_until": "2024-06-30"},
        }
    ]


def test_product_price_reads_a_lower_case_sku() -> None:
    result = ProductPrice()({"sku": "sku-e500"})
    assert (
        result["summary"]
        == "保温杯（SKU-E500）售价89.90元，目前没有参加活动，以商品页显示的价格为准。"
    )


@pytest.mark.parametrize(
    ("code", "amount", "valid", "discount", "payable", "reason"),
    [
        ("SAVE20", 100, True, "20.00", "80.00", ""),
        (
            "SAVE20",
            99.99,
            False,
            "0.00",
            "99.99",
            "订单金额未满100.00元，还差0.01元才能使用优惠券SAVE20（有效期至2024-06-30）",
        ),
        ("VIP90", 158, True, "15.80", "142.20", ""),
        ("VIP90", 0.05, True, "0.01", "0.04", ""),
        ("VIP90", 1000, True, "50.00", "950.00", ""),
        ("NEW50", 300, True, "50.00", "250.00", ""),
        ("SPRING10", 100, False, "0.00", "100.00", "优惠券SPRING10已于2024-04-30过期"),
        ("USED30", 300, False, "0.00", "300.00", "券码USED30已被使用，同一张券只能使用一次"),
        ("NOPE", 300, False, "0.00", "300.00", "券码NOPE不存在，请核对券码"),
    ],
)
def test_coupon_check(
    code: str, amount: Any, valid: bool, discount: str, payable: str, reason: str
) -> None:
    result = CouponCheck()({"coupon_code": code, "order_amount": amount})
    assert (result["valid"], result["discount"], result["payable"], result["reason"]) == (
        valid,
        discount,
        payable,
        reason,
    )


def test_a_usable_coupon_states_its_validity() -> None:
    result = CouponCheck()({"coupon_code": "save20", "order_amount": 158})
    assert result["summary"] == (
        "优惠券SAVE20可以使用，本单优惠20.00元，优惠后应付138.00元，券有效期至2024-06-30。"
    )
