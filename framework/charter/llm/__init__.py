"""LLM backends built into Charter (ARCHITECTURE §10), registered by ``charter.llm.backends``.

* ``openai`` (``charter.llm.openai``): any OpenAI-compatible chat completions server;
* ``scripted`` (``charter.llm.scripted``): replays given answers, for tests and ablation runs.

Only the exceptions are imported here: registering the backends must stay cheap, and the HTTP
client is loaded when a configuration picks ``openai``.
"""

from __future__ import annotations

from charter.llm.errors import LLMBadResponse, LLMError, LLMUnavailable

__all__ = ["LLMBadResponse", "LLMError", "LLMUnavailable"]
