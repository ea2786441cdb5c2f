"""``charter new pack|plugin``: what is written, what is printed, and that it works unchanged.

The CLI runs in-process (``charter.cli.main.main``) in a temporary working directory. The
scaffolded pack must validate silently and pass its own tests at 100 % coverage; the scaffolded
plugin's bundled pack must do the same through the Python API (installing it for real is
``tests/acceptance/test_plugin_install.py``), and its Python must be ruff- and mypy-clean.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Protocol

import pytest
from packaging.version import Version

from charter._version import __version__
from charter.cli.main import main
from charter.compile.api import compile_path
from charter.contracts.packs import PackRef
from charter.contracts.rules import Extractor
from charter.contracts.skills import Skill
from charter.plugins.host import registry_from
from charter.reflect.engine import Engine
from charter.reflect.testing import Coverage, run_pack
from tests.support.tools import dev_tool

_v = Version(__version__)
SPEC = f">={_v.major}.{_v.minor}"
NAME_RULE = (
    "use at most 32 lowercase letters, digits and single '-', starting with a letter and not "
    "ending with '-' (e.g. acme or acme-insurance)"
)
PLUGIN_FILES = [
    "README.md",
    "charter_acme/__init__.py",
    "charter_acme/packs/acme/pack.yaml",
    "charter_acme/packs/acme/rules.yaml",
    "charter_acme/plugin.py",
    "charter_acme/py.typed",
    "pyproject.toml",
    "tests/test_plugin.py",
]


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


class Cli(Protocol):
    def __call__(self, *args: str) -> Run: ...


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``cli("new", "pack", "acme")`` in an empty working directory, with its own cache."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CHARTER_NO_CACHE", raising=False)

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# ---- charter new pack --------------------------------------------------------------------


def test_new_pack_writes_pack_yaml_and_rules_yaml_and_says_what_next(cli: Cli) -> None:
    r = cli("new", "pack", "acme")
    assert (r.code, r.err) == (0, "")
    assert r.out == (
        "created pack 'acme' in acme\n"
        "  acme/pack.yaml\n"
        "  acme/rules.yaml\n"
        "next steps:\n"
        "  charter validate acme\n"
        "  charter test acme --threshold 100\n"
        '  charter check --domain acme "退款将在3个工作日内原路退回。"\n'
    )
    assert tree(Path.cwd()) == ["acme/pack.yaml", "acme/rules.yaml"]
    assert Path("acme/pack.yaml").read_text(encoding="utf-8") == (
        "# The pack's identity card: docs/authoring.md §2 lists every key.\n"
        "name: acme\n"
        "version: 0.1.0\n"
        "kind: domain\n"
        "description: acme 客服：不做绝对化承诺、退款说明以审核为准、投诉转人工\n"
        "locale: zh-CN\n"
        "requires:\n"
        f'  charter: "{SPEC}"\n'
        "messages:\n"
        "  safe: 抱歉，这个问题我暂时无法回答，已为您转接人工客服。\n"
        "  escalate: 已为您转接人工客服，请稍候。\n"
    )


def test_the_scaffolded_pack_validates_silently_and_passes_its_tests(cli: Cli) -> None:
    assert cli("new", "pack", "acme").code == 0
    assert cli("validate", "acme") == Run(0, "", "")
    assert cli("validate", "acme", "--strict") == Run(0, "", "")
    assert cli("test", "acme", "--threshold", "100") == Run(
        0,
        "rule coverage: 100.0% of 3 rules (each seen passing and failing)\n7 passed, 0 failed\n",
        "",
    )
    # the example printed under "next steps" shows a repair
    assert cli("check", "--domain", "acme", "退款将在3个工作日内原路退回。") == Run(
        0,
        "acme: fixed\n"
        "  ✗ refund-disclaimer (fix) [fixed]: 提到退款或退货时，必须说明“具体以审核结果为准” — found '退款'\n"
        "fixed text:\n"
        "  退款将在3个工作日内原路退回。（具体以审核结果为准）\n",
        "",
    )


def test_new_pack_with_dir_creates_the_missing_directories(cli: Cli, tmp_path: Path) -> None:
    base = tmp_path / "repo" / "domains"
    r = cli("new", "pack", "after-sales", "--dir", str(base))
    target = base / "after-sales"
    assert (r.code, r.err) == (0, "")
    assert r.out == (
        f"created pack 'after-sales' in {target}\n"
        f"  {target}/pack.yaml\n"
        f"  {target}/rules.yaml\n"
        "next steps:\n"
        f"  charter validate {target}\n"
        f"  charter test {target} --threshold 100\n"
        f'  charter check --domain {target} "退款将在3个工作日内原路退回。"\n'
    )
    assert tree(base) == ["after-sales/pack.yaml", "after-sales/rules.yaml"]
    assert "name: after-sales\n" in (target / "pack.yaml").read_text(encoding="utf-8")
    assert cli("test", str(target), "--threshold", "100").code == 0


BAD_NAMES = [
    "Acme",
    "1acme",
    "acme_shop",
    "acme-",
    "-acme",
    "ac--me",
    "acme.shop",
    "快递",
    "",
    "a" * 33,
]


@pytest.mark.parametrize("kind", ["pack", "plugin"])
@pytest.mark.parametrize("name", BAD_NAMES)
def test_an_invalid_name_is_a_usage_error_and_writes_nothing(
    cli: Cli, kind: str, name: str
) -> None:
    r = cli("new", kind, "--", name)  # "--": "-acme" is a name here, not an option
    assert r == Run(2, "", f"charter new {kind}: invalid name {name!r}: {NAME_RULE}\n")
    assert tree(Path.cwd()) == []


def test_a_32_character_name_is_still_valid(cli: Cli) -> None:
    assert cli("new", "pack", "a" * 32).code == 0


def test_a_plugin_name_is_given_without_the_charter_prefix(cli: Cli) -> None:
    r = cli("new", "plugin", "charter-acme")
    assert r == Run(
        2,
        "",
        "charter new plugin: invalid name 'charter-acme': give the name without 'charter-' "
        "(charter new plugin acme writes charter-acme/)\n",
    )
    assert tree(Path.cwd()) == []


@pytest.mark.parametrize(("kind", "root"), [("pack", "acme"), ("plugin", "charter-acme")])
def test_a_target_that_is_not_empty_is_refused_and_left_alone(
    cli: Cli, kind: str, root: str
) -> None:
    Path(root).mkdir()
    Path(root, "notes.txt").write_text("mine\n", encoding="utf-8")
    r = cli("new", kind, "acme")
    assert r == Run(
        1,
        "",
        f"charter new {kind}: {root} already exists and is not empty; nothing was written "
        "(choose another name or --dir, or pass --force to overwrite the scaffold's files)\n",
    )
    assert tree(Path.cwd()) == [f"{root}/notes.txt"]


def test_an_empty_target_directory_is_used(cli: Cli) -> None:
    Path("acme").mkdir()
    assert cli("new", "pack", "acme").code == 0
    assert tree(Path.cwd()) == ["acme/pack.yaml", "acme/rules.yaml"]


def test_a_target_that_is_a_file_is_refused_even_with_force(cli: Cli) -> None:
    Path("acme").write_text("a file\n", encoding="utf-8")
    expected = Run(1, "", "charter new pack: acme exists and is not a directory\n")
    assert cli("new", "pack", "acme") == expected
    assert cli("new", "pack", "acme", "--force") == expected
    assert Path("acme").read_text(encoding="utf-8") == "a file\n"


def test_force_overwrites_the_scaffold_files_and_keeps_the_others(cli: Cli) -> None:
    Path("acme").mkdir()
    Path("acme/rules.yaml").write_text("rules: []\n", encoding="utf-8")
    Path("acme/notes.txt").write_text("mine\n", encoding="utf-8")
    r = cli("new", "pack", "acme", "--force")
    assert (r.code, r.err) == (0, "")
    assert r.out.startswith("created pack 'acme' in acme\n  acme/pack.yaml\n  acme/rules.yaml\n")
    assert tree(Path.cwd()) == ["acme/notes.txt", "acme/pack.yaml", "acme/rules.yaml"]
    assert Path("acme/notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert Path("acme/rules.yaml").read_text(encoding="utf-8").count("  - id: ") == 3


# ---- charter new plugin ------------------------------------------------------------------


def test_new_plugin_writes_a_distribution_and_says_what_next(cli: Cli) -> None:
    r = cli("new", "plugin", "acme")
    assert (r.code, r.err) == (0, "")
    assert r.out == (
        "created plugin distribution 'charter-acme' in charter-acme\n"
        "  charter-acme/pyproject.toml\n"
        "  charter-acme/README.md\n"
        "  charter-acme/charter_acme/__init__.py\n"
        "  charter-acme/charter_acme/plugin.py\n"
        "  charter-acme/charter_acme/py.typed\n"
        "  charter-acme/charter_acme/packs/acme/pack.yaml\n"
        "  charter-acme/charter_acme/packs/acme/rules.yaml\n"
        "  charter-acme/tests/test_plugin.py\n"
        "next steps:\n"
        "  pip install -e charter-acme\n"
        "  charter plugins\n"
        "  charter validate acme\n"
        "  charter test acme --threshold 100\n"
        '  charter check --domain acme "您的订单acme20240001已发货。"\n'
        "  python -m pytest charter-acme\n"
    )
    assert tree(Path("charter-acme")) == PLUGIN_FILES
    assert Path("charter-acme/charter_acme/py.typed").read_text(encoding="utf-8") == ""


def test_the_plugin_pyproject_declares_the_entry_point_and_ships_the_pack(cli: Cli) -> None:
    assert cli("new", "plugin", "acme-insurance").code == 0
    with open("charter-acme-insurance/pyproject.toml", "rb") as fh:
        doc = tomllib.load(fh)
    assert doc["build-system"] == {
        "requires": ["setuptools>=77"],
        "build-backend": "setuptools.build_meta",
    }
    project = doc["project"]
    assert (project["name"], project["version"]) == ("charter-acme-insurance", "0.1.0")
    assert project["dependencies"] == ["charter"]
    assert project["entry-points"] == {
        "charter": {"acme-insurance": "charter_acme_insurance.plugin"}
    }
    setuptools = doc["tool"]["setuptools"]
    assert setuptools["packages"]["find"] == {"include": ["charter_acme_insurance*"]}
    # every file of the pack, subfolders too (the wheel's contents: test_plugin_install.py)
    assert setuptools["package-data"] == {"charter_acme_insurance": ["py.typed", "packs/**/*"]}
    pack_yaml = Path(
        "charter-acme-insurance/charter_acme_insurance/packs/acme-insurance/pack.yaml"
    ).read_text(encoding="utf-8")
    assert "name: acme-insurance\n" in pack_yaml
    assert f'requires:\n  charter: "{SPEC}"\n  plugins: [charter-acme-insurance]\n' in pack_yaml


@pytest.fixture
def scaffolded_plugin(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """``charter new plugin acme-insurance``, its ``plugin`` module imported from the tree."""
    assert cli("new", "plugin", "acme-insurance").code == 0
    monkeypatch.syspath_prepend(str(Path("charter-acme-insurance").resolve()))
    yield importlib.import_module("charter_acme_insurance.plugin")
    for name in [m for m in sys.modules if m.split(".")[0] == "charter_acme_insurance"]:
        del sys.modules[name]


def test_hyphens_become_underscores_in_every_identifier(scaffolded_plugin: ModuleType) -> None:
    (extractor,) = scaffolded_plugin.charter_register_extractors()
    (skill,) = scaffolded_plugin.charter_register_skills()
    (pack,) = scaffolded_plugin.charter_register_packs()
    assert isinstance(extractor, Extractor)
    assert isinstance(skill, Skill)
    assert (extractor.name, skill.name) == (
        "acme_insurance_order_id",
        "acme_insurance_order_status",
    )
    packs = Path("charter-acme-insurance/charter_acme_insurance/packs/acme-insurance").resolve()
    assert pack == PackRef("acme-insurance", packs)
    items = extractor.extract("订单acme-insurance20240001与ACME-INSURANCE-20240002")
    assert [(i.start, i.end, i.text, i.value) for i in items] == [
        (2, 24, "acme-insurance20240001", "ACME-INSURANCE-20240001"),
        (25, 48, "ACME-INSURANCE-20240002", "ACME-INSURANCE-20240002"),
    ]
    assert skill({"order_id": "ACME-INSURANCE-20240002"}) == {
        "order_id": "ACME-INSURANCE-20240002",
        "status": "待付款",
    }


def test_the_bundled_pack_compiles_and_passes_its_tests(scaffolded_plugin: ModuleType) -> None:
    registry = registry_from({"acme-insurance": scaffolded_plugin})
    # registry_from() knows the plugin, not its distribution, which `requires.plugins` names
    registry = replace(registry, plugins={**registry.plugins, "charter-acme-insurance": "0.1.0"})
    (ref,) = scaffolded_plugin.charter_register_packs()
    pack, diagnostics = compile_path(ref.path, registry, cache_dir=None)
    assert [d.headline() for d in diagnostics] == []
    assert pack is not None
    assert [r.id for r in pack.rules] == ["order-id-format", "one-order-per-answer"]
    coverage = Coverage()
    results = run_pack(pack, Engine(pack, registry), coverage)
    assert [(r.case.name, r.problems) for r in results if not r.ok] == []
    assert (len(results), coverage.percent) == (4, 100.0)
    fixed = Engine(pack, registry).check("您的订单acme-insurance 20240001已发货。")
    assert (fixed.verdict, fixed.fixed_text) == ("fixed", "您的订单ACME-INSURANCE-20240001已发货。")


def test_the_bundled_pack_needs_the_plugin_installed(scaffolded_plugin: ModuleType) -> None:
    registry = registry_from({})
    (ref,) = scaffolded_plugin.charter_register_packs()
    pack, diagnostics = compile_path(ref.path, registry, cache_dir=None)
    assert pack is None
    assert diagnostics[0].code == "CH025"
    assert diagnostics[0].message == "required plugin 'charter-acme-insurance' is not installed"


@pytest.mark.slow  # runs ruff and mypy on the scaffold (about 12 s)
@pytest.mark.parametrize("name", ["acme", "abcdefghij-klmnopqrst-uvwxyz-123"])
def test_the_scaffolded_python_is_ruff_and_mypy_clean(cli: Cli, name: str) -> None:
    assert cli("new", "plugin", name).code == 0
    root = Path(f"charter-{name}").resolve()
    sources = sorted(root.rglob("*.py"))
    assert len(sources) == 3
    for source in sources:  # a syntax error shows here even without ruff and mypy
        compile(source.read_text(encoding="utf-8"), str(source), "exec")
    # each tool reads the scaffold's own pyproject.toml: what the plugin's author will run
    commands = [
        [dev_tool("ruff"), "check", "--no-cache", "."],
        [dev_tool("ruff"), "format", "--check", "--no-cache", "."],
        [dev_tool("mypy"), "."],
    ]
    for command in commands:
        proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
