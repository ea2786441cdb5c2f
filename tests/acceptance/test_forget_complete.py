"""Forget is complete from every entry point (issue 17): ``DELETE /v1/users/{id}``,
``Agent.forget`` and ``charter memory forget`` each leave no row and no byte of the user.

Three users of one service (the ecommerce pack, the scripted model, a SQLite file and a
narrative directory) hold a conversation that writes to every store: facts and their audit
trail, short-term turns, narrative summaries and questions with their vectors, goals with their
context and history, a confirmed return (a skill execution in the ledger), a handoff (a
ticket), a correction (a reflection log entry), traces and their steps. Then alice is
forgotten over HTTP, bob through the API and, once the service has stopped, carol with the
command line. After each, every row of every table the database has (read from
``sqlite_master``) and every file and row of the LanceDB directory are searched for each
forgotten user's id, session and words — and for the others', which must still be there (the
search can fail). At the end the only rows left are the schema version and one audit row per
forget, whose user is a hash.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.agent import Agent
from charter.agent.configured import agent_options
from charter.compile.api import compile_path
from charter.llm.scripted import ScriptedLLM
from charter.memory.crypto import decode_key, forgotten_id
from charter.plugins.host import default_registry
from charter.serve import create_app
from tests.support.serve import KEY, ROOT, TestClient, auth, serve_config

USERS = ("alice", "bob", "carol")
# what each user says; the fruit marks their words (no pack text has it)
FRUIT = {"alice": "樱桃", "bob": "菠萝", "carol": "芒果"}
ORDER = "DD202405030002"


def script(user: str) -> list[str]:
    fruit = FRUIT[user]
    return [
        f"{fruit}色那件，订单{ORDER}尺码不合适，我要退货",  # a goal and its confirmation
        "是",  # the return executes: the ledger keeps it
        "不对，我说的是换货",  # a correction: the reflection log
        "转人工",  # a ticket
        f"{fruit}页面怎么这么卡",  # a question for the narrative channel
    ]


@dataclasses.dataclass
class Deployment:
    client: TestClient
    url: str
    narrative: Path
    running: bool = True

    def agent(self) -> Agent:
        agent: Agent = self.client.app.state.service.agent  # type: ignore[attr-defined]
        return agent

    def stop(self) -> None:
        if self.running:
            self.running = False
            self.client.__exit__(None, None, None)


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    registry, diags = default_registry()
    assert not diags, diags
    pack, problems = compile_path(
        ROOT / "domains" / "ecommerce", registry, cache_dir=tmp_path / "c"
    )
    assert pack is not None, problems
    url = f"sqlite:///{tmp_path / 'charter.db'}"
    narrative = tmp_path / "narrative"
    config = serve_config(url)

    def agent() -> Agent:
        return Agent.from_pack(
            pack,
            llm=ScriptedLLM(default="好的"),
            database_url=url,
            memory_key=KEY,
            registry=registry,
            options=agent_options(config),
            narrative_path=narrative,
        )

    client = TestClient(create_app(config, agent_factory=agent, environ={}))
    client.__enter__()
    d = Deployment(client, url, narrative)
    try:
        yield d
    finally:
        d.stop()


def markers(user: str) -> tuple[str, ...]:
    """What only this user's rows hold: the id as stored, the session, the words."""
    return (f"acme:{user}", f"s-{user}", FRUIT[user])


