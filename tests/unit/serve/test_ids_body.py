"""The id grammar (``charter.serve.ids``) and how a turn's body is read (``charter.serve.body``)."""

from __future__ import annotations

import json

import pytest

from charter.serve.body import parse_turn
from charter.serve.errors import ApiError
from charter.serve.ids import check_user_id, id_problem, text_problem, user_id_problem


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("alice", None),
        ("a b", None),
        ("用户一", None),
        ("a%2Fb", None),
        ("a\\b", None),
        ("...", None),
        (".x", None),
        ("x" * 128, None),
        ("", "must not be empty"),
        ("x" * 129, "must be at most 128 characters"),
        ("a\nb", "must not contain control characters"),
        ("a\x00b", "must not contain control characters"),
        ("a/b", "must not contain '/'"),
        ("../u1", "must not contain '/'"),
        (".", "must not be '.'"),
        ("..", "must not be '..'"),
    ],
)
def test_the_user_id_grammar(value: str, problem: str | None) -> None:
    assert user_id_problem(value) == problem


def test_other_ids_may_hold_what_no_path_carries() -> None:
    assert [id_problem(v) for v in ("a/b", ".", "..")] == [None, None, None]
    assert id_problem("a\tb") == "must not contain control characters"


def test_text_problem() -> None:
    assert (text_problem("a\tb"), text_problem("a\x00b")) == (
        None,
        "must not contain NUL characters",
    )


def test_check_user_id_is_a_422_naming_the_field() -> None:
    with pytest.raises(ApiError) as info:
        check_user_id("user_id", "a/b")
    assert (info.value.status, info.value.code, info.value.message) == (
        422,
        "invalid_request",
        "user_id: must not contain '/'",
    )


def refusal(body: bytes) -> tuple[int, str, str]:
    with pytest.raises(ApiError) as info:
        parse_turn(body)
    return info.value.status, info.value.code, info.value.message


BODY = {"user_id": "u", "session_id": "s", "text": "你好"}


def test_a_valid_body() -> None:
    assert parse_turn(json.dumps(BODY).encode()).user_id == "u"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"  ", (400, "malformed_json", "the request body is empty: send a JSON object")),
        (
            json.dumps(BODY).encode("utf-16"),
            (400, "malformed_json", "the request body is not UTF-8"),
        ),
        (
            json.dumps(BODY).encode("utf-32"),
            (400, "malformed_json", "the request body is not UTF-8"),
        ),
        (
            b"\xef\xbb\xbf" + json.dumps(BODY).encode(),
            (
                400,
                "malformed_json",
                "the request body is not valid JSON: Unexpected UTF-8 BOM (decode using "
                "utf-8-sig) at line 1 column 1",
            ),
        ),
        (
            b'{"user_id": "u", "n": ' + b"1" * 101 + b"}",
            (422, "invalid_request", "the request body has an integer of more than 100 digits"),
        ),
        (
            b'{"user_id": "u", "n": -' + b"1" * 5000 + b"}",
            (422, "invalid_request", "the request body has an integer of more than 100 digits"),
        ),
        (b"[" * 100_000, (400, "malformed_json", "the request body is nested too deeply")),
        (b"[1]", (422, "invalid_request", "the request body must be a JSON object")),
        (
            json.dumps({**BODY, "text": "a\x00b"}).encode(),
            (422, "invalid_request", "text: must not contain NUL characters"),
        ),
        (
            json.dumps({**BODY, "user_id": ".."}).encode(),
            (422, "invalid_request", "user_id: must not be '..'"),
        ),
    ],
)
def test_refusals(body: bytes, expected: tuple[int, str, str]) -> None:
    assert refusal(body) == expected


def test_an_integer_of_100_digits_is_read() -> None:
    body = json.dumps(BODY)[:-1] + ', "n": ' + "9" * 100 + "}"
    assert refusal(body.encode())[2] == "n: Extra inputs are not permitted"
