"""The ``llamacpp`` backend's options, checked once when a configuration picks the backend.

A typo in a configuration (``n_tread``) is an ``OptionsError`` naming the valid options rather
than a silently ignored setting.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from charter_llamacpp.errors import OptionsError

DEFAULT_N_CTX = 2048  # charter.config.ModelConfig.n_ctx
DEFAULT_TOP_LOGPROBS = 5


@dataclass(frozen=True)
class LlamaOptions:
    """``model_path``: a GGUF file; None or "" (``charter.toml``'s unset ``model.path``) is the
    bundled Gemma 3 270M Q4_K_M.
    ``n_ctx``: context window in tokens (prompt + answer).
    ``n_threads``: CPU threads; None is llama-cpp-python's default (half the cores, at least 1).
    ``n_batch``: prompt tokens evaluated per batch.
    ``seed``: when set, every call starts its sampler from this seed, so the same prompt and
    settings give the same text; None draws a fresh seed per call (a retry at the same
    temperature then gets a different answer). Greedy decoding (temperature 0) ignores it.
    ``logprobs``: fill ``Completion.logprobs`` (and top-k logprobs and entropies); costs about
    one pass over the vocabulary per generated token, never prompt speed.
    ``top_logprobs``: how many of the most likely tokens' logprobs to keep per generated token.
    ``top_k``, ``top_p``, ``min_p``, ``repeat_penalty``: the sampler, with llama-cpp-python's
    ``create_chat_completion`` defaults.
    ``chat_template``: a Jinja chat template (Hugging Face style) to use instead of the GGUF's
    ``tokenizer.chat_template``; a Gemma GGUF without one (the bundled model has none) gets
    Gemma 3's published template. As with ``create_chat_completion``, the template emits
    ``{{ bos_token }}`` itself if the model wants one.
    ``verbose``: let llama.cpp log to stderr.
    """

    model_path: Path | None = None
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int | None = None
    n_batch: int = 512
    seed: int | None = None
    logprobs: bool = False
    top_logprobs: int = DEFAULT_TOP_LOGPROBS
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    chat_template: str | None = None
    verbose: bool = False


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(LlamaOptions))

_INTS = {"n_ctx": 1, "n_batch": 1, "top_logprobs": 0, "top_k": 0}  # name -> minimum
_FLOATS = ("top_p", "min_p", "repeat_penalty")
_BOOLS = ("logprobs", "verbose")


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionsError(f"option {name} must be an integer, got {value!r}")
    if value < minimum:
        raise OptionsError(f"option {name} must be at least {minimum}, got {value}")
    return value


def parse_options(options: Mapping[str, Any]) -> LlamaOptions:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise OptionsError(
            f"unknown option(s) for the llamacpp backend: {', '.join(unknown)} "
            f"(valid: {', '.join(OPTION_NAMES)})"
        )
    values: dict[str, Any] = {}
    for name, value in options.items():
        # "" is how charter.toml leaves model.path unset
        if value is None or (name == "model_path" and value == ""):
            if name not in ("model_path", "n_threads", "seed", "chat_template"):
                raise OptionsError(f"option {name} cannot be empty")
            values[name] = None
        elif name == "model_path":
            if not isinstance(value, str | os.PathLike):
                raise OptionsError(f"option model_path must be a file path, got {value!r}")
            values[name] = Path(value).expanduser().resolve()
        elif name == "chat_template":
            if not isinstance(value, str) or not value.strip():
                raise OptionsError(
                    f"option chat_template must be a Jinja template text, got {value!r}"
                )
            values[name] = value
        elif name in _INTS:
            values[name] = _int(name, value, _INTS[name])
        elif name == "n_threads":
            values[name] = _int(name, value, 1)
        elif name == "seed":
            values[name] = _int(name, value, 0)
        elif name in _FLOATS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise OptionsError(f"option {name} must be a number, got {value!r}")
            values[name] = float(value)
        elif name in _BOOLS:
            if not isinstance(value, bool):
                raise OptionsError(f"option {name} must be true or false, got {value!r}")
            values[name] = value
    return LlamaOptions(**values)
