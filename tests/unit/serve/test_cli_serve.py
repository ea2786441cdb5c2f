"""``charter serve`` refuses to start what cannot serve: exit 1 with the diagnostics, before
uvicorn starts. (A server that runs is tests/acceptance/test_serve_http.py.)"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from charter.cli.serve import config_dir
from tests.support.cli import Run, RunCharter
from tests.support.serve import ROOT

TENANT = '[[serve.tenants]]\nname = "acme"\ntoken_env = "TOKEN_ACME"\n'
SCRIPTED = f'[model]\nbackend = "scripted"\n[model.options]\ndefault = "好的"\n[agent]\ndomain = "{ROOT / "domains" / "ecommerce"}"\n'


@pytest.fixture(autouse=True)
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("CHARTER_") and name != "CHARTER_CACHE_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("CHARTER_DATABASE_URL", f"sqlite:///{tmp_path / 'charter.db'}")
    monkeypatch.setenv("CHARTER_NARRATIVE_PATH", str(tmp_path / "lance"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(here: Path, text: str) -> None:
    (here / "charter.toml").write_text(text, encoding="utf-8")


def test_no_tenant(here: Path, charter: RunCharter) -> None:
    write(here, SCRIPTED)
    assert charter("serve") == Run(
        1,
        "",
        "charter.toml: CH409 charter serve needs at least one [[serve.tenants]]\n"
        '    hint: add [[serve.tenants]] with name = "..." and token_env = "..."\n',
    )


def test_a_token_that_is_not_set(here: Path, charter: RunCharter) -> None:
    write(here, SCRIPTED + TENANT)
    run = charter("serve")
    assert run.code == 1
    assert run.err.startswith("charter.toml:9:1: CH407 tenant 'acme': $TOKEN_ACME is not set\n")


def test_a_tenant_name_with_the_separator(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN_ACME", "t")
    write(here, SCRIPTED + TENANT.replace('"acme"', '"acme:eu"'))
    run = charter("serve")
    assert run.code == 1
    assert run.err.startswith(
        "charter.toml:8:1: CH403 serve.tenants[0].name must not contain ':'\n"
    )


def test_an_unknown_backend(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN_ACME", "t")
    write(
        here, SCRIPTED.replace('"scripted"', '"nosuch"').replace('default = "好的"\n', "") + TENANT
    )
    run = charter("serve")
    assert (run.code, run.out) == (1, "")
    assert run.err.startswith(
        "charter serve: cannot start the agent: no installed plugin registers the model "
        "backend 'nosuch' (installed: "
    )


def test_an_option_the_backend_refuses(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN_ACME", "t")
    write(here, SCRIPTED.replace("default =", "defualt =") + TENANT)
    run = charter("serve")
    assert run == Run(
        1,
        "",
        "charter serve: cannot start the agent: scripted backend: unknown option 'defualt'; "
        "did you mean 'default'?\n",
    )


def test_an_encrypting_pack_without_a_memory_key(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN_ACME", "t")
    write(here, SCRIPTED + TENANT)
    run = charter("serve")
    assert (run.code, run.out) == (1, "")
    assert run.err.startswith(
        "charter serve: cannot start the agent: no memory encryption key: the memory policy "
        "encrypts values at L3, so set the environment variable CHARTER_MEMORY_KEY"
    )


def test_config_must_be_a_configuration_file(here: Path, charter: RunCharter) -> None:
    (here / "other.toml").write_text("", encoding="utf-8")
    assert charter("serve", "--config", "other.toml") == Run(
        2,
        "",
        "charter serve: --config other.toml: not a charter.toml, a pyproject.toml or a directory\n",
    )


def test_config_dir(here: Path) -> None:
    (here / "sub").mkdir()
    (here / "sub" / "charter.toml").write_text("", encoding="utf-8")
    assert config_dir(None) == Path.cwd()
    assert config_dir(here / "sub") == here / "sub"
    assert config_dir(here / "sub" / "charter.toml") == here / "sub"
    assert config_dir(here / "missing.toml") is None


def test_the_config_of_another_directory(
    here: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    (here / "sub").mkdir()
    (here / "sub" / "charter.toml").write_text(SCRIPTED, encoding="utf-8")
    run = charter("serve", "--config", "sub/charter.toml")
    assert run.code == 1
    assert "CH409" in run.err


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The factory configures logging for the process: put it back for the other tests."""
    names = ("charter", "uvicorn", "uvicorn.error")
    saved = {
        n: (lg.handlers[:], lg.level, lg.propagate, lg.disabled)
        for n in names
        for lg in [logging.getLogger(n)]
    }
    yield
    for n, (handlers, level, propagate, disabled) in saved.items():
        lg = logging.getLogger(n)
        lg.handlers[:] = handlers
        lg.setLevel(level)
        lg.propagate, lg.disabled = propagate, disabled


@pytest.mark.usefixtures("restore_logging")
def test_the_uvicorn_factory(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from charter.serve.factory import from_environment

    write(here, SCRIPTED)
    with pytest.raises(RuntimeError) as info:
        from_environment()
    assert str(info.value) == (
        "the configuration cannot serve:\n"
        "charter.toml: CH409 charter serve needs at least one [[serve.tenants]]"
    )
    write(here, SCRIPTED + TENANT)
    monkeypatch.setenv("TOKEN_ACME", "t")
    app = from_environment()  # the agent is built when the application starts, not here
    assert app.title == "Charter"
    assert logging.getLogger("charter").handlers  # JSON lines, not uvicorn's format
