"""Matching learned patches to inputs (similarity 0.85 by default) and evaluating their values
on the turn's date."""

from __future__ import annotations

from datetime import datetime

import pytest

from charter.compile.specs.learn import (
    Calibration,
    LearningSpec,
    ParameterMapping,
    PatchSet,
    ValueExpr,
)
from charter.learn.apply import PatchMatcher
from charter.plugins.host import default_host

NOW = datetime(2026, 11, 30, 10, 0)
LAST_Q1 = ParameterMapping(
    id="quarterly-report/time/去年一季度",
    intent="quarterly-report",
    phrase="去年一季度",
    values=(("year", ValueExpr(unit="year", offset=-1)), ("quarter", ValueExpr(constant=1))),
    entity="time",
    learned_from=("R-000001",),
)
PE_PB = Calibration(
    id="calibration/市盈率-市净率",
    confused_pair=("市盈率", "市净率"),
    discriminator="市盈率：股价 ÷ 每股收益；市净率：股价 ÷ 每股净资产",
    example="茅台的市净率是多少",
)


def matcher(*mappings: ParameterMapping, similarity: float = 0.85) -> PatchMatcher:
    spec = LearningSpec(
        similarity=similarity, patches=PatchSet(mappings=mappings, calibrations=(PE_PB,))
    )
    return PatchMatcher(spec, default_host().registry.extractors)


@pytest.mark.parametrize(
    ("text", "score", "preset"),
    [
        ("给我去年一季度的财报", 1.0, {"year": 2025, "quarter": 1}),
        ("去年一季度财报", 1.0, {"year": 2025, "quarter": 1}),
        ("帮我看看去年1季度的财报", None, None),  # 去年1季度: 0.8
        ("今年一季度的财报", None, None),  # 0.8: another year
        ("去年二季度的财报", None, None),  # 0.8: another quarter
        ("前年一季度的财报", None, None),
        ("财报", None, None),
    ],
)
def test_a_mapping_matches_by_similarity(
    text: str, score: float | None, preset: dict[str, int] | None
) -> None:
    got = matcher(LAST_Q1).match(text, NOW)
    mappings = [a for a in got.applied if a.kind == "mapping"]
    if score is None:
        assert mappings == [] and got.preset == {}
    else:
        (a,) = mappings
        assert (a.patch, a.score) == (LAST_Q1.id, score)
        assert got.preset == {"quarterly-report": preset}


def test_a_lower_threshold_admits_a_near_phrase_without_an_entity() -> None:
    plain = ParameterMapping(
        id="p", intent="quarterly-report", phrase="去年一季度", values=LAST_Q1.values
    )
    got = matcher(plain, similarity=0.8).match("今年一季度的财报", NOW)
    (a,) = got.applied
    assert (a.score, dict(a.values), a.span) == (0.8, {"year": 2025, "quarter": 1}, (0, 5))
    # with its entity, 今年一季度 means another quarter: no threshold lets it through
    assert matcher(LAST_Q1, similarity=0.5).match("今年一季度的财报", NOW).applied == ()


def _time(id_: str, phrase: str) -> ParameterMapping:
    return ParameterMapping(id=id_, intent="statement", phrase=phrase, values=(), entity="time")


@pytest.mark.parametrize(
    ("phrase", "text", "score"),
    [
        ("去年一季度", "去年第一季度的财报", 0.9091),  # alike and the same quarter
        ("去年一季度", "给我去年一季度的", 1.0),
        ("上个月", "上上个月的账单", None),  # alike (0.86) but another month
        ("1月", "11月的账单", None),
        ("去年的第一季度", "前年的第一季度财报", None),  # 0.857, another year
        ("上个月", "上个月的账单和上上个月的", 1.0),
    ],
)
def test_an_entity_mapping_matches_what_means_the_same(
    phrase: str, text: str, score: float | None
) -> None:
    got = matcher(_time("m", phrase)).match(text, NOW)
    scores = [round(a.score, 4) for a in got.applied if a.kind == "mapping"]
    assert scores == ([] if score is None else [score])


def test_the_entity_must_be_where_the_phrase_matched() -> None:
    # 去年一季 + 度 written apart: similar characters, but the time extractor finds no time there
    odd = ParameterMapping(
        id="x", intent="quarterly-report", phrase="去年一季度", values=(), entity="time"
    )
    assert matcher(odd, similarity=0.5).match("去掉一季的度数", NOW).applied == ()
    no_entity = ParameterMapping(id="y", intent="quarterly-report", phrase="去年一季度", values=())
    assert len(matcher(no_entity, similarity=0.5).match("去掉一季的度数", NOW).applied) == 1


@pytest.mark.parametrize(
    ("expr", "now", "value"),
    [
        (ValueExpr(unit="year", offset=-1), datetime(2026, 1, 1), 2025),
        (ValueExpr(unit="year"), datetime(2026, 12, 31), 2026),
        (ValueExpr(unit="quarter", offset=-1), datetime(2026, 11, 30), 3),
        (ValueExpr(unit="quarter", offset=-1), datetime(2026, 2, 1), 4),  # 上季度 in Q1
        (ValueExpr(unit="quarter", offset=1), datetime(2026, 12, 31), 1),
        (ValueExpr(unit="month", offset=2), datetime(2026, 5, 1), 7),
        (ValueExpr(unit="month", offset=-1), datetime(2026, 1, 15), 12),  # 上个月 in January
        (ValueExpr(unit="month", offset=1), datetime(2026, 12, 15), 1),
        (ValueExpr(unit="day"), datetime(2026, 5, 9), 9),
        (ValueExpr(unit="day", offset=-1), datetime(2026, 3, 1), 28),  # 昨天 on March 1st
        (ValueExpr(constant="Q1"), datetime(2026, 5, 9), "Q1"),
    ],
)
def test_values_are_evaluated_on_the_turn_s_date(
    expr: ValueExpr, now: datetime, value: object
) -> None:
    assert expr.evaluate(now) == value


@pytest.mark.parametrize(
    ("expr", "source"),
    [
        (ValueExpr(unit="year", offset=-1), "current_year - 1"),
        (ValueExpr(unit="quarter", offset=2), "current_quarter + 2"),
        (ValueExpr(unit="month"), "current_month"),
        (ValueExpr(constant=1), 1),
    ],
)
def test_values_are_written_back_as_in_a_patch_file(expr: ValueExpr, source: object) -> None:
    assert expr.source() == source


def test_a_calibration_adds_its_note_when_the_input_names_either_concept() -> None:
    got = matcher().match("茅台的市净率是多少", NOW)
    assert got.notes == (
        "注意区分市盈率与市净率：市盈率：股价 ÷ 每股收益；市净率：股价 ÷ 每股净资产"
        "（例：茅台的市净率是多少）",
    )
    assert [(a.patch, a.kind, a.span) for a in got.applied] == [
        ("calibration/市盈率-市净率", "calibration", (3, 6))
    ]
    assert matcher().match("茅台的股价是多少", NOW).notes == ()


def test_the_first_mapping_in_file_order_decides_a_slot() -> None:
    other = ParameterMapping(
        id="other",
        intent="quarterly-report",
        phrase="一季度",
        values=(("quarter", ValueExpr(constant=4)),),
    )
    got = matcher(LAST_Q1, other).match("去年一季度的财报", NOW)
    assert [a.patch for a in got.applied] == [LAST_Q1.id]
    assert got.preset == {"quarterly-report": {"year": 2025, "quarter": 1}}
