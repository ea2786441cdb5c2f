"""Loading: once per process and configuration, and clear errors for bad model files, a missing
llama-cpp-python, or a prompt that does not fit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from charter.contracts.models import Message
from charter_llamacpp.errors import BackendUnavailable, ModelFileError, PromptError
from charter_llamacpp.llm import import_llama_cpp, loaded_models
from charter_llamacpp.plugin import LlamaCppBackend


def test_missing_llama_cpp_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(BackendUnavailable) as e:
        import_llama_cpp()
    assert str(e.value) == (
        "the llamacpp backend needs llama-cpp-python: pip install llama-cpp-python "
        "(it compiles llama.cpp, about 6 minutes on 2 cores)"
    )


@pytest.mark.usefixtures("model_cache")
def test_same_options_same_llm_one_model(model_path: Path) -> None:
    backend = LlamaCppBackend()
    a = backend.create({"n_ctx": 512, "seed": 1})
    assert backend.create({"seed": 1, "n_ctx": 512}) is a
    assert LlamaCppBackend().create({"n_ctx": 512, "seed": 1}) is a
    b = backend.create({"n_ctx": 512, "seed": 2, "logprobs": True})
    assert b is not a and b.model is a.model
    explicit = backend.create({"n_ctx": 512, "seed": 1, "model_path": str(model_path)})
    assert explicit.model is a.model  # the default model is that file
    assert backend.create({"n_ctx": 640}).model is not a.model
    keys = [k for k in loaded_models() if k[0] == model_path and k[1] == 512]
    assert len(keys) == 1
    assert a.model.load_ms > 0


@pytest.mark.usefixtures("llama_cpp")
def test_model_file_errors(tmp_path: Path) -> None:
    backend = LlamaCppBackend()
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelFileError, match=r"^model file not found: "):
        backend.create({"model_path": str(missing)})
    with pytest.raises(ModelFileError, match=r"^model path is not a file: "):
        backend.create({"model_path": str(tmp_path)})
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(ModelFileError) as e:
        backend.create({"model_path": str(text)})
    assert str(e.value) == f"not a GGUF model file (it does not start with 'GGUF'): {text}"


@pytest.mark.usefixtures("model_cache")
def test_truncated_gguf_is_refused_by_llama_cpp(model_path: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    with model_path.open("rb") as f:
        cut.write_bytes(f.read(1 << 20))
    with pytest.raises(ModelFileError) as e:
        LlamaCppBackend().create({"model_path": str(cut)})
    assert str(e.value).startswith(f"llama.cpp could not load {cut}: ")


@pytest.mark.usefixtures("model_cache")
def test_prompt_longer_than_the_context(model_path: Path) -> None:
    llm = LlamaCppBackend().create({"n_ctx": 32})
    chat = [Message("user", "word " * 40)]
    with pytest.raises(PromptError) as e:
        llm.generate(chat, max_tokens=4, temperature=0.0)
    assert str(e.value).startswith("the prompt has ")
    assert str(e.value).endswith(
        " tokens, the context window 32: shorten the prompt or raise the option n_ctx"
    )


@pytest.mark.usefixtures("model_cache")
def test_answer_stops_at_the_context_window() -> None:
    llm = LlamaCppBackend().create({"n_ctx": 32})
    got = llm.generate([Message("user", "Count: one two three")], max_tokens=100, temperature=0.0)
    # llama.cpp runs a context of at least 256, llama-cpp-python's buffers hold the 32 asked for
    assert (got.timings["prompt_tokens"], got.tokens, got.finish_reason) == (14.0, 18, "length")
