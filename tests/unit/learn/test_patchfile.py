"""Patch files (charter.learn.patchfile): the YAML ``charter learn`` writes, merged into the
files already there with hand edits and comments kept, and the diff ``--diff`` prints; every
text pinned exactly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter.compile.specs.learn import Calibration, ParameterMapping, ValueExpr
from charter.learn.patchfile import (
    HEADER,
    Change,
    PatchFileError,
    apply,
    diff,
    plan,
    render,
    scalar,
    undo,
)

LAST_Q1 = ParameterMapping(
    id="quarterly-report/time/去年一季度",
    intent="quarterly-report",
    phrase="去年一季度",
    values=(("year", ValueExpr(unit="year", offset=-1)), ("quarter", ValueExpr(constant=1))),
    entity="time",
    learned_from=("R-000001",),
)
LAST_QUARTER = ParameterMapping(
    id="quarterly-report/time/上季度",
    intent="quarterly-report",
    phrase="上季度",
    values=(("quarter", ValueExpr(unit="quarter", offset=-1)),),
    entity="time",
    learned_from=("R-000006",),
)
PE_PB = Calibration(
    id="calibration/市盈率-市净率",
    confused_pair=("市盈率", "市净率"),
    discriminator="市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产",
    example="茅台的市盈率是多少",
    intent="stock-metric",
    learned_from=("R-000002",),
)
ROE_ROA = Calibration(
    id="calibration/ROE-ROA",
    confused_pair=("ROE", "ROA"),
    discriminator="ROE：净利润 ÷ 净资产；ROA：净利润 ÷ 总资产",
    learned_from=("R-000008",),
)

RENDERED = (
    HEADER
    + """\
parameter_mappings:
  - id: quarterly-report/time/上季度
    intent: quarterly-report
    entity: time
    phrase: 上季度
    set:
      quarter: current_quarter - 1
    learned_from: [R-000006]
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set:
      year: current_year - 1
      quarter: 1
    learned_from: [R-000001]

calibrations:
  - id: calibration/ROE-ROA
    confused_pair: [ROE, ROA]
    discriminator: ROE：净利润 ÷ 净资产；ROA：净利润 ÷ 总资产
    learned_from: [R-000008]
  - id: calibration/市盈率-市净率
    confused_pair: [市盈率, 市净率]
    discriminator: 市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产
    example: 茅台的市盈率是多少
    intent: stock-metric
    learned_from: [R-000002]
"""
)


def test_header() -> None:
    assert HEADER == (
        "# 由 charter learn 根据反思日志生成：像代码一样审阅后提交\n"
        "# Written by `charter learn` from the reflection log: review it like code, "
        "then commit it.\n"
    )


def test_render_sorts_by_id_and_keeps_chinese() -> None:
    text = render([LAST_Q1, LAST_QUARTER], [PE_PB, ROE_ROA])
    assert text == RENDERED
    assert yaml.safe_load(text)["parameter_mappings"][1] == {
        "id": "quarterly-report/time/去年一季度",
        "intent": "quarterly-report",
        "entity": "time",
        "phrase": "去年一季度",
        "set": {"year": "current_year - 1", "quarter": 1},
        "learned_from": ["R-000001"],
    }


def test_render_one_section() -> None:
    assert render([], [ROE_ROA]) == HEADER + (
        "calibrations:\n"
        "  - id: calibration/ROE-ROA\n"
        "    confused_pair: [ROE, ROA]\n"
        "    discriminator: ROE：净利润 ÷ 净资产；ROA：净利润 ÷ 总资产\n"
        "    learned_from: [R-000008]\n"
    )


@pytest.mark.parametrize(
    ("value", "flow", "expected"),
    [
        ("current_year - 1", False, "current_year - 1"),
        ("去年一季度", False, "去年一季度"),
        ("R-000001", True, "R-000001"),
        ("市盈率：股价", False, "市盈率：股价"),
        (1, False, "1"),
        (2.5, False, "2.5"),
        (True, False, "true"),
        (None, False, "null"),
        # what would read back as something else, or break the line, is quoted
        ("2024", False, '"2024"'),
        ("true", False, '"true"'),
        ("null", False, '"null"'),
        ("", False, '""'),
        ("a: b", False, '"a: b"'),
        ("a #b", False, '"a #b"'),
        ("#tag", False, '"#tag"'),
        ("- item", False, '"- item"'),
        ("*ref", False, '"*ref"'),
        ('say "hi"', False, 'say "hi"'),
        ("'x'", False, "\"'x'\""),
        ("key:", False, '"key:"'),
        (" padded", False, '" padded"'),
        ("two\nlines", False, '"two\\nlines"'),
        ("a,b", False, "a,b"),
        ("a,b", True, '"a,b"'),
        ("[x]", True, '"[x]"'),
        ("{x}", False, '"{x}"'),
    ],
)
def test_scalar(value: Any, flow: bool, expected: str) -> None:
    assert scalar(value, flow=flow) == expected
    assert yaml.safe_load(f"[{expected}]" if flow else f"k: {expected}") == (
        [value] if flow else {"k": value}
    )


def test_a_new_file(tmp_path: Path) -> None:
    directory = tmp_path / "patches"
    changes = plan(directory, [LAST_Q1], [PE_PB])
    assert changes == [
        Change(
            directory / "learned.yaml",
            None,
            render([LAST_Q1], [PE_PB]),
            ("quarterly-report/time/去年一季度", "calibration/市盈率-市净率"),
        )
    ]
    assert diff(changes, lambda p: p.relative_to(tmp_path).as_posix()) == (
        "--- /dev/null\n"
        "+++ b/patches/learned.yaml\n"
        "@@ -0,0 +1,19 @@\n" + "".join(f"+{line}\n" for line in changes[0].new.splitlines())
    )
    apply(changes)
    assert (directory / "learned.yaml").read_text(encoding="utf-8") == changes[0].new
    assert plan(directory, [LAST_Q1], [PE_PB]) == []  # up to date
    undo(changes)
    assert not (directory / "learned.yaml").exists()


HAND_EDITED = """\
# 由 charter learn 根据反思日志生成：像代码一样审阅后提交
parameter_mappings:
  # 复核过：财报按自然年
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set:
      year: current_year - 1
      quarter: 1  # 手工确认
    learned_from: [R-000001]

