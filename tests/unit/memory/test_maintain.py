"""``maintain``: one pass of every lifecycle job, its counts, that a second pass changes
nothing, that it is what makes the health report's decay compliance read right — and
``charter memory maintain``, which runs it from the command line.

Facts on SQLite with the fake clock; summaries embedded with ``HashEmbedder`` (merged at its
calibrated 0.8: the rewordings below are 0.87 or more similar to the first)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

import charter.memory.facts as facts_module
from charter.compile.specs.memory import MemoryPolicy
from charter.health.metrics import compute, open_engine
from charter.memory.embedders import HashEmbedder
from charter.memory.facts import FactStore
from charter.memory.maintain import MaintenanceReport, maintain
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.lifecycle import deprecate
from charter.memory.records import Accessor, PreparedSummary
from tests.support.cli import Run, RunCharter
from tests.support.memory import T0, FakeClock, MakeFact

U1 = Accessor("u1", "agent")
ADMIN = Accessor("u1", "ops", role="admin")
SIMILAR = [
    "合同第三条怎么改",
    "合同第三条怎么改？",
    "合同第三条怎么改呢",
    "请问合同第三条怎么改",
    "合同第三条怎么改啊",
]


@pytest.fixture
def facts(memory_sqlite_url: str, clock: FakeClock) -> Iterator[FactStore]:
    with FactStore(memory_sqlite_url, MemoryPolicy(), clock=clock) as store:
        yield store


@pytest.fixture
def narrative(tmp_path: Path, facts: FactStore, clock: FakeClock) -> Iterator[NarrativeStore]:
    store = NarrativeStore(
        tmp_path / "n", HashEmbedder(), MemoryPolicy(), audit=facts.record_audit, clock=clock
    )
    yield store
    store.close()


def remember(facts: FactStore, narrative: NarrativeStore, make_fact: MakeFact) -> None:
    """At T0: a session state valid 15 minutes and a plain fact; five rewordings of one
    question, a summary valid an hour and one valid for ever."""
    facts.write(
        U1,
        make_fact("step", "2", memory_type="session_state", valid_until=T0 + timedelta(minutes=15)),
    )
    facts.write(U1, make_fact("city", "杭州"))
    questions = [PreparedSummary("u1", t, "default", kind="question") for t in SIMILAR]
    narrative.add(U1, questions)
    narrative.add(
        U1,
        [
            PreparedSummary(
                "u1", "用户问了退货运费", "default", valid_until=T0 + timedelta(hours=1)
            ),
            PreparedSummary("u1", "用户要开发票", "default"),
        ],
    )


def test_one_pass_runs_every_job_and_a_second_changes_nothing(
    facts: FactStore, narrative: NarrativeStore, clock: FakeClock, make_fact: MakeFact
) -> None:
    remember(facts, narrative, make_fact)
    clock.advance(hours=2)

    report = maintain(facts, narrative)

    assert report == MaintenanceReport(
        facts_expired=1,  # the session state
        facts_decayed=1,  # the city, idle two hours (the expired one no longer decays)
        facts_archived=0,
        summaries_expired=1,
        summaries_archived=0,
        questions_merged=5,
        questions_deprecated=0,
        narrative=True,
    )
    assert report.total == 8
    assert maintain(facts, narrative) == MaintenanceReport(narrative=True)
    rows = narrative.list_summaries(ADMIN, history=True)
    assert sorted((s.kind, s.status, s.count) for s in rows) == [
        *[("question", "merged", 1)] * 5,
        ("summary", "active", 1),
        ("summary", "expired", 1),
        ("tag", "active", 5),
    ]

    # the user says they understand: the tag goes, and the next pass the questions in it
    deprecate(narrative, U1, SIMILAR[0])
    assert maintain(facts, narrative).questions_deprecated == 5
    rows = narrative.list_summaries(ADMIN, history=True)
    assert sorted((s.kind, s.status) for s in rows if s.kind != "summary") == [
        *[("question", "deprecated")] * 5,
        ("tag", "deprecated"),
    ]

    # a season later: the fact and the summary nobody used are archived
    clock.advance(days=91)
    assert maintain(facts, narrative) == MaintenanceReport(
        facts_decayed=1, facts_archived=1, summaries_archived=1, narrative=True
    )


def test_without_a_narrative_directory_only_facts_are_maintained(
    facts: FactStore, clock: FakeClock, make_fact: MakeFact
) -> None:
    facts.write(
        U1,
        make_fact("step", "2", memory_type="session_state", valid_until=T0 + timedelta(minutes=15)),
    )
    report = maintain(facts, None, T0 + timedelta(minutes=15))
    assert report == MaintenanceReport(facts_expired=1)
    assert report.lines() == [
        "  facts expired         1",
        "  facts decayed         0",
        "  facts archived        0",
    ]


def test_decay_compliance_reads_right_once_maintained(
    memory_sqlite_url: str, facts: FactStore, clock: FakeClock, make_fact: MakeFact
) -> None:
    facts.write(
        U1,
        make_fact("step", "2", memory_type="session_state", valid_until=T0 + timedelta(minutes=15)),
    )
    facts.write(U1, make_fact("city", "杭州"))
    clock.advance(hours=1)
    engine = open_engine(memory_sqlite_url)
    try:
        before = compute(engine, now=clock.now).metric("decay_compliance")
        assert (before.numerator, before.denominator) == (0, 1)  # nobody ran the lifecycle
        maintain(facts)
        after = compute(engine, now=clock.now).metric("decay_compliance")
        assert (after.numerator, after.denominator) == (1, 1)
    finally:
        engine.dispose()


# ---- charter memory maintain -------------------------------------------------------------------


@pytest.fixture
def cli_db(
    memory_sqlite_url: str,
    facts: FactStore,
    narrative: NarrativeStore,
    clock: FakeClock,
    make_fact: MakeFact,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> str:
    remember(facts, narrative, make_fact)
    narrative.close()
    monkeypatch.delenv("CHARTER_MEMORY_URL", raising=False)
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.delenv("CHARTER_NARRATIVE_PATH", raising=False)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(facts_module, "FactStore", functools.partial(FactStore, clock=clock))
    return memory_sqlite_url


def test_the_command_prints_a_count_per_job(
    charter: RunCharter, cli_db: str, tmp_path: Path
) -> None:
    lance = tmp_path / "n"
    run = ("memory", "maintain", "--db", cli_db, "--narrative", str(lance))
    assert charter(*run, "--now", "2024-05-01T12:00:00Z") == Run(
        0,
        f"maintained {cli_db} and {lance}:\n"
        "  facts expired         1\n"
        "  facts decayed         1\n"
        "  facts archived        0\n"
        "  summaries expired     1\n"
        "  summaries archived    0\n"
        "  questions merged      5\n"
        "  questions deprecated  0\n",
        "",
    )
    assert charter(*run, "--now", "2024-05-01T12:00:00Z").out.count(" 0\n") == 7


def test_the_command_without_narrative_and_its_errors(
    charter: RunCharter, cli_db: str, tmp_path: Path
) -> None:
    # no ./charter-narrative here and none named: facts only
    assert charter("memory", "maintain", "--db", cli_db, "--now", "2024-05-01T10:15:00") == Run(
        0,
        f"maintained {cli_db}:\n"
        "  facts expired         1\n"
        "  facts decayed         1\n"
        "  facts archived        0\n",
        "",
    )
    assert charter("memory", "maintain", "--db", cli_db, "--now", "soon") == Run(
        2,
        "",
        "charter memory maintain: --now: not an ISO 8601 time: 'soon' "
        "(e.g. 2024-05-01T10:30:00Z)\n",
    )
    missing = tmp_path / "none.db"
    assert charter("memory", "maintain", "--db", f"sqlite:///{missing}") == Run(
        1,
        "",
        f"charter memory maintain: no database at {missing} (give --db URL or set "
        "CHARTER_MEMORY_URL)\n",
    )
