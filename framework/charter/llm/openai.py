"""The ``openai`` backend: any server speaking OpenAI's chat completions (vLLM, a llama.cpp
server, LM Studio, OpenAI itself).

Options (``OpenAIOptions.parse``; an unknown or ill-typed option is a ``ValueError``):

* ``base_url`` (required): ``http(s)://host:port``, with or without a trailing ``/v1``; requests
  go to ``<base_url>/v1/chat/completions``.
* ``api_key``, or ``api_key_env`` naming the environment variable holding it (read when the
  backend is created; naming a variable that is unset is an error). Sent as
  ``Authorization: Bearer``; without either, no such header (local servers need none).
* ``model``: sent as ``model``; left out when not given (a llama.cpp server ignores it, vLLM
  and OpenAI need it).
* ``timeout_s`` (60): per attempt, connecting and reading.
* ``headers``: extra HTTP headers, a mapping of strings.
* ``retries`` (2), ``backoff_s`` (0.5), ``max_backoff_s`` (8): HTTP 429 and 5xx, connection
  errors and timeouts are retried up to ``retries`` times, after ``backoff_s``, then twice that,
  and so on, each wait capped at ``max_backoff_s``; a numeric ``Retry-After`` replaces the
  computed wait (capped the same). No jitter: one process talks to its own server.
* ``grammar_field`` (false): send ``generate(grammar=...)`` as the ``grammar`` field of the
  request, which a llama.cpp server applies as GBNF. Other servers have no such field, so
  without the option a grammar raises ``NotImplementedError``.
* ``logprobs`` (false): ask for ``logprobs`` and return
  ``choices[0].logprobs.content[*].logprob`` as ``Completion.logprobs``, for entropy-based
  reflection triggers; a server that sends none gives ``()``.

``Completion.tokens`` is ``usage.completion_tokens``, or the number of logprobs when the server
reports no usage. ``Completion.timings``: ``total_s`` (all attempts and waits), ``request_s``
(the attempt that succeeded), ``attempts``, and a llama.cpp server's own ``timings`` numbers
prefixed ``server_``.

Errors (``charter.llm.errors``) name the method, the URL and the HTTP status, and carry the
server's own error message: ``LLMError`` for a refusal (401, 404, 400...), ``LLMUnavailable``
when retries are exhausted or the server is unreachable, ``LLMBadResponse`` for a body that is
not a chat completion. Their text is masked (``charter.text.masking.mask_text``): the API key, any
prefix or suffix of it of 4 characters or more (OpenAI quotes a refused key as
``sk-LiveM*****1d2e``), the configured credential headers' values, anything token-shaped
(``sk-...``, ``Bearer ...``), and the URL's password and secret parameters. An option error
never echoes a secret option's value either.
"""

from __future__ import annotations

import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.client import HTTPException
from typing import Any

from charter._version import __version__
from charter.contracts.models import Completion, Message
from charter.llm.errors import LLMBadResponse, LLMError, LLMUnavailable, check_option_names
from charter.text.masking import mask_data, mask_text, mask_url, secret_name, secret_values

_OPTIONS = (
    "base_url",
    "api_key",
    "api_key_env",
    "model",
    "timeout_s",
    "headers",
    "retries",
    "backoff_s",
    "max_backoff_s",
    "grammar_field",
    "logprobs",
)
_DETAIL_CHARS = 200  # enough for a server's error message, short enough for a log line


def _bad(message: str) -> ValueError:
    return ValueError(f"openai backend: {message}")


def _number(options: Mapping[str, Any], key: str, default: float, *, zero_ok: bool) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(f"option {key!r} must be a number, not {value!r}")
    if value < 0 or (value == 0 and not zero_ok):
        raise _bad(f"option {key!r} must be {'>= 0' if zero_ok else '> 0'}, not {value!r}")
    return float(value)


def _flag(options: Mapping[str, Any], key: str) -> bool:
    value = options.get(key, False)
    if not isinstance(value, bool):
        raise _bad(f"option {key!r} must be true or false, not {value!r}")
    return value


def _text(options: Mapping[str, Any], key: str) -> str | None:
    value = options.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        shown = type(value).__name__ if secret_name(key) else repr(mask_data(value, key))
        raise _bad(f"option {key!r} must be a non-empty string, not {shown}")
    return value


