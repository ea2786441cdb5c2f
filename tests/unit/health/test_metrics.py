"""``charter.health.metrics.compute``: each metric counted in SQL on rows written by hand, on
SQLite and PostgreSQL — what is counted, what is not, the window, the pack, the days."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from charter.compile.specs.learn import Calibration, ParameterMapping, PatchSet, ValueExpr
from charter.health.metrics import NO_PACK, NOTES, compute
from charter.health.report import DEFINITIONS, HealthReport
from tests.support.health import D1, World, call

NOW = D1 + timedelta(days=10)
DAY = timedelta(days=1)


def counts(report: HealthReport) -> dict[str, tuple[int, int, str]]:
    return {m.id: (m.numerator, m.denominator, m.mark) for m in report.metrics}


def mapping(pid: str, *learned: str) -> ParameterMapping:
    return ParameterMapping(
        pid, "order-query", pid, (("n", ValueExpr(1)),), learned_from=tuple(learned)
    )


def test_an_empty_database_measures_nothing(world: World) -> None:
    report = compute(world.engine, now=NOW, pack="shop", patches=PatchSet())
    assert [
        (m.id, m.numerator, m.denominator, m.value, m.mark, m.note) for m in report.metrics
    ] == [(d.id, 0, 0, None, "n/a", NOTES[d.id]) for d in DEFINITIONS]
    assert report.days == ()
    unknown = compute(world.engine, now=NOW)  # no pack: the patches are not known
    assert [m.note for m in unknown.metrics][3:6] == [NO_PACK] * 3


def test_memory_utilisation(world: World) -> None:
    for fid, status in (("a", "active"), ("b", "active"), ("c", "active"), ("d", "superseded")):
        world.fact(fid, D1, status=status)
    world.audit("read", "a", D1 + 2 * DAY)
    world.audit("read", "b", D1)
    world.audit("read", "d", D1 + 2 * DAY)  # not active: not counted at all
    world.audit("write", "c", D1 + 2 * DAY)  # a write is no use
    world.audit("read", None, D1 + 2 * DAY)  # a read that found nothing
    assert counts(compute(world.engine, now=NOW))["memory_utilisation"] == (2, 3, "pass")
    # since day 2: only a was read in the window
    later = compute(world.engine, now=NOW, since=D1 + DAY)
    assert counts(later)["memory_utilisation"] == (1, 3, "warn")


def test_decay_compliance(world: World) -> None:
    past = NOW - 5 * DAY
    world.fact("expired", D1, status="expired", valid_until=past)
    world.fact("archived", D1, status="archived", valid_until=past)
    world.fact("overdue", D1, valid_until=NOW - DAY)  # active past its validity
    for status in ("superseded", "deprecated", "contradicted"):  # replaced, not outlived
        world.fact(status, D1, status=status, valid_until=past)
    world.fact("valid", D1, valid_until=NOW + DAY)
    world.fact("forever", D1)
    world.fact("ends-now", D1, valid_until=NOW)  # not before now
    assert counts(compute(world.engine, now=NOW))["decay_compliance"] == (2, 3, "warn")
    # validity that ended in the window: only the overdue fact's
    since = compute(world.engine, now=NOW, since=NOW - 2 * DAY)
    assert counts(since)["decay_compliance"] == (0, 1, "warn")
    earlier = compute(world.engine, now=NOW - 2 * DAY)  # the overdue fact is still valid then
    assert counts(earlier)["decay_compliance"] == (2, 2, "pass")


def test_cross_session_rate(world: World) -> None:
    world.turn(D1, session="s1")  # f1 is written during this turn
    world.fact("f1", D1 + timedelta(minutes=1))
    world.turn(D1 + timedelta(minutes=30), session="s2")  # ... f2 during this one
    world.fact("f2", D1 + timedelta(minutes=31))
    world.fact("f3", D1 - DAY)  # before any turn of u1: written outside a session
    world.fact("f4", D1, user="u2")  # u2 has no turns
    # s1 recalls its own f1, s2's f2, the session-less f3, a summary id (not a fact)
    world.turn(D1 + timedelta(hours=1), session="s1", memories=["f1", "f2", "f3", "sum-1"])
    world.turn(D1 + DAY, session="s2", memories=["f2"])  # its own
    world.turn(D1 + DAY, user="u2", session="s9", memories=["f4"])
    world.step(D1 + DAY, "recall", {"step": "none"})  # a trace from before ``memories``
    report = compute(world.engine, now=NOW)
    assert counts(report)["cross_session_rate"] == (3, 5, "pass")
    assert [(d.day, d.counts["cross_session_rate"]) for d in report.days] == [
        ("2024-05-01", (2, 3)),
        ("2024-05-02", (1, 2)),
    ]


def test_skill_calls_and_chains(world: World) -> None:
    world.goal("g1", "completed")
    world.goal("g2", "completed")
    world.goal("g3", "active")
    world.turn(D1, calls=[call("g1", "contract_violation", "template"), call("g2")])
    world.turn(D1 + timedelta(hours=1), calls=[call("g1", "error", "call")])  # g1 once
    world.turn(
        D1 + DAY,
        calls=[
            call("g3", "timeout", "degrade_to_faq"),
            call(None, "invalid_args", "clarify"),  # no goal: not a chain
            call("gone", "error", "template"),  # a goal forgotten since: not completed
        ],
    )
    world.turn(D1 + DAY, calls=[])
    world.step(D1 + DAY, "skills", {})  # no outcomes key
    report = compute(world.engine, now=NOW)
    # 6 calls, one broke its contract, five fell back; goals with a fallback: g1 (completed),
    # g3 (active), gone (no row) -> 1/3
    got = counts(report)
    assert [got[k] for k in ("contract_compliance", "fallback_activation", "chain_success")] == [
        (5, 6, "warn"),
        (5, 6, "warn"),
        (1, 3, "warn"),
    ]
    keys = ("contract_compliance", "fallback_activation", "chain_success")
    assert [(d.day, d.turns, *(d.counts[k] for k in keys)) for d in report.days] == [
        ("2024-05-01", 2, (2, 3), (2, 3), (1, 1)),
        ("2024-05-02", 3, (3, 3), (3, 3), (0, 2)),
    ]


def test_the_pack_selects_turns(world: World) -> None:
    world.turn(D1, calls=[call()])
    world.turn(D1, domain="other", calls=[call(None, "contract_violation", "template")])
    assert counts(compute(world.engine, now=NOW, pack="shop"))["contract_compliance"] == (
        1,
        1,
        "pass",
    )
    assert counts(compute(world.engine, now=NOW))["contract_compliance"] == (1, 2, "warn")


PATCHES = PatchSet(
    mappings=(mapping("m1", "R-000001", "R-000003"), mapping("m2")),
    calibrations=(Calibration("c1", ("市盈率", "市净率"), "d", learned_from=("R-000002", "x")),),
)


def reflections(world: World) -> None:
    world.reflection(D1)  # R-000001
    world.reflection(D1 + DAY)  # R-000002
    world.reflection(D1 + DAY, pack="other")  # R-000003
    world.reflection(D1 + 2 * DAY, trigger="skill_failure")  # R-000004: not compiled
    world.use("m1", D1, times=3)
    world.use("c1", D1 + 2 * DAY, times=2)
    world.use("m1", D1, pack="other", times=5)
    world.use("retired", D1, times=4)  # not deployed any more


def test_reflection_health(world: World) -> None:
    reflections(world)
    shop = counts(compute(world.engine, now=NOW, pack="shop", patches=PATCHES))
    # R1, R2 of R1, R2, R4 compiled; m1 used 3 times of m1 3, m2 0, c1 2; 5 uses against
    # R1 (behind m1; R3 is another pack's) and R2 (behind c1; "x" is no log id)
    assert [shop[k] for k in ("reflection_conversion", "rule_reuse", "failure_interception")] == [
        (2, 3, "warn"),
        (1, 3, "warn"),
        (5, 7, "warn"),
    ]
    every = counts(compute(world.engine, now=NOW, patches=PATCHES))
    assert [every[k] for k in ("reflection_conversion", "rule_reuse", "failure_interception")] == [
        (3, 4, "pass"),
        (1, 3, "warn"),
        (10, 13, "warn"),
    ]
    # since day 3: R4 only, c1's two uses; R1, R2 are before the window
    late = counts(compute(world.engine, now=NOW, pack="shop", patches=PATCHES, since=D1 + 2 * DAY))
    assert [late[k] for k in ("reflection_conversion", "rule_reuse", "failure_interception")] == [
        (0, 1, "warn"),
        (0, 3, "warn"),
        (2, 2, "pass"),
    ]


def test_no_patches_deployed(world: World) -> None:
    reflections(world)
    report = compute(world.engine, now=NOW, pack="shop", patches=PatchSet())
    assert [(m.numerator, m.denominator, m.mark, m.note) for m in report.metrics[3:6]] == [
        (0, 3, "warn", ""),
        (0, 0, "n/a", "no patches deployed"),
        (0, 0, "n/a", "no patch uses or reflections behind them"),
    ]
    unknown = compute(world.engine, now=NOW, pack="shop")
    assert [(m.numerator, m.denominator, m.mark) for m in unknown.metrics[3:6]] == [
        (0, 3, "n/a"),
        (0, 0, "n/a"),
        (0, 0, "n/a"),
    ]


def test_days_run_from_the_first_to_the_last_with_the_gaps(world: World) -> None:
    world.turn(D1 + timedelta(hours=13, minutes=59))  # 23:59 in Shanghai, still 05-01 in UTC
    world.reflection(D1 + 3 * DAY)
    world.turn(D1 + 3 * DAY, domain="other")
    report = compute(world.engine, now=NOW, pack="shop")
    assert [(d.day, d.turns, d.reflections, dict(d.counts)) for d in report.days] == [
        ("2024-05-01", 1, 0, {}),
        ("2024-05-02", 0, 0, {}),
        ("2024-05-03", 0, 0, {}),
        ("2024-05-04", 0, 1, {}),
    ]
    later = compute(world.engine, now=NOW, pack="shop", since=D1 + DAY)
    assert [d.day for d in later.days] == ["2024-05-04"]


SHANGHAI = timezone(timedelta(hours=8))


@pytest.mark.parametrize(
    "since",
    [
        D1 + timedelta(hours=1),
        (D1 + timedelta(hours=1)).replace(tzinfo=None),  # naive: UTC
        datetime(2024, 5, 1, 19, 0, tzinfo=SHANGHAI),  # 11:00 UTC
    ],
    ids=["utc", "naive", "shanghai"],
)
def test_since_is_inclusive_and_in_utc(sqlite_world: World, since: datetime) -> None:
    sqlite_world.turn(D1 + timedelta(hours=1), calls=[call()])
    sqlite_world.turn(D1, calls=[call(None, "contract_violation", "template")])
    report = compute(sqlite_world.engine, now=NOW, since=since)
    assert counts(report)["contract_compliance"] == (1, 1, "pass")
    assert report.since == D1 + timedelta(hours=1)
