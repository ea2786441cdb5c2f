"""The hallucination interceptor's pieces: ``user_claim`` finds statements about the user's
past; ``backed_by_memory`` holds when every one is backed by a recalled memory."""

from __future__ import annotations

from typing import Any

import pytest

from charter_zh.claims import BackedByMemory, UserClaimExtractor

CLAIMS = UserClaimExtractor()
BACKED = BackedByMemory()


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        (
            "您上周提到想换成大额存单，我们为您准备了方案。",
            [("您上周提到想换成大额存单", "想换成大额存单")],
        ),
        ("您之前反馈过物流太慢，这次已加急。", [("您之前反馈过物流太慢", "物流太慢")]),
        ("您刚才说的订单已经发货。", [("您刚才说的订单已经发货", "订单已经发货")]),
        (
            "您曾咨询过信用卡分期的手续费。",
            [("您曾咨询过信用卡分期的手续费", "信用卡分期的手续费")],
        ),
        ("你昨天问过运费怎么算。", [("你昨天问过运费怎么算", "运费怎么算")]),
        ("您提到：希望周末送货。", [("您提到：希望周末送货", "希望周末送货")]),
        (
            "您上次说过不要电话联系，您之前还投诉过包装破损。",
            [("您上次说过不要电话联系", "不要电话联系"), ("您之前还投诉过包装破损", "包装破损")],
        ),
        # not claims about the user's past
        ("您说得对，我们马上处理。", []),  # 说 without a time word
        ("我们之前说过会回电。", []),  # the assistant's own past
        ("您可以告诉我们订单号。", []),  # the future
        ("根据您提到的需求，推荐A方案。", []),  # nothing checkable
        ("客户反映物流太慢。", []),  # a third person
        ("他您之前说过的话", []),
        ("", []),
    ],
)
def test_claims(text: str, claims: list[tuple[str, str]]) -> None:
    found = CLAIMS.extract(text)
    assert [(i.text, i.value) for i in found] == claims
    assert all(text[i.start : i.end] == i.text for i in found)


FACT = "用户想把定期存款换成大额存单（2026-01-02 确认）"


@pytest.mark.parametrize(
    ("text", "memories", "backed"),
    [
        ("您上周提到想换成大额存单。", [FACT], True),  # reworded: 想换成 / 想把…换成
        ("您上周提到想买黄金。", [FACT], False),
        ("您之前反馈过物流太慢。", [], False),
        ("您之前反馈过物流太慢。", None, False),
        ("您之前反馈过物流太慢。", [{"key": "complaint", "value": "物流太慢"}], True),
        ("您之前反馈过物流太慢。", {"summary": "用户反馈物流太慢，要求加急"}, True),
        ("您之前反馈过物流太慢。", "物流太慢", True),
        ("您好，请问有什么可以帮您？", None, True),  # no claim: nothing to back
        ("您上次说过不要电话联系，您之前还投诉过包装破损。", ["不要电话联系"], False),
        ("您上次说过不要电话联系，您之前还投诉过包装破损。", ["不要电话联系", "包装破损"], True),
        ("您之前反馈过物流太慢。", [42, None, {"other": "x"}], False),  # nothing usable
    ],
)
def test_backed_by_memory(text: str, memories: Any, backed: bool) -> None:
    assert BACKED(text, memories) is backed


def test_predicate_shape() -> None:
    assert (BACKED.name, tuple(BACKED.params)) == ("backed_by_memory", ("value",))
    assert CLAIMS.canonical(CLAIMS.extract("您上周提到想换成大额存单")[0]) is None
