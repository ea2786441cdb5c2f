"""What the llama.cpp backend raises. Every message says what to do next, so the CLI can print
it as it is instead of a traceback."""

from __future__ import annotations


class LlamaCppError(RuntimeError):
    """Base of every error this plugin raises on purpose."""


class BackendUnavailable(LlamaCppError):
    """llama-cpp-python (or the package of the default model) is not installed."""


class ModelFileError(LlamaCppError):
    """The model file is missing, unreadable, not a GGUF file, or llama.cpp refused it."""


class OptionsError(LlamaCppError, ValueError):
    """An unknown option or a value of the wrong type in the backend's configuration."""


class GrammarError(LlamaCppError, ValueError):
    """llama.cpp could not parse a GBNF grammar."""


class PromptError(LlamaCppError, ValueError):
    """The conversation cannot be turned into a prompt (the model's chat template rejected it,
    or it does not fit in the context window)."""
