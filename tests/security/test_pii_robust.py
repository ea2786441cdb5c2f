"""Issue 17, point 7, through turns of the HTTP service: an ID number with a typo after
``身份证号``, a mobile in full-width digits, and an order number that passes Luhn.

After the turns every row of every table (facts, short-term turns, goals, traces and their
steps …), the SQLite file's bytes and every row of the narrative (LanceDB) store are searched:
the ID and the mobile are nowhere, in any width or grouping; the order number is stored as the
user wrote it, never redacted as a card.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.security.scan import database_text, directory_text, lance_text
from tests.support.serve import MakeService, Service

TYPO_ID = "110101199003071234"  # the check character of 11010119900307123 is X, not 4
WIDE_MOBILE = "１３８１２３４５６７８"
MOBILE = "13812345678"
ORDER = "55921074533213885"  # passes Luhn, and 5 is Mastercard's prefix
TURNS = (
    f"身份证号{TYPO_ID}",
    f"我的手机号是{WIDE_MOBILE}",
    f"订单号{ORDER}，还没发货",
)


def squeezed(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch not in " -.")


def places(svc: Service) -> dict[str, str]:
    """Everything the deployment stored, by table, as text."""
    out: dict[str, list[str]] = {}
    for table, text in database_text(svc.database_url):
        out.setdefault(table, []).append(text)
    for name, text in lance_text(svc.narrative):
        out.setdefault(f"narrative {name}", []).append(text)
    for _name, text in directory_text(svc.narrative):
        out.setdefault("narrative files", []).append(text)
    return {place: "\n".join(texts) for place, texts in out.items()}


def sqlite_bytes(svc: Service) -> bytes:
    path = Path(svc.database_url.removeprefix("sqlite:///"))
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))


def leaks(stored: dict[str, str], value: str) -> list[str]:
    return sorted(place for place, text in stored.items() if value in squeezed(text))


@pytest.mark.parametrize("pack", ["ecommerce", "finance", "medical"])
def test_the_three_defects_through_turns(service: MakeService, pack: str) -> None:
    svc = service("sqlite", pack)
    for i, text in enumerate(TURNS):
        r = svc.turn("acme", "u1", text, session_id=f"s{i}")
        assert r.status_code == 200, r.text
    stored = places(svc)
    assert leaks(stored, TYPO_ID) == []
    assert leaks(stored, MOBILE) == []
    raw = sqlite_bytes(svc)
    assert TYPO_ID.encode() not in raw and MOBILE.encode() not in raw
    assert WIDE_MOBILE.encode() not in raw
    # what was stored instead, where the issue found the raw values
    for place in ("short_term_turn", "trace_step", "narrative narrative"):
        assert "身份证号[ID]" in stored[place], place
        assert "我的手机号是[PHONE]" in stored[place], place
    # precision: the order number is kept as written, nowhere taken for a card
    assert f"订单号{ORDER}" in stored["short_term_turn"]
    assert f"订单号{ORDER}" in stored["narrative narrative"]
    assert [place for place, text in stored.items() if "[BANK_CARD]" in text] == []


def test_a_mistyped_id_given_as_a_slot_value_is_sealed(service: MakeService) -> None:
    """The finance invoice takes a personal ID number as its tax number. Given with a typo
    after 身份证号, the slot value (the 18 digits alone) is sealed in the goal, redacted in
    the fact, the reply's trace and the next turn's skill call, which reads it back."""
    svc = service("sqlite", "finance")
    first = svc.turn(
        "acme", "u1", f"开票，抬头是杭州某某科技有限公司，税号是身份证号{TYPO_ID}", session_id="s1"
    ).json()["text"]
    assert first == (
        f"请确认开票信息：抬头杭州某某科技有限公司，税号{TYPO_ID}，发票类型电子普通发票。"
        "确认请回复“是”，不开请回复“否”。"
    )
    done = svc.turn("acme", "u1", "是", session_id="s1").json()["text"]
    assert f"税号{TYPO_ID}的校验位不正确" in done  # the skill had the value the user gave
    stored = places(svc)
    assert leaks(stored, TYPO_ID) == []
    assert TYPO_ID.encode() not in sqlite_bytes(svc)
    assert "$sealed" in stored["goal_context"]
    assert "tax_id" in stored["memory_fact"]  # the fact was written, without the value
    assert "税号[ID]" in stored["trace"]
    assert "税号[SEALED]" in stored["trace"]  # read back in the next turn: sealed, no kind
