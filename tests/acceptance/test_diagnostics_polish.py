"""`charter validate` as a pack author runs it: diagnostics that say what is wrong, once, where.

* a skill contract reports every JSON-Schema problem of its schemas and its constraint's
  undeclared argument (CH321) in one run;
* an error in a rule is not followed by what the whole-rule analysis would conclude from it
  (an empty literal: CH107 alone, not CH110 for every rule it "clashes" with);
* the hint of a YAML or schema error fits its cause (a value that starts with '[' and goes on;
  `when: true`);
* CH023 in a chain a -> b -> c names the pack that defines the rule and points at it;
* an extends cycle is reported once, whichever of its packs is validated;
* SARIF's helpUri is an absolute URL;
* a plugin problem (CH200-CH205) is located in the plugin's code, or its entry_points.txt.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import charter.plugins.host
from charter.diagnostics import DOCS_URL

RunCli = Callable[..., Any]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh directory as the working directory: diagnostics name files relative to it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def shown(out: str) -> str:
    """The diagnostics as printed, without the count line the CLI adds under them."""
    lines = out.splitlines(keepends=True)
    if lines and re.match(r"\d+ (error|warning)", lines[-1]):
        lines.pop()
    return "".join(lines)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# ---- a: every schema problem of a skill contract, and CH321, in one run ------------------------

SKILL = """\
name: policy_search
description: 检索政策文件
input_schema:
  type: object
  properties:
    keyword: {type: strng, minLength: -1}
    year_range: {type: array, items: {type: integer}}
  required: keyword
output_schema: {type: object, properties: {results: {type: list}}}
constraints:
  - check: args.years[1] - args.years[0] <= 3
    message: 年份范围超出能力边界
"""

SKILL_REPORT = """\
p/skills/policy_search.yaml:6:21: CH320 the input_schema of skill 'policy_search' is not valid JSON Schema: 'strng' is not valid under any of the given schemas
        keyword: {type: strng, minLength: -1}
                        ^^^^^
    hint: did you mean 'string'?
p/skills/policy_search.yaml:6:39: CH320 the input_schema of skill 'policy_search' is not valid JSON Schema: -1 is less than the minimum of 0
        keyword: {type: strng, minLength: -1}
                                          ^^
    hint: see https://json-schema.org/draft/2020-12 for the keywords
p/skills/policy_search.yaml:8:13: CH320 the input_schema of skill 'policy_search' is not valid JSON Schema: 'keyword' is not of type 'array'
      required: keyword
                ^^^^^^^
    hint: see https://json-schema.org/draft/2020-12 for the keywords
p/skills/policy_search.yaml:9:60: CH320 the output_schema of skill 'policy_search' is not valid JSON Schema: 'list' is not valid under any of the given schemas
    output_schema: {type: object, properties: {results: {type: list}}}
                                                               ^^^^
    hint: expected one of: array, boolean, integer, null, number, object, string
p/skills/policy_search.yaml:11:12: CH321 a constraint of skill 'policy_search' reads args.years, which the input schema does not declare
      - check: args.years[1] - args.years[0] <= 3
               ^^^^^^^^^^^^^
    hint: expected one of: keyword, year_range
"""


def test_every_schema_problem_and_the_undeclared_argument_in_one_run(
    run_cli: RunCli, work: Path
) -> None:
    assert run_cli("new", "pack", "p").code == 0
    write(work / "p", {"skills/policy_search.yaml": SKILL})
    r = run_cli("validate", "p")
    assert r.code == 1
    # CH323 (no plugin implements the skill) depends on what is installed
    assert re.sub(r"p/\S+: CH323 .*\n(    .*\n)*", "", shown(r.out)) == SKILL_REPORT


# ---- b: no cascade from an empty literal -------------------------------------------------------

EMPTY_RULES = """\
  - id: no-empty
    describe: 空串
    check: not output contains ""
    on_fail: retry

  - id: greet
    describe: 问候
    check: output contains "您好"
    on_fail: fix prepend "您好，"

