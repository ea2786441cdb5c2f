"""The ``llamacpp`` plugin: registers the llama.cpp LLM backend.

Registration stays cheap (no llama_cpp import, no model): ``create(options)`` assembles the
default model if needed and loads it, when a configuration picks ``llamacpp``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from charter.contracts.models import LLMBackend
from charter.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from charter_llamacpp.llm import LlamaCppLLM


class LlamaCppBackend:
    """``create({"model_path": ..., "n_ctx": ..., "n_threads": ..., "seed": ...,
    "logprobs": ...})``; see ``LlamaOptions`` for every option. The same options give the same
    ``LlamaCppLLM`` object; the model file is loaded once per process."""

    name = "llamacpp"

    def create(self, options: Mapping[str, Any]) -> LlamaCppLLM:
        # imported here: numpy and the model code are only needed once a model is wanted
        from charter_llamacpp.llm import get_llm
        from charter_llamacpp.options import parse_options

        return get_llm(parse_options(options))


BACKEND = LlamaCppBackend()


@hookimpl
def charter_register_llm_backends() -> Sequence[LLMBackend]:
    return [BACKEND]
