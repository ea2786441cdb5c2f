"""``charter fmt`` as a pack author and CI use it: what it writes, prints and exits with.

The command is run through its own module (``run()``, and a typer app with its ``register``
hook for the options); the shipped packs are formatted already, and a copy of them laid out
four spaces deep formats back to them and compiles to the same rules, cases, goals, skills,
responses and conversations at every step.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer

from charter.cli import common
from charter.cli import fmt as fmt_cmd
from charter.compile.api import compile_path
from charter.diagnostics import Location, SourceCache, render_text
from charter.pack.fmt import find_files
from charter.pack.yamlsrc import load_yaml
from charter.plugins.host import default_registry
from tests.unit.pack.relayout import relayout

ROOT = Path(__file__).resolve().parents[2]

PACK = "name: p\nversion: 0.1.0\n"
MESSY = 'rules:\n- id: a\n  check: output contains "x"\n  on_fail: block\n'
TIDY = 'rules:\n  - id: a\n    check: output contains "x"\n    on_fail: block\n'
DIFF = (
    "--- a/p/rules.yaml\n"
    "+++ b/p/rules.yaml\n"
    "@@ -1,4 +1,4 @@\n"
    " rules:\n"
    "-- id: a\n"
    '-  check: output contains "x"\n'
    "-  on_fail: block\n"
    "+  - id: a\n"
    '+    check: output contains "x"\n'
    "+    on_fail: block\n"
)


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """p/pack.yaml in the layout, p/rules.yaml not; the working directory holds p/."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "pack.yaml").write_text(PACK, encoding="utf-8")
    (tmp_path / "p" / "rules.yaml").write_text(MESSY, encoding="utf-8")
    return tmp_path / "p"


def fmt(
    capsys: pytest.CaptureFixture[str], *paths: str, check: bool = False, diff: bool = False
) -> tuple[int, str, str]:
    capsys.readouterr()
    code = fmt_cmd.run([Path(p) for p in paths], check=check, diff=diff)
    out, err = capsys.readouterr()
    return code, out, err


def test_it_rewrites_what_is_not_in_the_layout(pack: Path, capsys: Any) -> None:
    assert fmt(capsys, "p") == (
        0,
        "reformatted p/rules.yaml\n1 file reformatted, 1 file left unchanged\n",
        "",
    )
    assert (pack / "rules.yaml").read_text(encoding="utf-8") == TIDY
    assert (pack / "pack.yaml").read_text(encoding="utf-8") == PACK
    assert fmt(capsys, "p") == (0, "2 files left unchanged\n", "")


def test_the_working_directory_by_default(pack: Path, capsys: Any) -> None:
    assert fmt(capsys) == (
        0,
        "reformatted p/rules.yaml\n1 file reformatted, 1 file left unchanged\n",
        "",
    )


def test_check_writes_nothing_and_fails_on_a_change(pack: Path, capsys: Any) -> None:
    assert fmt(capsys, "p", check=True) == (
        1,
        "would reformat p/rules.yaml\n"
        "1 file would be reformatted, 1 file would be left unchanged\n",
        "",
    )
    assert (pack / "rules.yaml").read_text(encoding="utf-8") == MESSY
    (pack / "rules.yaml").write_text(TIDY, encoding="utf-8")
    assert fmt(capsys, "p", check=True) == (0, "2 files would be left unchanged\n", "")


def test_diff_prints_a_patch_and_the_rest_on_stderr(pack: Path, capsys: Any) -> None:
    summary = "1 file would be reformatted, 1 file would be left unchanged\n"
    assert fmt(capsys, "p", diff=True) == (0, DIFF, summary)
    assert (pack / "rules.yaml").read_text(encoding="utf-8") == MESSY
    assert fmt(capsys, "p", diff=True, check=True) == (1, DIFF, summary)


