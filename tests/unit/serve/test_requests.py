"""Requests the service refuses, each with a clear 4xx (or 5xx) and one error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from charter.contracts.models import Completion, Message
from charter.llm.errors import LLMUnavailable
from charter.llm.scripted import ScriptedLLM
from tests.support.serve import MakeClient, TestClient, auth

OK = {"user_id": "u1", "session_id": "s1", "text": "你好"}


def error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def post(client: TestClient, body: bytes) -> tuple[int, Any]:
    r = client.post(
        "/v1/turns",
        content=body,
        headers={**auth("acme"), "Content-Type": "application/json"},
    )
    return r.status_code, r.json()


UNANSWERED = (
    "抱歉，这个问题我暂时无法回答。我可以帮您查询订单状态和物流进度、查询商品价格、校验券码、办理退换货；"
    "如需人工服务，请说“转人工”。"
)


def test_a_turn(make_client: MakeClient) -> None:
    # agent.mode = "assisted": the model answers what no template of the pack covers
    client = make_client(mode="assisted")
    r = client.post("/v1/turns", json=OK, headers=auth("acme"))
    assert r.status_code == 200
    body = r.json()
    assert list(body) == [
        "text",
        "verdict",
        "answered_by",
        "findings",
        "reflection",
        "goals",
        "memories_used",
        "trace_id",
        "ticket",
        "attempts",
        "skills",
        "responses",
        "events",
    ]
    assert (body["text"], body["verdict"], body["answered_by"], body["attempts"]) == (
        "好的",
        "pass",
        "model",
        1,
    )
    assert (body["responses"], body["events"]) == (["model"], [{"kind": "unanswered"}])


def test_the_configured_mode_decides_who_answers(make_client: MakeClient) -> None:
    """No agent.mode: the pack's own (strict) — the template answers, the model is not asked."""
    llm = ScriptedLLM([])
    client = make_client(llm)
    body = client.post("/v1/turns", json=OK, headers=auth("acme")).json()
    assert (body["text"], body["verdict"], body["answered_by"], body["attempts"]) == (
        UNANSWERED,
        "pass",
        "template",
        0,
    )
    assert (body["responses"], body["events"]) == (["pack.unanswered"], [{"kind": "unanswered"}])
    assert llm.calls == ()


def test_oversize_by_content_length(make_client: MakeClient) -> None:
    client = make_client(max_body_bytes=100)
    body = json.dumps({**OK, "text": "长" * 100}).encode()
    assert post(client, body) == (
        413,
        error("payload_too_large", "the request body is larger than 100 bytes"),
    )


def test_oversize_without_content_length(make_client: MakeClient) -> None:
    """A chunked body is counted as it arrives."""
    client = make_client(max_body_bytes=100)

    def chunks() -> Iterator[bytes]:
        yield b'{"user_id": "u1", "session_id": "s1", "text": "'
        yield b"x" * 200
        yield b'"}'

    r = client.post("/v1/turns", content=chunks(), headers=auth("acme"))
    assert "content-length" not in r.request.headers
    assert (r.status_code, r.json()) == (
        413,
        error("payload_too_large", "the request body is larger than 100 bytes"),
    )


def test_at_the_limit_is_accepted(make_client: MakeClient) -> None:
    body = json.dumps(OK).encode()
    client = make_client(max_body_bytes=len(body))
    assert post(client, body)[0] == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "the request body is empty: send a JSON object"),
        (b"  \n", "the request body is empty: send a JSON object"),
        (
            b'{"user_id": "u1",',
            "the request body is not valid JSON: "
            "Expecting property name enclosed in double quotes at line 1 column 18",
        ),
        (b"\xff\xfe{", "the request body is not UTF-8"),
        (b"user_id=u1", "the request body is not valid JSON: Expecting value at line 1 column 1"),
        (b"[" * 30_000 + b"]" * 30_000, "the request body is nested too deeply"),
    ],
)
def test_malformed_json_is_400(client: TestClient, body: bytes, message: str) -> None:
    assert post(client, body) == (400, error("malformed_json", message))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([OK], "the request body must be a JSON object"),
        ("text", "the request body must be a JSON object"),
        ({}, "user_id: Field required; session_id: Field required; text: Field required"),
        ({**OK, "text": "长" * 4001}, "text: String should have at most 4000 characters"),
        ({**OK, "text": " \n "}, "text: must not be blank"),
        ({**OK, "user_id": 7}, "user_id: Input should be a valid string"),
        ({**OK, "user_id": "u" * 129}, "user_id: String should have at most 128 characters"),
        (
            {**OK, "user_id": "u\n1"},
            "user_id: must not contain control characters (U+000A at character 2)",
        ),
        (
            {**OK, "user_id": "admin\u202e"},
            "user_id: must not contain invisible characters (U+202E at character 6)",
        ),
        (
            {**OK, "text": "\x1b]0;owned\x07你好"},
            "text: must not contain control characters other than newline and tab"
            " (U+001B at character 1)",
        ),
        ({**OK, "consent": ""}, "consent: String should have at least 1 character"),
        ({**OK, "session_id": ""}, "session_id: String should have at least 1 character"),
        (
            {**OK, "role": "Admin!"},
            "role: must be a role name such as 'agent' (a-z, 0-9, _ and -)",
        ),
        ({**OK, "role": "admin"}, "role: role 'admin' is not allowed on a turn"),
        ({**OK, "role": "user"}, "role: role 'user' is not allowed on a turn"),
        (
            {**OK, "consent": "v\x001"},
            "consent: must not contain control characters (U+0000 at character 2)",
        ),
        ({**OK, "tenant": "globex"}, "tenant: Extra inputs are not permitted"),
    ],
)
def test_invalid_turns_are_422(client: TestClient, body: Any, message: str) -> None:
    status, got = post(client, json.dumps(body).encode())
    assert (status, got) == (422, error("invalid_request", message))