tests:"""


def test_an_empty_literal_is_one_error_not_a_cascade(run_cli: RunCli, work: Path) -> None:
    assert run_cli("new", "pack", "p").code == 0
    rules = work / "p/rules.yaml"
    rules.write_text(rules.read_text("utf-8").replace("\ntests:", EMPTY_RULES), "utf-8")
    r = run_cli("validate", "p")
    assert r.code == 1
    assert shown(r.out) == (
        "p/rules.yaml:28:32: CH107 empty string in a list of terms\n"
        '        check: not output contains ""\n'
        "                                   ^^\n"
        "    hint: an empty string would match everywhere\n"
    )


def test_the_clash_of_two_sound_rules_is_still_reported(run_cli: RunCli, work: Path) -> None:
    assert run_cli("new", "pack", "p").code == 0
    rules = work / "p/rules.yaml"
    text = EMPTY_RULES.replace('contains ""', 'contains "您"')
    rules.write_text(rules.read_text("utf-8").replace("\ntests:", text), "utf-8")
    r = run_cli("validate", "p", "--format", "json")
    assert r.code == 1
    assert [(d["code"], d["line"], d["message"]) for d in json.loads(r.out)] == [
        ("CH110", 28, "rule 'no-empty' forbids '您', which rule 'greet' requires"),
        ("CH110", 34, "the repair of rule 'greet' inserts '您', which rule 'no-empty' forbids"),
    ]


# ---- c: hints that fit the cause ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "report"),
    [
        (
            "    output: 您的包裹正在派送中。",
            "    output: [需人工确认]您好",
            "p/rules.yaml:56:20: CH001 expected <block end>, but found '<scalar>' while parsing a "
            "block mapping\n"
            "        output: [需人工确认]您好\n"
            "                            ^^\n"
            "    hint: a value that starts with '[' is read as a list, which ends at its ']'; "
            'quote the whole value: output: "[需人工确认]您好"\n',
        ),
        (
            '    when: output contains any ["退款", "退货"]',
            "    when: true",
            "p/rules.yaml:17:11: CH010 'when' must be a string, not a boolean\n"
            "        when: true\n"
            "              ^^^^\n"
            "    hint: 'when' takes a condition written in the DSL (docs/dsl.md), not true or "
            "false: to check the rule always, leave 'when' out\n",
        ),
        (
            '    check: output contains "具体以审核结果为准"',
            "    check: false",
            "p/rules.yaml:18:12: CH010 'check' must be a string, not a boolean\n"
            "        check: false\n"
            "               ^^^^^\n"
            "    hint: 'check' takes an expression written in the DSL (docs/dsl.md), not true or "
            "false\n",
        ),
    ],
    ids=["flow-sequence-then-text", "when-true", "check-false"],
)
def test_the_hint_fits_the_cause(
    run_cli: RunCli, work: Path, old: str, new: str, report: str
) -> None:
    assert run_cli("new", "pack", "p").code == 0
    rules = work / "p/rules.yaml"
    text = rules.read_text("utf-8")
    assert text.count(old) == 1
    rules.write_text(text.replace(old, new), "utf-8")
    r = run_cli("validate", "p")
    assert (r.code, shown(r.out)) == (1, report)


def test_the_quoted_value_the_hint_suggests_is_valid(run_cli: RunCli, work: Path) -> None:
    assert run_cli("new", "pack", "p").code == 0
    rules = work / "p/rules.yaml"
    text = rules.read_text("utf-8").replace(
        "    output: 您的包裹正在派送中。", '    output: "[需人工确认]您好"'
    )
    rules.write_text(text, "utf-8")
    assert run_cli("validate", "p").code == 0


# ---- d: CH023 in a chain names the pack that defines the rule ---------------------------------


def test_ch023_in_a_chain_names_and_points_at_the_defining_pack(
    run_cli: RunCli, work: Path
) -> None:
    for name in ("a", "b", "c"):
        assert run_cli("new", "pack", name).code == 0
    for child, parent in (("a", "b"), ("b", "c")):
        meta = work / child / "pack.yaml"
        text = meta.read_text("utf-8").replace(
            "kind: domain\n", f"kind: domain\nextends: [../{parent}]\n"
        )
        meta.write_text(text, "utf-8")
    r = run_cli("validate", "a", "--format", "json")
    assert r.code == 1
    rule_ids = ("no-absolute-promises", "refund-disclaimer", "complaint-to-human")
    lines = (4, 15, 22)
    assert [(d["path"], d["line"], d["message"]) for d in json.loads(r.out)] == [
        (
            f"{pack}/rules.yaml",
            line,
            f"rule '{rid}' is already defined by 'c' (c/rules.yaml:{line}:9)",
        )
        for pack in ("a", "b")
        for rid, line in zip(rule_ids, lines, strict=True)
    ]


# ---- e: an extends cycle, once ----------------------------------------------------------------

CYCLE = """\
x/pack.yaml:5:11: CH021 extends cycle: x -> y -> x
    extends: [../y]
              ^^^^
    hint: a pack may not extend itself, directly or through others
