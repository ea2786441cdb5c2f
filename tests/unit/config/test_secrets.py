"""No secret value ever leaves the configuration: not in repr, masked data, show, or check.

Every secret is a sentinel string; each output is searched for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.config import Secret
from charter.config_show import render_json, render_toml
from tests.cli_run import RunCharter
from tests.unit.config.helpers import Load

SENTINEL = "S3NT1NEL"

LEAKY = f"""\
[database]
url = "postgresql://app:{SENTINEL}db@db/charter"
[memory]
key = "{SENTINEL}mem"
[model]
api_key = "{SENTINEL}api"
api_key_env = "sk-{SENTINEL}-pasted"
base_url = "http://u:{SENTINEL}url@llm:8080/v1"
[[serve.tenants]]
name = "acme"
token = "{SENTINEL}tok"
[[serve.tenants]]
name = "globex"
token_env = "TOKEN_GLOBEX"
[[serve.tenants]]
name = "initech"
token = 12345{SENTINEL[:0]}
token_env = "{SENTINEL} x"
"""
ENV = {
    "TOKEN_GLOBEX": f"{SENTINEL}env-tok",
    "CHARTER_MEMORY_KEY": f"{SENTINEL}env-mem",
}


def test_secret_never_prints() -> None:
    secret = Secret(SENTINEL, "env X")
    assert str(secret) == "***"
    assert SENTINEL not in repr(secret)
    assert secret.reveal() == SENTINEL


def test_config_repr_and_masked_data(load: Load) -> None:
    config, diags = load(LEAKY, **ENV)
    for text in (repr(config), str(config.masked()), render_toml(config), render_json(config)):
        assert SENTINEL not in text
    for d in diags:
        assert SENTINEL not in d.message + d.hint
    masked = config.masked()
    assert masked["database"]["url"] == "postgresql://app:***@db/charter"
    assert masked["model"]["base_url"] == "http://u:***@llm:8080/v1"
    assert masked["model"]["api_key"] == "***"
    assert masked["memory"]["key"] == "***"
    assert masked["serve"]["tenants"] == [
        {"name": "acme", "token_env": "", "token": "***"},
        {"name": "globex", "token_env": "TOKEN_GLOBEX", "token": "***"},
        {"name": "initech", "token_env": "", "token": None},
    ]
    assert config.serve.tenants[1].token == Secret(f"{SENTINEL}env-tok", "env TOKEN_GLOBEX")


def test_the_file_secret_is_not_the_memory_key(load: Load) -> None:
    config, _ = load(LEAKY)
    assert config.memory.key is None


def test_redacted_sources_mask_every_secret(load: Load) -> None:
    config, _ = load(LEAKY, **ENV)
    (text,) = config.redacted_sources().values()
    assert SENTINEL not in text
    assert text.splitlines()[1] == 'url = "postgresql://app:***@db/charter"'
    assert text.splitlines()[3] == 'key = "***"'


@pytest.mark.parametrize(
    "argv",
    [
        ("config", "show"),
        ("config", "show", "--format", "json"),
        ("config", "check"),
        ("config", "check", "--serve"),
        ("config", "check", "--format", "json"),
        ("config", "check", "--format", "github"),
        ("config", "check", "--format", "sarif"),
    ],
)
def test_cli_output_never_holds_a_secret(
    load: Load,
    charter: RunCharter,
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
) -> None:
    load(LEAKY)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    run = charter(*argv)
    assert run.code == 1
    assert run.out + run.err
    assert SENTINEL not in run.out + run.err


def test_a_file_that_is_not_toml_is_quoted_redacted(tmp_path: Path, charter: RunCharter) -> None:
    (tmp_path / "charter.toml").write_text(
        f'[[serve.tenants]]\nname = "a"\ntoken = "{SENTINEL}\n', encoding="utf-8"
    )
    run = charter("config", "check")
    assert run.code == 1
    assert run.out.splitlines()[:2] == [
        "charter.toml:3:18: CH400 invalid TOML: Illegal character '\\n'",
        '    token = "***"',
    ]
    assert SENTINEL not in run.out + run.err