# 概念校准
calibrations:
  - id: calibration/市盈率-市净率
    confused_pair: [市盈率, 市净率]
    discriminator: 手写的区分说明
    learned_from:
      - R-000002
"""

MERGED = """\
# 由 charter learn 根据反思日志生成：像代码一样审阅后提交
parameter_mappings:
  # 复核过：财报按自然年
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set:
      year: current_year - 1
      quarter: 1  # 手工确认
    learned_from: [R-000001, R-000005]
  - id: quarterly-report/time/上季度
    intent: quarterly-report
    entity: time
    phrase: 上季度
    set:
      quarter: current_quarter - 1
    learned_from: [R-000006]

# 概念校准
calibrations:
  - id: calibration/市盈率-市净率
    confused_pair: [市盈率, 市净率]
    discriminator: 手写的区分说明
    learned_from: [R-000002, R-000007]
  - id: calibration/ROE-ROA
    confused_pair: [ROE, ROA]
    discriminator: ROE：净利润 ÷ 净资产；ROA：净利润 ÷ 总资产
    learned_from: [R-000008]
"""


def test_merging_keeps_hand_edits_and_comments(tmp_path: Path) -> None:
    (tmp_path / "learned.yaml").write_text(HAND_EDITED, encoding="utf-8")
    changes = plan(
        tmp_path,
        [replace(LAST_Q1, learned_from=("R-000001", "R-000005")), LAST_QUARTER],
        [replace(PE_PB, learned_from=("R-000002", "R-000007")), ROE_ROA],
    )
    assert changes == [
        Change(
            tmp_path / "learned.yaml",
            HAND_EDITED,
            MERGED,
            ("quarterly-report/time/上季度", "calibration/ROE-ROA"),
            ("quarterly-report/time/去年一季度", "calibration/市盈率-市净率"),
        )
    ]
    assert diff(changes, lambda p: "patches/learned.yaml").splitlines() == [
        "--- a/patches/learned.yaml",
        "+++ b/patches/learned.yaml",
        "@@ -8,12 +8,22 @@",
        "     set:",
        "       year: current_year - 1",
        "       quarter: 1  # 手工确认",
        "-    learned_from: [R-000001]",
        "+    learned_from: [R-000001, R-000005]",
        "+  - id: quarterly-report/time/上季度",
        "+    intent: quarterly-report",
        "+    entity: time",
        "+    phrase: 上季度",
        "+    set:",
        "+      quarter: current_quarter - 1",
        "+    learned_from: [R-000006]",
        " ",
        " # 概念校准",
        " calibrations:",
        "   - id: calibration/市盈率-市净率",
        "     confused_pair: [市盈率, 市净率]",
        "     discriminator: 手写的区分说明",
        "-    learned_from:",
        "-      - R-000002",
        "+    learned_from: [R-000002, R-000007]",
        "+  - id: calibration/ROE-ROA",
        "+    confused_pair: [ROE, ROA]",
        "+    discriminator: ROE：净利润 ÷ 净资产；ROA：净利润 ÷ 总资产",
        "+    learned_from: [R-000008]",
    ]


ITEM = "  - id: calibration/ROE-ROA\n    confused_pair: [ROE, ROA]\n    discriminator: 手写\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("    learned_from: []\n", "    learned_from: [R-000008, R-000009]\n"),
        ("    learned_from: [R-000001]  # 审过\n", "    learned_from: [R-000001, R-000008, R-000009]  # 审过\n"),
        ("    learned_from: [R-000008]\n", "    learned_from: [R-000008, R-000009]\n"),
        ("    learned_from:\n", "    learned_from: [R-000008, R-000009]\n"),
        ("    learned_from: R-000001\n", "    learned_from: [R-000001, R-000008, R-000009]\n"),
        ("", "    learned_from: [R-000008, R-000009]\n"),
        ("    example: |\n      多行\n      例子\n",
         "    example: |\n      多行\n      例子\n    learned_from: [R-000008, R-000009]\n"),
    ],
)  # fmt: skip
def test_learned_from_grows_whatever_its_form(tmp_path: Path, before: str, after: str) -> None:
    text = f"calibrations:\n{ITEM}{before}# 完\n"
    (tmp_path / "learned.yaml").write_text(text, encoding="utf-8")
    grown = replace(ROE_ROA, learned_from=("R-000008", "R-000009"))
    (change,) = plan(tmp_path, [], [grown])
    assert change.new == f"calibrations:\n{ITEM}{after}# 完\n"
    assert (change.added, change.updated) == ((), ("calibration/ROE-ROA",))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # no such section: added at the end
        ("calibrations: []\n", "calibrations: []\n\nparameter_mappings:\n{items}"),
        ("# 只有注释\n", "# 只有注释\n\nparameter_mappings:\n{items}"),
        ("", "parameter_mappings:\n{items}"),
        # an empty section takes the items
        ("parameter_mappings: []\ncalibrations: []\n", "parameter_mappings:\n{items}calibrations: []\n"),
        ("parameter_mappings:\ncalibrations: []\n", "parameter_mappings:\n{items}calibrations: []\n"),
        ("parameter_mappings: ~  # 还没有\n", "parameter_mappings:\n{items_}  # 还没有\n"),
        # a sequence written without indentation keeps its style
        ("parameter_mappings:\n- id: x/time/今天\n  intent: x\n  phrase: 今天\n  set: {day: 1}\n",
         "parameter_mappings:\n- id: x/time/今天\n  intent: x\n  phrase: 今天\n  set: {{day: 1}}\n"
         "{items0}"),
        # no newline at the end of the file
        ("parameter_mappings: []", "parameter_mappings:\n{items}"),
    ],
)  # fmt: skip
def test_new_patches_go_to_the_end_of_their_section(
    tmp_path: Path, before: str, after: str
) -> None:
    (tmp_path / "learned.yaml").write_text(before, encoding="utf-8")
    (change,) = plan(tmp_path, [LAST_QUARTER], [])
    items = render([LAST_QUARTER], []).removeprefix(HEADER).removeprefix("parameter_mappings:\n")
    items0 = "".join(line[2:] + "\n" for line in items.splitlines())
    expected = after.format(items=items, items_=items.rstrip("\n"), items0=items0)
    assert change.new == expected
    assert yaml.safe_load(change.new)["parameter_mappings"][-1]["id"] == LAST_QUARTER.id
    assert change.added == (LAST_QUARTER.id,)


def test_a_patch_in_another_file_grows_there(tmp_path: Path) -> None:
    manual = "calibrations:\n  - id: calibration/ROE-ROA\n    confused_pair: [ROE, ROA]\n" \
        "    discriminator: 手写\n"  # fmt: skip
    (tmp_path / "manual.yaml").write_text(manual, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a patch file", encoding="utf-8")
    assert plan(tmp_path, [], [ROE_ROA]) == [
        Change(
            tmp_path / "manual.yaml",
            manual,
            manual + "    learned_from: [R-000008]\n",
            (),
            ("calibration/ROE-ROA",),
        )
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("parameter_mappings: [\n", "not valid YAML (line 2): expected the node content, but found '<stream end>'"),
        ("calibrations:\n  - id: a\n - id: b\n", "not valid YAML (line 3): expected <block end>, but found '<block sequence start>'"),
        ("- id: a\n", "expected parameter_mappings: and calibrations: at the top"),
        ("calibrations: {id: a}\n", "charter learn adds to calibrations written as a block list (- id: …), not to this one"),
        ("calibrations: [{id: a}]\n", "charter learn adds to calibrations written as a block list (- id: …), not to this one"),
    ],
)  # fmt: skip
def test_a_file_that_cannot_be_merged_into(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "learned.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(PatchFileError) as caught:
        plan(tmp_path, [], [ROE_ROA])
    assert str(caught.value) == f"{tmp_path / 'learned.yaml'}: {message}"


def test_undo_puts_an_edited_file_back(tmp_path: Path) -> None:
    (tmp_path / "learned.yaml").write_text(HAND_EDITED, encoding="utf-8")
    changes = plan(tmp_path, [LAST_QUARTER], [])
    apply(changes)
    assert (tmp_path / "learned.yaml").read_text(encoding="utf-8") != HAND_EDITED
    undo(changes)
    assert (tmp_path / "learned.yaml").read_text(encoding="utf-8") == HAND_EDITED


def test_a_diff_of_a_file_without_a_final_newline() -> None:
    change = Change(Path("/p/learned.yaml"), "a: 1", "a: 1\nb: 2\n")
    assert diff([change]) == (
        "--- /p/learned.yaml\n"
        "+++ /p/learned.yaml\n"
        "@@ -1 +1,2 @@\n"
        "-a: 1\n"
        "\\ No newline at end of file\n"
        "+a: 1\n"
        "+b: 2\n"
    )
