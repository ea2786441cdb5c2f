"""The reflection log and the record of patch uses, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charter.learn.log import Evidence, ReflectionLog
from tests.support.postgres import fresh_schema

AT = datetime(2024, 4, 1, 10, 22, 5, tzinfo=UTC)
SEED = (  # seed 001 §3.2's entry
    Evidence("user_input", AT, "给我去年一季度的销量"),
    Evidence(
        "tool_call",
        AT + timedelta(seconds=1),
        name="get_sales_data",
        params={"year": 2023, "quarter": 1},
        result={"Q1": 125000},
    ),
    Evidence("user_feedback", AT + timedelta(seconds=66), "这是2023年的，我要2024年的"),
)


@pytest.fixture(params=["sqlite", "postgresql"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReflectionLog]:
    if request.param == "sqlite":
        store = ReflectionLog(f"sqlite:///{tmp_path / 'log.db'}")
        yield store
        store.dispose()
    else:
        with fresh_schema("charter_learn") as url:
            store = ReflectionLog(url)
            yield store
            store.dispose()


def add(log: ReflectionLog, user: str = "u1", at: datetime = AT, pack: str = "finance") -> str:
    return log.add(
        pack=pack,
        trigger="negation",
        hypothesis="用户需要2024年Q1销售数据",
        evidence=SEED,
        correction={"year": 2024},
        at=at,
        user_id=user,
        session_id="s1",
        trace_id="t1",
        intent="sales",
        skill="get_sales_data",
    ).id


def test_an_entry_reads_back_as_the_seed_writes_it(log: ReflectionLog) -> None:
    assert add(log) == "R-000001"
    (entry,) = log.entries("finance")
    assert entry.as_dict() == {
        "id": "R-000001",
        "pack": "finance",
        "trigger": "negation",
        "intent": "sales",
        "skill": "get_sales_data",
        "hypothesis": "用户需要2024年Q1销售数据",
        "evidence": [
            {
                "type": "user_input",
                "content": "给我去年一季度的销量",
                "timestamp": "2024-04-01T10:22:05Z",
            },
            {
                "type": "tool_call",
                "name": "get_sales_data",
                "params": {"year": 2023, "quarter": 1},
                "result": {"Q1": 125000},
                "timestamp": "2024-04-01T10:22:06Z",
            },
            {
                "type": "user_feedback",
                "content": "这是2023年的，我要2024年的",
                "timestamp": "2024-04-01T10:23:11Z",
            },
        ],
        "correction": {"year": 2024},
        "created_at": "2024-04-01T10:22:05Z",
        "trace_id": "t1",
    }


def test_entries_filter_by_pack_time_and_trigger(log: ReflectionLog) -> None:
    add(log, at=AT)
    add(log, at=AT + timedelta(days=2))
    add(log, pack="medical")
    assert [e.id for e in log.entries("finance")] == ["R-000001", "R-000002"]
    assert [e.id for e in log.entries("finance", since=AT + timedelta(days=1))] == ["R-000002"]
    assert [e.id for e in log.entries()] == ["R-000001", "R-000002", "R-000003"]
    assert log.entries("finance", trigger="entropy") == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"trigger": "boredom"},
            "unknown trigger 'boredom'; expected one of skill_failure, "
            "negation, entropy, contradiction, rejection",
        ),
        ({"evidence": SEED + SEED[:1]}, "at most 3 evidence items, not 4"),
    ],
)
def test_what_the_log_refuses(log: ReflectionLog, change: dict[str, object], message: str) -> None:
    kwargs: dict[str, object] = {
        "pack": "finance",
        "trigger": "negation",
        "hypothesis": "h",
        "evidence": SEED,
        "correction": None,
        "at": AT,
        "user_id": "u1",
        "session_id": "s1",
    }
    kwargs.update(change)
    with pytest.raises(ValueError) as err:
        log.add(**kwargs)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_uses_are_counted_per_patch_and_window(log: ReflectionLog) -> None:
    for n, patch in enumerate(["a", "a", "b", "a"]):
        log.record_use(
            pack="finance",
            patch_id=patch,
            kind="mapping",
            at=AT + timedelta(days=n),
            user_id=f"u{n}",
            session_id="s",
        )
    assert log.uses("finance") == {"a": 3, "b": 1}
    assert log.uses("finance", since=AT + timedelta(days=2)) == {"a": 1, "b": 1}
    assert log.uses("medical") == {}


def test_an_id_is_never_given_out_twice(log: ReflectionLog) -> None:
    # a committed patch cites R-000002: after forget removed it, no other entry takes its id
    add(log, user="alice")
    add(log, user="bob")
    log.delete_user("bob")
    assert add(log, user="carol") == "R-000003"


def test_forget_removes_the_user_s_entries_and_uses(log: ReflectionLog) -> None:
    add(log, user="u1")
    add(log, user="u2")
    log.record_use(
        pack="finance", patch_id="a", kind="mapping", at=AT, user_id="u1", session_id="s"
    )
    assert log.delete_user("u1") == 2
    assert [e.user_id for e in log.entries()] == ["u2"] and log.uses() == {}
