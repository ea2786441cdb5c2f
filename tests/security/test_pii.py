"""Issue 16, points 1 and 2: personal data in goals and traces, and every spelling of it.

Through the HTTP service as a client sends it, on SQLite and PostgreSQL: what the user is told,
what the goal and trace APIs return and what every table holds afterwards.
"""

from __future__ import annotations

import pytest

from tests.security.pii_corpus import corpus, leaked
from tests.security.scan import database_text
from tests.support.serve import MakeService, Service, auth

CARD = "6222026815398387"


def stored(svc: Service) -> str:
    return "\n".join(text for _, text in database_text(svc.database_url))


def api(svc: Service, user: str) -> str:
    goals = svc.client.get(f"/v1/users/{user}/goals", headers=auth("acme"))
    traces = svc.client.get("/v1/traces", params={"user_id": user}, headers=auth("acme"))
    assert goals.status_code == traces.status_code == 200, (goals.text, traces.text)
    return goals.text + traces.text


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_point_1_a_card_number_is_no_order_number(service: MakeService, backend: str) -> None:
    svc = service(backend, "ecommerce")
    r = svc.turn("acme", "u1", f"退款请打到我的银行卡{CARD}。", session_id="s1")
    assert r.status_code == 200, r.text
    # the refund has no order number: the user is asked for it, the card is no answer
    assert r.json()["text"] == "请提供需要退换货的订单号。"
    for where, text in (("API", api(svc, "u1")), ("database", stored(svc))):
        assert CARD not in text, where
        assert "订单[BANK_CARD]" not in text, where


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_point_1_a_transfer_keeps_its_card_sealed(service: MakeService, backend: str) -> None:
    svc = service(backend, "finance")
    first = svc.turn("acme", "u1", "向张三转账5000元，卡号6222 0268 1539 8387", session_id="s1")
    assert first.json()["text"] == (
        "请确认：向张三转账¥5,000.00（伍仟元整）？确认请回复“是”，不办理请回复“否”。"
    )
    done = svc.turn("acme", "u1", "是", session_id="s1").json()["text"]
    assert "已向张三（收款卡尾号8387）转账¥5,000.00（伍仟元整）" in done  # the skill had the card
    for where, text in (("API", api(svc, "u1")), ("database", stored(svc))):
        assert CARD not in text, where
        assert "6222 0268 1539 8387" not in text, where
    assert "$sealed" in stored(svc)


SPELLINGS = {}
for _s in corpus():
    SPELLINGS.setdefault(f"{_s.kind}: {_s.spelling}", _s)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_point_2_every_spelling_is_recognised(service: MakeService, spelling: str) -> None:
    statement = SPELLINGS[spelling]
    svc = service("sqlite", "ecommerce")
    r = svc.turn("acme", "u1", statement.text, session_id="s1")
    assert r.status_code == 200, r.text
    export = svc.client.get("/v1/users/u1/memory/export", headers=auth("acme"))
    assert export.status_code == 200, export.text
    for where, text in (
        ("export", export.text),
        ("API", api(svc, "u1")),
        ("database", stored(svc)),
    ):
        assert leaked(text, (statement,)) == [], where
