"""Masking secrets by their shape, for every text a person or a tenant may read.

A list of secret names always misses one (``access_token``, ``api-key``, ``X-Api-Key``,
``?password=``), so secrets are recognised by what they look like:

* a **name** that looks secret (``secret_name``): its words, split at separators and case
  changes, contain ``pass``/``password``/``pwd``, ``secret``, ``token``, ``key``, ``auth``,
  ``credential``, ``signature``, ``cookie``, ``session``, ``bearer``, ``jwt``... (or 密码,
  口令, 密钥, 令牌, 凭证), unless its last word says the value is about the secret rather
  than the secret itself (``api_key_env`` names a variable, ``token_url`` is a URL, ``key_id``
  an id) or its first word that it is a number of them (``max_token``);
* **URLs** (``mask_url``): the user info's password (everything up to the *last* ``@`` of the
  authority, so an unencoded ``@`` or ``/`` in a password is masked whole), and the value of
  every query or fragment parameter whose name looks secret;
* **tokens** in free text: ``Bearer ...``/``Basic ...`` credentials, provider-prefixed keys
  (``sk-...``, ``ghp_...``, ``xoxb-...``, ``AKIA...``, JWTs), a key already truncated by a
  server (``sk-LiveM...1d2e``, ``sk-LiveM*****1d2e``), ``name=value``/``name: value`` pairs
  whose name looks secret (a keyword DSN's ``password=``, JSON's ``"api_key": "..."``), and
  long high-entropy runs (24+ characters mixing upper case, lower case and digits);
* **header values**: under a table named ``headers``, every value except those of a few
  standard headers that never carry a credential (``harmless_header``);
* **known values** (``mask_text(known=...)``): a secret the caller holds, and with
  ``fragments=True`` every prefix and suffix of it of 4 characters or more, which is how
  servers quote a key they refuse.

Every mask is ``***``. The patterns are linear (no nested quantifiers over the same
characters, and a name or run is matched only from its start), so masking a long text cannot
hang: 100,000 adversarial characters take milliseconds. Over-masking is the accepted error:
a random-looking identifier or a header such as ``X-Tenant`` is shown as ``***`` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

MASK = "***"
MIN_FRAGMENT = 4  # a shorter piece of a key says nothing an attacker can use

# words that make a name secret wherever they appear in it (after separators are removed)
_STEMS = re.compile(
    r"passw(?:or)?d|passphrase|passcode|pwd|secret|token(?!s|iz)|apikey|accesskey|privatekey|"
    r"credential|signature|cookie|authorization|bearer|sessionid|jwt"
)
# words that make a name secret when they are a whole word of it (``db_pass``, ``X-Api-Key``)
_WORDS = frozenset(
    {"pass", "key", "keys", "auth", "cred", "creds", "sig", "session", "private", "otp", "pin"}
    | {"sas"}  # an Azure shared access signature
)
# a last word saying the value is about a secret, not the secret: a variable's name, a path...
_META = frozenset(
    {
        "env", "var", "variable", "file", "path", "dir", "url", "uri", "endpoint", "type",
        "kind", "name", "id", "ids", "length", "len", "size", "count", "limit", "max", "min",
        "ttl", "expiry", "expires", "timeout", "header", "field", "error", "exception", "mode",
        "method", "scheme",
    }
)  # fmt: skip
# the same words in Chinese: 密码 password, 口令 passphrase, 密钥/秘钥 key, 令牌 token, 凭证
_CJK = ("密码", "口令", "密钥", "秘钥", "令牌", "凭证", "凭据")
# a first word saying the value is a number of them: ``max_token``, ``num_keys``
_COUNTS = frozenset({"max", "min", "num", "n", "count", "total"})
_HARMLESS_HEADERS = frozenset(
    {
        "accept", "accept-charset", "accept-encoding", "accept-language", "cache-control",
        "connection", "content-language", "content-type", "pragma", "user-agent",
    }
)  # fmt: skip
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _NAME_WORDS.findall(name)]


def secret_name(name: str) -> bool:
    """Whether a key, option, parameter or header named ``name`` holds a secret (see above):
    ``password``, ``db_pass``, ``apiKey``, ``api-key``, ``X-Api-Key``, ``access_token``,
    ``Authorization``, ``Cookie`` yes; ``api_key_env``, ``max_tokens``, ``key_id`` no."""
    if any(word in name for word in _CJK):
        return True
    words = _words(name)
    if not words or (len(words) > 1 and (words[-1] in _META or words[0] in _COUNTS)):
        return False
    return bool(_STEMS.search("".join(words))) or any(w in _WORDS for w in words)


def headers_name(name: str) -> bool:
    """Whether a table named ``name`` holds HTTP headers (``headers``, ``extra_headers``)."""
    words = _words(name)
    return bool(words) and words[-1] in ("headers", "header")


def harmless_header(name: str) -> bool:
    """A standard header whose value is never a credential (``Content-Type``, ``Accept``...):
    the only header values shown; every other one is masked."""
    return name.strip().lower().replace("_", "-") in _HARMLESS_HEADERS


# ---- URLs ---------------------------------------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_URL_IN_TEXT = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")


def _first(text: str, chars: str, start: int = 0) -> int:
    found = [i for c in chars if (i := text.find(c, start)) >= 0]
    return min(found) if found else len(text)


def _split_authority(rest: str) -> tuple[int, int]:
    """``(at, end)`` in the text after ``scheme://``: where the user info ends (-1 when there
    is none) and where the authority ends."""
    end = _first(rest, "/?#")
    at = rest.rfind("@", 0, end)
    if at >= 0:
        return at, end
    colon = rest.find(":", 0, end)
    later = rest.find("@", end, _first(rest, " "))
    port = rest[colon + 1 : end]
    if colon >= 0 and later >= 0 and not port.isdigit() and not rest.startswith("["):
        # ``user:pa/ss@host``: a password with an unencoded '/', '?' or '#'
        end = _first(rest, "/?#", later + 1)
        return rest.rfind("@", 0, end), end
    return -1, end


def _mask_params(text: str, sep: str) -> str:
    """``a=1&password=x`` with every secret-named value masked, and any token in a value."""
    out = []
    for part in text.split(sep):
        name, eq, value = part.partition("=")
        if eq and value and secret_name(unquote(name)):
            out.append(f"{name}={MASK}")
        else:
            out.append(mask_tokens(part))
    return sep.join(out)


def mask_url(url: str) -> str:
    """The URL with its password (up to the last ``@`` of the authority) and the value of
    every secret-named query or fragment parameter replaced by ``***``; a user name that looks
    like a token is masked too. Host, port, path and other parameters stay as they are."""
    m = _SCHEME.match(url)
    if m is None:
        return url
    rest = url[m.end() :]
    at, end = _split_authority(rest)
    shown = url[: m.end()]
    if at >= 0:
        user, colon, password = rest[:at].partition(":")
        user = MASK if mask_tokens(user) != user else user
        shown += f"{user}:{MASK}@" if password else f"{user}{colon}@"
    shown += rest[at + 1 : end]
    tail = rest[end:]
    path, hash_, fragment = tail.partition("#")
    path, question, query = path.partition("?")
    shown += mask_tokens(path)
    if question:
        shown += "?" + _mask_params(query, "&")
    if hash_:
        shown += "#" + _mask_params(fragment, "&")
    return shown


def url_password(url: str) -> str:
    """The password of the URL's user info (up to the last ``@``), or ``""``."""
    m = _SCHEME.match(url)
    if m is None:
        return ""
    rest = url[m.end() :]
    at, _ = _split_authority(rest)
    return rest[:at].partition(":")[2] if at >= 0 else ""


