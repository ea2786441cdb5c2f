"""Short-term memory: per (user, session) windows of the last N turns with short summaries, the
token estimate, the extractive summarizer, and the in-memory and SQL stores (SQLite, and
PostgreSQL when a server is reachable)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.short_term import (
    ExtractiveSummarizer,
    InMemoryShortTermStore,
    ShortTermMemory,
    ShortTermStore,
    SqlShortTermStore,
    estimate_tokens,
    truncate,
)
from charter.store.migrations import make_engine, schema_versions
from tests.support.postgres import fresh_schema

T0 = datetime(2026, 1, 7, 9, 0, tzinfo=UTC)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL whose connections use a new, empty schema, dropped after the test."""
    with fresh_schema("charter_st") as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ShortTermStore]:
    if request.param == "memory":
        yield InMemoryShortTermStore()
        return
    url = f"sqlite:///{tmp_path / 'st.db'}"
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
    sql = SqlShortTermStore(url)
    yield sql
    sql.close()


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def memory(
    store: ShortTermStore, scrub: Callable[[str], str] | None = None, **policy: Any
) -> ShortTermMemory:
    return ShortTermMemory(store, MemoryPolicy(**policy), scrub=scrub, clock=FakeClock())


# ---- the token estimate, truncation, the summarizer ------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("   \n", 0),
        ("订单A1234已发货", 7),
        ("hello world", 4),
        ("abcd", 1),
        ("abcde", 2),
        ("3.5元", 4),
        ("用户确认发票抬头为XX科技，要求电子版发送至finance@xx.com", 27),
        ("您好！", 3),
    ],
)
def test_token_estimate(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "limit", "out"),
    [
        ("我想退货", 30, "我想退货"),
        ("一二三四五", 5, "一二三四五"),
        ("一二三四五六", 5, "一二三四…"),
        ("abc", 1, "…"),
        ("abc", 0, ""),
        ("cafe\u0301s", 6, "cafe\u0301s"),
        ("cafe\u0301s", 5, "caf…"),  # the e and its accent go together
        ("家👨\u200d👩\u200d👧好", 4, "家…"),  # one emoji sequence is never split
    ],
)
def test_truncate_keeps_whole_graphemes(text: str, limit: int, out: str) -> None:
    assert truncate(text, limit) == out
    assert len(truncate(text, limit)) <= max(limit, 0)


@pytest.mark.parametrize(
    ("text", "keywords", "limit", "summary"),
    [
        ("你好，我想把收货地址改成[ADDRESS]，谢谢", ("地址",), 10, "我想把收货地址改成…"),
        ("你好，我想把收货地址改成[ADDRESS]，谢谢", (), 10, "你好"),
        ("你好！请问发票抬头能改吗？", ("发票",), 30, "请问发票抬头能改吗"),
        (
            "Hi there. I want a REFUND for order 1,024",
            ("refund",),
            40,
            "I want a REFUND for order 1,024",
        ),
        ("价格是3.5元，太贵了", ("贵",), 30, "太贵了"),
        ("价格是3.5元，太贵了", (), 30, "价格是3.5元"),
        ("。。。！！", ("x",), 30, ""),
        ("", (), 30, ""),
        ("  我要  投诉   物流  ", (), 30, "我要 投诉 物流"),
    ],
)
def test_extractive_summary(text: str, keywords: tuple[str, ...], limit: int, summary: str) -> None:
    assert ExtractiveSummarizer().summarize(text, limit=limit, keywords=keywords) == summary


# ---- the layer over every store ------------------------------------------------------------


def test_the_window_keeps_the_last_n_turns(store: ShortTermStore) -> None:
    st = memory(store, short_term_turns=3)
    for i in range(1, 6):
        st.record("u1", "s1", f"第{i}轮问题", f"第{i}轮回答", intent="ask")
    turns = st.turns("u1", "s1")
    assert [(t.seq, t.text, t.reply, t.summary, t.intent) for t in turns] == [
        (3, "第3轮问题", "第3轮回答", "第3轮问题", "ask"),
        (4, "第4轮问题", "第4轮回答", "第4轮问题", "ask"),
        (5, "第5轮问题", "第5轮回答", "第5轮问题", "ask"),
    ]
    assert [t.at for t in turns] == [T0 + timedelta(minutes=m) for m in (3, 4, 5)]
    assert all(t.at.tzinfo is not None for t in turns)


def test_windows_are_never_shared_across_users_or_sessions(store: ShortTermStore) -> None:
    st = memory(store)
    st.record("alice", "s1", "我叫张伟")
    st.record("bob", "s1", "张伟的订单在哪")
    st.record("alice", "s2", "另一个会话")
    assert [t.text for t in st.turns("alice", "s1")] == ["我叫张伟"]
    assert [t.text for t in st.turns("bob", "s1")] == ["张伟的订单在哪"]
    assert [t.text for t in st.turns("alice", "s2")] == ["另一个会话"]
    assert st.turns("bob", "s2") == []
    assert st.prompt_summaries("bob", "s1") == ["张伟的订单在哪"]
    assert [t.seq for t in st.turns("bob", "s1")] == [1]


