"""The health metrics (``charter.health.report`` defines them) counted in SQL, on SQLite and
PostgreSQL alike, from the tables the runtime writes: ``trace``/``trace_step``, ``memory_fact``
and ``memory_audit``, ``goal_tree``, ``reflection_log`` and ``patch_use``.

Counting happens in the database: ``count``/``sum(CASE …)`` with ``GROUP BY`` the UTC day, and
the JSON arrays of a step's outputs (the recall step's ``memories``, the skills step's
``outcomes``) unnested by the database's own JSON functions (SQLite's ``json_each``,
PostgreSQL's ``json_array_elements``), so no trace is shipped to Python to be parsed. The
metrics read from traces are the sums of their days; chain success, which counts distinct goals,
is counted over the whole window once more.

The window: ``since`` (inclusive) bounds the events — turns, recalls, reads, reflections, patch
uses, facts whose validity ended — while what is counted *of* them is today's state: the facts
active now, the goals' status now, the patches the pack deploys now. ``pack`` selects the turns
(``trace.domain``), the reflections and the patch uses; facts belong to users, not packs, and
are counted for the whole database.

Where a fact was written: the fact table has no session, so a fact is taken to be written in
the session of its user's latest turn that started at or before the fact's ``created_at`` (the
turn whose after-answer step wrote it); a fact no turn precedes (written by an operator, an
import, a demo setup) belongs to no session, hence to another one than any recall's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection, Engine

from charter.compile.specs.learn import PatchSet
from charter.goals.migrations import GOAL_MIGRATIONS
from charter.goals.tables import GOAL_TREE
from charter.health.report import DEFINITIONS, TREND_IDS, Day, HealthReport, Metric
from charter.learn.log import COMPONENT as LEARNING
from charter.learn.log import LEARNING_MIGRATIONS, LOG, USE
from charter.memory.facts.migrations import COMPONENT as MEMORY
from charter.memory.facts.migrations import MEMORY_MIGRATIONS
from charter.memory.facts.tables import MEMORY_AUDIT, MEMORY_FACT
from charter.store.migrations import make_engine, migrate, transaction
from charter.traces.migrations import COMPONENT as TRACES
from charter.traces.migrations import TRACE_MIGRATIONS
from charter.traces.model import as_utc
from charter.traces.store import STEPS
from charter.traces.store import TRACES as TRACE_TABLE

T, S, F, A, G = TRACE_TABLE, STEPS, MEMORY_FACT, MEMORY_AUDIT, GOAL_TREE
READ_USES = 3  # seed 001 §5.2: a rule used at least three times is reused
NOT_DECAYING = ("superseded", "deprecated", "contradicted")  # replaced, not outlived
DECAYED = ("expired", "archived")
_LOG_ID = re.compile(r"^R-(\d+)$")
Counts = dict[str | None, tuple[int, int]]  # day (None: the whole window) -> (num, den)

NOTES = {
    "memory_utilisation": "no active facts",
    "cross_session_rate": "no facts recalled",
    "decay_compliance": "no fact outlived its validity",
    "reflection_conversion": "no reflections",
    "rule_reuse": "no patches deployed",
    "failure_interception": "no patch uses or reflections behind them",
    "contract_compliance": "no skill calls",
    "fallback_activation": "no skill calls",
    "chain_success": "no fallback ran for a goal",
}
NO_PACK = "needs --pack (its deployed patches)"


def open_engine(url: str) -> Engine:
    """An engine on ``url`` with every table health reads there (migrated like the stores do
    when they open: a database an agent wrote has them all already)."""
    engine = make_engine(url)
    try:
        for component, migrations in (
            ("goals", GOAL_MIGRATIONS),
            (MEMORY, MEMORY_MIGRATIONS),
            (TRACES, TRACE_MIGRATIONS),
            (LEARNING, LEARNING_MIGRATIONS),
        ):
            migrate(engine, component, migrations)
    except BaseException:
        engine.dispose()
        raise
    return engine


# ---- dialects ----------------------------------------------------------------------------------


def _day(conn: Connection, column: Any) -> Any:
    """The UTC day of a timestamp as ``YYYY-MM-DD`` text."""
    if conn.dialect.name == "postgresql":
        return sa.func.to_char(sa.func.timezone("UTC", column), "YYYY-MM-DD")
    return sa.func.date(column)  # SQLite keeps UTC text


def _elements(conn: Connection, column: Any, key: str, *, text: bool = False) -> Any:
    """The elements of the JSON array under ``key`` of a JSON text column, one row each (column
    ``value``): no rows when the key is missing. ``text``: the elements are strings."""
    if conn.dialect.name == "postgresql":
        fn = sa.func.json_array_elements_text if text else sa.func.json_array_elements
        return fn(sa.cast(column, postgresql.JSON)[key]).table_valued("value").lateral()
    return sa.func.json_each(column, f"$.{key}").table_valued("value")


def _field(conn: Connection, element: Any, name: str) -> Any:
    """A field of a JSON object element as text; NULL when missing or JSON null."""
    if conn.dialect.name == "postgresql":
        return sa.func.json_extract_path_text(element, name)
    return sa.func.json_extract(element, f"$.{name}")


def _when(condition: Any) -> Any:
    return sa.func.coalesce(sa.func.sum(sa.case((condition, 1), else_=0)), 0)


# ---- memory ------------------------------------------------------------------------------------


def _utilisation(conn: Connection, since: datetime | None) -> tuple[int, int]:
    # not correlated: the database builds the set of read ids once (memory_audit has no
    # index on memory_id, and a probe per fact would scan it per fact)
    read = sa.select(A.c.memory_id).where(A.c.action == "read", A.c.memory_id.is_not(None))
    if since is not None:
        read = read.where(A.c.at >= since)
    q = sa.select(_when(F.c.id.in_(read)), sa.func.count()).where(F.c.status == "active")
    num, den = conn.execute(q).one()
    return int(num), int(den)


def _decay(conn: Connection, since: datetime | None, now: datetime) -> tuple[int, int]:
    where = [
        F.c.valid_until.is_not(None),
        F.c.valid_until < now,
        F.c.status.not_in(NOT_DECAYING),
    ]
    if since is not None:
        where.append(F.c.valid_until >= since)
    q = sa.select(_when(F.c.status.in_(DECAYED)), sa.func.count()).where(*where)
    num, den = conn.execute(q).one()
    return int(num), int(den)


def _by_day(rows: Iterable[Any]) -> Counts:
    out: Counts = {}
    for day, num, den in rows:
        out[str(day)] = (int(num), int(den))
    return out


def _cross_session(conn: Connection, where: list[Any]) -> Counts:
    memories = _elements(conn, S.c.outputs, "memories", text=True)
    w = T.alias("w")
    writer = (
        sa.select(w.c.session_id)
        .where(w.c.user_id == F.c.user_id, w.c.started_at <= F.c.created_at)
        .order_by(w.c.started_at.desc(), w.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    day = _day(conn, T.c.started_at)
    q = (
        sa.select(day, _when(sa.or_(writer.is_(None), writer != T.c.session_id)), sa.func.count())
        .select_from(
            T.join(S, S.c.trace_id == T.c.id)
            .join(memories, sa.true())
            .join(F, F.c.id == memories.c.value)
        )
        .where(S.c.name == "recall", *where)
        .group_by(day)
    )
    return _by_day(conn.execute(q))


# ---- skills ------------------------------------------------------------------------------------


def _calls(conn: Connection, where: list[Any]) -> tuple[Counts, Counts]:
    """Per day: (calls without a contract violation, calls), (calls with a fallback, calls)."""
    outcomes = _elements(conn, S.c.outputs, "outcomes")
    failure = _field(conn, outcomes.c.value, "failure")
    fallback = _field(conn, outcomes.c.value, "fallback")
    day = _day(conn, T.c.started_at)
    q = (
        sa.select(
            day,
            sa.func.count(),
            _when(failure == "contract_violation"),
            _when(fallback.is_not(None)),
        )
        .select_from(T.join(S, S.c.trace_id == T.c.id).join(outcomes, sa.true()))
        .where(S.c.name == "skills", *where)
        .group_by(day)
    )
    compliant: Counts = {}
    fell_back: Counts = {}
    for d, calls, violations, fallbacks in conn.execute(q):
        compliant[str(d)] = (int(calls) - int(violations), int(calls))
        fell_back[str(d)] = (int(fallbacks), int(calls))
    return compliant, fell_back


def _chains(conn: Connection, where: list[Any]) -> Counts:
    """Goals with a call whose fallback ran, and how many of them are completed: per day (the
    day of such a call) and, under None, over the window (a goal counted once)."""
    outcomes = _elements(conn, S.c.outputs, "outcomes")
    goal = _field(conn, outcomes.c.value, "goal")
    chained = (
        sa.select(goal.label("goal"), _day(conn, T.c.started_at).label("day"))
        .select_from(T.join(S, S.c.trace_id == T.c.id).join(outcomes, sa.true()))
        .where(
            S.c.name == "skills",
            _field(conn, outcomes.c.value, "fallback").is_not(None),
            goal.is_not(None),
            *where,
        )
        .subquery()
    )
    done = sa.func.count(
        sa.distinct(sa.case((G.c.status == "completed", chained.c.goal), else_=None))
    )
    joined = chained.outerjoin(G, G.c.id == chained.c.goal)
    total = sa.select(done, sa.func.count(sa.distinct(chained.c.goal))).select_from(joined)
    daily = (
        sa.select(chained.c.day, done, sa.func.count(sa.distinct(chained.c.goal)))
        .select_from(joined)
        .group_by(chained.c.day)
    )
    out = _by_day(conn.execute(daily))
    num, den = conn.execute(total).one()
    return {**out, None: (int(num), int(den))}


# ---- reflection --------------------------------------------------------------------------------


def _log_n(rid: str) -> int | None:
    m = _LOG_ID.match(rid)
    return int(m.group(1)) if m else None


def _reflection(
    conn: Connection,
    patches: PatchSet | None,
    log_where: list[Any],
    use_where: list[Any],
) -> dict[str, tuple[int, int, str]]:
    """Conversion, reuse and interception as (numerator, denominator, note)."""
    if patches is None:
        count = sa.select(sa.func.count()).select_from(LOG).where(*log_where)
        (logged,) = conn.execute(count).one()
        return {
            "reflection_conversion": (0, int(logged), NO_PACK),
            "rule_reuse": (0, 0, NO_PACK),
            "failure_interception": (0, 0, NO_PACK),
        }
    learned = sorted({n for rid in patches.learned_from() if (n := _log_n(rid)) is not None})
    q = sa.select(_when(LOG.c.n.in_(learned)), sa.func.count()).where(*log_where)
    converted, logged = conn.execute(q).one()
    # the reflections behind the patches that are in the window
    in_window = sa.select(LOG.c.n).where(LOG.c.n.in_(learned), *log_where)
    present = {int(n) for (n,) in conn.execute(in_window)}
    uses_q = (
        sa.select(USE.c.patch_id, sa.func.count())
        .where(USE.c.patch_id.in_(patches.ids), *use_where)
        .group_by(USE.c.patch_id)
    )
    uses = {str(pid): int(n) for pid, n in conn.execute(uses_q)}
    sources = [m.learned_from for m in patches.mappings]
    sources += [c.learned_from for c in patches.calibrations]
    behind = sum(1 for ids in sources for rid in set(ids) if _log_n(rid) in present)
    used = sum(uses.values())
    return {
        "reflection_conversion": (int(converted), int(logged), ""),
        "rule_reuse": (sum(1 for n in uses.values() if n >= READ_USES), len(patches), ""),
        "failure_interception": (used, used + behind, ""),
    }


# ---- the report --------------------------------------------------------------------------------


def _window_days(days: Iterable[str]) -> list[str]:
    """Every day from the first to the last one with data, gaps included."""
    known = sorted(set(days))
    if not known:
        return []
    first, last = date.fromisoformat(known[0]), date.fromisoformat(known[-1])
    return [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]


def _total(counts: Counts) -> tuple[int, int]:
    if None in counts:
        return counts[None]
    return (
        sum(num for day, (num, _) in counts.items() if day is not None),
        sum(den for day, (_, den) in counts.items() if day is not None),
    )


def compute(
    engine: Engine,
    *,
    now: datetime,
    pack: str | None = None,
    patches: PatchSet | None = None,
    since: datetime | None = None,
) -> HealthReport:
    """Every metric of ``report.DEFINITIONS`` and the days of the window. ``patches``: what the
    pack deploys (its compiled ``learning.patches``); None leaves the RH metrics n/a."""
    now = as_utc(now)
    since = None if since is None else as_utc(since)
    where: list[Any] = []
    log_where: list[Any] = []
    use_where: list[Any] = []
    if pack is not None:
        where.append(T.c.domain == pack)
        log_where.append(LOG.c.pack == pack)
        use_where.append(USE.c.pack == pack)
    if since is not None:
        where.append(T.c.started_at >= since)
        log_where.append(LOG.c.created_at >= since)
        use_where.append(USE.c.at >= since)
    with transaction(engine) as conn:
        plain = {
            "memory_utilisation": _utilisation(conn, since),
            "decay_compliance": _decay(conn, since, now),
        }
        compliant, fell_back = _calls(conn, where)
        daily: dict[str, Counts] = {
            "cross_session_rate": _cross_session(conn, where),
            "contract_compliance": compliant,
            "fallback_activation": fell_back,
            "chain_success": _chains(conn, where),
        }
        rh = _reflection(conn, patches, log_where, use_where)
        day = _day(conn, T.c.started_at)
        turns = _counted(conn.execute(sa.select(day, sa.func.count()).where(*where).group_by(day)))
        log_day = _day(conn, LOG.c.created_at)
        reflections = _counted(
            conn.execute(sa.select(log_day, sa.func.count()).where(*log_where).group_by(log_day))
        )
    metrics = []
    for d in DEFINITIONS:
        if d.id in rh:
            num, den, note = rh[d.id]
        else:
            num, den = plain[d.id] if d.id in plain else _total(daily[d.id])
            note = ""
        metrics.append(Metric(d.id, num, den, note or (NOTES[d.id] if den == 0 else "")))
    days = _window_days([*turns, *reflections, *(k for c in daily.values() for k in c if k)])
    trend = tuple(
        Day(
            day=k,
            turns=turns.get(k, 0),
            reflections=reflections.get(k, 0),
            counts={m: daily[m][k] for m in TREND_IDS if k in daily[m]},
        )
        for k in days
    )
    return HealthReport(now=now, metrics=tuple(metrics), days=trend, pack=pack, since=since)


def _counted(rows: Iterable[Any]) -> dict[str, int]:
    return {str(day): int(n) for day, n in rows}