def test_diff_marks_a_missing_final_newline(pack: Path, capsys: Any) -> None:
    (pack / "pack.yaml").write_text(PACK.removesuffix("\n"), encoding="utf-8")
    code, out, _ = fmt(capsys, "p/pack.yaml", diff=True)
    assert (code, out) == (
        0,
        "--- a/p/pack.yaml\n"
        "+++ b/p/pack.yaml\n"
        "@@ -1,2 +1,2 @@\n"
        " name: p\n"
        "-version: 0.1.0\n"
        "\\ No newline at end of file\n"
        "+version: 0.1.0\n",
    )


def test_a_file_that_does_not_parse_is_a_diagnostic_and_the_rest_is_formatted(
    pack: Path, capsys: Any
) -> None:
    (pack / "goals.yaml").write_text("limits: [1, 2\nintents: []\n", encoding="utf-8")
    code, out, err = fmt(capsys, "p")
    _, loaders = load_yaml("p/goals.yaml")
    assert [(d.code, d.location.path) for d in loaders] == [("CH001", "p/goals.yaml")]
    assert (code, err) == (1, "")
    assert out == (
        render_text(loaders, SourceCache())
        + "reformatted p/rules.yaml\n"
        + "1 file reformatted, 1 file left unchanged, 1 file failed to reformat\n"
    )
    assert out.startswith("p/goals.yaml:2:8: CH001 ")
    assert (pack / "rules.yaml").read_text(encoding="utf-8") == TIDY


def test_a_file_formatting_would_change_is_left_as_it_is(pack: Path, capsys: Any) -> None:
    (pack / "memory.yaml").write_text("%YAML 1.1\n---\nkeep: yes\n", encoding="utf-8")
    code, out, _ = fmt(capsys, "p", check=True)
    assert code == 1
    assert out.splitlines()[0] == (
        "p/memory.yaml:3:7: CH001 formatting would change what the loader reads at keep"
    )
    assert out.splitlines()[-2:] == [
        "would reformat p/rules.yaml",
        "1 file would be reformatted, 1 file would be left unchanged, "
        "1 file would fail to reformat",
    ]


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["p", "nope"], "charter fmt: no such file or directory: nope\n"),
        (["p/README.md"], "charter fmt: not a YAML file: p/README.md\n"),
        (["empty"], "charter fmt: no pack.yaml at or below: empty\n"),
    ],
)
def test_a_path_with_nothing_to_format_is_a_usage_error(
    pack: Path, capsys: Any, paths: list[str], message: str
) -> None:
    (pack / "README.md").write_text("# p\n", encoding="utf-8")
    (pack.parent / "empty").mkdir()
    assert fmt(capsys, *paths) == (2, "", message)
    assert (pack / "rules.yaml").read_text(encoding="utf-8") == MESSY  # nothing written


def test_exit_codes_are_the_clis() -> None:
    assert (fmt_cmd.EXIT_OK, fmt_cmd.EXIT_USER, fmt_cmd.EXIT_USAGE) == (
        common.EXIT_OK,
        common.EXIT_USER,
        common.EXIT_USAGE,
    )


