"""The ``learning`` compile stage: ``learning.yaml`` and ``patches/*.yaml`` into a
``LearningSpec``; the value expressions (``current_year - 1``); the defaults when a file or a
key is absent; patches in file order with their ``learned_from``; each diagnostic (CH340-CH348
and the schema's) with its exact message, place and hint; and the spec through the disk cache."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.specs.learn import (
    Calibration,
    LearningSpec,
    ParameterMapping,
    PatchSet,
    Triggers,
    ValueExpr,
)
from charter.compile.values import ValueSyntaxError, is_expression, is_numeric, parse_value
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, sort_diagnostics
from charter.pack.model import patches_dir

PACK = "name: learn\nversion: 0.1.0\n"
GOALS = """\
intents:
  - id: quarterly-report
    describe: 季度财报
    trigger: input contains "财报"
    slots:
      - {name: year, regex: '(?P<value>[0-9]{4})年', type: number}
      - {name: quarter, regex: '第?(?P<value>[1-4])季度', type: number}
      - {name: period, regex: '(?P<value>上半年|下半年)'}
  - id: stock-metric
    describe: 股票指标
    trigger: input contains any ["市盈率", "市净率"]
"""
MAPPING = """\
parameter_mappings:
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set:
      year: current_year - 1
      quarter: 1
    learned_from: [R-000001]
"""
CALIBRATION = """\
calibrations:
  - id: calibration/市盈率-市净率
    confused_pair: [市盈率, 市净率]
    discriminator: 市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产
    example: 茅台的市净率是多少
    intent: stock-metric
    learned_from: [R-000002, R-000003]
