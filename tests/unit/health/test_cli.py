"""``charter health``: where the database comes from, the options' errors and exit codes, the
output file. The metrics themselves: ``test_metrics.py`` and the acceptance test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import Run, RunCharter

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "charter.db"
    path.touch()
    return f"sqlite:///{path}"


def test_an_empty_database(charter: RunCharter, db: str) -> None:
    got = charter("health", "--db", db, "--format", "json", "--now", "2024-05-06")
    assert (got.code, got.err) == (0, "")
    doc = json.loads(got.out)
    assert (doc["pack"], doc["now"], doc["marks"], doc["trend"]) == (
        None,
        "2024-05-06T00:00:00Z",
        {"pass": 0, "warn": 0, "n/a": 9},
        [],
    )


def test_the_database_from_the_environment(
    charter: RunCharter, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARTER_DATABASE_URL", db)
    got = charter("health", "--now", "2024-05-06")
    assert got.code == 0
    assert got.out.splitlines()[0] == "Cognitive health · every pack · now 2024-05-06T00:00:00Z"


@pytest.mark.parametrize(
    ("args", "code", "err"),
    [
        (
            ("--db", "sqlite:///{tmp}/missing.db"),
            1,
            "charter health: no database at {tmp}/missing.db (give --db URL or set "
            "CHARTER_DATABASE_URL)\n",
        ),
        (("--database", "nonsense"), 1, "charter health: not a database URL: 'nonsense'\n"),
        (
            ("--since", "last week"),
            2,
            "charter health: --since: not an ISO 8601 day or time: 'last week' (e.g. 2024-05-01 "
            "or 2024-05-01T10:30:00Z)\n",
        ),
        (
            ("--now", "2024-13-01"),
            2,
            "charter health: --now: not an ISO 8601 day or time: '2024-13-01' (e.g. 2024-05-01 "
            "or 2024-05-01T10:30:00Z)\n",
        ),
        (
            ("--ablation", "cases.yaml", "--format", "html"),
            2,
            "charter health: --ablation prints a table or JSON, not html\n",
        ),
        (
            ("--output", "{tmp}/no/such/dir/report.html", "--format", "html"),
            1,
            "charter health: cannot write {tmp}/no/such/dir/report.html: No such file or "
            "directory\n",
        ),
    ],
    ids=["missing file", "not a url", "since", "now", "ablation html", "unwritable output"],
)
def test_errors(
    charter: RunCharter, db: str, tmp_path: Path, args: tuple[str, ...], code: int, err: str
) -> None:
    got = charter("health", "--db", db, *(a.format(tmp=tmp_path) for a in args))
    assert got == Run(code, "", err.format(tmp=tmp_path))


def test_an_unknown_pack(
    charter: RunCharter, db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    got = charter("health", "--db", db, "--pack", "nowhere")
    assert got.code == 1
    assert got.out.splitlines()[0] == "nowhere: CH004 unknown pack 'nowhere'"


def test_the_report_to_a_file(charter: RunCharter, db: str, tmp_path: Path) -> None:
    out = tmp_path / "health.html"
    got = charter("health", "--db", db, "--format", "html", "-o", str(out))
    assert got == Run(0, f"wrote {out}\n", "")
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_pack_without_patches(
    charter: RunCharter, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """finance deploys no patches: reflection health is measured (no n/a for want of a
    pack) and has nothing to count."""
    monkeypatch.chdir(ROOT)
    got = charter("health", "--db", db, "--pack", "finance", "--format", "json")
    assert got.code == 0, got
    doc = json.loads(got.out)
    assert doc["pack"] == "finance"
    assert [m["note"] for m in doc["dimensions"][1]["metrics"]] == [
        "no reflections",
        "no patches deployed",
        "no patch uses or reflections behind them",
    ]


def test_the_ablation_is_wired(charter: RunCharter, tmp_path: Path) -> None:
    got = charter("health", "--ablation", str(tmp_path / "nope.yaml"))
    assert (got.code, got.err) == (1, "")
    assert f"{tmp_path / 'nope.yaml'}: CH004 no such case file or directory" in got.out
