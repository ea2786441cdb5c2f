"""``/v1/health`` says what is loaded; every request is one JSON log line without secrets."""

from __future__ import annotations

import json
import logging
import sys

import pytest
import sqlalchemy.exc

from charter._version import __version__
from charter.serve.logs import ACCESS, JsonFormatter, logging_config
from tests.support.serve import TOKENS, TestClient, auth

TEXT = "帮我查一下订单DD202405010001"


def test_health(client: TestClient) -> None:
    client.post(
        "/v1/turns", json={"user_id": "u1", "session_id": "s1", "text": TEXT}, headers=auth("acme")
    )
    r = client.get("/v1/health", headers=auth("globex"))
    assert r.status_code == 200
    body = r.json()
    assert len(body["pack"].pop("digest")) == 64
    assert body == {
        "status": "ok",
        "version": __version__,
        "tenant": "globex",
        "pack": {"name": "ecommerce", "version": "0.1.0", "rules": 7, "skills": 5, "intents": 8},
        "model": {"backend": "scripted"},
        "database": {"dialect": "sqlite", "reachable": True, "writable": True, "fault": None},
        "breakers": [{"name": "order_lookup", "state": "closed", "strikes": 0, "retry_in_s": 0.0}],
        "counts": {"turns": 1, "turn_errors": 0, "in_flight": 0},
    }


def test_health_when_the_database_is_gone(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = client.app.state.service.agent  # type: ignore[attr-defined]

    def gone() -> None:
        raise sqlalchemy.exc.OperationalError("SELECT 1", {}, OSError("unreachable"))

    monkeypatch.setattr(agent.parts.facts.engine, "connect", gone)
    r = client.get("/v1/health", headers=auth("acme"))
    assert (r.status_code, r.headers["retry-after"]) == (503, "5")
    assert (r.json()["status"], r.json()["database"]) == (
        "degraded",
        {"dialect": "sqlite", "reachable": False, "writable": False, "fault": "unreachable"},
    )


def access_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == ACCESS]


def test_one_access_line_per_request(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS)
    r = client.post(
        "/v1/turns", json={"user_id": "u1", "session_id": "s1", "text": TEXT}, headers=auth("acme")
    )
    trace_id = r.json()["trace_id"]
    client.get("/v1/users/u1/memory", headers=auth("acme"))
    client.get("/v1/users/u1/memory", headers={"Authorization": "Bearer nope"})
    client.get("/healthz")
    rows = [
        (rec.method, rec.path, rec.status, rec.tenant, rec.trace_id)  # type: ignore[attr-defined]
        for rec in access_records(caplog)
    ]
    assert rows == [
        ("POST", "/v1/turns", 200, "acme", trace_id),
        ("GET", "/v1/users/{user_id}/memory", 200, "acme", None),
        ("GET", "/v1/users/{user_id}/memory", 401, None, None),
        ("GET", "/healthz", 200, None, None),
    ]
    for rec in access_records(caplog):
        line = JsonFormatter().format(rec)
        data = json.loads(line)
        assert list(data) == [
            "time",
            "level",
            "logger",
            "message",
            "method",
            "path",
            "status",
            "duration_ms",
            "tenant",
            "trace_id",
        ]
        assert isinstance(data["duration_ms"], float)
        for secret in (*TOKENS.values(), "nope", TEXT, "DD202405010001", "u1"):
            assert secret not in line


def test_413_is_logged_too(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS)
    client.post("/v1/turns", content=b"x" * 70000, headers=auth("acme"))
    (rec,) = access_records(caplog)
    assert (rec.method, rec.path, rec.status) == ("POST", "/v1/turns", 413)  # type: ignore[attr-defined]


def test_an_exception_is_logged_by_type_not_message() -> None:
    said = "你" + "好"  # not in this file's source, which the frames quote
    try:
        raise ValueError(f"the user said {said}")
    except ValueError:
        record = logging.LogRecord("charter.serve", logging.ERROR, __file__, 1, "boom", (), None)
        record.exc_info = sys.exc_info()
    data = json.loads(JsonFormatter().format(record))
    assert (data["message"], data["error"]) == ("boom", "ValueError")
    assert said not in json.dumps(data, ensure_ascii=False)
    assert data["frames"]


def test_logging_config_is_valid() -> None:
    import logging.config

    config = logging_config("warning")
    assert config["loggers"]["charter"]["level"] == "WARNING"
    logging.config.dictConfig({**config, "loggers": {}})  # the formatter and handler resolve


def test_a_log_line_holds_no_raw_control_or_direction_character() -> None:
    record = logging.LogRecord("charter.serve", logging.INFO, __file__, 1, "turn", (), None)
    record.path = "/v1/users/a\x9b2J\u202e/memory"
    line = JsonFormatter().format(record)
    assert "/v1/users/a\\u009b2J\\u202e/memory" in line
    assert json.loads(line)["path"] == "/v1/users/a\x9b2J\u202e/memory"