"""


@dataclass(frozen=True)
class Diag:
    code: str
    severity: str
    message: str
    where: str  # file:line:col, relative to the pack
    hint: str


def write_pack(root: Path, files: Mapping[str, str | None]) -> Path:
    """``None`` leaves a file out."""
    for rel, text in {"pack.yaml": PACK, **files}.items():
        if text is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def diags_of(root: Path, diags: list[Diagnostic]) -> list[Diag]:
    prefix = str(root.resolve()) + "/"
    return [
        Diag(
            d.code,
            d.severity.value,
            d.message.replace(prefix, ""),
            f"{d.location.path.removeprefix(prefix)}:{d.location.line}:{d.location.col}",
            d.hint,
        )
        for d in sort_diagnostics(diags)
    ]


def compile_files(
    tmp_path: Path, registry: Registry, files: Mapping[str, str | None]
) -> tuple[CompiledPack | None, list[Diag]]:
    root = write_pack(tmp_path / "pack", files)
    pack, diags = compile_path(root, registry, cache_dir=None)
    return pack, diags_of(root, diags)


def learning_of(
    tmp_path: Path, registry: Registry, files: Mapping[str, str | None]
) -> LearningSpec:
    pack, diags = compile_files(tmp_path, registry, files)
    assert diags == [] and pack is not None
    assert pack.learning is not None
    return pack.learning


# ---- value expressions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("current_year - 1", ValueExpr(unit="year", offset=-1)),
        ("current_year-1", ValueExpr(unit="year", offset=-1)),
        ("current_quarter", ValueExpr(unit="quarter")),
        ("current_month + 2", ValueExpr(unit="month", offset=2)),
        ("current_month+2", ValueExpr(unit="month", offset=2)),
        ("  current_day -  10 ", ValueExpr(unit="day", offset=-10)),
        ("current_year + 0", ValueExpr(unit="year")),
        (1, ValueExpr(constant=1)),
        (-3, ValueExpr(constant=-3)),
        (2.5, ValueExpr(constant=2.5)),
        (True, ValueExpr(constant=True)),
        ("电子普通发票", ValueExpr(constant="电子普通发票")),
        ("上半年", ValueExpr(constant="上半年")),
        ("year - 1", ValueExpr(constant="year - 1")),  # no current_ name: a constant
        ("SKU-100", ValueExpr(constant="SKU-100")),
        ("quarter", ValueExpr(constant="quarter")),
        ("2025", ValueExpr(constant="2025")),
    ],
)
def test_values_that_parse(raw: object, expected: ValueExpr) -> None:
    assert parse_value(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message", "span", "hint"),
    [
        (
            "current_yaer - 1",
            "unknown name 'current_yaer'",
            (0, 12),
            "did you mean 'current_year'?",
        ),
        ("curent_month", "unknown name 'curent_month'", (0, 12), "did you mean 'current_month'?"),
        ("Current_Year", "unknown name 'Current_Year'", (0, 12), "did you mean 'current_year'?"),
        (
            "current_week + 1",
            "unknown name 'current_week'",
            (0, 12),
            "expected one of: current_day, current_month, current_quarter, current_year",
        ),
        (
            "current_year * 2",
            "expected + or - after 'current_year', not '*'",
            (13, 14),
            "write current_year, current_quarter, current_month or current_day, optionally "
            "followed by + N or - N (current_year - 1), or a constant",
        ),
        (
            "current_year -",
            "expected a whole number after '-'",
            (14, 15),
            "write a whole number of years: current_year - 1",
        ),
        (
            "current_quarter + x",
            "expected a whole number after '+', not 'x'",
            (18, 19),
            "write a whole number of quarters: current_quarter + 1",
        ),
        (
            "current_year - 1.5",
            "the offset must be a whole number, not '1.5'",
            (15, 18),
            "write a whole number of years: current_year - 1",
        ),
        (
            "current_year - 1年",
            "unexpected '年' after 'current_year - 1'",
            (16, 17),
            "write current_year, current_quarter, current_month or current_day, optionally "
            "followed by + N or - N (current_year - 1), or a constant",
        ),
    ],
)
def test_values_that_do_not_parse(raw: str, message: str, span: tuple[int, int], hint: str) -> None:
    with pytest.raises(ValueSyntaxError) as exc:
        parse_value(raw)
    assert (exc.value.message, (exc.value.start, exc.value.end), exc.value.hint) == (
        message,
        span,
        hint,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("current_year", True),
        ("current", True),
        ("curent_year", True),
        (" current_day+1", True),
        ("year", False),
        ("desc", False),
        ("去年", False),
        ("", False),
    ],
)
def test_what_counts_as_an_expression(text: str, expected: bool) -> None:
    assert is_expression(text) is expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (ValueExpr(unit="quarter", offset=-1), True),
        (ValueExpr(1), True),
        (ValueExpr(2.5), True),
        (ValueExpr("2025"), True),
        (ValueExpr(" 1,000.50 "), True),
        (ValueExpr("-.5"), True),
        (ValueExpr("一"), False),
        (ValueExpr("1e3"), False),
        (ValueExpr("NaN"), False),
        (ValueExpr(True), False),
        (ValueExpr(""), False),
    ],
)
def test_what_a_number_slot_can_hold(expr: ValueExpr, expected: bool) -> None:
    assert is_numeric(expr) is expected


@pytest.mark.parametrize(
    "expr",
    [ValueExpr(unit="year", offset=-1), ValueExpr(unit="day", offset=3), ValueExpr(unit="month")],
)
def test_source_parses_back(expr: ValueExpr) -> None:
    assert parse_value(expr.source()) == expr


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "patches"),
        (3, "patches"),
        ("patches", "patches"),
        ("./learned/", "learned"),
        ("learned/patches", "learned/patches"),
        ("learned\\patches", "learned/patches"),
        ("..", None),
        ("../shared", None),
        ("learned/../../x", None),
        ("/etc/patches", None),
        (".", None),
        ("  ", None),
        ("C:/patches", None),
    ],
)
def test_patches_dir(value: object, expected: str | None) -> None:
    assert patches_dir(value) == expected


# ---- what a pack compiles to ------------------------------------------------------------------


def test_no_learning_file_and_no_patches_is_none(tmp_path: Path, registry: Registry) -> None:
    pack, diags = compile_files(tmp_path, registry, {"goals.yaml": GOALS, "patches/README": "x"})
    assert diags == [] and pack is not None
    assert pack.learning is None


def test_absent_keys_take_the_defaults(tmp_path: Path, registry: Registry) -> None:
    spec = learning_of(tmp_path, registry, {"learning.yaml": "similarity: 0.9\n"})
    assert spec == LearningSpec(similarity=0.9)
    assert spec.triggers == Triggers(
        skill_failures=2, negation=True, entropy=3.2, contradiction_turns=3, rejection=True
    )
    assert spec.patches == PatchSet() and spec.patches_dir == "patches"


def test_every_key_of_learning_yaml(tmp_path: Path, registry: Registry) -> None:
    text = """\
