"""``[model.options]``: free-form options handed to the model backend's ``create`` as they are."""

from __future__ import annotations

import datetime as dt
import json

from charter.config.show import render_json, render_toml
from tests.unit.config.helpers import Load, headlines

SCRIPTED = """\
[model]
backend = "scripted"
max_tokens = 64
[model.options]
default = "好的"
script = { "订单" = "已查询" }
answers = ["一", "二"]
"""


def test_options_are_read_as_they_are(load: Load) -> None:
    config, diags = load(SCRIPTED)
    assert diags == []
    assert config.model.backend == "scripted"
    assert config.model.options == {
        "default": "好的",
        "script": {"订单": "已查询"},
        "answers": ["一", "二"],
    }
    assert config.source("model.options.default") == "charter.toml:5"
    assert config.source("model.options.answers") == "charter.toml:7"


def test_no_options_by_default(load: Load) -> None:
    config, diags = load("[model]\nbackend = 'scripted'\n")
    assert (config.model.options, diags) == ({}, [])
    assert "[model.options]" not in render_toml(config)
    assert json.loads(render_json(config))["config"]["model"]["options"] == {}


def test_options_must_be_a_table(load: Load) -> None:
    config, diags = load("[model]\noptions = 3\n")
    assert headlines(diags) == [
        "charter.toml:2:1: CH402 model.options must be a table, not an integer"
    ]
    assert diags[0].hint == "write [model.options] and the options"
    assert config.model.options == {}


def test_a_misspelt_options_table_is_pointed_to(load: Load) -> None:
    _, diags = load("[model]\noption = 3\n")
    assert headlines(diags) == [
        "charter.toml:2:1: CH401 unknown setting 'model.option' (ignored) (warning)"
    ]
    assert diags[0].hint == "did you mean 'options'?"


def test_a_secret_named_option_is_a_warning_and_masked(load: Load) -> None:
    config, diags = load('[model.options]\napi_key = "S3CRET"\ntimeout = 5\n')
    assert headlines(diags) == [
        "charter.toml:2:1: CH406 model.options.api_key is a secret written in the file (warning)"
    ]
    # still passed to the backend: the warning says where it should live, it does not break
    assert config.model.options == {"api_key": "S3CRET", "timeout": 5}
    for text in (repr(config), str(config.masked()), render_toml(config), render_json(config)):
        assert "S3CRET" not in text
    assert config.masked()["model"]["options"] == {"api_key": "***", "timeout": 5}
    (text,) = config.redacted_sources().values()
    assert "S3CRET" not in text


def test_show_prints_an_options_table_with_sources(load: Load) -> None:
    config, _ = load(
        SCRIPTED.replace('answers = ["一", "二"]\n', 'answers = ["一", "二"]\n"a b" = 1979-05-27\n')
    )
    shown = render_toml(config)
    block = shown.split("[model.options]\n", 1)[1].split("\n\n", 1)[0]
    # aligned by characters, as every other table is
    assert block.splitlines() == [
        'default = "好的"           # charter.toml:5',
        'script = {"订单" = "已查询"}  # charter.toml:6',
        'answers = ["一", "二"]     # charter.toml:7',
        '"a b" = 1979-05-27       # charter.toml:8',
    ]
    assert config.model.options["a b"] == dt.date(1979, 5, 27)
    sources = json.loads(render_json(config))["sources"]
    assert sources["model.options.default"] == "charter.toml:5"
    assert json.loads(render_json(config))["config"]["model"]["options"]["a b"] == "1979-05-27"
