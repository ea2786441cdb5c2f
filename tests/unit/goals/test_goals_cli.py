"""``charter goals show|history|sweep``: exact output, exit codes, where the database comes from.

The CLI runs in-process (``charter.cli.main.main``); the goals are written beforehand through
``GoalStore`` with a fake clock, so every time printed is known."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.cells import cell_len

from charter.goals.store import GoalStore
from tests.support.cli import Run, RunCharter

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def write_trip(url: str) -> None:
    now = [T0]
    with GoalStore(url, clock=lambda: now[0]) as store:
        store.create(
            "trip",
            user_id="u1",
            session_id="s1",
            description="上海出差三天",
            timeout_s=900,
            goal_id="g-trip",
        )
        for intent, text in (("flight", "订机票"), ("hotel", "订酒店")):
            store.create(
                intent,
                user_id="u1",
                session_id="s1",
                parent_id="g-trip",
                description=text,
                timeout_s=900,
                goal_id=f"g-{intent}",
            )
        store.create("weather", user_id="u1", session_id="s2", goal_id="g-weather")
        store.create("other", user_id="u2", session_id="s1", goal_id="g-other")
        store.transition("g-trip", "active", actor="user", trigger="user confirmed")
        now[0] += timedelta(minutes=1)
        store.transition("g-flight", "active", actor="agent", trigger="slots filled")
        store.complete("g-flight", {"date": "2024-05-03"}, actor="agent", trigger="booked MU5101")
        store.transition("g-hotel", "active", actor="agent", trigger="slots filled")


@pytest.fixture
def db(goal_db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    write_trip(goal_db_url)
    return goal_db_url


SHOW_U1 = """\
user u1
├── session s1
│   └── trip [active] 上海出差三天 (g-trip)
│       ├── flight [completed] 订机票 (g-flight)
│       └── hotel [active] 订酒店 (g-hotel)
└── session s2
    └── weather [pending] (g-weather)
"""

SHOW_U1_S1_AFTER_SWEEP = """\
user u1
└── session s1
    └── trip [aborted] 上海出差三天 (g-trip)
        ├── flight [completed] 订机票 (g-flight)
        └── hotel [aborted] 订酒店 (g-hotel)
"""

HISTORY_FLIGHT = """\
goal g-flight: flight (sub), user u1, session s1, now completed
  2024-05-01T10:00:00Z  -         -> pending    agent    created
  2024-05-01T10:01:00Z  pending   -> active     agent    slots filled
  2024-05-01T10:01:00Z  active    -> completed  agent    booked MU5101
"""

SWEEP_AT_1030 = """\
aborted g-trip (trip): timeout: active 1800s > 900s
aborted g-hotel (hotel): timeout: active 1740s > 900s
"""


def test_show_prints_each_session_tree_with_statuses(charter: RunCharter, db: str) -> None:
    assert charter("goals", "show", "--user", "u1", "--db", db) == Run(0, SHOW_U1, "")


def test_history_prints_every_change(charter: RunCharter, db: str) -> None:
    assert charter("goals", "history", "g-flight", "--db", db) == Run(0, HISTORY_FLIGHT, "")


def test_sweep_aborts_what_timed_out_and_then_nothing(charter: RunCharter, db: str) -> None:
    assert charter("goals", "sweep", "--db", db, "--now", "2024-05-01T10:14:59Z") == Run(
        0, "nothing to sweep\n", ""
    )
    assert charter("goals", "sweep", "--db", db, "--now", "2024-05-01T18:30:00+08:00") == Run(
        0, SWEEP_AT_1030, ""
    )
    assert charter("goals", "sweep", "--db", db) == Run(0, "nothing to sweep\n", "")
    assert charter("goals", "show", "--user", "u1", "--session", "s1", "--db", db) == Run(
        0, SHOW_U1_S1_AFTER_SWEEP, ""
    )
    history = charter("goals", "history", "g-hotel", "--db", db).out.splitlines()
    assert history[0] == "goal g-hotel: hotel (sub), user u1, session s1, now aborted"
    assert history[-1].endswith("  active    -> aborted    sweeper  timeout: active 1740s > 900s")


def test_no_goals_is_not_an_error(charter: RunCharter, db: str) -> None:
    assert charter("goals", "show", "--user", "nobody", "--db", db) == Run(
        0, "no goals for user nobody\n", ""
    )
    assert charter("goals", "show", "--user", "u1", "--session", "s9", "--db", db) == Run(
        0, "no goals for user u1 in session s9\n", ""
    )


def test_an_unknown_goal_is_a_user_error(charter: RunCharter, db: str) -> None:
    assert charter("goals", "history", "nope", "--db", db) == Run(
        1, "", "charter goals history: no goal 'nope'\n"
    )


def test_the_database_comes_from_the_environment_then_the_working_directory(
    charter: RunCharter,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_trip(f"sqlite:///{elsewhere / 'goals.db'}")
    monkeypatch.chdir(tmp_path)
    assert charter("goals", "show", "--user", "u1") == Run(
        1,
        "",
        "charter goals show: no database at charter.db (give --db URL or set CHARTER_DATABASE_URL)\n",
    )
    assert not (tmp_path / "charter.db").exists()  # a mistyped path creates nothing
    monkeypatch.setenv("CHARTER_DATABASE_URL", f"sqlite:///{elsewhere / 'goals.db'}")
    assert charter("goals", "show", "--user", "u1") == Run(0, SHOW_U1, "")
    monkeypatch.delenv("CHARTER_DATABASE_URL")
    monkeypatch.chdir(elsewhere)
    (elsewhere / "goals.db").rename(elsewhere / "charter.db")
    assert charter("goals", "show", "--user", "u1") == Run(0, SHOW_U1, "")


def test_databases_that_cannot_be_opened(
    charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    assert charter("goals", "show", "--user", "u1", "--db", "not a url") == Run(
        1, "", "charter goals show: not a database URL: 'not a url'\n"
    )
    refused = charter(
        "goals", "sweep", "--db", "postgresql+psycopg://postgres:secret@127.0.0.1:1/x"
    )
    assert refused.code == 1
    assert refused.err.startswith(
        "charter goals sweep: cannot open postgresql+psycopg://postgres:***@127.0.0.1:1/x: "
    )
    assert "secret" not in refused.err


def test_a_malformed_now_is_a_usage_error(charter: RunCharter) -> None:
    assert charter("goals", "sweep", "--now", "yesterday") == Run(
        2,
        "",
        "charter goals sweep: --now: not an ISO 8601 time: 'yesterday' (e.g. 2024-05-01T10:30:00Z)\n",
    )


WRAPPED = """\
user u1
└── session s1
    └── faq [pending]
        退款政策说明退款政策说明退款政策说明退款政策说明退款政策说明退款政策说明退款政策说明退款政策
        说明退款政策说明退款政策说明退款政策说明退款政策说明退款政策说明退款政策说明退款政策说明退款
        政策说明退款政策说明退款政策说明退款政策说明退款政策说明 (g-faq)
"""


def test_long_descriptions_wrap_at_a_fixed_width(charter: RunCharter, goal_sqlite_url: str) -> None:
    with GoalStore(goal_sqlite_url, clock=lambda: T0) as store:
        store.create(
            "faq", user_id="u1", session_id="s1", description="退款政策说明" * 20, goal_id="g-faq"
        )
    run = charter("goals", "show", "--user", "u1", "--db", goal_sqlite_url)
    assert run == Run(0, WRAPPED, "")
    assert max(cell_len(line) for line in run.out.splitlines()) == 100
