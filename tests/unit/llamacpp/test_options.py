"""The ``llamacpp`` backend's options: defaults, normalisation and the errors a typo gets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from charter_llamacpp.errors import OptionsError
from charter_llamacpp.options import OPTION_NAMES, LlamaOptions, parse_options


def test_defaults() -> None:
    assert parse_options({}) == LlamaOptions(
        model_path=None,
        n_ctx=2048,
        n_threads=None,
        n_batch=512,
        seed=None,
        logprobs=False,
        top_logprobs=5,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        repeat_penalty=1.0,
        chat_template=None,
        verbose=False,
    )


def test_values_are_normalised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    got = parse_options(
        {
            "model_path": "m.gguf",
            "n_ctx": 512,
            "n_threads": 2,
            "seed": 7,
            "logprobs": True,
            "top_p": 1,
        }
    )
    assert got == LlamaOptions(
        model_path=tmp_path.resolve() / "m.gguf",
        n_ctx=512,
        n_threads=2,
        seed=7,
        logprobs=True,
        top_p=1.0,
    )
    assert parse_options({"model_path": None, "seed": None, "n_threads": None}) == LlamaOptions()
    assert parse_options({"model_path": ""}) == LlamaOptions()  # charter.toml's unset model.path


def test_equal_options_hash_equal() -> None:
    assert hash(parse_options({"seed": 1})) == hash(parse_options({"seed": 1}))


def test_unknown_option_names_the_valid_ones() -> None:
    with pytest.raises(OptionsError) as e:
        parse_options({"n_tread": 2, "model": "x"})
    assert str(e.value) == (
        "unknown option(s) for the llamacpp backend: model, n_tread (valid: model_path, n_ctx, "
        "n_threads, n_batch, seed, logprobs, top_logprobs, top_k, top_p, min_p, repeat_penalty, "
        "chat_template, verbose)"
    )
    assert OPTION_NAMES[0] == "model_path"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_ctx": "2048"}, "option n_ctx must be an integer, got '2048'"),
        ({"n_ctx": True}, "option n_ctx must be an integer, got True"),
        ({"n_ctx": 0}, "option n_ctx must be at least 1, got 0"),
        ({"n_ctx": None}, "option n_ctx cannot be empty"),
        ({"logprobs": ""}, "option logprobs must be true or false, got ''"),
        ({"n_threads": 0}, "option n_threads must be at least 1, got 0"),
        ({"seed": -1}, "option seed must be at least 0, got -1"),
        ({"logprobs": "yes"}, "option logprobs must be true or false, got 'yes'"),
        ({"top_p": "0.9"}, "option top_p must be a number, got '0.9'"),
        ({"model_path": 3}, "option model_path must be a file path, got 3"),
        ({"chat_template": " "}, "option chat_template must be a Jinja template text, got ' '"),
    ],
)
def test_bad_values(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionsError) as e:
        parse_options(options)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)
