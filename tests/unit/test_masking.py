"""``charter.text.masking``: secrets recognised by their shape, never by a list of names."""

from __future__ import annotations

import pytest

from charter.text.masking import (
    harmless_header,
    headers_name,
    mask_data,
    mask_text,
    mask_url,
    secret_name,
    secret_values,
    url_password,
    url_secrets,
)

SECRET_NAMES = [
    "password", "passwd", "db_pass", "PASSWORD", "passphrase", "pwd", "secret", "clientSecret",
    "client-secret", "token", "access_token", "refreshToken", "X-Auth-Token", "PRIVATE-TOKEN",
    "key", "api_key", "apiKey", "apikey", "api-key", "X-Api-Key", "Ocp-Apim-Subscription-Key",
    "auth", "Authorization", "Proxy-Authorization", "credentials", "creds", "signature", "sig",
    "Cookie", "session", "sessionid", "bearer", "jwt", "private_key", "pin_code", "passcode",
    "数据库密码", "api密钥", "访问令牌",
]  # fmt: skip
PLAIN_NAMES = [
    "api_key_env", "key_env", "token_env", "token_url", "key_id", "session_id", "max_tokens",
    "max_token", "num_keys", "tokenizer", "keep_alive", "keyword", "author", "unauthorized",
    "bypass", "passthrough", "model", "base_url", "timeout_s", "headers", "X-Tenant", "default",
    "KeyError", "host", "",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_names_that_are_not_secret(name: str) -> None:
    assert not secret_name(name)


def test_headers() -> None:
    assert headers_name("headers") and headers_name("extra_headers") and headers_name("Header")
    assert not headers_name("header_timeout") and not headers_name("")
    assert harmless_header("Content-Type") and harmless_header("user_agent")
    assert not harmless_header("Authorization") and not harmless_header("X-Tenant")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://app:pw@db:5432/x", "postgresql://app:***@db:5432/x"),
        ("postgresql://u:p@ss@host:5432/db", "postgresql://u:***@host:5432/db"),  # last @
        ("postgresql://u:p/ss@host/db", "postgresql://u:***@host/db"),  # '/' in the password
        ("postgresql://u:a:b@h/db", "postgresql://u:***@h/db"),
        ("postgresql://app@db/x", "postgresql://app@db/x"),
        ("postgresql://u:@db/x", "postgresql://u:@db/x"),
        (
            "postgresql://app@db/x?sslmode=require&password=pw",
            "postgresql://app@db/x?sslmode=require&password=***",
        ),
        ("http://h:8080/v1?api_key=k&model=m", "http://h:8080/v1?api_key=***&model=m"),
        ("http://h/v1?API-KEY=k;x", "http://h/v1?API-KEY=***"),
        ("https://h/cb#access_token=t&state=s", "https://h/cb#access_token=***&state=s"),
        ("https://ghp_abcdefghij1234@github.com/x", "https://***@github.com/x"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("http://host:8080/@scope/pkg", "http://host:8080/@scope/pkg"),
        ("sqlite:///charter.db?mode=ro", "sqlite:///charter.db?mode=ro"),
        ("not a url password=x", "not a url password=x"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_url_secrets() -> None:
    assert url_password("postgresql://u:p@ss@h/db") == "p@ss"
    assert url_password("postgresql://u@h/db") == ""
    assert url_secrets("postgresql://u:p@h/db?password=q&x=1#token=t") == ["p", "q", "t"]
    assert url_secrets("http://h/v1?model=m") == []
    assert url_secrets("host=h password=x") == []


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "HTTP 401 Unauthorized: Incorrect API key provided: sk-LiveM*****1d2e. You can "
            "find your API key at https://platform.openai.com/account/api-keys.",
            "HTTP 401 Unauthorized: Incorrect API key provided: ***. You can "
            "find your API key at https://platform.openai.com/account/api-keys.",
        ),
        ("provided: sk-LiveM...1d2e.", "provided: ***."),
        ("provided: sk-LiveM…1d2e", "provided: ***"),
        ("key sk-proj-abcDEF123_x and rk_live_abcd", "key *** and ***"),
        ("Authorization: Bearer abc.def-ghi", "Authorization: *** ***"),
        ("sent bearer abcdef", "sent bearer ***"),
        ("Basic dXNlcjpwYXNzd29yZA==", "Basic ***"),
        ("host=db port=5432 user=app password=hunter2 dbname=x", None),
        ("password='a b' host=db", "password='***' host=db"),
        ('{"api_key": "abc", "model": "m"}', '{"api_key": "***", "model": "m"}'),
        ('url = "host=db password=x"', 'url = "host=db password=***"'),
        ("token: abc, next", "token: ***, next"),
        ("connect postgresql://u:pw@db/x failed", "connect postgresql://u:***@db/x failed"),
        ("tokens ghp_0123456789abcdef and xoxb-1234-abcdefgh", "tokens *** and ***"),
        ("AKIAABCDEFGHIJKLMNOP id", "*** id"),
        ("jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIx.sig", "jwt ***"),
        ("random aB3dE5fG7hJ9kL1mN3pQ5rS7 run", "random *** run"),
        # what must stay: ids, hashes, words, paths, counts
        ("trace tr-0abcdefghjkmnpqrstvw", None),
        ("uuid 123e4567-e89b-12d3-a456-426614174000", None),
        ("sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", None),
        ("max_tokens = 256, KeyError: 'x', risk-free desk-top SK-II", None),
        ("cannot open /Users/Ann/Projects2024/App1/charter.db", None),
        ("退款请打到我的银行卡", None),
    ],
)
def test_mask_text(text: str, shown: str | None) -> None:
    expected = text.replace("hunter2", "***") if shown is None else shown
    assert mask_text(text) == expected


