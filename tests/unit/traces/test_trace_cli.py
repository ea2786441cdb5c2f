"""``charter trace ID`` and ``charter traces``: exact output, exit codes, where the database
comes from. The CLI runs in-process; traces are saved beforehand, built by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from charter.traces.model import TraceStep
from charter.traces.store import TraceStore
from tests.support.cli import Run, RunCharter
from tests.support.traces import RECALL, trace

SKILL = TraceStep(
    "skill",
    20.0,
    2000.0,
    {"name": "policy_search", "args": {"year": 2024}},
    {"error": "TimeoutError: after 2.0s"},
    "fallback: degrade_to_faq",
)


def write_traces(url: str) -> None:
    with TraceStore(url) as store:
        store.save(trace("tr-1", steps=(RECALL,)))
        store.save(
            trace("tr-2", minutes=1, session="s2", steps=(RECALL, SKILL), verdict="escalate")
        )
        store.save(trace("tr-3", minutes=2, user="用户甲", steps=(), reply="", duration_ms=1500.0))
        store.save(trace("tr-acme", minutes=3, tenant="acme"))


@pytest.fixture
def db(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    write_traces(db_url)
    return db_url


SHOW_2 = """\
trace tr-2
  user      u1
  session   s2
  domain    finance
  started   2024-05-01T10:01:00Z
  duration  141.5 ms
  verdict   escalate
  steps     2
  reply     合同第三条约定了违约责任。

step 1: recall (12.2 ms, from +0.5 ms)
  decision  ladder: entity
  in        text: 上次说的合同第三条
            top_k: 3
  out       step: entity
            facts: [{"key": "contract", "value": "第三条"}]

step 2: skill (2.00 s, from +20.0 ms)
  decision  fallback: degrade_to_faq
  in        name: policy_search
            args: {"year": 2024}
  out       error: TimeoutError: after 2.0s
"""

SHOW_ACME = """\
trace tr-acme
  user      u1
  session   s1
  domain    finance
  tenant    acme
  started   2024-05-01T10:03:00Z
  duration  141.5 ms
  verdict   pass
  steps     2
