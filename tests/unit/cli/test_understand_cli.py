"""``charter understand`` (one input, layer by layer; ``--bands``; ``--json``) and the intent
table in ``charter test`` (the report, ``--min-recall``/``--min-precision``, a safety intent
that misses failing the run, the JUnit test case), on the tiny pack of
``tests/support/intent_table.py`` (the ``hash`` embedder: no model loads)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support.cli import RunCharter
from tests.support.intent_table import TABLE, tiny_pack


def test_understand_shows_every_layer(tmp_path: Path, charter: RunCharter) -> None:
    root = tiny_pack(tmp_path)
    run = charter("understand", "我卡里还剩多少钱", "--domain", str(root))
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[:4] == [
        "tiny: 我卡里还剩多少钱",
        "keyword triggers: none",
        "dialogue act: other",
        "examples (hash): open",
    ]
    assert lines[4].split()[0] == "balance"  # the examples rank it first
    assert lines[4].endswith("卡里还有多少钱")  # its nearest example
    assert "bands:" in lines
    assert lines[-2].startswith("  margin ")
    assert lines[-1] == "decision: balance (layer: example)"


def test_understand_json(tmp_path: Path, charter: RunCharter) -> None:
    run = charter("understand", "楼下着火了", "--domain", str(tiny_pack(tmp_path)), "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert (doc["triggers"], doc["act"], doc["embedder"]) == (["alarm"], "other", "hash")
    assert doc["decision"] == {"intent": "alarm", "candidates": [], "layer": "safety"}
    assert [b["intent"] for b in doc["bands"]] == ["alarm", "balance", "transfer"]
    assert [(b["examples"], b["pinned"], b["safety"]) for b in doc["bands"]] == [
        (5, False, True),
        (5, False, False),
        (5, False, False),
    ]
    assert len(doc["examples"]["ranking"]) == 3


def test_understand_bands(tmp_path: Path, charter: RunCharter) -> None:
    run = charter("understand", "--bands", "--domain", str(tiny_pack(tmp_path)))
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[:2] == ["tiny: bands", "  intent    examples   open    ask"]
    assert [line.split()[:2] for line in lines[2:5]] == [
        ["alarm", "5"],
        ["balance", "5"],
        ["transfer", "5"],
    ]
    assert lines[2].endswith("(safety)")


def test_understand_needs_a_text_or_bands(tmp_path: Path, charter: RunCharter) -> None:
    run = charter("understand", "--domain", str(tiny_pack(tmp_path)))
    assert (run.code, run.err) == (2, "charter understand: give a TEXT, or --bands\n")


def test_charter_test_prints_the_report(tmp_path: Path, charter: RunCharter) -> None:
    root = tiny_pack(tmp_path)
    junit = tmp_path / "junit.xml"
    run = charter("test", str(root), "--junit-xml", str(junit))
    assert run.code == 0, run.out
    assert f"understanding: tiny (8 phrases, {root}/tests/intents.yaml)" in run.out
    assert "  accuracy:  80.0% | 100.0% (5 phrases; " in run.out
    cases = ET.parse(junit).getroot().findall(".//testcase[@name='intents']")
    assert [(c.get("classname"), c.find("failure")) for c in cases] == [("tiny", None)]


def test_a_safety_intent_missed_fails_the_run(tmp_path: Path, charter: RunCharter) -> None:
    table = TABLE + "  - say: 你好呀\n    intent: alarm\n"
    root = tiny_pack(tmp_path, table)
    junit = tmp_path / "junit.xml"
    run = charter("test", str(root), "--junit-xml", str(junit))
    assert run.code == 1
    assert f"FAIL tiny: intents ({root}/tests/intents.yaml:2:5)" in run.out
    assert "    safety intent 'alarm' recall 50.0% is below 100%" in run.out
    failure = ET.parse(junit).getroot().find(".//testcase[@name='intents']/failure")
    assert failure is not None
    assert failure.get("message") == "safety intent 'alarm' recall 50.0% is below 100%"


def test_minimum_recall_and_precision(tmp_path: Path, charter: RunCharter) -> None:
    table = TABLE + "  - say: 帮我汇款查余额尾号1111\n    intent: balance\n"
    root = tiny_pack(tmp_path, table)
    assert charter("test", str(root), "-k", "intents").code == 0
    run = charter("test", str(root), "-k", "intents", "--min-precision", "100")
    assert run.code == 1
    assert "    intent 'transfer' precision 50.0% is below 100%" in run.out
    run = charter("test", str(root), "-k", "intents", "--min-recall", "70", "--format", "json")
    assert run.code == 1
    doc = json.loads(run.out)
    case = next(c for c in doc["cases"] if c["kind"] == "intents")
    assert case["problems"] == ["intent 'balance' recall 66.7% is below 70%"]
    assert [u["pack"] for u in doc["understanding"]] == ["tiny"]
