"""The id grammar (``charter.serve.ids``) and how a turn's body is read (``charter.serve.body``)."""

from __future__ import annotations

import json

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charter.serve.body import parse_turn
from charter.serve.errors import ApiError
from charter.serve.ids import (
    ID_PATTERN,
    MAX_ID,
    MAX_TEXT,
    ROLE_PATTERN,
    TEXT_PATTERN,
    USER_ID_PATTERN,
    check_user_id,
    id_problem,
    role_problem,
    text_problem,
    user_id_problem,
)


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
        ("a\nb", "must not contain control characters (U+000A at character 2)"),
        ("a\x00b", "must not contain control characters (U+0000 at character 2)"),
        ("ab\x9b", "must not contain control characters (U+009B at character 3)"),
        ("alice\u202e", "must not contain invisible characters (U+202E at character 6)"),
        ("a\u200bb", "must not contain invisible characters (U+200B at character 2)"),
        ("a\u2028b", "must not contain invisible characters (U+2028 at character 2)"),
        ("\u2066x\u2069", "must not contain invisible characters (U+2066 at character 1)"),
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
    assert id_problem("a\tb") == "must not contain control characters (U+0009 at character 2)"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("你好", None),
        ("第一行\n第二行\t完", None),
        ("  \n 查订单", None),
        ("👨\u200d👩\u200d👧 家庭套餐", None),  # joiners inside an emoji are text
        ("عربي \u202bنص\u202c", None),  # direction marks in a text are shown escaped, not refused
        (
            "a\x00b",
            "must not contain control characters other than newline and tab (U+0000 at character 2)",
        ),
        (
            "\x1b]0;pwned\x07",
            "must not contain control characters other than newline and tab (U+001B at character 1)",
        ),
        (
            "好\r\n",
            "must not contain control characters other than newline and tab (U+000D at character 2)",
        ),
        (
            "\x9b2J",
            "must not contain control characters other than newline and tab (U+009B at character 1)",
        ),
        (" \t\n\u3000", "must not be blank"),
        ("\u200b\ufeff", "must not be blank"),
    ],
)
def test_text_problem(text: str, problem: str | None) -> None:
    assert text_problem(text) == problem


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
            (
                422,
                "invalid_request",
                "text: must not contain control characters other than newline and tab"
                " (U+0000 at character 2)",
            ),
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


# The published pattern and the server's check are one rule: what JSON Schema's own reading
# of the document accepts (jsonschema-rs, ECMA-262 regular expressions), the server accepts.
_CHECKS = {
    "id": (ID_PATTERN, MAX_ID, id_problem),
    "user_id": (USER_ID_PATTERN, MAX_ID, user_id_problem),
    "text": (TEXT_PATTERN, MAX_TEXT, text_problem),
    "role": (ROLE_PATTERN, None, role_problem),
}
_VALIDATORS = {
    name: jsonschema_rs.validator_for(
        {"type": "string", "minLength": 1, "pattern": pattern}
        | ({"maxLength": longest} if longest is not None else {})
    )
    for name, (pattern, longest, _) in _CHECKS.items()
}
_TRICKY = st.sampled_from(
    ["", ".", "..", "/", "\n", "\r", "\t", " ", "\u3000", "\x1b", "\x85", "\x9b", "\u200b",
     "\u202e", "\u2028", "\u2066", "\ufeff", "a", "用", "😀", "admin", "user", "-", "_", "A"]
)  # fmt: skip


@pytest.mark.parametrize("name", sorted(_CHECKS))
@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.text(max_size=12), st.lists(_TRICKY, max_size=6).map("".join)))
def test_the_published_pattern_is_the_servers_rule(name: str, value: str) -> None:
    _, _, problem = _CHECKS[name]
    assert _VALIDATORS[name].is_valid(value) == (problem(value) is None)