"""


def test_show(charter: RunCharter, db: str) -> None:
    assert charter("trace", "tr-2", "--db", db) == Run(0, SHOW_2, "")


def test_show_a_tenant_s_trace(charter: RunCharter, db: str) -> None:
    shown = charter("trace", "tr-acme", "--tenant", "acme", "--db", db)
    assert (shown.code, shown.err) == (0, "")
    assert shown.out.startswith(SHOW_ACME)


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (("tr-404",), "charter trace: no trace 'tr-404'\n"),
        (("tr-acme",), "charter trace: no trace 'tr-acme'\n"),
        (("tr-acme", "--tenant", "beta"), "charter trace: no trace 'tr-acme' in tenant 'beta'\n"),
        (("tr-1", "--tenant", "acme"), "charter trace: no trace 'tr-1' in tenant 'acme'\n"),
    ],
    ids=["unknown", "tenant's without --tenant", "another tenant", "untenanted with --tenant"],
)
def test_a_trace_not_there_is_a_user_error(
    charter: RunCharter, db: str, args: tuple[str, ...], err: str
) -> None:
    assert charter("trace", *args, "--db", db) == Run(1, "", err)


SHOW_1_JSON = """\
{
  "id": "tr-1",
  "tenant": null,
  "user_id": "u1",
  "session_id": "s1",
  "domain": "finance",
  "started_at": "2024-05-01T10:00:00Z",
  "duration_ms": 141.5,
  "verdict": "pass",
  "reply": "合同第三条约定了违约责任。",
  "steps": [
    {
      "name": "recall",
      "started_ms": 0.5,
      "duration_ms": 12.25,
      "decision": "ladder: entity",
      "inputs": {
        "text": "上次说的合同第三条",
        "top_k": 3
      },
      "outputs": {
        "step": "entity",
        "facts": [
          {
            "key": "contract",
            "value": "第三条"
          }
        ]
      }
    }
  ]
}
"""


def test_show_as_json(charter: RunCharter, db: str) -> None:
    assert charter("trace", "tr-1", "--format", "json", "--db", db) == Run(0, SHOW_1_JSON, "")


LIST = """\
id    started               duration  user    session  domain   verdict   steps
tr-3  2024-05-01T10:02:00Z  1.50 s    用户甲  s1       finance  pass      0
tr-2  2024-05-01T10:01:00Z  141.5 ms  u1      s2       finance  escalate  2
tr-1  2024-05-01T10:00:00Z  141.5 ms  u1      s1       finance  pass      1
"""

LIST_U1 = """\
id    started               duration  user  session  domain   verdict   steps
tr-2  2024-05-01T10:01:00Z  141.5 ms  u1    s2       finance  escalate  2
tr-1  2024-05-01T10:00:00Z  141.5 ms  u1    s1       finance  pass      1
"""

LIST_1 = """\
id    started               duration  user    session  domain   verdict  steps
tr-3  2024-05-01T10:02:00Z  1.50 s    用户甲  s1       finance  pass     0
"""

LIST_ACME = """\
id       started               duration  user  session  domain   verdict  steps
tr-acme  2024-05-01T10:03:00Z  141.5 ms  u1    s1       finance  pass     2
"""

LIST_S1_U1 = """\
id    started               duration  user  session  domain   verdict  steps
tr-1  2024-05-01T10:00:00Z  141.5 ms  u1    s1       finance  pass     1
"""


@pytest.mark.parametrize(
    ("options", "out"),
    [
        ((), LIST),
        (("--user", "u1"), LIST_U1),
        (("--limit", "1"), LIST_1),
        (("--tenant", "acme"), LIST_ACME),
        (("--user", "u1", "--session", "s1"), LIST_S1_U1),
        (("--user", "nobody"), "no traces for user nobody\n"),
        (("--session", "s9"), "no traces in session s9\n"),
        (("--user", "u2", "--session", "s9"), "no traces for user u2 in session s9\n"),
        (("--tenant", "beta"), "no traces\n"),
    ],
)
def test_list(charter: RunCharter, db: str, options: tuple[str, ...], out: str) -> None:
    assert charter("traces", *options, "--db", db) == Run(0, out, "")


def test_list_as_json(charter: RunCharter, db: str) -> None:
    listed = charter("traces", "--user", "u1", "--limit", "1", "--format", "json", "--db", db)
    assert listed.code == 0
    assert json.loads(listed.out) == [
        trace("tr-2", minutes=1, session="s2", steps=(RECALL, SKILL), verdict="escalate").as_dict()
    ]
    # a script gets an empty array, not a sentence
    assert charter("traces", "--user", "nobody", "--format", "json", "--db", db) == Run(
        0, "[]\n", ""
    )


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("traces", "--limit", "0"), "--limit"),
        (("traces", "--format", "text"), "--format"),
        (("trace", "tr-1", "--format", "table"), "--format"),
    ],
)
def test_bad_options_are_usage_errors(
    charter: RunCharter, db: str, args: tuple[str, ...], option: str
) -> None:
    run = charter(*args, "--db", db)
    assert (run.code, run.out) == (2, "")
    assert f"Invalid value for '{option}'" in run.err


def test_the_database_comes_from_the_environment_then_the_working_directory(
    charter: RunCharter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_traces(f"sqlite:///{elsewhere / 'turns.db'}")
    monkeypatch.chdir(tmp_path)
    assert charter("trace", "tr-2") == Run(
        1,
        "",
        "charter trace: no database at charter.db (give --db URL or set CHARTER_DATABASE_URL)\n",
    )
    assert not (tmp_path / "charter.db").exists()  # a mistyped path creates nothing
    monkeypatch.setenv("CHARTER_DATABASE_URL", f"sqlite:///{elsewhere / 'turns.db'}")
    assert charter("trace", "tr-2") == Run(0, SHOW_2, "")
    monkeypatch.delenv("CHARTER_DATABASE_URL")
    monkeypatch.chdir(elsewhere)
    (elsewhere / "turns.db").rename(elsewhere / "charter.db")
    assert charter("traces") == Run(0, LIST, "")


@pytest.mark.parametrize(
    ("args", "prog"), [(("trace", "tr-1"), "charter trace"), (("traces",), "charter traces")]
)
def test_databases_that_cannot_be_opened(
    charter: RunCharter, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], prog: str
) -> None:
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    assert charter(*args, "--db", "not a url") == Run(
        1, "", f"{prog}: not a database URL: 'not a url'\n"
    )
    refused = charter(*args, "--db", "postgresql+psycopg://postgres:secret@127.0.0.1:1/x")
    assert refused.code == 1
    assert refused.err.startswith(
        f"{prog}: cannot open postgresql+psycopg://postgres:***@127.0.0.1:1/x: "
    )
    assert "secret" not in refused.err
