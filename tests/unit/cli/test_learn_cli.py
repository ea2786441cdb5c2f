"""``charter learn PACK``: a reflection log in SQLite compiled into the patch files of a pack
in tmp_path, the ``--diff`` preview, ``--since``, where the database comes from, every way it
exits 1 or 2, and the worked example of docs/learning.md run as written; outputs pinned."""

from __future__ import annotations

import json
import os
import re
import shlex
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from charter.learn.log import Evidence, ReflectionLog
from tests.support.cli import Run, RunCharter
from tests.support.learn import write_pack

ROOT = Path(__file__).resolve().parents[3]
LEARNING_DOC = ROOT / "docs" / "learning.md"
AT = datetime.fromisoformat("2026-11-30T10:22:05+00:00")
LEARNED = "reports/patches/learned.yaml"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the pack ``reports``, no configuration file, no
    ``CHARTER_*`` variables (the compile cache apart)."""
    for name in list(os.environ):
        if name.startswith("CHARTER_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    write_pack(tmp_path / "reports")
    return tmp_path


def add(
    log: ReflectionLog,
    said: str,
    params: dict[str, Any] | None,
    correction: dict[str, Any] | None,
    *,
    trigger: str = "negation",
    intent: str = "quarterly-report",
    at: datetime = AT,
) -> None:
    evidence = [Evidence("user_input", at, content=said)]
    if params is not None:
        evidence.append(Evidence("tool_call", at, name="quarterly_report", params=params))
    evidence.append(Evidence("user_feedback", at, content="不对"))
    log.add(
        pack="reports",
        trigger=trigger,
        hypothesis="…",
        evidence=evidence,
        correction=correction,
        at=at,
        user_id="u1",
        session_id="s1",
        intent=intent,
        skill="quarterly_report",
    )


def fill(url: str) -> None:
    log = ReflectionLog(url)
    with log:
        add(log, "给我去年一季度的财报", {"year": 2024, "quarter": 1}, {"year": 2025})
        add(log, "茅台的市净率是多少", None, {"concept": "市净率", "instead_of": "市盈率"},
            intent="stock-metric")  # fmt: skip
        add(log, "茅台的财报", {"year": 2026, "quarter": 4}, {"company": "贵州茅台"})
        add(log, "今年二季度的财报", {"year": 2026, "quarter": 2}, None, trigger="skill_failure")
        add(log, "去年一季度的财报呢", {"year": 2024, "quarter": 1}, {"year": 2025},
            at=datetime.fromisoformat("2026-12-02T09:00:00+00:00"))  # fmt: skip


SUMMARY = """\
read 5 reflection log entries of pack reports
learned 1 parameter mapping and 1 calibration from 3 entries
  quarterly-report/time/去年一季度: year = current_year - 1, quarter = 1 (R-000001, R-000005)
  calibration/市盈率-市净率: 市净率, not 市盈率 (R-000002)
not converted: 2 entries
  R-000003: nothing in the input '茅台的财报' explains company = 贵州茅台
    fix: no extractor finds that value in those words (slot company of intent quarterly-report); \
if they always mean it, write the mapping by hand in reports/patches/learned.yaml
  1 skill_failure entry: not compiled into patches (only negation entries are)
"""

WRITTEN = """\
# 由 charter learn 根据反思日志生成：像代码一样审阅后提交
# Written by `charter learn` from the reflection log: review it like code, then commit it.
parameter_mappings:
  - id: quarterly-report/time/去年一季度
    intent: quarterly-report
    entity: time
    phrase: 去年一季度
    set:
      year: current_year - 1
      quarter: 1
    learned_from: [R-000001, R-000005]

calibrations:
  - id: calibration/市盈率-市净率
    confused_pair: [市盈率, 市净率]
    discriminator: 市盈率：股价 ÷ 每股收益（净利润）；市净率：股价 ÷ 每股净资产
    example: 问的是市净率，不是市盈率
    intent: stock-metric
    learned_from: [R-000002]