"""


@pytest.mark.parametrize("packs", [("x", "y"), ("y", "x"), ("y",), ("x",)])
def test_an_extends_cycle_is_reported_once(
    run_cli: RunCli, work: Path, packs: tuple[str, ...]
) -> None:
    for child in ("x", "y"):
        assert run_cli("new", "pack", child).code == 0
    for child, parent in (("x", "y"), ("y", "x")):
        meta = work / child / "pack.yaml"
        text = meta.read_text("utf-8").replace(
            "kind: domain\n", f"kind: domain\nextends: [../{parent}]\n"
        )
        meta.write_text(text, "utf-8")
    r = run_cli("validate", *packs)
    # and nothing follows from it: each pack is read without the other, so no CH023 both ways
    assert (r.code, shown(r.out)) == (1, CYCLE)


def test_a_longer_cycle_once_at_its_first_pack(run_cli: RunCli, work: Path) -> None:
    for child, parent in (("m", "n"), ("n", "o"), ("o", "m"), ("z", "n")):
        write(
            work, {f"{child}/pack.yaml": f"name: {child}\nversion: 0.1.0\nextends: [../{parent}]\n"}
        )
    r = run_cli("validate", "--format", "json", "z", "o", "n", "m")
    cycles = {(d["path"], d["line"], d["col"], d["message"]) for d in json.loads(r.out)}
    assert cycles == {("m/pack.yaml", 3, 11, "extends cycle: m -> n -> o -> m")}


GOAL_CYCLE = """\
intents:
  - id: lead-in
    describe: 引入
    trigger: input contains "引入"
    parent: refund
  - id: return
    describe: 退货
    trigger: input contains "退货"
    parent: refund
  - id: refund
    describe: 退款
    trigger: input contains "退款"
    parent: return
"""


def test_a_parent_cycle_of_intents_is_reported_once(run_cli: RunCli, work: Path) -> None:
    assert run_cli("new", "pack", "shop").code == 0
    write(work, {"shop/goals.yaml": GOAL_CYCLE})
    r = run_cli("validate", "--format", "json", "shop")
    cycles = [
        (d["path"], d["line"], d["message"]) for d in json.loads(r.out) if d["code"] == "CH303"
    ]
    # both intents on the cycle walk it, and lead-in walks into it: one report, at 'refund'
    assert cycles == [("shop/goals.yaml", 13, "parent cycle: refund -> return -> refund")]


# ---- f: SARIF helpUri ---------------------------------------------------------------------------


def test_sarif_help_uri_is_absolute(run_cli: RunCli, work: Path) -> None:
    write(work, {"w/pack.yaml": "name: w\nversion: 0.1.0\ncolour: blue\n"})
    r = run_cli("validate", "--format", "sarif", "w")
    rules = json.loads(r.out)["runs"][0]["tool"]["driver"]["rules"]
    assert [(rule["id"], rule["helpUri"]) for rule in rules] == [
        ("CH008", DOCS_URL),
        ("CH012", DOCS_URL),
    ]
    assert DOCS_URL == "https://pypi.org/project/charter/"


# ---- g: plugin problems where the plugin is ------------------------------------------------------

RAISES = '''\
"""A plugin whose extractor hook raises."""

from charter.plugins.hookspecs import hookimpl


@hookimpl
def charter_register_extractors():
    raise RuntimeError("boom")
'''

MISSPELT = '''\
"""A plugin with a misspelt hook."""


def charter_register_extractor():
    return []
'''

BROKEN_IMPORT = "import charter_polish_no_such_dependency\n"


@pytest.fixture
def site(work: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``site(name, entry, module_source)``: a distribution charter-<name> installed for real
    (a .dist-info on sys.path) whose entry point ``name = entry`` loads ``module_source``."""
    modules: list[str] = []

    def install(name: str, entry: str, source: str) -> None:
        module = f"charter_polish_{name}"
        modules.append(module)
        write(
            work / "site",
            {
                f"{module}/__init__.py": source,
                f"charter_polish_{name}-1.0.dist-info/METADATA": (
                    f"Metadata-Version: 2.1\nName: charter-polish-{name}\nVersion: 1.0\n"
                ),
                f"charter_polish_{name}-1.0.dist-info/entry_points.txt": (
                    f"[console_scripts]\n{name} = other:main\n\n[charter]\n{name} = {entry}\n"
                ),
            },
        )

    monkeypatch.syspath_prepend(str(work / "site"))
    charter.plugins.host._HOSTS.clear()
    yield install
    charter.plugins.host._HOSTS.clear()
    for module in modules:
        sys.modules.pop(module, None)