def rows(url: str) -> dict[str, list[str]]:
    """Every row of every table ``sqlite_master`` lists, as text, by table."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            names = conn.execute(
                sa.text("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            ).scalars()
            out: dict[str, list[str]] = {}
            for name in list(names):
                found = conn.execute(sa.text(f'SELECT * FROM "{name}"')).all()
                out[name] = [" ".join(str(v) for v in row) for row in found]
        return out
    finally:
        engine.dispose()


def lance(path: Path) -> list[str]:
    """Every file of the narrative directory (its bytes, as text) and every row of its tables."""
    import lancedb

    texts = [p.read_bytes().decode("utf-8", "ignore") for p in path.rglob("*") if p.is_file()]
    db = lancedb.connect(str(path))
    for name in db.list_tables().tables:
        for row in db.open_table(name).to_arrow().to_pylist():
            texts.append(" ".join(str(v) for k, v in row.items() if k != "vector"))
    return texts


def holding(d: Deployment, user: str) -> set[str]:
    """Where a marker of ``user`` is found: table names, and ``narrative``."""
    found = {
        table
        for table, texts in rows(d.url).items()
        for text in texts
        if any(m in text for m in markers(user))
    }
    if any(m in text for text in lance(d.narrative) for m in markers(user)):
        found.add("narrative")
    return found


# the tables a user's conversation writes to, found by the user's markers (goal_context,
# goal_history and trace_step rows name a goal or a trace, not the user: counted below)
MARKED = {
    "goal_tree",
    "memory_audit",
    "memory_fact",
    "reflection_log",
    "short_term_turn",
    "skill_ticket",
    "trace",
    "trace_step",
    "narrative",
}


def count(url: str, table: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(f'SELECT count(*) FROM "{table}"')).scalar_one())
    finally:
        engine.dispose()


@pytest.mark.slow  # three users through every entry point, then every byte searched (about 3 s)
def test_forget_leaves_nothing_from_any_entry_point(
    deployment: Deployment, run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = deployment
    for user in USERS:
        for text in script(user):
            r = d.client.post(
                "/v1/turns",
                json={"user_id": user, "session_id": f"s-{user}", "text": text},
                headers=auth("acme"),
            )
            assert r.status_code == 200, r.text
    for user in USERS:
        assert holding(d, user) >= MARKED, user
    # per user: 1 goal with its context, its history, 1 execution keyed by it
    for table in ("goal_context", "goal_history", "skill_execution"):
        assert count(d.url, table) >= 3, table

    # HTTP
    gone = d.client.delete("/v1/users/alice", headers=auth("acme"))
    assert gone.status_code == 200, gone.text
    deleted = gone.json()["deleted"]
    assert {k for k, v in deleted.items() if v} == {
        "facts",
        "summaries",
        "turns",
        "goals",
        "executions",
        "tickets",
        "traces",
        "reflections",
    }
    assert holding(d, "alice") == set()
    assert holding(d, "bob") >= MARKED and holding(d, "carol") >= MARKED

    # the API
    counts = d.agent().forget("acme:bob")
    assert counts == {**deleted, "summaries": counts["summaries"]}  # the same conversation
    assert holding(d, "bob") == set()
    assert holding(d, "carol") >= MARKED

    # the command line, the service stopped, the memory key in its environment (it names
    # the forgotten user in the audit trail as the service does)
    d.stop()
    monkeypatch.setenv("CHARTER_MEMORY_KEY", KEY)
    cli = run_cli(
        "memory",
        "forget",
        "--user",
        "acme:carol",
        "--yes",
        "--db",
        d.url,
        "--narrative",
        str(d.narrative),
    )
    assert (cli.code, cli.err) == (0, "")
    assert cli.out == (
        f"forgot user acme:carol: {deleted['facts']} facts, {counts['summaries']} summaries, "
        f"{deleted['turns']} short-term turns, {deleted['goals']} goals, "
        f"{deleted['executions']} skill executions, {deleted['tickets']} tickets, "
        f"{deleted['traces']} traces, {deleted['reflections']} reflections and their audit "
        "trail deleted\n"
    )
    assert holding(d, "carol") == set()

    # nothing of anyone is left but the schema versions, SQLite's AUTOINCREMENT counters (a
    # table name and a number) and the forget rows, the user an HMAC under the memory key (no
    # data key either: user_key is empty)
    left = {table: texts for table, texts in rows(d.url).items() if texts}
    assert left.keys() == {"charter_schema_version", "sqlite_sequence", "memory_audit"}
    audit = sa.create_engine(d.url)
    try:
        with audit.connect() as conn:
            who = conn.execute(sa.text("SELECT user_id, action FROM memory_audit")).all()
    finally:
        audit.dispose()
    hashes = {forgotten_id(f"acme:{u}", decode_key(KEY, "KEY")) for u in USERS}
    assert {u for u, _ in who} == hashes
    assert {a for _, a in who} == {"forget"}
    assert [t for t in lance(d.narrative) if "acme" in t] == []
