"""The LLM backends Charter registers itself, through the same hook a plugin uses.

* ``openai`` — any OpenAI-compatible chat completions server (``charter.llm.openai``);
* ``scripted`` — replays given answers, for tests and ablation runs (``charter.llm.scripted``).

Registration is cheap: each ``create`` imports its module, so listing plugins never loads the
HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from charter.contracts.markers import hookimpl
from charter.contracts.models import LLM, LLMBackend


class OpenAIBackend:
    name = "openai"

    def create(self, options: Mapping[str, Any]) -> LLM:
        from charter.llm.openai import create

        return create(options)


class ScriptedBackend:
    name = "scripted"

    def create(self, options: Mapping[str, Any]) -> LLM:
        from charter.llm.scripted import create

        return create(options)


_BACKENDS: tuple[LLMBackend, ...] = (OpenAIBackend(), ScriptedBackend())


@hookimpl
def charter_register_llm_backends() -> Sequence[LLMBackend]:
    return list(_BACKENDS)