def test_plugin_problems_are_located_in_the_plugin(
    run_cli: RunCli, work: Path, site: Callable[..., None]
) -> None:
    site("raises", "charter_polish_raises", RAISES)
    site("misspelt", "charter_polish_misspelt", MISSPELT)
    site("noimport", "charter_polish_noimport", BROKEN_IMPORT)
    site("noattr", "charter_polish_noattr:missing", "")
    importlib.invalidate_caches()
    assert run_cli("new", "pack", "p").code == 0
    r = run_cli("validate", "p")
    assert r.code == 1
    assert shown(r.out) == (
        "site/charter_polish_misspelt/__init__.py:4:1: CH201 plugin 'misspelt' "
        "(charter-polish-misspelt 1.0) implements unknown hook 'charter_register_extractor'\n"
        "    def charter_register_extractor():\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    hint: did you mean 'charter_register_extractors'?\n"
        "site/charter_polish_noattr-1.0.dist-info/entry_points.txt:5:1: CH200 plugin 'noattr' "
        "(charter-polish-noattr 1.0) failed to import: AttributeError: module "
        "'charter_polish_noattr' has no attribute 'missing'\n"
        "    noattr = charter_polish_noattr:missing\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    hint: reinstall or uninstall 'charter-polish-noattr', or leave 'noattr' out of the "
        "allow-list (CHARTER_PLUGINS)\n"
        "site/charter_polish_noimport/__init__.py:1:1: CH200 plugin 'noimport' "
        "(charter-polish-noimport 1.0) failed to import: ModuleNotFoundError: No module named "
        "'charter_polish_no_such_dependency'\n"
        "    import charter_polish_no_such_dependency\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    hint: reinstall or uninstall 'charter-polish-noimport', or leave 'noimport' out of "
        "the allow-list (CHARTER_PLUGINS)\n"
        "site/charter_polish_raises/__init__.py:8:5: CH204 plugin 'raises' "
        "(charter-polish-raises 1.0) raised in charter_register_extractors: RuntimeError: boom\n"
        '        raise RuntimeError("boom")\n'
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    hint: fix or uninstall 'charter-polish-raises'\n"
    )


def test_a_disabled_plugin_is_located_at_its_problem(
    run_cli: RunCli, work: Path, site: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    site("raises", "charter_polish_raises", RAISES)
    importlib.invalidate_caches()
    monkeypatch.setenv("CHARTER_PLUGIN_ERRORS", "disable")
    assert run_cli("new", "pack", "p").code == 0
    r = run_cli("validate", "--format", "json", "p")
    assert [(d["code"], d["path"], d["line"], d["col"]) for d in json.loads(r.out)] == [
        ("CH204", "site/charter_polish_raises/__init__.py", 8, 5),
        ("CH205", "site/charter_polish_raises/__init__.py", 8, 5),
    ]
