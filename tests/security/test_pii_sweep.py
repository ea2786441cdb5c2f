"""Issue 16, acceptance 2: no raw personal data anywhere.

The generated corpus (``pii_corpus``: 524 statements, IDs, mobiles, cards and addresses in every
spelling seen leaking, those of issue 33 included) is said to each shipped pack; then every row
of every table of the database (goals, history, context, facts, short-term memory, traces,
tickets, the reflection log …), the bytes of the SQLite file and its WAL (while the agent runs
and after it closed) or PostgreSQL's WAL from the run's start, every file of the narrative
(LanceDB) directory, every version included, every row of its tables and every log record are
searched for each raw value, also with its separators removed, its digits read as ASCII and
invisible characters dropped. The count must be 0.

Two paths, sized by what each proves:

* the whole corpus, on SQLite and on PostgreSQL, through the agent in-process as the service
  runs it (the tenant-scoped user id, the service's options), spread over 54 users of one
  session each, as real traffic is. The narrative store embeds with the hash embedder: what is
  stored is the scrubbed text whatever the embedder, and the model's embedding would cost most
  of the run;
* through the HTTP service (the ASGI app ``charter serve`` runs, its default embedder), each
  spelling of each kind once per pack, with the traces as the API returns them added to the
  places searched. Every spelling also goes through the service alone, pack by pack, in
  ``test_pii.py``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from charter.agent import Agent
from charter.agent.configured import agent_options
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM
from charter.memory.embedders import HashEmbedder
from charter.serve.auth import scoped
from charter.store.migrations import make_engine
from tests.security.pii_corpus import Statement, corpus, leaked
from tests.security.scan import (
    database_text,
    directory_text,
    lance_text,
    postgres_wal,
    sqlite_files,
    wal_position,
)
from tests.support.postgres import fresh_schema
from tests.support.serve import KEY, ROOT, MakeService, auth, serve_config

CORPUS = corpus()
PER_SESSION = 8  # statements per user (each user one session)


def one_per_spelling() -> tuple[Statement, ...]:
    """One statement per kind and spelling, the sentences and values taken in turn."""
    groups: dict[tuple[str, str], list[Statement]] = {}
    for s in CORPUS:
        groups.setdefault((s.kind, s.spelling), []).append(s)
    return tuple(g[n * 7 % len(g)] for n, g in enumerate(groups.values()))


SPELLINGS = one_per_spelling()


def found_in(places: Iterator[tuple[str, str]]) -> dict[str, int]:
    """Where each raw value was found: place -> number of statements leaked there."""
    found: dict[str, set[Statement]] = {}
    for place, text in places:
        for s in leaked(text, CORPUS):
            found.setdefault(place, set()).add(s)
    return {place: len(s) for place, s in sorted(found.items())}


def stored(database_url: str, narrative: Path) -> Iterator[tuple[str, str]]:
    for table, text in database_text(database_url):
        yield f"table {table}", text
    if database_url.startswith("sqlite"):
        for name, text in sqlite_files(database_url):
            yield f"file {name}", text
    for name, text in directory_text(narrative):
        yield f"narrative {name}", text
    for name, text in lance_text(narrative):
        yield f"narrative table {name}", text


def logged(records: list[logging.LogRecord]) -> Iterator[tuple[str, str]]:
    for record in records:
        yield f"log {record.name}", record.getMessage()


@contextmanager
def agent_as_served(
    backend: str, pack: CompiledPack, registry: Registry, tmp_path: Path
) -> Iterator[tuple[Agent, str, Path]]:
    """The agent the service builds for ``pack`` (its options, a fresh database of
    ``backend``), in-process; its database URL and narrative directory."""
    with ExitStack() as stack:
        if backend == "postgres":
            url = stack.enter_context(fresh_schema("charter_security"))
        else:
            url = f"sqlite:///{tmp_path / 'sweep.db'}"
        narrative = tmp_path / "narrative"
        config = serve_config(url)
        config = dataclasses.replace(
            config,
            agent=dataclasses.replace(config.agent, domain=str(ROOT / "domains" / pack.name)),
        )
        agent = Agent.from_pack(
            pack,
            llm=ScriptedLLM(default="好的"),
            database_url=url,
            memory_key=KEY,
            registry=registry,
            options=agent_options(config),
            narrative_path=narrative,
            embedder=HashEmbedder(),
        )
        stack.callback(agent.close)
        yield agent, url, narrative


@pytest.mark.slow  # the sweep: 524 turns per pack and database (40-60 s each)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("pack", ["ecommerce", "finance", "medical"])
def test_no_raw_personal_data_anywhere(
    shipped_packs: Mapping[str, CompiledPack],
    registry: Registry,
    tmp_path: Path,
    pack: str,
    backend: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    assert len(CORPUS) == 524
    with agent_as_served(backend, shipped_packs[pack], registry, tmp_path) as (agent, url, lance):
        since = wal_position(url) if backend == "postgres" else ("", 0)
        for i, s in enumerate(CORPUS):
            user = scoped("acme", f"u-sweep-{i // PER_SESSION}")
            agent.turn(user, "s1", s.text, tenant="acme")
        # before close: the SQLite WAL as the running agent left it
        live = list(sqlite_files(url)) if backend == "sqlite" else []
    # after close: the usage counts and everything else written at shutdown are searched too
    assert found_in(stored(url, lance)) == {}
    assert found_in(iter([(f"live {name}", text) for name, text in live])) == {}
    if backend == "postgres":
        assert found_in((f"wal {n}", t) for n, t in postgres_wal(url, since)) == {}
    assert found_in(logged(caplog.records)) == {}


@pytest.mark.slow  # 56 turns per pack through the service (about 6 s each)
@pytest.mark.parametrize("pack", ["ecommerce", "finance", "medical"])
def test_no_raw_personal_data_through_the_service(
    service: MakeService, pack: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    svc = service("sqlite", pack)
    assert len(SPELLINGS) == 56
    for i, s in enumerate(SPELLINGS):
        r = svc.turn("acme", f"u-sweep-{i // PER_SESSION}", s.text, session_id="s1")
        assert r.status_code == 200, (s.text, r.text)
    users = sorted({f"u-sweep-{i // PER_SESSION}" for i in range(len(SPELLINGS))})
    api = [svc.client.get("/v1/traces", params={"user_id": u}, headers=auth("acme")) for u in users]
    assert [r.status_code for r in api] == [200] * len(users)
    places = [
        *stored(svc.database_url, svc.narrative),
        *(("traces API", r.text) for r in api),
        *logged(caplog.records),
    ]
    assert found_in(iter(places)) == {}


def test_the_sweep_finds_what_is_planted(service: MakeService) -> None:
    """The sweep can fail: a raw card number written past the agent is found, in every form."""
    svc = service("sqlite", "ecommerce")
    assert svc.turn("acme", "u1", "你好", session_id="s1").status_code == 200
    card = next(s for s in CORPUS if s.kind == "bank_card" and s.spelling == "plain")
    spaced = next(
        s for s in CORPUS if s.kind == "phone" and s.spelling == "full-width dashed-3-4-4"
    )
    planted = f"卡号{card.value}，{spaced.value}"
    engine = sa.create_engine(svc.database_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE trace SET reply = :r"), {"r": planted})
    engine.dispose()
    (svc.narrative / "planted.txt").parent.mkdir(parents=True, exist_ok=True)
    (svc.narrative / "planted.txt").write_text(card.digits, encoding="utf-8")
    found = found_in(stored(svc.database_url, svc.narrative))
    # every statement of the card and of the mobile, whatever its spelling: ten spellings each
    assert found["table trace"] == len(leaked(planted, CORPUS)) == 20
    assert found["narrative planted.txt"] == 10
    assert found_in(logged([])) == {}


def test_the_service_sweep_takes_every_spelling_once() -> None:
    kinds = {(s.kind, s.spelling) for s in CORPUS}
    assert {(s.kind, s.spelling) for s in SPELLINGS} == kinds
    assert len({s.text for s in SPELLINGS}) == len(SPELLINGS)


# a mobile of no statement of the corpus: a sweep on another worker must never find it
PLANTED = Statement("phone", "plain", "13700001234", "13700001234", "手机13700001234")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_sweep_finds_a_deleted_row(backend: str, tmp_path: Path) -> None:
    """The WAL search can fail: a raw mobile inserted and deleted again is in no table any
    more, and still found in the WAL (PostgreSQL's, or the SQLite file's while the store
    that wrote it is open)."""
    assert leaked(" ".join(s.text for s in CORPUS), (PLANTED,)) == []
    with ExitStack() as stack:
        if backend == "postgres":
            url = stack.enter_context(fresh_schema("charter_security"))
        else:
            url = f"sqlite:///{tmp_path / 'planted.db'}"
        since = wal_position(url) if backend == "postgres" else ("", 0)
        engine = make_engine(url)  # the store's own: WAL and secure_delete on SQLite
        stack.callback(engine.dispose)
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE note (text VARCHAR(200))"))
            conn.execute(sa.text("INSERT INTO note VALUES (:t)"), {"t": PLANTED.text})
        with engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM note"))
        tables = [text for _, text in database_text(url)]
        assert [t for t in tables if leaked(t, (PLANTED,))] == []
        if backend == "postgres":
            wal = [t for _, t in postgres_wal(url, since)]
        else:
            wal = [t for n, t in sqlite_files(url) if n.endswith("-wal")]
        assert len([t for t in wal if leaked(t, (PLANTED,))]) == 1
