"""The ``openai`` backend against a fake server on 127.0.0.1: what it sends, what it makes of
the answers, when it retries and what it raises."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from charter.config.settings import PluginSettings
from charter.contracts.models import LLM, Completion, Message
from charter.llm.errors import LLMBadResponse, LLMError, LLMUnavailable
from charter.llm.openai import OpenAIChat, OpenAIOptions
from charter.plugins.host import make_host
from tests.unit.llm.fake_server import FakeServer, Reply, chat

KEY = "sk-test-3f9a"
ASK = [Message("system", "你是客服。"), Message("user", "我的快递到哪了？")]


def ticking(*values: float) -> Iterator[float]:
    yield from values


def make(
    server: FakeServer,
    sleeps: list[float] | None = None,
    clock: Iterator[float] | None = None,
    **options: Any,
) -> OpenAIChat:
    parsed = OpenAIOptions.parse({"base_url": server.url, **options})
    ticks = clock if clock is not None else iter(float(i) for i in range(1000))
    return OpenAIChat(
        parsed,
        sleep=(sleeps if sleeps is not None else []).append,
        clock=lambda: next(ticks),
    )


def ask(llm: LLM, **kw: Any) -> Completion:
    return llm.generate(ASK, max_tokens=kw.pop("max_tokens", 32), temperature=0.0, **kw)


# ---- the request ----------------------------------------------------------------------------


def test_the_request_is_pinned(server: FakeServer) -> None:
    server.reply(Reply(body=chat("已发货。")))
    llm = make(server, api_key=KEY, model="gemma-3-270m", headers={"X-Tenant": "acme"}, timeout_s=5)
    got = llm.generate(ASK, max_tokens=64, temperature=0.3, stop=["\n\n", "用户："])
    (seen,) = server.seen
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.json() == {
        "model": "gemma-3-270m",
        "messages": [
            {"role": "system", "content": "你是客服。"},
            {"role": "user", "content": "我的快递到哪了？"},
        ],
        "max_tokens": 64,
        "temperature": 0.3,
        "stop": ["\n\n", "用户："],
    }
    assert "我的快递" in seen.body.decode("utf-8")  # UTF-8 on the wire, not \u escapes
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["user-agent"] == "charter/0.1.0"
    assert seen.headers["x-tenant"] == "acme"
    assert got == Completion("已发货。", 3, (), {"total_s": 2.0, "request_s": 1.0, "attempts": 1.0})


def test_a_bare_request_leaves_out_model_stop_and_authorization(server: FakeServer) -> None:
    server.reply(Reply(body=chat("好的")))
    ask(make(server))
    (seen,) = server.seen
    assert seen.json() == {
        "messages": [
            {"role": "system", "content": "你是客服。"},
            {"role": "user", "content": "我的快递到哪了？"},
        ],
        "max_tokens": 32,
        "temperature": 0.0,
    }
    assert "authorization" not in seen.headers


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_base_url_with_or_without_v1(server: FakeServer, suffix: str) -> None:
    llm = OpenAIChat(OpenAIOptions.parse({"base_url": server.url + suffix}))
    assert llm.url == server.endpoint


def test_the_api_key_can_come_from_the_environment(server: FakeServer) -> None:
    options = OpenAIOptions.parse(
        {"base_url": server.url, "api_key_env": "VLLM_KEY"}, environ={"VLLM_KEY": KEY}
    )
    assert options.api_key == KEY
    assert KEY not in repr(options)
    server.reply(Reply(body=chat("好的")))
    ask(OpenAIChat(options))
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"


def test_an_explicit_api_key_wins_over_the_environment() -> None:
    options = OpenAIOptions.parse(
        {"base_url": "http://h", "api_key": "sk-a", "api_key_env": "K"}, environ={"K": "sk-b"}
    )
    assert options.api_key == "sk-a"


def test_grammar_is_sent_as_llamacpp_field_only_when_enabled(server: FakeServer) -> None:
    with pytest.raises(NotImplementedError) as e:
        ask(make(server), grammar='root ::= "是" | "否"')
    assert str(e.value) == (
        "the openai backend sends a grammar only to a llama.cpp server: set the option "
        "grammar_field"
    )
    assert server.seen == []
    server.reply(Reply(body=chat("是")))
    assert ask(make(server, grammar_field=True), grammar='root ::= "是" | "否"').text == "是"
    assert server.seen[0].json()["grammar"] == 'root ::= "是" | "否"'


# ---- the answer -----------------------------------------------------------------------------

LOGPROBS = {
    "content": [
        {"token": "已", "logprob": -0.01, "bytes": [229, 183, 178], "top_logprobs": []},
        {"token": "发货", "logprob": -0.5, "bytes": None, "top_logprobs": []},
        {"token": "。", "logprob": -2, "bytes": None, "top_logprobs": []},
    ]
}


def test_logprobs_are_asked_for_and_mapped(server: FakeServer) -> None:
    server.reply(Reply(body=chat("已发货。", logprobs=LOGPROBS)))
    got = ask(make(server, logprobs=True))
    assert server.seen[0].json()["logprobs"] is True
    assert (got.text, got.tokens, got.logprobs) == ("已发货。", 3, (-0.01, -0.5, -2.0))


def test_without_usage_tokens_are_the_logprobs_counted(server: FakeServer) -> None:
    body = chat("已发货。", logprobs=LOGPROBS)
    del body["usage"]
    server.reply(Reply(body=body), Reply(body={**chat("好"), "usage": None}))
    assert ask(make(server, logprobs=True)).tokens == 3
    assert ask(make(server)).tokens == 0


def test_logprobs_not_asked_for_are_ignored(server: FakeServer) -> None:
    server.reply(Reply(body=chat("已发货。", logprobs=LOGPROBS)))
    got = ask(make(server))
    assert "logprobs" not in server.seen[0].json()
    assert got.logprobs == ()


def test_a_server_without_logprobs_gives_none(server: FakeServer) -> None:
    server.reply(Reply(body=chat("好", logprobs=None)))
    assert ask(make(server, logprobs=True)).logprobs == ()


def test_llamacpp_server_timings_are_kept(server: FakeServer) -> None:
    body = chat("好", timings={"prompt_n": 12, "prompt_ms": 8.5, "predicted_ms": 20.25, "x": "?"})
    server.reply(Reply(body=body))
    got = make(server, clock=ticking(10.0, 10.5, 11.0)).generate(ASK, max_tokens=8, temperature=0.0)
    assert got.timings == {
        "total_s": 1.0,
        "request_s": 0.5,
        "attempts": 1.0,
        "server_prompt_n": 12.0,
        "server_prompt_ms": 8.5,
        "server_predicted_ms": 20.25,
    }


# ---- retries ----------------------------------------------------------------------------------


def test_a_500_then_a_200_is_retried(server: FakeServer) -> None:
    server.reply(Reply(500, {"error": {"message": "CUDA out of memory"}}), Reply(body=chat("好")))
    sleeps: list[float] = []
    got = make(server, sleeps, clock=ticking(0.0, 0.0, 4.0, 7.0)).generate(
        ASK, max_tokens=8, temperature=0.0
    )
    assert got == Completion("好", 3, (), {"total_s": 7.0, "request_s": 3.0, "attempts": 2.0})
    assert sleeps == [0.5]
    assert len(server.seen) == 2
    assert server.seen[0].body == server.seen[1].body


def test_backoff_doubles_up_to_its_cap_then_gives_up(server: FakeServer) -> None:
    server.reply(*[Reply(503, {"object": "error", "message": "overloaded"})] * 5)
    sleeps: list[float] = []
    llm = make(server, sleeps, retries=4, backoff_s=0.25, max_backoff_s=1.5)
    with pytest.raises(LLMUnavailable) as e:
        ask(llm)
    assert str(e.value) == (
        f"POST {server.endpoint}: HTTP 503 Service Unavailable: overloaded (5 attempts)"
    )
    assert sleeps == [0.25, 0.5, 1.0, 1.5]
    assert len(server.seen) == 5


def test_retry_after_replaces_the_computed_wait(server: FakeServer) -> None:
    server.reply(
        Reply(429, b"slow down", {"Retry-After": "3"}),
        Reply(429, b"slow down", {"Retry-After": "120"}),
        Reply(429, b"slow down", {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}),
        Reply(body=chat("好")),
    )
    sleeps: list[float] = []
    assert ask(make(server, sleeps, retries=3)).text == "好"
    assert sleeps == [3.0, 8.0, 2.0]


def test_no_retries_means_one_attempt(server: FakeServer) -> None:
    server.reply(Reply(502, b""))
    with pytest.raises(LLMUnavailable) as e:
        ask(make(server, retries=0))
    assert str(e.value) == f"POST {server.endpoint}: HTTP 502 Bad Gateway (1 attempt)"


def test_a_timeout_is_retried_then_unavailable(server: FakeServer) -> None:
    server.reply(Reply(hang=True), Reply(hang=True))
    sleeps: list[float] = []
    with pytest.raises(LLMUnavailable) as e:
        ask(make(server, sleeps, timeout_s=0.05, retries=1))
    assert str(e.value) == f"POST {server.endpoint}: no answer within 0.05 s (2 attempts)"
    assert sleeps == [0.5]
    assert len(server.seen) == 2


def test_a_refused_connection_is_unavailable() -> None:
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAIChat(
        OpenAIOptions.parse({"base_url": f"http://127.0.0.1:{port}", "retries": 1}),
        sleep=lambda s: None,
    )
    with pytest.raises(LLMUnavailable) as e:
        ask(llm)
    assert str(e.value) == (
        f"POST http://127.0.0.1:{port}/v1/chat/completions: connection failed: "
        "[Errno 111] Connection refused (2 attempts)"
    )


# ---- errors -----------------------------------------------------------------------------------


def test_401_is_an_error_naming_url_and_status_never_the_key(server: FakeServer) -> None:
    # OpenAI echoes the key it refused; the message must not carry it on
    refused = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": 401}}
    server.reply(Reply(401, refused))
    with pytest.raises(LLMError) as e:
        ask(make(server, api_key=KEY))
    assert type(e.value) is LLMError
    assert str(e.value) == (
        f"POST {server.endpoint}: HTTP 401 Unauthorized: Incorrect API key provided: ***."
    )
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert len(server.seen) == 1  # not retried


LIVE = "sk-LiveMq8ZTx3vNw7Kp2Rb5Yc1d2e"


@pytest.mark.parametrize(
    ("server_says", "shown"),
    [
        (  # as OpenAI says it
            "Incorrect API key provided: sk-LiveM*****1d2e. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "Incorrect API key provided: ***. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
        ),
        ("Incorrect API key provided: sk-LiveM...1d2e.", "Incorrect API key provided: ***."),
        ("bad key Authorization: Bearer Kp2Rb5Yc1d2e", "bad key Authorization: *** ***"),
        ("key starting LiveMq8ZT... refused", "key starting LiveMq8ZT... refused"),
        ("key ending ...Yc1d2e refused", "key ending ...*** refused"),
        ("key sk-Li refused", "key *** refused"),  # a prefix of 4 characters or more
        ("key sk- refused", "key sk- refused"),  # 3: what every key of the kind starts with
    ],
)
def test_a_refused_key_is_masked_whole_and_in_fragments(
    server: FakeServer, server_says: str, shown: str
) -> None:
    server.reply(Reply(401, {"error": {"message": server_says, "code": 401}}))
    with pytest.raises(LLMError) as e:
        ask(make(server, api_key=LIVE))
    assert str(e.value) == f"POST {server.endpoint}: HTTP 401 Unauthorized: {shown}"


def test_credential_headers_and_url_secrets_are_masked(server: FakeServer) -> None:
    server.reply(Reply(403, {"error": "X-Api-Key hdr-k3y-123 is not allowed, X-Tenant acme"}))
    llm = make(
        server,
        base_url=f"{server.url}/v1?api-key=q1",
        headers={"X-Api-Key": "hdr-k3y-123", "Accept": "application/json"},
    )
    with pytest.raises(LLMError) as e:
        ask(llm)
    # (the path is appended to a query written in base_url: all of it is the masked value)
    assert str(e.value) == (
        f"POST {server.url}/v1?api-key=***: HTTP 403 Forbidden: "
        "X-Api-Key *** is not allowed, X-Tenant acme"
    )


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (Reply(400, {"error": "context too long"}), "HTTP 400 Bad Request: context too long"),
        (
            Reply(404, b"<html>\n  Not   Found\n</html>"),
            "HTTP 404 Not Found: <html> Not Found </html>",
        ),
        (Reply(422, b"x" * 300), "HTTP 422 Unprocessable Entity: " + "x" * 200 + "..."),
        (Reply(499, b""), "HTTP 499"),
    ],
)
def test_other_refusals_carry_the_server_message(
    server: FakeServer, reply: Reply, said: str
) -> None:
    server.reply(reply)
    with pytest.raises(LLMError) as e:
        ask(make(server))
    assert type(e.value) is LLMError
    assert str(e.value) == f"POST {server.endpoint}: {said}"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"not json {", "the body is not JSON: 'not json {'"),
        (b"\xff\xfe", "the body is not JSON: '\ufffd\ufffd'"),
        ([], "the answer has no choices[0].message.content"),
        ({"choices": []}, "the answer has no choices[0].message.content"),
        (
            {"choices": [{"message": {"content": None}}]},
            "the answer has no choices[0].message.content",
        ),
        (
            chat("好", logprobs={"content": [{"logprob": -0.1}, {"logprob": "low"}]}),
            "choices[0].logprobs.content[1].logprob is not a number",
        ),
        (chat("好", logprobs={"content": {"a": 1}}), "choices[0].logprobs.content is not a list"),
    ],
)
def test_a_malformed_answer_is_a_bad_response(server: FakeServer, body: Any, why: str) -> None:
    server.reply(Reply(body=body))
    with pytest.raises(LLMBadResponse) as e:
        ask(make(server, logprobs=True))
    assert str(e.value) == f"POST {server.endpoint}: HTTP 200 OK but {why}"


def test_the_hierarchy() -> None:
    assert issubclass(LLMUnavailable, LLMError) and issubclass(LLMBadResponse, LLMError)
    assert issubclass(LLMError, RuntimeError)


# ---- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "option 'base_url' is required (e.g. http://127.0.0.1:8080)"),
        (
            {"base_url": "127.0.0.1:8080"},
            "base_url must start with http:// or https://, not '127.0.0.1:8080'",
        ),
        ({"base_url": ""}, "option 'base_url' must be a non-empty string, not ''"),
        (
            {"base_url": "http://h", "timeout": 5},
            "unknown option 'timeout'; did you mean 'timeout_s'?",
        ),
        ({"base_url": "http://h", "timeout_s": 0}, "option 'timeout_s' must be > 0, not 0"),
        (
            {"base_url": "http://h", "timeout_s": "5"},
            "option 'timeout_s' must be a number, not '5'",
        ),
        ({"base_url": "http://h", "backoff_s": -1}, "option 'backoff_s' must be >= 0, not -1"),
        (
            {"base_url": "http://h", "retries": -1},
            "option 'retries' must be an integer >= 0, not -1",
        ),
        (
            {"base_url": "http://h", "retries": 1.5},
            "option 'retries' must be an integer >= 0, not 1.5",
        ),
        (
            {"base_url": "http://h", "logprobs": "yes"},
            "option 'logprobs' must be true or false, not 'yes'",
        ),
        (  # any header value may be a credential: not echoed
            {"base_url": "http://h", "headers": {"X": 1, "Accept": 2}},
            "option 'headers' must map strings to strings, not {'X': '***', 'Accept': 2}",
        ),
        (
            {"base_url": "http://h", "headers": {"Authorization": ["Bearer sk-abcdef"]}},
            "option 'headers' must map strings to strings, not {'Authorization': ['***']}",
        ),
        (
            {"base_url": "http://h", "api_key": 12345678},
            "option 'api_key' must be a non-empty string, not int",
        ),
        (
            {"base_url": "ftp://u:pw-secret@h/?token=t0k"},
            "base_url must start with http:// or https://, not 'ftp://u:***@h/?token=***'",
        ),
        (
            {"base_url": "http://h", "api_key_env": "NOPE"},
            "api_key_env names NOPE, which is not set",
        ),
    ],
)
def test_bad_options(options: Mapping[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as e:
        OpenAIOptions.parse(options, environ={})
    assert str(e.value) == f"openai backend: {message}"


def test_defaults() -> None:
    assert OpenAIOptions.parse({"base_url": "http://h"}) == OpenAIOptions(
        base_url="http://h",
        api_key=None,
        model=None,
        timeout_s=60.0,
        headers={},
        retries=2,
        backoff_s=0.5,
        max_backoff_s=8.0,
        grammar_field=False,
        logprobs=False,
    )


def test_the_registered_backend(server: FakeServer) -> None:
    backend = make_host(PluginSettings(autoload=False)).registry.llm_backends["openai"]
    llm = backend.create({"base_url": server.url, "api_key": KEY, "retries": 0})
    assert isinstance(llm, LLM)
    server.reply(Reply(body=chat("您好")))
    assert ask(llm).text == "您好"