def test_exactly_4000_characters_is_accepted(client: TestClient) -> None:
    assert post(client, json.dumps({**OK, "text": "长" * 4000}).encode())[0] == 200


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "/v1/users/" + "u" * 129 + "/memory",
            "user_id: String should have at most 128 characters",
        ),
        (
            "/v1/users/u%01/memory",
            "user_id: must not contain control characters (U+0001 at character 2)",
        ),
        (
            "/v1/users/u%E2%80%A8/memory",
            "user_id: must not contain invisible characters (U+2028 at character 2)",
        ),
        (
            "/v1/traces?sesion_id=s1",
            "unknown query parameter 'sesion_id' (did you mean 'session_id'?)",
        ),
        ("/v1/health?verbose=1", "unknown query parameter 'verbose' (it takes no query parameter)"),
        ("/v1/traces/t1?x=1", "unknown query parameter 'x' (it takes no query parameter)"),
        ("/v1/traces?limit=0", "limit: Input should be greater than or equal to 1"),
        (
            "/v1/traces?limit=many",
            "limit: Input should be a valid integer, unable to parse string as an integer",
        ),
        ("/v1/users/u1/goals?session_id=", "session_id: String should have at least 1 character"),
    ],
)
def test_invalid_paths_and_queries_are_422(client: TestClient, path: str, message: str) -> None:
    r = client.get(path, headers=auth("acme"))
    assert (r.status_code, r.json()) == (422, error("invalid_request", message))


def test_unknown_route_and_method(client: TestClient) -> None:
    r = client.get("/v1/nothing", headers=auth("acme"))
    assert (r.status_code, r.json()) == (404, error("not_found", "Not Found"))
    r = client.put("/v1/turns", headers=auth("acme"))
    assert (r.status_code, r.json()) == (405, error("method_not_allowed", "Method Not Allowed"))


def test_an_unknown_trace(client: TestClient) -> None:
    r = client.get("/v1/traces/tr-nope", headers=auth("acme"))
    assert (r.status_code, r.json()) == (404, error("not_found", "no trace 'tr-nope'"))


class Failing:
    """A backend whose every call fails, quoting the user as some backends' errors do."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> Completion:
        raise self.exc


def test_a_failing_model_is_502_without_the_users_words(make_client: MakeClient) -> None:
    client = make_client(Failing(LLMUnavailable("cannot answer 你好 now")), mode="assisted")
    r = client.post("/v1/turns", json=OK, headers=auth("acme"))
    assert (r.status_code, r.json()) == (
        502,
        error("model_unavailable", "the model backend failed (LLMUnavailable)"),
    )
    health = client.get("/v1/health", headers=auth("acme")).json()
    assert health["counts"] == {"turns": 1, "turn_errors": 1, "in_flight": 0}


def test_an_internal_error_is_500(make_client: MakeClient) -> None:
    client = make_client(Failing(RuntimeError("你好 broke")), mode="assisted")
    r = client.post("/v1/turns", json=OK, headers=auth("acme"))
    assert (r.status_code, r.json()) == (
        500,
        error("internal", "internal error; the server log has the details"),
    )


def test_scripted_answers_used_up_is_a_model_error(make_client: MakeClient) -> None:
    client = make_client(ScriptedLLM(["只有一个回答"]), mode="assisted")
    assert client.post("/v1/turns", json=OK, headers=auth("acme")).status_code == 200
    assert client.post("/v1/turns", json=OK, headers=auth("acme")).status_code == 502
