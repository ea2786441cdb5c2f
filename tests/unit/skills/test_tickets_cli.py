"""``charter tickets list|show``: exact output, exit codes, where the database comes from.

The CLI runs in-process (``charter.cli.main.main``); the tickets are written beforehand through
``TicketStore`` with a fake clock, so every id and time printed is known."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from charter.skills.tickets import TicketStore
from tests.support.cli import Run, RunCharter
from tests.support.postgres import fresh_schema

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def ticket_pg_url() -> Iterator[str]:
    with fresh_schema("charter_tkt") as url:
        yield url


@pytest.fixture
def ticket_sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tickets.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "ticket_sqlite_url" if request.param == "sqlite" else "ticket_pg_url"
    url: str = request.getfixturevalue(name)
    return url


def write_tickets(url: str) -> None:
    now = [T0]
    with TicketStore(url, clock=lambda: now[0]) as store:
        store.open(
            user_id="u1",
            session_id="s1",
            domain="finance",
            skill="policy_search",
            reason="user negated twice",
            summary="用户连续两次否定检索结果\n需确认补贴年份",
            context={
                "turns": [
                    {"role": "user", "text": "查一下2024年新能源补贴细则"},
                    {"role": "agent", "text": "未找到相关政策"},
                    {"role": "user", "text": "不对"},
                ],
                "negations": 2,
            },
        )
        now[0] += timedelta(minutes=5)
        store.open(
            user_id="u2",
            session_id="s7",
            domain="ecommerce",
            reason="breaker open",
            summary="order_status unavailable",
            context={"skill_call": {"name": "order_status", "error": "timeout after 2.0s"}},
        )
        now[0] += timedelta(minutes=5)
        store.open(user_id="用户甲", session_id="s3", domain="finance", reason="low confidence")
        now[0] += timedelta(minutes=10)
        store.assign("T-000001", "alice")
        now[0] += timedelta(minutes=10)
        store.close("T-000002", "refunded by phone")


@pytest.fixture
def db(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    write_tickets(db_url)
    return db_url


# the user column is as wide as 用户甲 is on screen (6 cells), not as it is long (3)
LIST = """\
id        status    created               user    domain     skill          reason
T-000003  open      2024-05-01T10:10:00Z  用户甲  finance    -              low confidence
T-000002  closed    2024-05-01T10:05:00Z  u2      ecommerce  -              breaker open
T-000001  assigned  2024-05-01T10:00:00Z  u1      finance    policy_search  user negated twice
"""

# columns fit the rows shown
LIST_2 = """\
id        status  created               user    domain     skill  reason
T-000003  open    2024-05-01T10:10:00Z  用户甲  finance    -      low confidence
T-000002  closed  2024-05-01T10:05:00Z  u2      ecommerce  -      breaker open
"""

LIST_U1 = """\
id        status    created               user  domain   skill          reason
T-000001  assigned  2024-05-01T10:00:00Z  u1    finance  policy_search  user negated twice
"""

LIST_CLOSED = """\
id        status  created               user  domain     skill  reason
T-000002  closed  2024-05-01T10:05:00Z  u2    ecommerce  -      breaker open
"""


@pytest.mark.parametrize(
    ("options", "out"),
    [
        ((), LIST),
        (("--user", "u1"), LIST_U1),
        (("--status", "closed"), LIST_CLOSED),
        (("--limit", "2"), LIST_2),
        (("--status", "open", "--user", "u2"), "no open tickets for user u2\n"),
        (("--user", "nobody"), "no tickets for user nobody\n"),
        (("--status", "assigned", "--user", "u1", "--limit", "1"), LIST_U1),
    ],
)
def test_list(charter: RunCharter, db: str, options: tuple[str, ...], out: str) -> None:
    assert charter("tickets", "list", *options, "--db", db) == Run(0, out, "")


LIST_CLOSED_JSON = """\
[
  {
    "id": "T-000002",
    "status": "closed",
    "queue": "human",
    "user_id": "u2",
    "session_id": "s7",
    "domain": "ecommerce",
    "skill": null,
    "reason": "breaker open",
    "summary": "order_status unavailable",
    "context": {
      "skill_call": {
        "name": "order_status",
        "error": "timeout after 2.0s"
      }
    },
    "assignee": null,
    "note": "refunded by phone",
    "created_at": "2024-05-01T10:05:00Z",
    "updated_at": "2024-05-01T10:30:00Z"
  }
]
"""


def test_list_as_json(charter: RunCharter, db: str) -> None:
    closed = charter("tickets", "list", "--status", "closed", "--format", "json", "--db", db)
    assert closed == Run(0, LIST_CLOSED_JSON, "")
    every = json.loads(charter("tickets", "list", "--format", "json", "--db", db).out)
    assert [t["id"] for t in every] == ["T-000003", "T-000002", "T-000001"]
    # a script gets an empty array, not a sentence
    none = charter("tickets", "list", "--user", "nobody", "--format", "json", "--db", db)
    assert none == Run(0, "[]\n", "")


def test_an_empty_database_has_no_tickets(charter: RunCharter, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    TicketStore(url).dispose()
    assert charter("tickets", "list", "--db", url) == Run(0, "no tickets\n", "")


SHOW_1 = """\
ticket T-000001
  status    assigned
  queue     human
  user      u1
  session   s1
  domain    finance
  skill     policy_search
  reason    user negated twice
  summary   用户连续两次否定检索结果
            需确认补贴年份
  assignee  alice
  note      -
  created   2024-05-01T10:00:00Z
  updated   2024-05-01T10:20:00Z
  context
    {
      "turns": [
        {
          "role": "user",
          "text": "查一下2024年新能源补贴细则"
        },
        {
          "role": "agent",
          "text": "未找到相关政策"
        },
        {
          "role": "user",
          "text": "不对"
        }
      ],
      "negations": 2
    }