def test_known_values_and_their_fragments() -> None:
    key = "lm-Q7xZr2Kp4Lw9"
    said = f"refused {key}; also lm-Q7x... and ...4Lw9 and Zr2K"
    assert mask_text(said, [key]) == "refused ***; also lm-Q7x... and ...4Lw9 and Zr2K"
    # every prefix and suffix of 4+ characters: what servers quote; a middle piece is no prefix
    assert mask_text(said, [key], fragments=True) == "refused ***; also ***... and ...*** and Zr2K"
    assert mask_text("a  b", ["  ", ""]) == "a  b"  # blank values are never "known"


def test_mask_data() -> None:
    options = {
        "model": "m",
        "secret": "s1",
        "pin": 1234,
        "auth": True,
        "url": "http://u:p@h/x?token=t",
        "headers": {"Authorization": "Bearer x", "Accept": "text/plain", "X-Tenant": "acme"},
        "proxy": {"host": "p", "password": "s2"},
        "keys": ["k1", "k2"],
    }
    assert mask_data(options, "options") == {
        "model": "m",
        "secret": "***",
        "pin": "***",
        "auth": True,  # a boolean holds no secret
        "url": "http://u:***@h/x?token=***",
        "headers": {"Authorization": "***", "Accept": "text/plain", "X-Tenant": "***"},
        "proxy": {"host": "p", "password": "***"},
        "keys": ["***", "***"],
    }
    assert secret_values(options, "options") == [
        "s1", "1234", "p", "t", "Bearer x", "acme", "s2", "k1", "k2",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000,
        "A1b2" * 25_000,
        'x="' * 30_000,
        "a=" * 50_000,
        "http://" + "@" * 50_000,
        "http://a:b" + "/" * 50_000 + "@h",
        "sk-" + "." * 100_000,
        "Bearer " * 15_000,
        "password=x " * 10_000,
    ],
)
def test_masking_is_linear(text: str) -> None:
    # quadratic backtracking on these took minutes; a linear pass is milliseconds (bound: 5 s)
    import time

    start = time.perf_counter()
    mask_text(text, ["sk-" + "k" * 60], fragments=True)
    assert time.perf_counter() - start < 5
