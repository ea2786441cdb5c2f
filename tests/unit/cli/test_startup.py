"""What starting ``charter`` imports: nothing heavy for ``--version``/``--help``, no storage,
model or server library for ``validate``; and the lazy command table agrees with the modules.

Each import check runs in a fresh interpreter (``sys.modules`` of the test process already holds
everything) and compares module names, never times: the timings are in
``benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import charter.cli
import charter.cli.main as cli_main
from charter.cli import common
from charter.cli.main import COMMANDS, Command, load, main

ROOT = Path(__file__).resolve().parents[3]

# libraries some command needs, none of which the start of every command may pay for
HEAVY = frozenset(
    {
        "sqlalchemy",
        "sqlmodel",
        "numpy",
        "lancedb",
        "pyarrow",
        "fastapi",
        "uvicorn",
        "httpx",
        "llama_cpp",
        "bm25s",
        "rjieba",
        "cn2an",
        "rich",
    }
)
# what compiling needs, which --version and --help do not
COMPILER = frozenset({"pydantic", "lark", "jsonschema", "jsonschema_rs", "yaml"})


def imported_after(code: str, cache: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` in the repository."""
    script = f"import sys\n{code}\nprint('\\n' + ' '.join(sorted(sys.modules)))"
    env = {**os.environ, "CHARTER_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.splitlines()[-1].split())


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def cli_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("charter.cli")}


RUN = "from charter.cli.main import main\nassert main({argv!r}) == 0"


@pytest.mark.parametrize(
    "code",
    [
        "import charter.cli.main",
        RUN.format(argv=["--version"]),
        RUN.format(argv=["--help"]),
    ],
    ids=["import", "--version", "--help"],
)
def test_starting_imports_no_command(code: str, tmp_path: Path) -> None:
    modules = imported_after(code, tmp_path)
    assert tops(modules) & (HEAVY | COMPILER) == set()
    assert cli_modules(modules) == {"charter.cli", "charter.cli.main"}


def test_validate_without_faq_imports_no_store_model_or_server(tmp_path: Path) -> None:
    packs = [str(ROOT / "rulesets" / name) for name in ("uncertainty", "zh-customer-service")]
    modules = imported_after(RUN.format(argv=["validate", "--no-cache", *packs]), tmp_path)
    assert tops(modules) & HEAVY == set()
    assert cli_modules(modules) == {
        "charter.cli",
        "charter.cli.main",
        "charter.cli.core",
        "charter.cli.common",
        "charter.cli.validate",
    }


@pytest.mark.slow  # whole charter processes (about 2.5 s)
def test_validate_from_the_cache_does_not_load_the_word_cutter(tmp_path: Path) -> None:
    """A pack with a FAQ compiles its index with rjieba; loading it from the cache does not."""
    code = RUN.format(argv=["validate", str(ROOT / "domains" / "ecommerce")])
    assert "rjieba" in tops(imported_after(code, tmp_path))  # compiled, then cached
    assert tops(imported_after(code, tmp_path)) & HEAVY == set()


@pytest.mark.slow  # whole charter processes (about 2 s)
def test_validating_the_shipped_packs_does_not_load_cn2an(tmp_path: Path) -> None:
    """Templates render 大写 amounts and rules read them back (charter_zh.rmb) without cn2an
    and the text-processing package it imports (~0.1 s of every cold validate)."""
    code = RUN.format(argv=["validate", "--no-cache", "domains", "rulesets"])
    assert tops(imported_after(code, tmp_path)) & {"cn2an", "proces"} == set()


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").split("\n\n")[0].split())


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_the_table_has_each_commands_own_help(command: Command) -> None:
    assert _first_paragraph(load(command).help) == command.help


def test_the_table_lists_every_command_its_modules_define() -> None:
    for command in COMMANDS:
        load(command)
    assert set(cli_main._LOADED) == {c.name for c in COMMANDS}


def test_help_lists_every_command_in_table_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out.split("Commands:\n")[1].splitlines()
    assert [line.split()[0] for line in listed] == [c.name for c in COMMANDS]
    assert listed[0] == "  validate    Load, schema-check and compile packs."
    assert (
        listed[4] == "  plugins     List plugins: distribution, version, status, and what each..."
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["validat"], "Error: No such command 'validat'. Did you mean 'validate'?"),
        (["nope"], "Error: No such command 'nope'."),
        (["goals", "nope"], "Error: No such command 'nope'."),
    ],
)
def test_unknown_commands_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == message


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (None, "ModuleNotFoundError: No module named 'charter_cmd_under_test'"),
        ("raise KeyError('setting')", "KeyError: 'setting'"),  # not "No such command"
    ],
    ids=["missing", "raises"],
)
def test_a_command_whose_module_fails_to_import_is_an_internal_error(
    source: str | None,
    error: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if source is not None:
        (tmp_path / "charter_cmd_under_test.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    broken = Command("broken", "charter_cmd_under_test", "Broken.")
    monkeypatch.setitem(cli_main._BY_NAME, "broken", broken)
    assert main(["broken"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"charter: internal error: {error}\n")
    log = Path(err.split("the full traceback is in ")[1].split(";")[0])
    assert error in log.read_text(encoding="utf-8")
    log.unlink()
    assert main(["--version"]) == 0  # the other commands are unaffected


def test_loading_the_plugins_imports_no_compiler(tmp_path: Path) -> None:
    """The built-in plugins register objects whose implementations load when first used."""
    modules = imported_after(
        "from charter.plugins.host import default_host\ndefault_host()", tmp_path
    )
    assert tops(modules) & (HEAVY | COMPILER) == set()
    assert "charter.reflect.degenerate" not in modules


def test_exit_codes_agree_with_common() -> None:
    assert (charter.cli.EXIT_OK, charter.cli.EXIT_USER) == (common.EXIT_OK, common.EXIT_USER)
    assert (charter.cli.EXIT_USAGE, charter.cli.EXIT_INTERNAL) == (
        common.EXIT_USAGE,
        common.EXIT_INTERNAL,
    )


def test_no_plugins_is_reset_by_every_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--no-plugins", "schema"]) == 0
    assert common.STATE.no_plugins is True
    assert main(["--version"]) == 0
    assert common.STATE.no_plugins is False
