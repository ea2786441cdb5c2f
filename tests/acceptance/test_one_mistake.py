"""One mistake, one root diagnostic (issue 32, item 4): each row makes one mistake in a copy of
a shipped pack (or of a project ``charter new pack telecom --with-skills`` wrote) and pins
exactly what ``charter validate --format json`` reports: the diagnostics an author sees, each
with how many consequences are folded under it.

A file that did not parse is one CH001 (or CH002) at the line to change, whatever else named
what it held; a plugin that did not import is one CH200 at its own source line, and the pack
that requires it is not told to install it; every syntax error of one expression is reported in
one run.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import RunCharter
from tests.support.installed import Site

ROOT = Path(__file__).resolve().parents[2]

# (code, file:line:col below the pack, message, consequences folded under it)
Seen = tuple[str, str, str, int]


@dataclass(frozen=True)
class Mistake:
    pack: str  # finance, ecommerce, medical (domains/), or telecom (a new project)
    file: str  # below the pack
    old: str  # replaced once, and must be there
    new: str
    expected: tuple[Seen, ...]


def _seen(out: str, prefix: str) -> list[Seen]:
    return [
        (
            d["code"],
            f"{d['path'].removeprefix(prefix)}:{d['line']}:{d['col']}",
            d["message"],
            len(d.get("consequences", [])),
        )
        for d in json.loads(out)
    ]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


SHIPPED = [
    # a key indented one space too far: YAML fails where the indentation is wrong
    Mistake(
        "finance",
        "goals.yaml",
        "    describe: 疑似诈骗\n",
        "     describe: 疑似诈骗\n",
        (("CH001", "goals.yaml:59:14", "mapping values are not allowed here", 352),),
    ),
    # a key moved left ends its block: PyYAML notices 12 lines below, the author changes line 33
    Mistake(
        "finance",
        "responses.yaml",
        "\n  account-query:\n",
        "\naccount-query:\n",
        (
            (
                "CH001",
                "responses.yaml:33:1",
                "this line ends the block above it, but line 45 is indented to continue it",
                56,
            ),
        ),
    ),
    Mistake(
        "finance",
        "responses.yaml",
        "    slot_carried:\n",
        "  slot_carried:\n",
        (
            (
                "CH001",
                "responses.yaml:35:3",
                "this line ends the block above it, but line 39 is indented to continue it",
                56,
            ),
        ),
    ),
    # a key moved right by one: that line itself
    Mistake(
        "finance",
        "responses.yaml",
        "    slot_corrected:\n",
        "   slot_corrected:\n",
        (
            (
                "CH001",
                "responses.yaml:39:4",
                "expected <block end>, but found '<block mapping start>' while parsing a block mapping",
                56,
            ),
        ),
    ),
    Mistake(
        "finance",
        "pack.yaml",
        "name: finance\n",
        "name: [finance\n",
        (
            (
                "CH001",
                "pack.yaml:2:8",
                "expected ',' or ']', but got ':' while parsing a flow sequence",
                2,
            ),
        ),
    ),
    Mistake(
        "finance",
        "skills/transfer.yaml",
        "name: transfer\n",
        "name: 'transfer\n",
        (
            (
                "CH001",
                "skills/transfer.yaml:5:7",
                "found unexpected end of stream while scanning a quoted scalar",
                23,
            ),
        ),
    ),
    Mistake(
        "finance",
        "tests/intents.yaml",
        "phrases:\n",
        "phrases: [\n",
        (
            (
                "CH001",
                "tests/intents.yaml:5:3",
                "expected the node content, but found '-' while parsing a flow node",
                0,
            ),
        ),
    ),
    Mistake(
        "finance",
        "tests/conversations/transfer.yaml",
        "\n",
        "\n\t\n",
        (("CH002", "tests/conversations/transfer.yaml:2:1", "tab character in indentation", 0),),
    ),
    Mistake(
        "ecommerce",
        "memory.yaml",
        "short_term:\n",
        "short_term: {\n",
        (
            (
                "CH001",
                "memory.yaml:4:16",
                "expected ',' or '}', but got ':' while parsing a flow mapping",
                0,
            ),
        ),
    ),
    Mistake(
        "ecommerce",
        "fallbacks.yaml",
        "protocols:\n",
        "protocols: [\n",
        (
            (
                "CH001",
                "fallbacks.yaml:5:5",
                "expected the node content, but found '-' while parsing a flow node",
                5,
            ),
        ),
    ),
    Mistake(
        "medical",
        "faq.yaml",
        "  - id: cough-fever-department\n",
        '  - id: "cough-fever-department\n',
        (
            (
                "CH001",
                "faq.yaml:3:9",
                "found unexpected end of stream while scanning a quoted scalar",
                6,
            ),
        ),
    ),
    # a tab where the indentation should be
    Mistake(
        "ecommerce",
        "rules.yaml",
        "    tags: [compliance]\n",
        "\ttags: [compliance]\n",
        (("CH002", "rules.yaml:8:1", "tab character in indentation", 0),),
    ),
    # the same key twice in one rule
    Mistake(
        "ecommerce",
        "rules.yaml",
        "    on_fail: retry\n",
        "    on_fail: retry\n    on_fail: block\n",
        (("CH003", "rules.yaml:20:5", "duplicate key 'on_fail' (first defined at line 19)", 0),),
    ),
    # the rule DSL: one misspelled keyword
    Mistake(
        "ecommerce",
        "rules.yaml",
        "or count(date in output) >= 1",
        'or output contans "截止"',
        (
            (
                "CH100",
                "rules.yaml:18:17",
                "syntax error in the 'check' expression of rule 'promotion-validity': unexpected 'contans'",
                0,
            ),
        ),
    ),
    # two syntax errors in separate clauses of one expression, and a third inside parentheses
    Mistake(
        "ecommerce",
        "rules.yaml",
        "or count(date in output) >= 1",
        'or output contans "截止" or output contans "有效" and (output contains "到" or output contians "止")',
        (
            (
                "CH100",
                "rules.yaml:18:17",
                "syntax error in the 'check' expression of rule 'promotion-validity': unexpected 'contans'",
                0,
            ),
            (
                "CH100",
                "rules.yaml:18:40",
                "syntax error in the 'check' expression of rule 'promotion-validity': unexpected 'contans'",
                0,
            ),
            (
                "CH100",
                "rules.yaml:18:88",
                "syntax error in the 'check' expression of rule 'promotion-validity': unexpected 'contians'",
                0,
            ),
        ),
    ),
    # two unknown extractors; an unknown predicate and a bad regular expression
    Mistake(
        "ecommerce",
        "rules.yaml",
        "count(date in output)",
        "count(dat in output) + count(mony in output)",
        (
            ("CH102", "rules.yaml:18:16", "unknown extractor 'dat'", 0),
            ("CH102", "rules.yaml:18:39", "unknown extractor 'mony'", 0),
        ),
    ),
    Mistake(
        "ecommerce",
        "rules.yaml",
        "or count(date in output) >= 1",
        "or nopred(output) or output matches /有效(/",
        (
            ("CH103", "rules.yaml:18:10", "unknown predicate 'nopred'", 0),
            ("CH105", "rules.yaml:18:47", "invalid regular expression: missing )", 0),
        ),
    ),
    Mistake(
        "medical",
        "rules.yaml",
        'check: output contains "请遵医嘱"',
        "check: output mentions drugz",
        (("CH102", "rules.yaml:18:28", "unknown extractor 'drugz'", 0),),
    ),
    # a conversation names an intent and a skill the pack does not have
    Mistake(
        "finance",
        "tests/conversations/transfer.yaml",
        "skills: [transfer]",
        "skills: [transfr]",
        (("CH363", "tests/conversations/transfer.yaml:27:20", "unknown skill 'transfr'", 0),),
    ),
    Mistake(
        "finance",
        "tests/conversations/transfer.yaml",
        "goals: {account-query: completed, transfer: pending}",
        "goals: {account-query: completed, transfr: pending}",
        (("CH361", "tests/conversations/transfer.yaml:15:45", "unknown intent 'transfr'", 0),),
    ),
]


# slow: the first copy of each shipped pack a process compiles embeds its intents' examples
# (12 to 20 seconds each, about 35 for the table); the rows after it take about a second
@pytest.mark.slow
@pytest.mark.parametrize("mistake", SHIPPED, ids=lambda m: f"{m.pack}/{m.file}:{m.new[:12]!r}")
def test_one_mistake_in_a_shipped_pack(
    mistake: Mistake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    charter: RunCharter,
) -> None:
    shutil.copytree(ROOT / "domains" / mistake.pack, tmp_path / "domains" / mistake.pack)
    shutil.copytree(ROOT / "rulesets", tmp_path / "rulesets")
    _edit(tmp_path / "domains" / mistake.pack / mistake.file, mistake.old, mistake.new)
    monkeypatch.chdir(tmp_path)
    run = charter("validate", f"domains/{mistake.pack}", "--format", "json")
    assert _seen(run.out, f"domains/{mistake.pack}/") == list(mistake.expected)
    assert run.code == 1


@dataclass(frozen=True)
class PluginMistake:
    what: str
    installed: bool  # the project installed (pip install -e .), as the quickstart does
    edit: tuple[str, str] | None  # in charter_telecom/plugin.py
    expected: tuple[Seen, ...]
    install_advice: bool  # whether any diagnostic, folded or not, says "pip install"


PLUGIN = [
    PluginMistake(
        "a SyntaxError in the plugin",
        True,
        ('NAME = "telecom"\n', 'NAME = "telecom"(\n'),
        (
            (
                "CH200",
                "charter_telecom/plugin.py:19:17",
                "plugin 'telecom' (charter-telecom 0.1.0) failed to import: "
                "SyntaxError: '(' was never closed (plugin.py, line 19)",
                2,  # CH025 (installed, but did not load) and CH323 (no plugin implements the skill)
            ),
        ),
        False,
    ),
    PluginMistake(
        "an ImportError in the plugin",
        True,
        (
            "from charter.plugins.hookspecs import hookimpl\n",
            "from charter.plugins.hookspecs import hookimpl\nimport telecom_backend_sdk\n",
        ),
        (
            (
                "CH200",
                "charter_telecom/plugin.py:18:1",
                "plugin 'telecom' (charter-telecom 0.1.0) failed to import: "
                "ModuleNotFoundError: No module named 'telecom_backend_sdk'",
                2,
            ),
        ),
        False,
    ),
    # the project never installed: here "install it" is the right advice
    PluginMistake(
        "the plugin not installed",
        False,
        None,
        (
            (
                "CH025",
                "pack/pack.yaml:9:13",
                "required plugin 'charter-telecom' is not installed",
                0,
            ),
            (
                "CH323",
                "pack/skills/telecom_order_status.yaml:4:7",
                "no installed plugin implements skill 'telecom_order_status'",
                0,
            ),
        ),
        True,
    ),
]


@pytest.mark.parametrize("mistake", PLUGIN, ids=lambda m: m.what)
def test_one_mistake_in_a_pack_with_its_own_skills(
    mistake: PluginMistake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    charter: RunCharter,
    site: Site,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert charter("new", "pack", "telecom", "--with-skills").code == 0
    project = tmp_path / "telecom"
    if mistake.edit is not None:
        _edit(project / "charter_telecom" / "plugin.py", *mistake.edit)
    if mistake.installed:
        site.editable(project)
    monkeypatch.chdir(project)
    run = charter("validate", "pack", "--format", "json", "--no-cache")
    assert _seen(run.out, "") == list(mistake.expected)
    assert ("pip install" in run.out) is mistake.install_advice
    assert run.code == 1
