"""No secret value ever leaves the configuration: not in repr, masked data, show, or check.

Every secret is a sentinel string; each output is searched for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.config import Secret
from charter.config.show import render_json, render_toml
from tests.support.cli import RunCharter
from tests.unit.config.helpers import Load, headlines

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


SHAPES = """\
[database]
url = "postgresql://u:p%40ss@db:5433/shop?sslmode=require&password=pw2"
[model]
base_url = "http://llm:8081/v1?api_key=k1&model=m1"
[model.options]
access_token = "t1"
"api-key" = "k2"
max_token = 3
pin = 1234
extra = "sk-proj-abcdefgh"
proxy = { host = "px", password = "pw3" }
[model.options.headers]
Authorization = "Bearer sk-abcdefgh"
Accept = "application/json"
X-Tenant = "acme"
"""


def test_secrets_are_masked_by_their_shape(load: Load) -> None:
    config, diags = load(SHAPES)
    masked = config.masked()
    assert masked["database"]["url"] == (
        "postgresql://u:***@db:5433/shop?sslmode=require&password=***"
    )
    assert masked["model"]["base_url"] == "http://llm:8081/v1?api_key=***&model=m1"
    assert masked["model"]["options"] == {
        "access_token": "***",
        "api-key": "***",
        "max_token": 3,
        "pin": "***",
        "extra": "***",
        "proxy": {"host": "px", "password": "***"},
        "headers": {"Authorization": "***", "Accept": "application/json", "X-Tenant": "***"},
    }
    assert headlines(diags) == [
        "charter.toml:2:1: CH406 database.url contains a password (warning)",
        "charter.toml:4:1: CH406 model.base_url contains a secret in its parameters (warning)",
        "charter.toml:6:1: CH406 model.options.access_token is a secret written in the file "
        "(warning)",
        "charter.toml:7:1: CH406 model.options.api-key is a secret written in the file (warning)",
        "charter.toml:9:1: CH406 model.options.pin is a secret written in the file (warning)",
        "charter.toml:10:1: CH406 model.options.extra contains a secret (warning)",
        "charter.toml:11:1: CH406 model.options.proxy.password is a secret written in the file "
        "(warning)",
        "charter.toml:13:1: CH406 model.options.headers.Authorization is a secret written in "
        "the file (warning)",
    ]
    for text in (repr(config), render_toml(config), render_json(config)):
        for secret in ("p%40ss", "pw2", "k1", "t1", "k2", "1234", "abcdefgh", "pw3", "acme"):
            assert secret not in text, secret


def test_redacted_sources_mask_by_shape(load: Load) -> None:
    config, _ = load(SHAPES)
    (text,) = config.redacted_sources().values()
    assert text.splitlines() == [
        "[database]",
        'url = "postgresql://u:***@db:5433/shop?sslmode=require&password=***"',
        "[model]",
        'base_url = "http://llm:8081/v1?api_key=***&model=m1"',
        "[model.options]",
        'access_token = "***"',
        '"api-key" = "***"',
        "max_token = 3",
        'pin = "***"',
        'extra = "***"',
        'proxy = { host = "px", password = "***" }',
        "[model.options.headers]",
        'Authorization = "***"',
        'Accept = "application/json"',
        'X-Tenant = "***"',
    ]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "host=db port=5432 dbname=shop user=app password=kw1",
            "CH404 CHARTER_DATABASE_URL is not a database URL: "
            "'host=db port=5432 dbname=shop user=app password=***'",
        ),
        (
            "sqlite://rel.db?key=kw2",
            "CH404 CHARTER_DATABASE_URL is not a SQLite URL: 'sqlite://rel.db?key=***'",
        ),
    ],
)
def test_a_rejected_url_is_quoted_masked(load: Load, url: str, message: str) -> None:
    _, diags = load(CHARTER_DATABASE_URL=url)
    assert headlines(diags) == [f"<environment>: {message}"]
