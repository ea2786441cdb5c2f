"""The body's time limit (``BodyLimit``), the paths a log line may show (``logged_path``), and
how ``charter serve`` tells a database it cannot open."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.types import Message, Receive, Scope, Send

from charter.agent import Agent
from charter.serve import create_app
from charter.serve.faults import database_failure, shown_url
from charter.serve.logs import logged_path
from charter.serve.middleware import BodyLimit
from tests.support.serve import TestClient, serve_config


def run(app: Any, chunks: list[Message | None]) -> list[Message]:
    """Drive ``app`` with ``chunks`` as the client's messages (None: the client sends nothing
    more, ever); return what it sent."""
    sent: list[Message] = []

    async def receive() -> Message:
        message = chunks.pop(0) if chunks else None
        if message is None:
            await asyncio.Event().wait()  # a client that stopped sending
        assert message is not None
        return message

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    asyncio.run(app(scope, receive, send))
    return sent


async def echo(scope: Scope, receive: Receive, send: Send) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def test_a_body_in_time_passes() -> None:
    app = BodyLimit(echo, max_bytes=100, timeout_s=5)
    chunks: list[Message | None] = [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"c"},
    ]
    sent = run(app, chunks)
    assert (sent[0]["status"], sent[1]["body"]) == (200, b"abc")


def test_a_body_that_stops_is_a_408() -> None:
    app = BodyLimit(echo, max_bytes=100, timeout_s=0.05)
    sent = run(app, [{"type": "http.request", "body": b"ab", "more_body": True}, None])
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    assert json.loads(sent[1]["body"]) == {
        "error": {
            "code": "request_timeout",
            "message": "the request body was not complete within 0.05 s",
        }
    }


def test_logged_path(client: TestClient) -> None:
    app = client.app
    route = next(r for r in app.routes if getattr(r, "path", "") == "/v1/users/{user_id}/goals")  # type: ignore[attr-defined]
    assert logged_path({"route": route, "path": "/v1/users/alice/goals"}) == (
        "/v1/users/{user_id}/goals"
    )
    assert logged_path({"app": app, "path": "/v1/users/al/ice/memory"}) == (
        "/v1/users/{?}/{?}/memory"
    )
    assert logged_path({"app": app, "path": "/nope/v1"}) == "/{?}/v1"


def test_database_failure_masks_the_password() -> None:
    url = "postgresql+psycopg://charter:pw-123@db:5432/charter"
    assert shown_url(url) == "postgresql+psycopg://charter:***@db:5432/charter"
    assert shown_url("::") == "the configured database URL"
    exc = OSError('could not connect with password "pw-123"\n\tmore')
    assert database_failure(url, exc) == (
        "cannot open the database postgresql+psycopg://charter:***@db:5432/charter: "
        'could not connect with password "***"'
    )
    missing = ModuleNotFoundError("No module named 'psycopg'")
    assert database_failure("sqlite:///x.db", missing) == (
        "cannot open the database sqlite:///x.db: No module named 'psycopg' "
        "(pip install 'charter[postgres]')"
    )


def test_a_database_the_application_cannot_open_is_logged_with_its_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Under ``uvicorn --factory`` the agent is built at start-up: the reason is logged."""
    url = "postgresql+psycopg://charter:pw-123@db:1/charter"

    def agent() -> Agent:
        orig = OSError("connection refused\n\tIs the server running?")
        raise sa.exc.OperationalError(None, None, orig)

    app = create_app(serve_config(url), agent_factory=agent, environ={})
    with pytest.raises(sa.exc.OperationalError), TestClient(app):
        pass
    assert [r.getMessage() for r in caplog.records if r.name == "charter.serve"] == [
        "cannot open the database postgresql+psycopg://charter:***@db:1/charter: connection refused"
    ]
