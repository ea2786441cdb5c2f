"""Issue 16, points 3 and 4: secrets are never shown.

Point 3: ``charter config show`` (TOML and JSON) and every diagnostic ``charter config show``
and ``charter config check`` print hide each spelling of a secret that leaked before, while
the parts that are not secret (host, port, database, option and header names) stay readable.

Point 4: the model's API key, or a fragment of it quoted by the server's 401, never reaches a
trace a tenant reads over HTTP.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from charter.llm.errors import LLMError
from charter.llm.openai import OpenAIChat, OpenAIOptions
from tests.support.cli import RunCharter, runner
from tests.support.serve import MakeService, auth
from tests.unit.llm.fake_server import FakeServer, Reply


@pytest.fixture
def charter(capsys: pytest.CaptureFixture[str]) -> RunCharter:
    return runner(capsys)


# ---- point 3 --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leak:
    toml: str
    secrets: tuple[str, ...]  # none of these may be printed, in any output
    visible: tuple[str, ...]  # all of these must be printed by config show or a diagnostic
    env: dict[str, str] = field(default_factory=dict)


LEAKS = {
    "query-password": Leak(
        '[database]\nurl = "postgresql://app@db.example:5433/shopdb?password=QpW-Leak1"\n',
        ("QpW-Leak1",),
        ("db.example", "5433", "shopdb", "app@", "password="),
    ),
    "query-api-key": Leak(
        '[model]\nbase_url = "http://llm.example:8081/v1?api_key=Ak-Leak2&model=m1"\n',
        ("Ak-Leak2",),
        ("llm.example", "8081", "api_key=", "model=m1"),
    ),
    "query-token-in-fragment": Leak(
        '[model]\nbase_url = "https://llm.example/v1#access_token=Frag-Leak3"\n',
        ("Frag-Leak3",),
        ("llm.example", "access_token="),
    ),
    "header-authorization": Leak(
        '[model]\nbackend = "openai"\n[model.options.headers]\n'
        'Authorization = "Bearer sk-HdrLeak4abcdef"\nAccept = "application/json"\n',
        ("HdrLeak4", "sk-Hdr"),
        ("Authorization", "application/json"),
    ),
    "header-cookie-and-custom": Leak(
        "[model.options.headers]\n"
        'Cookie = "session=CkLeak5"\n"X-Api-Key" = "XkLeak6"\n"X-Custom" = "CuLeak7"\n',
        ("CkLeak5", "XkLeak6", "CuLeak7"),
        ("Cookie", "X-Api-Key", "X-Custom"),
    ),
    "header-inline-table": Leak(
        '[model.options]\nheaders = { "X-Api-Key" = "InLeak8", Accept = "text/plain" }\n',
        ("InLeak8",),
        ("X-Api-Key", "text/plain"),
    ),
    "header-dotted-key": Leak(
        '[model.options]\nheaders.Authorization = "Token DtLeak9"\n',
        ("DtLeak9",),
        ("Authorization",),
    ),
    "option-secret": Leak('[model.options]\nsecret = "OsLeak10"\n', ("OsLeak10",), ("secret",)),
    "option-access-token": Leak(
        '[model.options]\naccess_token = "OaLeak11"\n', ("OaLeak11",), ("access_token",)
    ),
    "option-apikey": Leak('[model.options]\napikey = "OkLeak12"\n', ("OkLeak12",), ("apikey",)),
    "option-api-dash-key": Leak(
        '[model.options]\n"api-key" = "OdLeak13"\n', ("OdLeak13",), ("api-key",)
    ),
    "option-auth": Leak('[model.options]\nauth = "OuLeak14"\n', ("OuLeak14",), ("auth",)),
    "option-camel-case": Leak(
        '[model.options]\nclientSecret = "OcLeak15"\n', ("OcLeak15",), ("clientSecret",)
    ),
    "option-nested-table": Leak(
        '[model.options.proxy]\nhost = "proxy.example"\npassword = "OnLeak16"\n',
        ("OnLeak16",),
        ("proxy.example", "password"),
    ),
    "option-numeric-pin": Leak("[model.options]\npin_code = 987654\n", ("987654",), ("pin_code",)),
    "option-url-with-password": Leak(
        '[model.options]\nproxy_url = "http://px:OpLeak17@proxy.example:3128"\n',
        ("OpLeak17",),
        ("proxy.example", "3128", "proxy_url"),
    ),
    "option-token-shaped-value": Leak(
        '[model.options]\nextra = "sk-proj-OtLeak18xyz"\n', ("OtLeak18", "sk-proj"), ("extra",)
    ),
    "password-with-at": Leak(
        '[database]\nurl = "postgresql://u:p@ss@Leak19@db.example:5434/atdb"\n',
        ("p@ss@Leak19", "ss@Leak19", "Leak19"),
        ("db.example", "5434", "atdb", "u:***@"),
    ),
    "password-with-slash": Leak(
        '[database]\nurl = "postgresql://u:sl/Leak20@db.example:5435/sldb"\n',
        ("sl/Leak20", "Leak20"),
        ("db.example", "5435", "sldb"),
    ),
    "keyword-dsn-ch404": Leak(
        '[database]\nurl = "host=db.example port=5436 dbname=kwdb user=app password=KwLeak21"\n',
        ("KwLeak21",),
        ("CH404", "db.example", "port=5436", "dbname=kwdb", "password="),
    ),
    "keyword-dsn-quoted": Leak(
        "[database]\nurl = \"host=db.example password='Kw Leak22' dbname=kwdb\"\n",
        ("Kw Leak22", "Leak22"),
        ("CH404", "db.example", "dbname=kwdb"),
    ),
    "keyword-dsn-from-env": Leak(
        "",
        ("EnvLeak23",),
        ("CH404", "CHARTER_DATABASE_URL", "db.example"),
        env={"CHARTER_DATABASE_URL": "host=db.example password=EnvLeak23"},
    ),
    "env-url-query-token": Leak(
        "",
        ("EnvLeak24",),
        ("llm.example", "token="),
        env={"CHARTER_MODEL_URL": "http://llm.example:8082/v1?token=EnvLeak24"},
    ),
    "env-url-password-with-at": Leak(
        "",
        ("a@b@EnvLeak25", "EnvLeak25"),
        ("db.example", "envdb"),
        env={"CHARTER_DATABASE_URL": "postgresql://u:a@b@EnvLeak25@db.example/envdb"},
    ),
    "token-as-url-user": Leak(
        '[model]\nbase_url = "https://ghp_UsLeak26abcdefgh@llm.example/v1"\n',
        ("UsLeak26",),
        ("llm.example",),
    ),
    "key-pasted-as-backend": Leak(
        '[model]\nbackend = "sk-live-BkLeak27abcd"\n', ("BkLeak27",), ("CH403", "model.backend")
    ),
    "sqlite-url-with-query-secret": Leak(
        '[database]\nurl = "sqlite://rel.db?key=SqLeak28"\n',
        ("SqLeak28",),
        ("CH404", "rel.db"),
    ),
    "unknown-secret-setting": Leak(
        '[model]\npassword = "UkLeak29"\n', ("UkLeak29",), ("CH401", "model.password")
    ),
}
COMMANDS = (
    ("config", "show"),
    ("config", "show", "--format", "json"),
    ("config", "check"),
    ("config", "check", "--format", "json"),
    ("config", "check", "--format", "sarif"),
    ("config", "check", "--format", "github"),
)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith("CHARTER_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.mark.parametrize("name", list(LEAKS))
def test_point_3_config_show_never_prints_a_secret(
    name: str, workdir: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    leak = LEAKS[name]
    if leak.toml:
        (workdir / "charter.toml").write_text(leak.toml, encoding="utf-8")
    for var, value in leak.env.items():
        monkeypatch.setenv(var, value)
    printed = ""
    for argv in COMMANDS:
        run = charter(*argv)
        printed += run.out + run.err
        for secret in leak.secrets:
            assert secret not in run.out + run.err, (argv, secret)
    for part in leak.visible:
        assert part in printed, part


# ---- point 4 --------------------------------------------------------------------------------

KEY = "sk-LiveMq8ZTx3vNw7Kp2Rb5Yc1d2e"
SERVER_SAYS = {
    "stars": "Incorrect API key provided: sk-LiveM*****1d2e. You can find your API key at "
    "https://platform.openai.com/account/api-keys.",
    "dots": "Incorrect API key provided: sk-LiveM...1d2e.",
    "ellipsis": "Incorrect API key provided: sk-LiveM…1d2e",
    "whole": f"Incorrect API key provided: {KEY}",
    "bearer": f"invalid header Authorization: Bearer {KEY}",
    "head-only": "key sk-LiveMq8Z is revoked",
    "tail-only": "key ending in Kp2Rb5Yc1d2e is revoked",
}
FRAGMENTS = (KEY, "sk-LiveM", "LiveMq8", "Yc1d2e", "1d2e")


@pytest.fixture
def model_server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("said", list(SERVER_SAYS))
def test_point_4_a_refused_api_key_never_reaches_a_trace(
    said: str, backend: str, service: MakeService, model_server: FakeServer
) -> None:
    body = {"error": {"message": SERVER_SAYS[said], "type": "invalid_request_error"}}
    model_server.reply(Reply(401, body))
    llm = OpenAIChat(OpenAIOptions.parse({"base_url": model_server.url, "api_key": KEY}))
    s = service(backend, llm=llm, mode="assisted")

    r = s.turn("acme", "u-key", "你好", session_id="s1")
    assert r.status_code == 502, r.text
    assert r.status_code == 502
    assert model_server.seen[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent

    listed = s.client.get("/v1/traces", params={"user_id": "u-key"}, headers=auth("acme"))
    (summary,) = listed.json()["traces"]
    one = s.client.get(f"/v1/traces/{summary['id']}", headers=auth("acme"))
    assert one.status_code == 200
    trace = one.json()
    errors = [st["outputs"]["error"] for st in trace["steps"] if "error" in st["outputs"]]
    assert errors, trace  # the failure is recorded, masked
    assert "HTTP 401 Unauthorized" in errors[0]
    assert "***" in errors[0]
    for text in (listed.text, one.text, r.text):
        for fragment in FRAGMENTS:
            assert fragment not in text, (fragment, text)
    assert json.loads(one.text) == trace


class _Failing:
    """A model backend (not the openai one) whose error quotes credentials."""

    def generate(self, messages: object, **kw: object) -> object:
        raise LLMError(f"upstream refused key {KEY} (Bearer abcdef123) password=hunter2")


def test_point_4_any_error_a_trace_records_is_masked(service: MakeService) -> None:
    s = service("sqlite", llm=_Failing(), mode="assisted")  # type: ignore[arg-type]
    assert s.turn("acme", "u-any", "你好", session_id="s1").status_code == 502
    listed = s.client.get("/v1/traces", params={"user_id": "u-any"}, headers=auth("acme"))
    assert "upstream refused key" in listed.text
    for fragment in (*FRAGMENTS, "abcdef123", "hunter2"):
        assert fragment not in listed.text, fragment