"""

SHOW_3 = """\
ticket T-000003
  status    open
  queue     human
  user      用户甲
  session   s3
  domain    finance
  skill     -
  reason    low confidence
  summary   -
  assignee  -
  note      -
  created   2024-05-01T10:10:00Z
  updated   2024-05-01T10:10:00Z
  context
    {}
"""


@pytest.mark.parametrize(("tid", "out"), [("T-000001", SHOW_1), ("T-000003", SHOW_3)])
def test_show(charter: RunCharter, db: str, tid: str, out: str) -> None:
    assert charter("tickets", "show", tid, "--db", db) == Run(0, out, "")


def test_show_as_json(charter: RunCharter, db: str) -> None:
    shown = charter("tickets", "show", "T-000002", "--format", "json", "--db", db)
    want = "\n".join(line[2:] for line in LIST_CLOSED_JSON.splitlines()[1:-1]) + "\n"
    assert shown == Run(0, want, "")


def test_an_unknown_ticket_is_a_user_error(charter: RunCharter, db: str) -> None:
    assert charter("tickets", "show", "T-000404", "--db", db) == Run(
        1, "", "charter tickets show: no ticket 'T-000404'\n"
    )


@pytest.mark.parametrize(
    "options",
    [("--status", "pending"), ("--limit", "0"), ("--format", "yaml")],
    ids=["status", "limit", "format"],
)
def test_bad_options_are_usage_errors(
    charter: RunCharter, db: str, options: tuple[str, ...]
) -> None:
    run = charter("tickets", "list", *options, "--db", db)
    assert (run.code, run.out) == (2, "")
    assert f"Invalid value for '{options[0]}'" in run.err


def test_the_database_comes_from_the_environment_then_the_working_directory(
    charter: RunCharter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_tickets(f"sqlite:///{elsewhere / 'goals.db'}")
    monkeypatch.chdir(tmp_path)
    assert charter("tickets", "list") == Run(
        1,
        "",
        "charter tickets list: no database at charter.db "
        "(give --db URL or set CHARTER_DATABASE_URL)\n",
    )
    assert not (tmp_path / "charter.db").exists()  # a mistyped path creates nothing
    monkeypatch.setenv("CHARTER_DATABASE_URL", f"sqlite:///{elsewhere / 'goals.db'}")
    assert charter("tickets", "list") == Run(0, LIST, "")
    monkeypatch.delenv("CHARTER_DATABASE_URL")
    monkeypatch.chdir(elsewhere)
    (elsewhere / "goals.db").rename(elsewhere / "charter.db")
    assert charter("tickets", "show", "T-000003") == Run(0, SHOW_3, "")


@pytest.mark.parametrize("command", ["list", "show"])
def test_databases_that_cannot_be_opened(
    charter: RunCharter, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    args = ("tickets", command, *(["T-000001"] if command == "show" else []))
    assert charter(*args, "--db", "not a url") == Run(
        1, "", f"charter tickets {command}: not a database URL: 'not a url'\n"
    )
    refused = charter(*args, "--db", "postgresql+psycopg://postgres:secret@127.0.0.1:1/x")
    assert refused.code == 1
    assert refused.err.startswith(
        f"charter tickets {command}: cannot open postgresql+psycopg://postgres:***@127.0.0.1:1/x: "
    )
    assert "secret" not in refused.err
