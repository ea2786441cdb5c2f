"""Personal data in goal rows (issue 16): descriptions and triggers scrubbed, slot and result
values holding personal data sealed with the memory key, opened when the context is read.

The store tests run on SQLite and PostgreSQL; the privacy is the one an agent builds
(``charter.agent.parts.goal_privacy``) from the ecommerce pack's memory policy and charter-zh's
recognizers, so the numbers below are real card, ID and phone numbers as users type them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from charter.agent.parts import goal_privacy
from charter.contracts.registry import Registry
from charter.goals.store import GoalStore
from charter.goals.tables import GOAL_CONTEXT, GOAL_HISTORY, GOAL_TREE
from charter.memory.pipeline import WritePipeline
from charter.store.privacy import SEALED, NoPrivacy, PiiGoalPrivacy
from tests.support.packs import compiled_with_diagnostics

ROOT = Path(__file__).resolve().parents[3]
KEY = bytes(range(32))
CARD = "6222026815398387"
ID = "11010519491231002X"


@pytest.fixture(scope="module")
def pipeline(registry: Registry) -> WritePipeline:
    pack, diags = compiled_with_diagnostics("ecommerce")
    assert pack is not None and pack.memory is not None, diags
    return WritePipeline(pack.memory, registry, key=KEY)


@pytest.fixture
def store(goal_db_url: str, pipeline: WritePipeline) -> GoalStore:
    return GoalStore(goal_db_url, privacy=goal_privacy(pipeline))


def raw_rows(store: GoalStore) -> str:
    with store.engine.connect() as conn:
        out = [
            json.dumps([str(v) for v in row], ensure_ascii=False)
            for table in (GOAL_TREE, GOAL_CONTEXT, GOAL_HISTORY)
            for row in conn.execute(sa.select(table))
        ]
    return "\n".join(out)


def test_slots_with_personal_data_are_sealed_and_opened(store: GoalStore) -> None:
    g = store.create(
        "transfer",
        user_id="u1",
        session_id="s1",
        description=f"向张三转账，卡号{CARD}",
        slots={"payee": "张三", "payee_card": CARD, "cards": [f"卡{CARD}", "无"]},
    )
    assert store.context(g.id) == {
        "payee": "张三",
        "payee_card": CARD,
        "cards": [f"卡{CARD}", "无"],
    }
    assert store.get(g.id).description == "向张三转账，卡号[BANK_CARD]"  # type: ignore[union-attr]
    stored = raw_rows(store)
    assert CARD not in stored
    assert SEALED in stored and "张三" in stored


def test_updates_triggers_and_results_keep_no_personal_data(store: GoalStore) -> None:
    parent = store.create("root", user_id="u1", session_id="s1")
    child = store.create("verify", user_id="u1", session_id="s1", parent_id=parent.id)
    merged = store.set_slots(child.id, {"id_number": ID.lower(), "note": "ok"})
    assert merged == {"id_number": ID.lower(), "note": "ok"}
    store.set_description(child.id, f"核验身份证{ID}")
    assert store.transition(child.id, "active", actor="user", trigger="input: 手机13812345678").ok
    assert store.complete(child.id, {"card": CARD}, actor="agent", trigger="done").ok
    assert store.context(parent.id) == {"card": CARD}
    assert [h.trigger for h in store.history(child.id)][1] == "input: 手机[PHONE]"
    stored = raw_rows(store)
    for raw in (CARD, ID, ID.lower(), "13812345678"):
        assert raw not in stored


def test_a_value_of_another_user_does_not_open(
    goal_sqlite_url: str, pipeline: WritePipeline
) -> None:
    privacy = goal_privacy(pipeline)
    sealed = privacy.seal({"card": CARD}, "u1")
    assert privacy.open(sealed, "u1") == {"card": CARD}
    with pytest.raises(ValueError):
        privacy.open(sealed, "u2")


def test_without_a_key_personal_values_are_scrubbed() -> None:
    privacy = PiiGoalPrivacy(lambda t: t.replace(CARD, "[BANK_CARD]"), lambda t: CARD in t)
    assert privacy.seal({"card": CARD, "n": 3}, "u1") == {"card": "[BANK_CARD]", "n": 3}


def test_a_sealed_value_without_its_key_reads_as_sealed() -> None:
    privacy = PiiGoalPrivacy(str, lambda t: True)
    assert privacy.open({"card": {SEALED: "token"}}, "u1") == {"card": "[SEALED]"}


def test_no_privacy_keeps_values_as_given() -> None:
    assert NoPrivacy().seal({"card": CARD}, "u1") == {"card": CARD}
    assert NoPrivacy().scrub(CARD) == CARD