triggers:
  skill_failures: 0
  negation: false
  entropy: null
  contradiction_turns: 5
  rejection: false
similarity: 1
patches_dir: learned
concepts:
  市盈率: 股价 ÷ 每股收益（净利润）
  市净率: 股价 ÷ 每股净资产
"""
    spec = learning_of(tmp_path, registry, {"learning.yaml": text})
    assert spec == LearningSpec(
        triggers=Triggers(
            skill_failures=0, negation=False, entropy=None, contradiction_turns=5, rejection=False
        ),
        similarity=1.0,
        concepts=(("市盈率", "股价 ÷ 每股收益（净利润）"), ("市净率", "股价 ÷ 每股净资产")),
        patches_dir="learned",
    )
    assert spec.concept("市净率") == "股价 ÷ 每股净资产" and spec.concept("市销率") is None


def test_patches_without_learning_yaml(tmp_path: Path, registry: Registry) -> None:
    files = {"goals.yaml": GOALS, "patches/a.yaml": MAPPING + CALIBRATION}
    spec = learning_of(tmp_path, registry, files)
    root = str((tmp_path / "pack").resolve())
    assert spec.triggers == Triggers() and spec.similarity == 0.85
    assert spec.patches == PatchSet(
        mappings=(
            ParameterMapping(
                id="quarterly-report/time/去年一季度",
                intent="quarterly-report",
                phrase="去年一季度",
                values=(("year", ValueExpr(unit="year", offset=-1)), ("quarter", ValueExpr(1))),
                entity="time",
                learned_from=("R-000001",),
                file=f"{root}/patches/a.yaml",
                line=2,
            ),
        ),
        calibrations=(
            Calibration(
                id="calibration/市盈率-市净率",
                confused_pair=("市盈率", "市净率"),
                discriminator="市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产",
                example="茅台的市净率是多少",
                intent="stock-metric",
                learned_from=("R-000002", "R-000003"),
                file=f"{root}/patches/a.yaml",
                line=11,
            ),
        ),
        files=(f"{root}/patches/a.yaml",),
    )
    assert spec.patches.learned_from() == {"R-000001", "R-000002", "R-000003"}


def test_patches_in_file_order(tmp_path: Path, registry: Registry) -> None:
    later = """\
parameter_mappings:
  - {id: b2, intent: quarterly-report, phrase: 前年, set: {year: current_year - 2}}
  - {id: b1, intent: quarterly-report, phrase: 上半年, set: {period: 上半年}}
calibrations:
  - {id: c-b, confused_pair: [市净率, 市盈率], discriminator: 看分母}
"""
    earlier = """\
parameter_mappings:
  - {id: z, intent: quarterly-report, phrase: 今年, set: {year: current_year}}
calibrations:
  - {id: c-a, confused_pair: [市盈率, 市净率], discriminator: 看分母}
