"""What an LLM backend raises, so the runtime can tell a backend that is down from one that
answered nonsense.

* ``LLMError``: the base; raised as such for a refusal that retrying cannot fix (HTTP 401,
  404, a request the server rejects, a scripted backend with nothing left to say).
* ``LLMUnavailable``: the backend could not be reached or kept failing (connection refused,
  timeout, HTTP 429 or 5xx after the last retry): worth a fallback, not a bug report.
* ``LLMBadResponse``: the backend answered, but not with something usable (malformed JSON, no
  ``choices``, an answer its grammar forbids).

Messages name the URL and the HTTP status; they never contain an API key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from charter.diagnostics import did_you_mean


class LLMError(RuntimeError):
    """A backend failed to produce a completion."""


class LLMUnavailable(LLMError):
    """The backend could not be reached, timed out or kept failing after its retries."""


class LLMBadResponse(LLMError):
    """The backend answered with something that is not a usable completion."""


def check_option_names(backend: str, options: Mapping[str, Any], known: Iterable[str]) -> None:
    """``ValueError`` naming the first unknown option: a misspelt ``timeout_s`` silently left at
    its default is worse than a configuration that does not load."""
    allowed = tuple(known)
    for key in options:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed)
            raise ValueError(f"{backend} backend: unknown option {key!r}; {hint}")
