"""``[plugins]`` is rows of the one table of settings: loaded, checked and shown as the others,
and read alone, early, by the plugin host (``load_settings``) with the same result."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from charter.config import Config
from charter.config.settings import PluginSettings, load_settings
from charter.config.specs import SPECS
from tests.support.cli import RunCharter
from tests.unit.config.helpers import Load, headlines

PROBLEMS = [
    (
        "[plugins]\nallow = 'zh'\n",
        "charter.toml:2:1: CH206 plugins.allow must be a list of plugin names",
        "",
    ),
    (
        "[plugins]\nallow = ['zh', 1]\n",
        "charter.toml:2:1: CH206 plugins.allow must be a list of plugin names",
        "",
    ),
    (
        "[plugins]\nautoload = 'true'\n",
        "charter.toml:2:1: CH206 plugins.autoload must be true or false",
        "write true without quotes",
    ),
    (
        "[plugins]\n\nerrors = 1\n",
        'charter.toml:3:1: CH206 plugins.errors must be "fail" or "disable", not 1',
        "",
    ),
    (
        "[plugins]\nerrors = 'ignore'\n",
        'charter.toml:2:1: CH206 plugins.errors must be "fail" or "disable", not \'ignore\'',
        "",
    ),
    (  # a variable only: no key of the file
        "[plugins]\ntrace = true\n",
        "charter.toml:2:1: CH206 unknown plugins setting 'trace' (ignored) (warning)",
        "expected one of: allow, autoload, errors",
    ),
    ("plugins = 1\n", "charter.toml:1:1: CH206 [plugins] must be a table", ""),
    (
        "allow = ['zh']\n",
        "charter.toml:1:1: CH401 unknown section 'allow' (ignored) (warning)",
        "'allow' is a setting of [plugins]",
    ),
]


@pytest.mark.parametrize(("text", "headline", "hint"), PROBLEMS)
def test_a_wrong_value_is_reported_where_it_is(
    load: Load, tmp_path: Path, text: str, headline: str, hint: str
) -> None:
    config, diags = load(text)
    assert headlines(diags) == [headline]
    assert diags[0].hint == hint
    assert config.plugins == PluginSettings(source="charter.toml")
    if "plugins" in text:  # the plugin host reads the table alone, with the same problems
        assert load_settings(cwd=tmp_path, environ={}) == (config.plugins, diags)


def test_a_wrong_value_in_pyproject(load: Load) -> None:
    _, diags = load(pyproject="[tool.charter.plugins]\nautoload = 1\n")
    assert headlines(diags) == ["pyproject.toml:2:1: CH206 plugins.autoload must be true or false"]


def test_the_plugin_host_reads_nothing_but_plugins(tmp_path: Path) -> None:
    (tmp_path / "charter.toml").write_text("[serve]\nport = 0\n[plugins]\nautoload = false\n")
    environ = {"CHARTER_MODEL_URL": "llm:8080"}
    settings, diags = load_settings(cwd=tmp_path, environ=environ)
    assert (settings, diags) == (PluginSettings(autoload=False, source="charter.toml"), [])


@pytest.mark.parametrize(
    ("variable", "value", "key", "expected"),
    [
        ("CHARTER_PLUGINS", " acme, zh,", "allow", frozenset({"acme", "zh"})),
        ("CHARTER_DISABLE_PLUGIN_AUTOLOAD", "yes", "autoload", False),
        ("CHARTER_PLUGIN_ERRORS", "disable", "errors", "disable"),
        ("CHARTER_TRACE_PLUGINS", "1", "trace", True),
    ],
)
def test_the_environment_wins_over_the_file(
    load: Load, variable: str, value: str, key: str, expected: object
) -> None:
    config, diags = load(
        "[plugins]\nallow = ['x']\nautoload = true\nerrors = 'fail'\n", **{variable: value}
    )
    assert diags == []
    assert getattr(config.plugins, key) == expected
    assert config.source(f"plugins.{key}") == f"env {variable}"


@pytest.mark.parametrize(
    ("variable", "value"),
    [("CHARTER_DISABLE_PLUGIN_AUTOLOAD", "0"), ("CHARTER_TRACE_PLUGINS", "off")],
)
def test_a_variable_that_turns_nothing_on_leaves_the_file(
    load: Load, variable: str, value: str
) -> None:
    config, diags = load("[plugins]\nautoload = false\n", **{variable: value})
    assert diags == []
    assert (config.plugins.autoload, config.plugins.trace) == (False, False)
    assert config.source("plugins.autoload") == "charter.toml:2"
    assert config.source("plugins.trace") == "default"


def test_a_wrong_variable_leaves_the_file(load: Load) -> None:
    config, diags = load("[plugins]\nerrors = 'disable'\n", CHARTER_PLUGIN_ERRORS="ignore")
    assert headlines(diags) == [
        "<environment>: CH206 CHARTER_PLUGIN_ERRORS must be 'fail' or 'disable', not 'ignore'"
    ]
    assert config.plugins.errors == "disable"
    assert config.source("plugins.errors") == "charter.toml:2"


def test_a_rejected_value_is_shown_as_the_default(load: Load) -> None:
    config, _ = load("[plugins]\nautoload = 'no'\n")
    assert config.plugins.autoload is True
    assert config.source("plugins.autoload") == "default"


def test_charter_config_shows_the_plugins_keys_and_their_sources(
    tmp_path: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "charter.toml").write_text(
        "[plugins]\nautoload = false\nerrors = 'fail'\n", encoding="utf-8"
    )
    monkeypatch.setenv("CHARTER_PLUGIN_ERRORS", "disable")
    run = charter("config", "show")
    assert run.code == 0
    assert run.out.split("[plugins]\n")[1] == (
        "# allow: not set, every installed plugin may load\n"
        "autoload = false    # charter.toml:2\n"
        'errors = "disable"  # env CHARTER_PLUGIN_ERRORS\n'
        "trace = false       # default\n"
    )


def test_charter_config_shows_every_row_of_the_table(charter: RunCharter) -> None:
    run = charter("config", "show", "--format", "json")
    sources = json.loads(run.out)["sources"]
    for section, rows in SPECS.items():
        for key in rows:
            assert f"{section}.{key}" in sources


def test_the_defaults_are_the_tables(load: Load) -> None:
    config, _ = load()
    for section, rows in SPECS.items():
        table = getattr(config, section)
        assert {key: getattr(table, key) for key in rows} == {
            key: spec.default for key, spec in rows.items()
        }
    assert [f.name for f in fields(PluginSettings)] == [*SPECS["plugins"], "source"]
    assert Config().plugins == PluginSettings()


def test_plugins_md_shows_what_charter_config_prints(
    tmp_path: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/plugins.md §3: its [plugins] file, then what ``charter config show`` ends with."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = doc.split("## 3. Configuration")[1].split("\n## ")[0]
    toml = re.search(r"```toml\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(\[plugins\]\n.*?)```", section, re.S)
    assert toml is not None and shown is not None
    (tmp_path / "charter.toml").write_text(toml[1], encoding="utf-8")
    monkeypatch.setenv("CHARTER_PLUGIN_ERRORS", "disable")
    run = charter("config", "show")
    assert (run.code, run.err) == (0, "")
    assert run.out.endswith("\n" + shown[1])