"""
    files = {
        "goals.yaml": GOALS,
        "patches/002-later.yaml": later,
        "patches/001-earlier.yaml": earlier,
        "patches/notes.txt": "not a patch file",
    }
    patches = learning_of(tmp_path, registry, files).patches
    assert [m.id for m in patches.mappings] == ["z", "b2", "b1"]
    assert [c.id for c in patches.calibrations] == ["c-a", "c-b"]
    assert patches.ids == ("z", "b2", "b1", "c-a", "c-b") and len(patches) == 5
    assert [Path(f).name for f in patches.files] == ["001-earlier.yaml", "002-later.yaml"]
    assert [(Path(m.file).name, m.line) for m in patches.mappings] == [
        ("001-earlier.yaml", 2),
        ("002-later.yaml", 2),
        ("002-later.yaml", 3),
    ]
    assert patches.mappings[2].values == (("period", ValueExpr("上半年")),)
    assert patches.calibrations[1].intent is None and patches.calibrations[1].example == ""


def test_patches_dir_names_where_patches_are_read(tmp_path: Path, registry: Registry) -> None:
    files = {
        "goals.yaml": GOALS,
        "learning.yaml": "patches_dir: learned/v1\n",
        "learned/v1/a.yaml": MAPPING,
        "patches/ignored.yaml": "this is: [not read",
    }
    pack, diags = compile_files(tmp_path, registry, files)
    # not read, and said so
    assert [(d.code, d.message) for d in diags] == [
        ("CH005", "directory patches is not a pack file: it is not read")
    ]
    assert pack is not None and pack.learning is not None
    spec = pack.learning
    assert spec.patches_dir == "learned/v1"
    assert [Path(f).relative_to(tmp_path / "pack") for f in spec.patches.files] == [
        Path("learned/v1/a.yaml")
    ]


def test_the_spec_survives_pickle_and_the_cache(tmp_path: Path, registry: Registry) -> None:
    root = write_pack(
        tmp_path / "pack", {"goals.yaml": GOALS, "learning.yaml": "similarity: 0.9\n"}
    )
    cache = tmp_path / "cache"
    first, _ = compile_path(root, registry, cache_dir=cache)
    assert first is not None and first.learning is not None
    assert pickle.loads(pickle.dumps(first)).learning == first.learning
    again, _ = compile_path(root, registry, cache_dir=cache)
    assert again is not None and again.learning == first.learning
    (root / "patches").mkdir()
    (root / "patches" / "a.yaml").write_text(MAPPING, encoding="utf-8")  # a new file: recompiled
    patched, _ = compile_path(root, registry, cache_dir=cache)
    assert patched is not None and patched.learning is not None
    assert patched.learning.patches.ids == ("quarterly-report/time/去年一季度",)
    assert patched.digest != first.digest


# ---- diagnostics ------------------------------------------------------------------------------

VALUE_HINT = (
    "write current_year, current_quarter, current_month or current_day, optionally followed by "
    "+ N or - N (current_year - 1), or a constant"
)


def mapping(pid: str, body: str) -> str:
    return f"parameter_mappings:\n  - id: {pid}\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )


BROKEN: dict[str, tuple[dict[str, str | None], list[Diag]]] = {
    "unknown intent": (
        {"patches/a.yaml": mapping("m", "intent: quartely-report\nphrase: 去年\nset: {year: 1}")},
        [
            Diag(
                "CH340",
                "error",
                "unknown intent 'quartely-report' in parameter mapping 'm'",
                "patches/a.yaml:3:13",
                "did you mean 'quarterly-report'?",
            )
        ],
    ),
    "unknown intent, far from any": (
        {"patches/a.yaml": CALIBRATION.replace("intent: stock-metric", "intent: weather")},
        [
            Diag(
                "CH340",
                "error",
                "unknown intent 'weather' in calibration 'calibration/市盈率-市净率'",
                "patches/a.yaml:6:13",
                "expected one of: quarterly-report, stock-metric",
            )
        ],
    ),
    "no goals.yaml": (
        {"goals.yaml": None, "patches/a.yaml": MAPPING},
        [
            Diag(
                "CH340",
                "error",
                "parameter mapping 'quarterly-report/time/去年一季度' names intent "
                "'quarterly-report', but the pack has no goals.yaml",
                "patches/a.yaml:3:13",
                "patches apply to the intents of goals.yaml; add it, or remove the patch",
            )
        ],
    ),
    "unknown slot": (
        {"patches/a.yaml": MAPPING.replace("quarter: 1", "quater: 1")},
        [
            Diag(
                "CH341",
                "error",
                "intent 'quarterly-report' has no slot 'quater' "
                "(parameter mapping 'quarterly-report/time/去年一季度')",
                "patches/a.yaml:8:7",
                "did you mean 'quarter'?",
            )
        ],
    ),
    "a slot of an intent without slots": (
        {"patches/a.yaml": mapping("m", "intent: stock-metric\nphrase: 市盈率\nset: {metric: pe}")},
        [
            Diag(
                "CH341",
                "error",
                "intent 'stock-metric' has no slot 'metric' (parameter mapping 'm')",
                "patches/a.yaml:5:11",
                "declare the slot under the slots of intent 'stock-metric' in goals.yaml",
            )
        ],
    ),
    "misspelt unit": (
        {"patches/a.yaml": MAPPING.replace("current_year - 1", "current_yaer - 1")},
        [
            Diag(
                "CH342",
                "error",
                "cannot read the value of slot 'year' in parameter mapping "
                "'quarterly-report/time/去年一季度': unknown name 'current_yaer'",
                "patches/a.yaml:7:13",
                "did you mean 'current_year'?",
            )
        ],
    ),
    "bad operator, quoted": (
        {"patches/a.yaml": MAPPING.replace("current_year - 1", '"current_year * 2"')},
        [
            Diag(
                "CH342",
                "error",
                "cannot read the value of slot 'year' in parameter mapping "
                "'quarterly-report/time/去年一季度': expected + or - after 'current_year', not '*'",
                "patches/a.yaml:7:27",
                VALUE_HINT,
            )
        ],
    ),
    "unknown entity extractor": (
        {"patches/a.yaml": MAPPING.replace("entity: time", "entity: tiem")},
        [
            Diag(
                "CH343",
                "error",
                "unknown extractor 'tiem' for the entity of parameter mapping "
                "'quarterly-report/time/去年一季度'",
                "patches/a.yaml:4:13",
                "did you mean 'time'?",
            )
        ],
    ),
    "duplicate id in one file": (
        {"patches/a.yaml": MAPPING + MAPPING.removeprefix("parameter_mappings:\n")},
        [
            Diag(
                "CH344",
                "error",
                "patch id 'quarterly-report/time/去年一季度' is defined twice (first at line 2)",
                "patches/a.yaml:10:9",
                "rename one of them, or merge the two patches and their learned_from",
            )
        ],
    ),
    "duplicate id across files and kinds": (
        {
            "patches/a.yaml": MAPPING,
            "patches/b.yaml": CALIBRATION.replace(
                "calibration/市盈率-市净率", "quarterly-report/time/去年一季度"
            ),
        },
        [
            Diag(
                "CH344",
                "error",
                "patch id 'quarterly-report/time/去年一季度' is defined twice "
                "(first at patches/a.yaml:2:9)",
                "patches/b.yaml:2:9",
                "rename one of them, or merge the two patches and their learned_from",
            )
        ],
    ),
    "confused with itself": (
        {"patches/a.yaml": CALIBRATION.replace("[市盈率, 市净率]", "[市盈率, 市盈率]")},
        [
            Diag(
                "CH345",
                "error",
                "calibration 'calibration/市盈率-市净率' confuses '市盈率' with itself",
                "patches/a.yaml:3:26",
                "name two different concepts: [what was taken, what was meant]",
            )
        ],
    ),
    "text for a number slot": (
        {"patches/a.yaml": MAPPING.replace("quarter: 1", "quarter: 一")},
        [
            Diag(
                "CH346",
                "error",
                "slot 'quarter' of intent 'quarterly-report' is a number, but parameter mapping "
                "'quarterly-report/time/去年一季度' sets it to '一'",
                "patches/a.yaml:8:16",
                "write a number (1, 2.5) or current_<unit> + N / - N",
            )
        ],
    ),
    "true for a number slot": (
        {"patches/a.yaml": MAPPING.replace("quarter: 1", "quarter: true")},
        [
            Diag(
                "CH346",
                "error",
                "slot 'quarter' of intent 'quarterly-report' is a number, but parameter mapping "
                "'quarterly-report/time/去年一季度' sets it to true",
                "patches/a.yaml:8:16",
                "write a number (1, 2.5) or current_<unit> + N / - N",
            )
        ],
    ),
    "the same slot for the same phrase twice": (
        {
            "patches/a.yaml": MAPPING,
            "patches/b.yaml": MAPPING.replace("quarterly-report/time/去年一季度", "again").replace(
                "year: current_year - 1", "period: 上半年"
            ),
        },
        [
            Diag(
                "CH347",
                "warning",
                "parameter mapping 'again' sets slot 'quarter' for phrase '去年一季度' like "
                "'quarterly-report/time/去年一季度' (patches/a.yaml:5:13), which comes first "
                "and wins",
                "patches/b.yaml:5:13",
                "keep one of the two mappings (merge their learned_from)",
            )
        ],
    ),
    "patches_dir outside the pack": (
        {"learning.yaml": "patches_dir: ../shared\n"},
        [
            Diag(
                "CH348",
                "error",
                "patches_dir '../shared' is not a directory inside the pack",
                "learning.yaml:1:14",
                "give a path relative to the pack, below it: patches, or learned/patches",
            )
        ],
    ),
    "schema: learning.yaml": (
        {"learning.yaml": "similarity: 0\ntriggers: {entropy: high, negation: 'no'}\nsimilar: 1\n"},
        [
            Diag(
                "CH013",
                "error",
                "'similarity' must be greater than 0, not 0",
                "learning.yaml:1:13",
                "",
            ),
            Diag(
                "CH010",
                "error",
                "'entropy' must be a number or empty, not a string",
                "learning.yaml:2:21",
                "",
            ),
            Diag(
                "CH010",
                "error",
                "'negation' must be true or false, not a string",
                "learning.yaml:2:37",
                "write true or false, without quotes",
            ),
            Diag(
                "CH012",
                "warning",
                "unknown key 'similar'",
                "learning.yaml:3:1",
                "did you mean 'similarity'?",
            ),
        ],
    ),
    "schema: a patch": (
        {"patches/a.yaml": mapping("m", "intent: quarterly-report\nset: {}\nlearned_from: [R-1]")},
        [
            Diag(
                "CH011",
                "error",
                "missing required key 'phrase' in parameter mapping 'm'",
                "patches/a.yaml:2:5",
                "required keys: id, intent, phrase, set",
            ),
            Diag("CH013", "error", "'set' must not be empty", "patches/a.yaml:4:10", ""),
            Diag(
                "CH013",
                "error",
                "item 1 of 'learned_from' must be a reflection log id such as R-000001, not 'R-1'",
                "patches/a.yaml:5:20",
                "",
            ),
        ],
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_diagnostics(tmp_path: Path, registry: Registry, case: str) -> None:
    files, expected = BROKEN[case]
    pack, diags = compile_files(tmp_path, registry, {"goals.yaml": GOALS, **files})
    assert diags == expected
    if any(d.severity == "error" for d in expected):
        assert pack is None
    else:
        assert pack is not None and pack.learning is not None