def url_secrets(url: str) -> list[str]:
    """The secret parts of a URL ``mask_url`` hides: its password, secret-named parameter
    values. Empty when the URL holds none."""
    m = _SCHEME.match(url)
    if m is None:
        return []
    rest = url[m.end() :]
    _, end = _split_authority(rest)
    found = [url_password(url)]
    query = rest[end:].partition("#")
    for params in (query[0].partition("?")[2], query[2]):
        for part in params.split("&"):
            name, eq, value = part.partition("=")
            if eq and value and secret_name(unquote(name)):
                found.append(value)
    return [f for f in found if f]


# ---- free text ------------------------------------------------------------------------------

_TRUNCATED = r"(?:[A-Za-z0-9_-]|\*|\.{2,}|…)"  # a server shows sk-LiveM...1d2e or sk-Li*****2e
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_.-])(?:"
    rf"(?:sk|rk)[-_]{_TRUNCATED}{{4,}}"  # OpenAI, Anthropic, Stripe and many OpenAI-alikes
    r"|(?:gh[pousr]_|github_pat_|glpat-|xox[abprse]-|hf_|npm_|pypi-)[A-Za-z0-9_-]{8,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{12,}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_-]{20,}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"  # a JWT
    r")"
)
_SCHEME_CREDENTIAL = re.compile(
    r"\b((?i:bearer)\s+)[A-Za-z0-9._~+/=*:-]+|\b((?i:basic)\s+)[A-Za-z0-9+/]{8,}={0,2}"
)
_RUN = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/-]{24,}={0,2}")
_PAIR = re.compile(
    r"""(?<![A-Za-z0-9_.-])(?P<q>["']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P=q)"""
    r"""(?P<sep>[ \t]*[:=][ \t]*)"""
    r"""(?P<value>"(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?|[^\s&;,'"{}()\[\]]+)"""
)