def test_the_transcript_in_the_docs(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    section = text.split("\n## 10. One layout for every file: charter fmt\n", 1)[1]
    transcript, before = re.findall(r"```(?:text|yaml)\n(.*?)```", section, flags=re.S)[:2]
    command, *expected = transcript.splitlines()
    argv = shlex.split(command.removeprefix("$ "))
    assert argv[:2] == ["charter", "fmt"]
    monkeypatch.chdir(tmp_path)
    express = tmp_path / "domains" / "express"
    express.mkdir(parents=True)
    (express / "pack.yaml").write_text(before, encoding="utf-8")
    (express / "rules.yaml").write_text(TIDY, encoding="utf-8")
    assert fmt(capsys, *argv[2:]) == (0, "\n".join(expected) + "\n", "")


# ---- the typer command --------------------------------------------------------------------------


def _app() -> typer.Typer:
    app = typer.Typer(rich_markup_mode=None)

    @app.callback()
    def _root() -> None:
        """charter"""

    fmt_cmd.register(app)
    return app


def test_the_command_and_its_options(pack: Path, capsys: Any) -> None:
    app = _app()
    assert app(["fmt", "--check", "p"], standalone_mode=False) == 1
    assert capsys.readouterr().out.startswith("would reformat p/rules.yaml\n")
    assert app(["fmt", "--diff", "p"], standalone_mode=False) == 0
    assert capsys.readouterr().out == DIFF
    assert app(["fmt"], standalone_mode=False) == 0
    assert capsys.readouterr().out.startswith("reformatted p/rules.yaml\n")
    command = typer.main.get_command(app).commands["fmt"]  # type: ignore[attr-defined]
    assert command.help == (
        "Rewrite pack YAML files in one layout, keeping comments, key order and quoting."
    )
    assert {p.name: (p.opts, p.help) for p in command.params} == {
        "paths": (
            ["paths"],
            "Packs (directories or names), directories of packs, or pack files (default: .).",
        ),
        "check": (
            ["--check"],
            "Write nothing; list the files that would change and exit 1 if there are any.",
        ),
        "diff": (["--diff"], "Write nothing; print the changes as a unified diff."),
    }


# ---- the shipped packs --------------------------------------------------------------------------


@pytest.mark.slow  # formats every shipped file (about 4 s)
def test_the_shipped_packs_are_in_the_layout(capsys: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(ROOT)
    files, _ = find_files([Path("domains"), Path("rulesets")])
    assert len(files) >= 60
    assert fmt(capsys, "domains", "rulesets", check=True) == (
        0,
        f"{len(files)} files would be left unchanged\n",
        "",
    )


def _shape(value: Any) -> Any:
    """A compiled value with its source locations left out (the columns move)."""
    if isinstance(value, Location):
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value), tuple((f.name, _shape(getattr(value, f.name))) for f in fields))
    if isinstance(value, list | tuple):
        return tuple(_shape(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _shape(v)) for k, v in value.items())
    return value


COMPILED = (
    "name",
    "version",
    "kind",
    "extends",
    "rules",
    "cases",
    "literals",
    "constants_json",
    "goals",
    "memory",
    "skills",
    "learning",
    "responses",
    "conversations",
)


@pytest.mark.slow  # formats and recompiles every shipped pack (about 12 s)
def test_formatting_the_shipped_packs_changes_nothing_they_mean(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    for sub in ("domains", "rulesets"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    monkeypatch.chdir(tmp_path)
    reg = default_registry()[0]
    domains = sorted(p for p in Path("domains").iterdir() if (p / "pack.yaml").is_file())
    assert [d.name for d in domains] == ["ecommerce", "finance", "medical"]

    def compiled() -> dict[str, Any]:
        out = {}
        for domain in domains:
            pack, diagnostics = compile_path(domain, reg, cache_dir=None)
            assert pack is not None and not [d for d in diagnostics if d.is_error]
            out[domain.name] = {name: _shape(getattr(pack, name)) for name in COMPILED}
        return out

    shipped = compiled()
    files, _ = find_files([Path("domains"), Path("rulesets")])
    texts = {f: f.read_text(encoding="utf-8") for f in files}
    relaid = {f: relayout(text) for f, text in texts.items()}
    for f, text in relaid.items():
        f.write_text(text, encoding="utf-8")
    assert compiled() == shipped  # the four-space copy means the same ...
    assert all(relaid[f] != texts[f] for f in files)

    code, out, _ = fmt(capsys, "domains", "rulesets")
    assert (code, out.splitlines()[-1]) == (0, f"{len(files)} files reformatted")
    assert {f: f.read_text(encoding="utf-8") for f in files} == texts  # ... and formats back
    assert compiled() == shipped
    assert fmt(capsys, "domains", "rulesets", check=True)[0] == 0