@dataclass(frozen=True)
class OpenAIOptions:
    base_url: str
    api_key: str | None = field(default=None, repr=False)  # never in a repr, a log or a trace
    model: str | None = None
    timeout_s: float = 60.0
    headers: Mapping[str, str] = field(default_factory=dict)
    retries: int = 2
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    grammar_field: bool = False
    logprobs: bool = False

    @classmethod
    def parse(
        cls, options: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> OpenAIOptions:
        check_option_names("openai", options, _OPTIONS)
        base_url = _text(options, "base_url")
        if base_url is None:
            raise _bad("option 'base_url' is required (e.g. http://127.0.0.1:8080)")
        if not base_url.startswith(("http://", "https://")):
            raise _bad(f"base_url must start with http:// or https://, not {mask_text(base_url)!r}")
        api_key = _text(options, "api_key")
        env_name = _text(options, "api_key_env")
        if api_key is None and env_name is not None:
            api_key = (os.environ if environ is None else environ).get(env_name) or None
            if api_key is None:
                raise _bad(f"api_key_env names {env_name}, which is not set")
        headers = options.get("headers", {})
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            shown = mask_data(headers, "headers")
            raise _bad(f"option 'headers' must map strings to strings, not {shown!r}")
        retries = options.get("retries", 2)
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise _bad(f"option 'retries' must be an integer >= 0, not {retries!r}")
        return cls(
            base_url=base_url,
            api_key=api_key,
            model=_text(options, "model"),
            timeout_s=_number(options, "timeout_s", 60.0, zero_ok=False),
            headers=dict(headers),
            retries=retries,
            backoff_s=_number(options, "backoff_s", 0.5, zero_ok=True),
            max_backoff_s=_number(options, "max_backoff_s", 8.0, zero_ok=True),
            grammar_field=_flag(options, "grammar_field"),
            logprobs=_flag(options, "logprobs"),
        )


class _Retry(Exception):
    """One failed attempt worth another: why, and the server's ``Retry-After`` if any."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _status(code: int, reason: str) -> str:
    try:
        return f"HTTP {code} {HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code} {reason}".rstrip()


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:  # an HTTP date: rare from model servers, the computed wait will do
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


class OpenAIChat:
    """An ``LLM`` over ``POST /v1/chat/completions``. Stateless between calls, so one instance
    may serve many threads. ``sleep`` and ``clock`` are parameters so tests see the waits."""

    def __init__(
        self,
        options: OpenAIOptions,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.options = options
        base = options.base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self._shown_url = mask_url(self.url)  # what messages say: no password in it
        # what is masked in every message, on top of the shapes: the key and its fragments,
        # the values of the configured credential headers
        self._known = tuple(
            s for s in (options.api_key, *secret_values(dict(options.headers), "headers")) if s
        )
        self._sleep = sleep
        self._clock = clock
        self._opener = urllib.request.build_opener()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"charter/{__version__}",
        }
        if options.api_key is not None:
            headers["Authorization"] = f"Bearer {options.api_key}"
        self._headers = {**headers, **options.headers}

    def request_body(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> dict[str, Any]:
        """The JSON object ``generate`` posts."""
        if grammar is not None and not self.options.grammar_field:
            raise NotImplementedError(
                "the openai backend sends a grammar only to a llama.cpp server: "
                "set the option grammar_field"
            )
        body: dict[str, Any] = {}
        if self.options.model is not None:
            body["model"] = self.options.model
        body["messages"] = [{"role": m.role, "content": m.content} for m in messages]
        body["max_tokens"] = max_tokens
        body["temperature"] = temperature
        if stop:
            body["stop"] = list(stop)
        if grammar is not None:
            body["grammar"] = grammar
        if self.options.logprobs:
            body["logprobs"] = True
        return body

    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> Completion:
        body = self.request_body(
            messages, max_tokens=max_tokens, temperature=temperature, stop=stop, grammar=grammar
        )
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        start = self._clock()
        attempts = self.options.retries + 1
        for attempt in range(1, attempts + 1):
            began = self._clock()
            try:
                raw = self._post(data)
            except _Retry as why:
                if attempt == attempts:
                    tries = f"{attempt} attempt{'s' if attempt > 1 else ''}"
                    raise LLMUnavailable(
                        self._redact(f"POST {self._shown_url}: {why.reason} ({tries})")
                    ) from None
                self._sleep(self._wait(attempt, why.retry_after))
                continue
            end = self._clock()
            timings = {
                "total_s": end - start,
                "request_s": end - began,
                "attempts": float(attempt),
            }
            return self._completion(raw, timings)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        wanted = self.options.backoff_s * 2 ** (attempt - 1) if retry_after is None else retry_after
        return min(wanted, self.options.max_backoff_s)

    def _redact(self, text: str) -> str:
        return mask_text(text, self._known, fragments=True)

    def _detail(self, raw: bytes) -> str:
        """The server's own error message: OpenAI and llama.cpp nest it in ``error``, vLLM
        puts it at the top; anything else is shown as text, shortened."""
        text = raw.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            inner = data.get("error")
            found = inner.get("message") if isinstance(inner, dict) else data.get("message")
            if isinstance(found, str):
                text = found
            elif isinstance(inner, str):
                text = inner
        text = " ".join(self._redact(text).split())
        return text[:_DETAIL_CHARS] + ("..." if len(text) > _DETAIL_CHARS else "")

    def _post(self, data: bytes) -> bytes:
        """One attempt: the body of a 2xx answer; ``_Retry`` for what another attempt may fix,
        ``LLMError`` for what it will not."""
        request = urllib.request.Request(self.url, data=data, headers=self._headers, method="POST")
        timeout = self.options.timeout_s
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as e:
            status = _status(e.code, str(e.reason))
            try:
                detail = self._detail(e.read())
            except (OSError, HTTPException):  # the status says enough
                detail = ""
            said = f"{status}: {detail}" if detail else status
            if e.code == 429 or e.code >= 500:
                raise _Retry(said, _retry_after(e.headers.get("Retry-After"))) from None
            raise LLMError(f"POST {self._shown_url}: {said}") from None
        except TimeoutError:
            raise _Retry(f"no answer within {timeout:g} s") from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                raise _Retry(f"no answer within {timeout:g} s") from None
            raise _Retry(f"connection failed: {self._redact(str(e.reason))}") from None
        except (OSError, HTTPException) as e:  # reset or cut short while reading the answer
            raise _Retry(f"connection failed: {self._redact(str(e) or type(e).__name__)}") from None

    def _completion(self, raw: bytes, timings: dict[str, float]) -> Completion:
        where = f"POST {self._shown_url}: HTTP 200 OK but"
        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError:
            shown = " ".join(self._redact(raw.decode("utf-8", errors="replace")).split())
            raise LLMBadResponse(
                f"{where} the body is not JSON: {shown[:_DETAIL_CHARS]!r}"
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(choice, dict) or not isinstance(text, str):
            raise LLMBadResponse(f"{where} the answer has no choices[0].message.content")
        logprobs = self._logprobs(choice, where) if self.options.logprobs else ()
        usage = data.get("usage")
        used = usage.get("completion_tokens") if isinstance(usage, dict) else None
        tokens = used if isinstance(used, int) and not isinstance(used, bool) else len(logprobs)
        server = data.get("timings")
        if isinstance(server, dict):
            for key, value in server.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    timings[f"server_{key}"] = float(value)
        return Completion(text=text, tokens=tokens, logprobs=logprobs, timings=timings)

    @staticmethod
    def _logprobs(choice: Mapping[str, Any], where: str) -> tuple[float, ...]:
        block = choice.get("logprobs")
        content = block.get("content") if isinstance(block, dict) else None
        if content is None:
            return ()
        if not isinstance(content, list):
            raise LLMBadResponse(f"{where} choices[0].logprobs.content is not a list")
        out: list[float] = []
        for i, entry in enumerate(content):
            value = entry.get("logprob") if isinstance(entry, dict) else None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise LLMBadResponse(
                    f"{where} choices[0].logprobs.content[{i}].logprob is not a number"
                )
            out.append(float(value))
        return tuple(out)


def create(options: Mapping[str, Any]) -> OpenAIChat:
    """What the ``openai`` backend's ``create`` returns."""
    return OpenAIChat(OpenAIOptions.parse(options))