@pytest.mark.parametrize(("user", "session"), [("", "s1"), ("u1", "")])
def test_an_empty_user_or_session_is_refused(user: str, session: str) -> None:
    st = memory(InMemoryShortTermStore())
    with pytest.raises(ValueError, match="needs a user id and a session id"):
        st.record(user, session, "x")
    with pytest.raises(ValueError, match="needs a user id and a session id"):
        st.turns(user, session)


def test_summaries_respect_the_policy_s_length(store: ShortTermStore) -> None:
    st = memory(store, summary_chars=12)
    turn = st.record(
        "u1", "s1", "我想咨询一下关于上个月信用卡账单分期手续费的计算方式，谢谢", intent="分期"
    )
    assert turn.summary == "我想咨询一下关于上个月…"
    assert len(turn.summary) == 12


def test_the_summary_falls_back_to_the_reply(store: ShortTermStore) -> None:
    st = memory(store)
    assert st.record("u1", "s1", "", "已为您取消自动续费。").summary == "已为您取消自动续费"


def test_prompt_summaries_are_the_newest_within_the_budget(store: ShortTermStore) -> None:
    st = memory(store, short_term_turns=5)
    for text in ("第一件事情", "第二件", "第三件事", "第四件事情说明", "最后"):
        st.record("u1", "s1", text)
    # tokens: 5, 3, 4, 7, 2 (one per Chinese character)
    assert st.prompt_summaries("u1", "s1", 800) == [
        "第一件事情",
        "第二件",
        "第三件事",
        "第四件事情说明",
        "最后",
    ]
    assert st.prompt_summaries("u1", "s1", 13) == ["第三件事", "第四件事情说明", "最后"]
    assert st.prompt_summaries("u1", "s1", 12) == ["第四件事情说明", "最后"]
    # the first that does not fit ends the list: no gap between the turns shown
    assert st.prompt_summaries("u1", "s1", 8) == ["最后"]
    assert st.prompt_summaries("u1", "s1", 1) == []
    assert st.prompt_summaries("u1", "s1", 0) == []


def test_the_default_budget_is_the_policy_s(store: ShortTermStore) -> None:
    st = memory(store, prompt_tokens=6)
    st.record("u1", "s1", "一二三")
    st.record("u1", "s1", "四五六")
    st.record("u1", "s1", "七八九")
    assert st.prompt_summaries("u1", "s1") == ["四五六", "七八九"]


def test_empty_summaries_are_left_out(store: ShortTermStore) -> None:
    st = memory(store)
    st.record("u1", "s1", "退货")
    st.record("u1", "s1", "！！！")
    assert st.prompt_summaries("u1", "s1") == ["退货"]


def test_turns_are_scrubbed_before_they_are_kept(store: ShortTermStore) -> None:
    def scrub(text: str) -> str:
        return "".join("#" if ch.isdigit() else ch for ch in text)

    seen: list[str] = []

    class Recording:
        def summarize(self, text: str, *, limit: int, keywords: Sequence[str] = ()) -> str:
            seen.append(text)
            return "电话13812345678已登记" + "很长" * 30

    st = ShortTermMemory(
        store, MemoryPolicy(), scrub=scrub, summarizer=Recording(), clock=FakeClock()
    )
    turn = st.record("u1", "s1", "我的电话13812345678", "好的，13812345678已记下")
    assert seen == ["我的电话###########"]
    assert (turn.text, turn.reply) == ("我的电话###########", "好的，###########已记下")
    assert turn.summary == "电话###########已登记很长很长很长很长很长很长很…"
    assert len(turn.summary) == 30
    stored = st.turns("u1", "s1")[0]
    assert "13812345678" not in repr(stored)


def test_forget_a_session_or_a_user(store: ShortTermStore) -> None:
    st = memory(store)
    for user, session in [("u1", "s1"), ("u1", "s1"), ("u1", "s2"), ("u2", "s1")]:
        st.record(user, session, "内容")
    assert st.forget("u1", "s1") == 2
    assert st.turns("u1", "s1") == []
    assert len(st.turns("u1", "s2")) == 1
    assert st.forget("u1") == 1
    assert st.turns("u1", "s2") == []
    assert len(st.turns("u2", "s1")) == 1
    # a forgotten window starts again from 1
    assert st.record("u1", "s1", "新的").seq == 1


# ---- SQL specifics -------------------------------------------------------------------------


def test_the_sql_store_migrates_its_own_component(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'st.db'}"
    store = SqlShortTermStore(url)
    assert schema_versions(store.engine, "short_term") == [1]
    assert schema_versions(store.engine, "goals") == []
    assert "short_term_turn" in sa.inspect(store.engine).get_table_names()
    memory(store).record("u1", "s1", "保留下来")
    store.close()
    again = SqlShortTermStore(url)
    assert [t.text for t in memory(again).turns("u1", "s1")] == ["保留下来"]
    again.close()


def test_the_sql_store_accepts_a_shared_engine_and_leaves_it_open(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'shared.db'}")
    store = SqlShortTermStore(engine)
    store.close()
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM short_term_turn")).scalar() == 0
    engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_concurrent_writers_of_one_window(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'st.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    store = SqlShortTermStore(url)
    st = memory(store, short_term_turns=5)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(15):
                st.record("u1", "s1", f"线程{n}第{i}条")
        except BaseException as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [t.seq for t in st.turns("u1", "s1")] == [116, 117, 118, 119, 120]
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM short_term_turn")).scalar() == 5
    store.close()
