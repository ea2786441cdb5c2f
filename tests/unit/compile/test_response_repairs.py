"""Every text the agent can say is judged at compile time with each rule's whole behaviour
(issue 32, item 1): a ``fix`` rule's repair runs as at run time, and a text it does not make
pass is reported (CH356) with what the repair left, instead of escalating every customer who
reaches it; a repair that does make it pass is no problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from charter.compile.api import compile_path
from charter.contracts.registry import Registry
from charter.diagnostics import sort_diagnostics

TELECOM = Path(__file__).resolve().parents[2] / "fixtures" / "goals" / "telecom"
ASK = "请问您想换成哪一档套餐？目前有19元、39元、59元五档。"


def pack_with(tmp_path: Path, rule: str) -> Path:
    root = tmp_path / "telecom"
    shutil.copytree(TELECOM, root, ignore=shutil.ignore_patterns("tests"))
    (root / "rules.yaml").write_text(f"rules:\n{rule}", encoding="utf-8")
    goals = root / "goals.yaml"
    text = goals.read_text(encoding="utf-8").replace("ask: 请问您想换成哪一档套餐？", f"ask: {ASK}")
    goals.write_text(text, encoding="utf-8")
    return root


def problems(root: Path, registry: Registry) -> list[tuple[str, str, str]]:
    _, diags = compile_path(root, registry, cache_dir=None)
    return [
        (d.code, str(d.location).split("/telecom/", 1)[-1], d.message)
        for d in sort_diagnostics(diags)
    ]


UNFIXABLE = """\
  - id: amount-twin
    describe: 金额大小写双显
    check: every money in output has twin money_upper
    on_fail: fix reformat money
    on_unfixed: retry
"""


def test_a_repair_that_does_not_make_the_text_pass_is_reported(
    tmp_path: Path, registry: Registry
) -> None:
    got = problems(pack_with(tmp_path, UNFIXABLE), registry)
    assert (
        "CH356",
        "goals.yaml:27:14",
        "template builtin.slot_asked#2 (for intent 'plan-change') fails rule 'amount-twin' "
        f"(fix, then retry) when rendered with sample values: {ASK} — repaired: "
        "请问您想换成哪一档套餐？目前有19.00元、39.00元、59.00元五档。",
    ) in got


@pytest.mark.parametrize(
    "rule",
    [
        # the repair makes it pass: at run time the reply is sent repaired
        "  - id: price-format\n    describe: 两位小数\n"
        '    check: every money in output (has unit "元" and decimals == 2)\n'
        "    on_fail: fix reformat money\n",
        # flag only annotates
        "  - id: twin\n    describe: 大小写\n    check: every money in output has twin money_upper\n"
        "    on_fail: flag\n",
    ],
)
def test_a_repair_that_works_or_a_flag_is_no_problem(
    tmp_path: Path, registry: Registry, rule: str
) -> None:
    assert problems(pack_with(tmp_path, rule), registry) == []
