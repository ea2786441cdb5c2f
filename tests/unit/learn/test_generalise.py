"""From reflection log entries to patches (charter.learn.generalise), on a small pack of its
own: the time expressions a correction generalises from (relative parts written against the
turn's date, absolute parts as constants), entries merging into one patch, calibrations, and
every reason an entry is not converted, pinned exactly."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.specs.learn import Calibration, LearningSpec, ParameterMapping
from charter.contracts.registry import Registry
from charter.learn.generalise import Learned, Skipped, generalise
from charter.learn.log import Evidence, LogEntry
from tests.support.learn import write_pack

AT = "2026-11-20T10:22:05+00:00"  # the same month on any local calendar


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory, registry: Registry) -> CompiledPack:
    root = write_pack(tmp_path_factory.mktemp("reports"))
    compiled, diags = compile_path(root, registry, cache_dir=None)
    assert compiled is not None and compiled.goals is not None and compiled.learning is not None
    assert not any(d.is_error for d in diags), diags
    return compiled


def entry(
    n: int,
    said: str | None,
    params: dict[str, Any] | None,
    correction: dict[str, Any] | None,
    *,
    at: str = AT,
    trigger: str = "negation",
    intent: str | None = "quarterly-report",
    skill: str = "quarterly_report",
) -> LogEntry:
    when = datetime.fromisoformat(at)
    evidence = [Evidence("user_input", when, content=said)] if said is not None else []
    if params is not None:
        evidence.append(Evidence("tool_call", when, name=skill, params=params, result="…"))
    evidence.append(Evidence("user_feedback", when, content="不对"))
    return LogEntry(
        id=f"R-{n:06d}",
        pack="reports",
        trigger=trigger,
        hypothesis="…",
        evidence=tuple(evidence),
        correction=correction,
        created_at=when,
        intent=intent,
        skill=skill,
    )


def learn(pack: CompiledPack, registry: Registry, *entries: LogEntry) -> Learned:
    assert pack.learning is not None
    return generalise(
        entries, goals=pack.goals, learning=pack.learning, extractors=registry.extractors
    )


def shown(mapping: ParameterMapping) -> tuple[str, dict[str, Any], tuple[str, ...]]:
    return mapping.id, {n: e.source() for n, e in mapping.values}, mapping.learned_from


Q = "quarterly-report"
M = "monthly-statement"


@pytest.mark.parametrize(
    ("intent", "said", "at", "params", "correction", "expected"),
    [
        # the seed's example: 去年 is relative, 一季度 absolute
        (Q, "给我去年一季度的财报", AT, {"year": 2024, "quarter": 1}, {"year": 2025},
         ("quarterly-report/time/去年一季度", {"year": "current_year - 1", "quarter": 1})),
        (Q, "今年二季度的财报", AT, {"year": 2025, "quarter": 2}, {"year": 2026},
         ("quarterly-report/time/今年二季度", {"year": "current_year", "quarter": 2})),
        (Q, "2024年三季度的财报", AT, {"year": 2023, "quarter": 3}, {"year": 2024},
         ("quarterly-report/time/2024年三季度", {"year": 2024, "quarter": 3})),
        (Q, "看看2024Q2季报", AT, {"year": 2026, "quarter": 2}, {"year": 2024},
         ("quarterly-report/time/2024Q2", {"year": 2024, "quarter": 2})),
        (Q, "前年四季度的财报", AT, {"year": 2025, "quarter": 4}, {"year": 2024},
         ("quarterly-report/time/前年四季度", {"year": "current_year - 2", "quarter": 4})),
        (Q, "明年一季度的财报", AT, {"year": 2026, "quarter": 1}, {"year": 2027},
         ("quarterly-report/time/明年一季度", {"year": "current_year + 1", "quarter": 1})),
        # the quarter moves with the date; the year 上季度 means does not by a fixed N (in the
        # first quarter it is the year before), so it is left out
        (Q, "上季度的财报", AT, {"year": 2026, "quarter": 4}, {"quarter": 3},
         ("quarterly-report/time/上季度", {"quarter": "current_quarter - 1"})),
        # 一季度 alone is this year's first quarter
        (Q, "一季度的财报", AT, {"year": 2025, "quarter": 1}, {"year": 2026},
         ("quarterly-report/time/一季度", {"year": "current_year", "quarter": 1})),
        # slot names: statement_year holds a year, bill_month a month
        (M, "上个月的账单", AT, {"statement_year": 2026, "bill_month": 11}, {"bill_month": 10},
         ("monthly-statement/time/上个月", {"bill_month": "current_month - 1"})),
        (M, "下个月的账单", AT, {"statement_year": 2027, "bill_month": 11}, {"bill_month": 12},
         ("monthly-statement/time/下个月", {"bill_month": "current_month + 1"})),
        (M, "去年底的账单", AT, {"statement_year": 2026, "bill_month": 12}, {"statement_year": 2025},
         ("monthly-statement/time/去年底", {"statement_year": "current_year - 1", "bill_month": 12})),
        (M, "5月的账单", AT, {"statement_year": 2026, "bill_month": 6}, {"bill_month": 5},
         ("monthly-statement/time/5月", {"statement_year": "current_year", "bill_month": 5})),
        # values as strings compare as numbers; a date gives its parts as constants
        (M, "2025年3月1日的账单", AT, {"statement_year": "2026", "bill_month": "3"},
         {"statement_year": "2025"},
         ("monthly-statement/time/2025年3月1日", {"statement_year": 2025, "bill_month": 3})),
        (M, "2025-03-01的账单", AT, {"statement_year": 2026, "bill_month": 3}, {"statement_year": 2025},
         ("monthly-statement/date/2025-03-01", {"statement_year": 2025, "bill_month": 3})),
        # not a date: the entity's value itself, a constant
        ("transfer", "给张三转5000元", AT, {"amount": 3000}, {"amount": 5000},
         ("transfer/money/5000元", {"amount": 5000})),
    ],
)  # fmt: skip
def test_a_correction_generalises_to_a_mapping(
    pack: CompiledPack,
    registry: Registry,
    intent: str,
    said: str,
    at: str,
    params: dict[str, Any],
    correction: dict[str, Any],
    expected: tuple[str, dict[str, Any]],
) -> None:
    skill = "quarterly_report" if intent == Q else intent
    learned = learn(
        pack, registry, entry(1, said, params, correction, at=at, intent=intent, skill=skill)
    )
    assert learned.skipped == ()
    assert [shown(m) for m in learned.mappings] == [(*expected, ("R-000001",))]
    (mapping,) = learned.mappings
    assert (mapping.intent, mapping.entity, mapping.phrase) == (
        intent,
        expected[0].split("/")[1],
        expected[0].split("/")[2],
    )
    # what the mapping says, read at the turn's date, is the corrected call's value
    values = mapping.resolve(datetime.fromisoformat(at))
    assert all(str(values[k]) == str({**params, **correction}[k]) for k in correction)


def test_entries_generalising_to_one_id_merge(pack: CompiledPack, registry: Registry) -> None:
    learned = learn(
        pack,
        registry,
        entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}),
        entry(2, "上季度的财报", {"year": 2026, "quarter": 4}, {"quarter": 3}),
        # a year later: 去年 is another year, the mapping the same
        entry(3, "去年一季度的财报呢", {"year": 2025, "quarter": 1}, {"year": 2026},
              at="2027-03-01T08:00:00+00:00"),
    )  # fmt: skip
    assert [shown(m) for m in learned.mappings] == [
        (
            "quarterly-report/time/去年一季度",
            {"year": "current_year - 1", "quarter": 1},
            ("R-000001", "R-000003"),
        ),
        ("quarterly-report/time/上季度", {"quarter": "current_quarter - 1"}, ("R-000002",)),
    ]
    assert (learned.entries, learned.converted) == (3, 3)


def test_two_entities_make_two_mappings(pack: CompiledPack, registry: Registry) -> None:
    learned = learn(
        pack,
        registry,
        entry(1, "5月的账单，2025年的", {"statement_year": 2026, "bill_month": 6},
              {"statement_year": 2025, "bill_month": 5}, intent=M, skill=M),
    )  # fmt: skip
    assert [shown(m) for m in learned.mappings] == [
        ("monthly-statement/time/5月", {"bill_month": 5}, ("R-000001",)),
        ("monthly-statement/time/2025年", {"statement_year": 2025}, ("R-000001",)),
    ]


def test_a_calibration_from_a_concept_correction(pack: CompiledPack, registry: Registry) -> None:
    one = entry(4, "茅台的市盈率是多少", None, {"concept": "市净率", "instead_of": "市盈率"},
                intent="stock-metric")  # fmt: skip
    again = entry(9, "茅台市盈率多少", None, {"concept": "市净率", "instead_of": "市盈率"},
                  intent=None)  # fmt: skip
    learned = learn(pack, registry, one, again)
    assert learned.calibrations == (
        Calibration(
            id="calibration/市盈率-市净率",
            confused_pair=("市盈率", "市净率"),
            discriminator="市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产",
            example="问的是市净率，不是市盈率",  # the concepts only, no user words
            intent="stock-metric",
            learned_from=("R-000004", "R-000009"),
        ),
    )
    assert learned.mappings == learned.skipped == ()


PATCHES = "patches/learned.yaml"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, None, trigger="skill_failure"),
         Skipped("R-000001", "skill_failure", "not compiled into patches (only negation entries are)")),
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}, trigger="entropy"),
         Skipped("R-000001", "entropy", "not compiled into patches (only negation entries are)")),
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, None),
         Skipped("R-000001", "negation", "no correction (the turn gave no new value)")),
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}, intent=None),
         Skipped("R-000001", "negation", "the entry names no intent, and a mapping is for one intent",
                 "add an intent for such inputs to goals.yaml")),
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}, intent="annual"),
         Skipped("R-000001", "negation", "intent annual is not an intent of goals.yaml",
                 "restore the intent, or leave the entry out with --since")),
        (entry(1, None, {"year": 2024, "quarter": 1}, {"year": 2025}),
         Skipped("R-000001", "negation", "the evidence holds no user_input: nothing to generalise from",
                 "only entries logged with the user's words can be learned")),
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"region": "华东"}),
         Skipped("R-000001", "negation",
                 "the corrected argument region is bound to no slot of intent quarterly-report",
                 "bind it to a slot in goals.yaml (skill: {args: {region: '{slot}'}})")),
        (entry(1, "茅台的财报", {"year": 2026, "quarter": 4}, {"company": "贵州茅台"}),
         Skipped("R-000001", "negation", "nothing in the input '茅台的财报' explains company = 贵州茅台",
                 "no extractor finds that value in those words (slot company of intent "
                 f"quarterly-report); if they always mean it, write the mapping by hand in {PATCHES}")),
        # 去年 said in 2026 is 2025, not 2023: the year is not explained
        (entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2023}),
         Skipped("R-000001", "negation", "nothing in the input '给我去年一季度的财报' explains year = 2023",
                 "no extractor finds that value in those words (slot year of intent "
                 f"quarterly-report); if they always mean it, write the mapping by hand in {PATCHES}")),
        # 上季度 said in February is last year's: no current_year + N says so all year round
        (entry(1, "上季度的财报", {"year": 2026, "quarter": 1}, {"year": 2025, "quarter": 4},
               at="2026-02-10T09:00:00+00:00"),
         Skipped("R-000001", "negation",
                 "year = 2025 is the year '上季度' means at the time it was said, but which year "
                 "that is depends on when in the year it is said: current_year + N cannot write it",
                 f"if it matters, write the mapping by hand in {PATCHES}")),
        # a slot reading the money extractor is not explained by a time
        (entry(1, "去年转了2025", {"amount": 1}, {"amount": 2025}, intent="transfer", skill="t"),
         Skipped("R-000001", "negation", "nothing in the input '去年转了2025' explains amount = 2025",
                 "no extractor finds that value in those words (slot amount of intent "
                 f"transfer); if they always mean it, write the mapping by hand in {PATCHES}")),
        (entry(1, "市盈率", None, {"concept": "市净率"}, intent="stock-metric"),
         Skipped("R-000001", "negation", "a concept correction needs both concept and instead_of",
                 "write the calibration by hand in the patches file")),
        (entry(1, "市盈率", None, {"concept": "市盈率", "instead_of": "市盈率"}),
         Skipped("R-000001", "negation", "the correction confuses 市盈率 with itself",
                 "nothing to calibrate")),
        (entry(1, "茅台的ROE", None, {"concept": "ROE", "instead_of": "ROA"}),
         Skipped("R-000001", "negation", "no definition of ROA and ROE to tell ROA from ROE",
                 "add concepts: {ROA: …, ROE: …} to learning.yaml, then run charter learn again")),
        (entry(1, "茅台的市盈率", None, {"concept": "ROE", "instead_of": "市盈率"}),
         Skipped("R-000001", "negation", "no definition of ROE to tell 市盈率 from ROE",
                 "add concepts: {ROE: …} to learning.yaml, then run charter learn again")),
    ],
)  # fmt: skip
def test_entries_not_converted_say_why(
    pack: CompiledPack, registry: Registry, log: LogEntry, expected: Skipped
) -> None:
    learned = learn(pack, registry, log)
    assert learned.skipped == (expected,)
    assert learned.mappings == learned.calibrations == ()
    assert (learned.entries, learned.converted) == (1, 0)
    assert expected.warning is bool(expected.hint)


def test_a_later_entry_setting_other_values_is_not_merged(
    pack: CompiledPack, registry: Registry
) -> None:
    learned = learn(
        pack,
        registry,
        entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}),
        # the same words, but the quarter the tool was given is not the one they say
        entry(2, "给我去年一季度的财报", {"year": 2024, "quarter": 2}, {"year": 2025}),
    )
    assert [shown(m) for m in learned.mappings] == [
        (
            "quarterly-report/time/去年一季度",
            {"year": "current_year - 1", "quarter": 1},
            ("R-000001",),
        )
    ]
    assert learned.skipped == (
        Skipped(
            "R-000002",
            "negation",
            "generalises to quarterly-report/time/去年一季度 like R-000001, but sets "
            "year = current_year - 1 instead of year = current_year - 1, quarter = 1",
            "look at both entries; if the later one is right, edit the patch by hand",
        ),
    )


def test_without_goals_or_concepts(registry: Registry) -> None:
    learned = generalise(
        [
            entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}),
            entry(2, "市盈率", None, {"concept": "市净率", "instead_of": "市盈率"}),
        ],
        goals=None,
        learning=LearningSpec(),
        extractors=registry.extractors,
    )
    assert [(s.entry, s.reason) for s in learned.skipped] == [
        ("R-000001", "intent quarterly-report is not an intent of goals.yaml"),
        ("R-000002", "no definition of 市盈率 and 市净率 to tell 市盈率 from 市净率"),
    ]


def test_a_patch_rejected_in_review_is_never_learned_again(
    tmp_path: Path, registry: Registry
) -> None:
    rejected = "quarterly-report/time/去年一季度"
    root = write_pack(tmp_path, {"patches/reviewed.yaml": f"rejected: [{rejected}]\n"})
    compiled, diags = compile_path(root, registry, cache_dir=None)
    assert compiled is not None and compiled.learning is not None and diags == []
    assert compiled.learning.patches.rejected == frozenset({rejected})
    learned = learn(
        compiled,
        registry,
        entry(1, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025}),
        entry(2, "今年二季度的财报", {"year": 2025, "quarter": 2}, {"year": 2026}),
    )
    assert [m.id for m in learned.mappings] == ["quarterly-report/time/今年二季度"]
    assert learned.skipped == (Skipped("R-000001", "negation", f"rejected in review ({rejected})"),)


def test_a_deployed_patch_that_is_also_rejected_is_not_applied(
    tmp_path: Path, registry: Registry
) -> None:
    patch = """\
parameter_mappings:
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set: {year: current_year - 1, quarter: 1}
rejected: [quarterly-report/time/去年一季度]
"""
    root = write_pack(tmp_path, {"patches/learned.yaml": patch})
    compiled, diags = compile_path(root, registry, cache_dir=None)
    assert compiled is not None and compiled.learning is not None
    assert [(d.code, d.severity, d.location.line) for d in diags] == [("CH349", "warning", 2)]
    assert compiled.learning.patches.mappings == ()