def _random(run: str) -> bool:
    # random keys mix cases and digits; words, identifiers, ids and hex digests do not
    upper = sum(c.isupper() for c in run)
    lower = sum(c.islower() for c in run)
    digits = sum(c.isdigit() for c in run)
    return upper >= 2 and lower >= 2 and digits >= 2 and len(set(run)) >= 12


def _mask_run(m: re.Match[str]) -> str:
    run = m[0]
    if run.startswith("/"):  # a file path: judge each of its parts (base64 never starts so)
        return "/".join(MASK if len(p) >= 24 and _random(p) else p for p in run.split("/"))
    return MASK if _random(run) else run


def _mask_pair(m: re.Match[str], *, outer: bool = True) -> str:
    value = m["value"]
    quote = value[0] if value[:1] in ("'", '"') else ""
    name = f"{m['q']}{m['name']}{m['q']}{m['sep']}"
    if secret_name(m["name"]) and not value.startswith("//"):
        return f"{name}{quote}{MASK}{quote}"
    if outer and quote:  # ``url = "host=db password=x"``: the pairs inside a quoted value
        inner = _PAIR.sub(lambda n: _mask_pair(n, outer=False), value[1:])
        return f"{name}{quote}{inner}"
    return m[0]


def _mask_schemes(text: str) -> str:
    return _SCHEME_CREDENTIAL.sub(lambda m: (m[1] or m[2]) + MASK, text)


def mask_tokens(text: str) -> str:
    """``text`` with every token-shaped secret masked: scheme credentials (``Bearer ...``),
    provider-prefixed and truncated keys, long high-entropy runs. Names are not looked at."""
    text = _PREFIXED.sub(MASK, _mask_schemes(text))
    return _RUN.sub(_mask_run, text)


def mask_text(text: str, known: Iterable[str] = (), *, fragments: bool = False) -> str:
    """``text`` with every secret masked: the ``known`` values (and with ``fragments`` every
    prefix and suffix of 4+ characters of them), URL passwords and secret parameters,
    secret-named ``name=value`` or ``name: value`` pairs, and token-shaped secrets."""
    known = sorted({k for k in known if k.strip()}, key=len, reverse=True)
    for value in known:
        text = text.replace(value, MASK)
    text = _URL_IN_TEXT.sub(lambda m: mask_url(m[0]), text)
    text = _mask_schemes(text)  # before pairs: ``Authorization: Bearer x`` keeps no x
    text = _PAIR.sub(_mask_pair, text)
    text = mask_tokens(text)
    if fragments:  # last: a fragment inside a token-shaped key goes with the whole token
        for value in known:
            for n in range(len(value) - 1, MIN_FRAGMENT - 1, -1):
                text = text.replace(value[:n], MASK).replace(value[-n:], MASK)
    return text


def mask_data(value: Any, name: str = "", *, header: bool = False) -> Any:
    """JSON-like data with secrets masked: the value of a secret-named key (a number too; a
    boolean is kept, it holds no secret), every header value but a harmless one under a
    ``headers`` table, and every string by ``mask_text``. Keys are kept."""
    if isinstance(value, Mapping):
        inner = headers_name(name)
        return {k: mask_data(v, str(k), header=inner) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_data(v, name, header=header) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if secret_name(name) or (header and not harmless_header(name)):
        return MASK
    return mask_text(value) if isinstance(value, str) else value


def secret_values(value: Any, name: str = "", *, header: bool = False) -> list[str]:
    """The texts ``mask_data`` would hide entirely: to mask them where they are quoted."""
    if isinstance(value, Mapping):
        inner = headers_name(name)
        return [s for k, v in value.items() for s in secret_values(v, str(k), header=inner)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in secret_values(v, name, header=header)]
    if isinstance(value, bool) or value is None:
        return []
    if secret_name(name) or (header and not harmless_header(name)):
        return [str(value)]
    return url_secrets(value) if isinstance(value, str) else []