"""


def test_learn_writes_the_patches_and_the_pack_still_validates(
    here: Path, charter: RunCharter
) -> None:
    fill("sqlite:///log.db")
    assert charter("learn", "reports", "--database", "sqlite:///log.db") == Run(
        0, SUMMARY + f"wrote {LEARNED}: 2 patches added\n", ""
    )
    assert (here / LEARNED).read_text(encoding="utf-8") == WRITTEN
    assert charter("validate", "reports") == Run(0, "", "")
    # nothing new: the file stays as it is
    assert charter("learn", "reports", "--db", "sqlite:///log.db") == Run(
        0, SUMMARY + "the patches in reports/patches are up to date\n", ""
    )


def test_diff_writes_nothing(here: Path, charter: RunCharter) -> None:
    fill("sqlite:///log.db")
    run = charter("learn", "reports", "--database", "sqlite:///log.db", "--diff")
    assert run.err == SUMMARY
    assert run.out == (
        f"--- /dev/null\n+++ b/{LEARNED}\n@@ -0,0 +1,19 @@\n"
        + "".join(f"+{line}\n" for line in WRITTEN.splitlines())
    )
    assert run.code == 0
    assert not (here / "reports" / "patches").exists()
    charter("learn", "reports", "--database", "sqlite:///log.db")
    assert charter("learn", "reports", "--database", "sqlite:///log.db", "--diff") == Run(
        0, "", SUMMARY + "no changes\n"
    )


def test_a_hand_edited_file_keeps_its_edits(here: Path, charter: RunCharter) -> None:
    fill("sqlite:///log.db")
    edited = WRITTEN.replace("learned_from: [R-000001, R-000005]", "learned_from: [R-000001]")
    edited = edited.replace(
        "example: 问的是市净率，不是市盈率", "example: 五粮液的市净率  # 换了例子"
    )
    (here / "reports" / "patches").mkdir()
    (here / LEARNED).write_text(edited, encoding="utf-8")
    run = charter("learn", "reports", "--database", "sqlite:///log.db")
    assert run == Run(0, SUMMARY + f"wrote {LEARNED}: learned_from of 1 patch grew\n", "")
    assert (here / LEARNED).read_text(encoding="utf-8") == edited.replace(
        "learned_from: [R-000001]", "learned_from: [R-000001, R-000005]"
    )


def test_since_and_the_configured_database(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill("sqlite:///charter.db")  # the configuration's default
    assert charter("learn", "reports", "--since", "2026-12-01", "--diff").err == (
        "read 1 reflection log entry of pack reports since 2026-12-01\n"
        "learned 1 parameter mapping from 1 entry\n"
        "  quarterly-report/time/去年一季度: year = current_year - 1, quarter = 1 (R-000005)\n"
    )
    assert charter("learn", "reports", "--since", "2026-12-03T00:00+08:00") == Run(
        0, "no reflection log entries of pack reports since 2026-12-03T00:00+08:00: "
        "nothing to learn\n", "",
    )  # fmt: skip
    (here / "charter.db").rename(here / "other.db")
    (here / "charter.toml").write_text('[database]\nurl = "sqlite:///other.db"\n')
    assert charter("learn", "reports", "--diff").err.startswith("read 5 reflection log")
    monkeypatch.setenv("CHARTER_DATABASE_URL", "sqlite:///missing.db")
    assert charter("learn", "reports") == Run(
        1,
        "",
        "charter learn: no database at missing.db (give --db URL or set CHARTER_DATABASE_URL)\n",
    )


def test_a_learned_patch_that_would_not_validate_is_taken_back(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    import charter.learn.generalise as generalise_module
    from charter.compile.specs.learn import ParameterMapping, ValueExpr
    from charter.learn.generalise import Learned

    fill("sqlite:///log.db")
    bad = ParameterMapping(
        id="quarterly-report/time/上个月",
        intent="quarterly-report",
        phrase="上个月",
        values=(("month", ValueExpr(unit="month", offset=-1)),),
        entity="time",
        learned_from=("R-000001",),
    )
    monkeypatch.setattr(generalise_module, "generalise", lambda *a, **k: Learned((bad,), (), (), 1))
    run = charter("learn", "reports", "--database", "sqlite:///log.db")
    assert run.code == 1
    assert "CH341 intent 'quarterly-report' has no slot 'month'" in run.out
    assert run.err == (
        "charter learn: the pack would not validate with these patches: nothing written\n"
    )
    assert not (here / "reports" / "patches").exists()


FLOW = "calibrations: [{id: c/x-y, confused_pair: [x, y], discriminator: z}]\n"


@pytest.mark.parametrize(
    ("args", "files", "code", "err"),
    [
        (["nowhere"], {}, 1,
         "charter learn: unknown pack 'nowhere' (a pack directory or a name under domains/)\n"),
        (["reports", "--since", "yesterday"], {}, 2,
         "charter learn: --since: not an ISO 8601 date or time: 'yesterday' (e.g. 2026-11-01)\n"),
        (["reports", "--database", "nonsense"], {}, 1,
         "charter learn: not a database URL: 'nonsense'\n"),
        (["reports"], {}, 1,
         "charter learn: no database at charter.db (give --db URL or set CHARTER_DATABASE_URL)\n"),
        (["reports", "--database", "sqlite:///log.db"], {"reports/patches/learned.yaml": FLOW}, 1,
         "charter learn: reports/patches/learned.yaml: charter learn adds to calibrations written "
         "as a block list (- id: …), not to this one\n"),
    ],
)  # fmt: skip
def test_errors(
    here: Path,
    charter: RunCharter,
    args: list[str],
    files: dict[str, str],
    code: int,
    err: str,
) -> None:
    fill("sqlite:///log.db")
    for name, text in files.items():
        (here / name).parent.mkdir(parents=True, exist_ok=True)
        (here / name).write_text(text, encoding="utf-8")
    assert charter("learn", *args) == Run(code, "", err)


def test_a_pack_that_does_not_compile(here: Path, charter: RunCharter) -> None:
    (here / "reports" / "goals.yaml").write_text("intents: 3\n", encoding="utf-8")
    run = charter("learn", "reports", "--database", "sqlite:///log.db")
    assert run.code == 1
    assert "goals.yaml" in run.out
    assert run.err == "charter learn: pack reports does not compile (charter validate reports)\n"


def test_a_configuration_with_errors(here: Path, charter: RunCharter) -> None:
    (here / "charter.toml").write_text('[database]\nurl = "nonsense"\n')
    run = charter("learn", "reports")
    assert run.code == 1
    assert "CH404" in run.err
    assert run.err.endswith(
        "charter learn: the configuration has errors (charter config check); "
        "or give --database URL\n"
    )


# ---- docs/learning.md, section 4, run as written ---------------------------------------


def _blocks(kind: str) -> list[str]:
    text = LEARNING_DOC.read_text(encoding="utf-8")
    return re.findall(rf"```{kind}\n(.*?)```", text, flags=re.S)


def test_the_worked_example_of_the_docs(here: Path, charter: RunCharter) -> None:
    files = [b for b in _blocks("yaml") if b.startswith("# reports/")]
    assert [f.splitlines()[0] for f in files] == [
        "# reports/pack.yaml",
        "# reports/goals.yaml",
        "# reports/learning.yaml",
    ]
    for block in files:
        (here / block.splitlines()[0][2:]).write_text(block, encoding="utf-8")
    # the skill contract the page leaves out is the test pack's
    assert (here / "reports" / "skills" / "quarterly_report.yaml").is_file()
    (entries,) = _blocks("json")
    log = ReflectionLog("sqlite:///charter.db")
    with log:
        for data in json.loads(entries):
            log.add(
                pack=data["pack"],
                trigger=data["trigger"],
                hypothesis=data["hypothesis"],
                evidence=[Evidence.from_dict(e) for e in data["evidence"]],
                correction=data["correction"],
                at=datetime.fromisoformat(data["created_at"]),
                user_id="u1",
                session_id="s1",
                trace_id=data["trace_id"],
                intent=data["intent"],
                skill=data["skill"],
            )
        assert [e.as_dict() for e in log.entries()] == json.loads(entries)
    transcript = next(b for b in _blocks("text") if b.startswith("$ charter learn"))
    command: list[str] = []
    shown: list[str] = []
    for line in [*transcript.splitlines(), "$ "]:
        if not line.startswith("$ "):
            shown.append(line)
            continue
        if command:
            run = charter(*command[1:])
            assert run.code == 0, run
            assert (run.err + run.out).splitlines() == shown, shlex.join(command)
        command, shown = shlex.split(line[2:]), []
    written = next(b for b in _blocks("yaml") if b.startswith("# 由 charter learn"))
    assert (here / LEARNED).read_text(encoding="utf-8") == written


def test_the_cli_doc_shows_the_same_run() -> None:
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = cli[cli.index("## `charter learn") :]
    (shown,) = re.findall(r"```text\n(\$ charter learn .*?)```", section, flags=re.S)[:1]
    transcript = next(b for b in _blocks("text") if b.startswith("$ charter learn"))
    assert shown in transcript
