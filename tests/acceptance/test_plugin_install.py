"""The plugin ``charter new plugin acme`` writes, and the project ``charter new pack telecom
--with-skills`` writes, installed for real, work through ``charter``.

A module fixture creates a temporary virtual environment and pip-installs into it Charter (from a
copy of this repository's working tree, so that the build never writes into the repository),
the scaffolded ``charter-acme`` distribution, the scaffolded project ``telecom`` as its README
says (``pip install -e .``) and pytest; nothing else. The tests then run that environment's own
``charter`` console script, from a directory without ``domains/``, so that ``acme`` can only
come from the installed plugin:

* ``charter plugins --format json`` lists the plugin, its distribution, version and what each of
  its hooks registered;
* ``charter check --domain acme`` runs the rule built on the plugin's extractor;
* ``charter validate --all-installed`` and ``charter validate acme`` are silent;
* ``charter test acme`` passes at 100 % coverage;
* the scaffold's own tests pass against the installed distribution;
* the wheel ``pip wheel`` builds from the scaffold holds every file of the bundled pack, those in
  subfolders too (``skills/``, ``tests/conversations/``), and the pack compiles from the wheel's
  files alone and passes its conversation test;
* the project ``telecom``, installed editable, validates and passes its tests (the skill's cases
  among them) by name from its folder and from the folder above, its own pytest tests pass, and
  the wheel built from it carries the pack inside the package, where its plugin finds it;
* after ``pip uninstall``, the plugin and its pack are gone, with a clear message.

The last test uninstalls: it stays last in this file (pytest runs a module's tests in order).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from charter.cli.main import main
from charter.compile.api import compile_path
from charter.conversations.runner import run_conversations
from charter.plugins.host import registry_from

# `slow` is registered in pyproject.toml and not deselected by default: this still runs in CI
# (about 15 s), and `-m "not slow"` leaves it out of a quick local run.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# build outputs and caches of the working tree: not Charter's sources
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "venv", "__pycache__", "*.egg-info", "build", "dist", ".*cache*",
    ".hypothesis", "*.pyc",
)  # fmt: skip

ACME = {
    "name": "acme",
    "distribution": "charter-acme",
    "version": "0.1.0",
    "status": "ok",
    "hooks": {
        "charter_register_extractors": ["acme_order_id"],
        "charter_register_skills": ["acme_order_status"],
        "charter_register_packs": ["acme"],
    },
}


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


@dataclass(frozen=True)
class Venv:
    root: Path
    python: Path
    work: Path  # the working directory of every command: no domains/ or rulesets/ here
    plugin: Path  # the scaffolded charter-acme/ source tree
    env: dict[str, str]

    @property
    def project(self) -> Path:
        """The scaffolded project telecom/ (charter new pack telecom --with-skills)."""
        return self.work / "telecom"

    def run(self, *argv: str | Path, cwd: Path | None = None) -> Run:
        proc = subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=cwd or self.work,
            env=self.env,
            timeout=300,
            check=False,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def charter(self, *args: str, cwd: Path | None = None) -> Run:
        return self.run(self.root / "bin" / "charter", *args, cwd=cwd)

    def pip(self, *args: str | Path) -> Run:
        # the running interpreter's pip, pointed at the venv: no pip to bootstrap into the venv
        return self.run(
            sys.executable,
            "-m",
            "pip",
            "--python",
            self.python,
            "--disable-pip-version-check",
            *args,
        )


def _pip_version() -> Version | None:
    try:
        return Version(importlib.metadata.version("pip"))
    except importlib.metadata.PackageNotFoundError:
        return None


def _environment(tmp: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CHARTER_") and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env["CHARTER_CACHE_DIR"] = str(tmp / "cache")
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    if importlib.util.find_spec("venv") is None:
        pytest.skip("the venv module is not available to create a virtual environment")
    pip = _pip_version()
    if pip is None or pip < Version("22.3"):
        pytest.skip(f"pip >= 22.3 is needed (for pip --python), found {pip or 'no pip'}")
    tmp = tmp_path_factory.mktemp("plugin-install")
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp / "venv")],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot create a virtual environment: {made.stderr.strip()}")
    work = tmp / "work"
    work.mkdir()
    # the scaffold as a user gets it: `charter new plugin acme --dir work`
    assert main(["new", "plugin", "acme", "--dir", str(work)]) == 0
    assert main(["new", "pack", "telecom", "--with-skills", "--dir", str(work)]) == 0
    source = tmp / "charter-src"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCES)
    python = tmp / "venv" / "bin" / "python"
    v = Venv(tmp / "venv", python, work, work / "charter-acme", _environment(tmp))
    installed = v.pip("install", "--quiet", source, v.plugin, "pytest")
    assert installed.code == 0, installed.out + installed.err
    # the project as its README says, editable: `pip install -e .` in its folder (here with the
    # running pip, pointed at the venv)
    project = v.pip("install", "--quiet", "-e", v.project)
    assert project.code == 0, project.out + project.err
    return v


def _plugins(v: Venv) -> list[dict[str, Any]]:
    r = v.charter("plugins", "--format", "json")
    assert (r.code, r.err) == (0, ""), r
    listed: list[dict[str, Any]] = json.loads(r.out)
    return listed


def test_charter_plugins_lists_the_plugin_and_what_it_registered(venv: Venv) -> None:
    listed = {p["name"]: p for p in _plugins(venv)}
    assert "acme" in listed, listed
    acme = listed["acme"]
    assert {key: acme[key] for key in ACME} == ACME
    assert acme.get("problems", []) == []


def test_check_by_pack_name_runs_the_rule_built_on_the_plugin_extractor(venv: Venv) -> None:
    assert venv.charter("check", "--domain", "acme", "您的订单acme20240001已发货。") == Run(
        0,
        "acme: fixed\n"
        "  ✗ order-id-format (fix) [fixed]: 订单号请写成“ACME-20240001”的形式。 — found 'acme20240001'\n"
        "fixed text:\n"
        "  您的订单ACME-20240001已发货。\n",
        "",
    )
    assert venv.charter("check", "--domain", "acme", "您的订单ACME-20240001已发货。") == Run(
        0, "acme: pass\n", ""
    )
    two = "您的订单ACME-20240001已发货，ACME-20240002还在等待付款。"
    assert venv.charter("check", "--domain", "acme", two) == Run(
        1,
        "acme: retry\n"
        "  ✗ one-order-per-answer (retry): 只谈用户问到的那一个订单，不要列出其他订单号。\n",
        "",
    )


def test_validate_all_installed_and_by_name_is_silent(venv: Venv) -> None:
    assert venv.charter("validate", "--all-installed") == Run(0, "", "")
    assert venv.charter("validate", "acme") == Run(0, "", "")


def test_test_by_pack_name_passes_with_full_coverage(venv: Venv) -> None:
    assert venv.charter("test", "acme", "--threshold", "100") == Run(
        0,
        "rule coverage: 100.0% of 2 rules (each seen passing and failing)\n4 passed, 0 failed\n",
        "",
    )


def test_the_scaffold_own_tests_pass_against_the_installed_distribution(venv: Venv) -> None:
    # run from work/, not from the source tree, so `import charter_acme` is the installed copy
    where = venv.run(venv.python, "-c", "import charter_acme; print(charter_acme.__file__)")
    assert where.code == 0, where
    assert Path(where.out.strip()).is_relative_to(venv.root)
    r = venv.run(venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", venv.plugin)
    assert r.code == 0, r.out + r.err
    assert r.out.splitlines()[-1].startswith("5 passed")


# Files a pack grows into that `charter new plugin` does not write: one in each subfolder the
# loader reads (skills/ and tests/conversations/), valid so that the pack still compiles.
GROWN = {
    "skills/acme_order_status.yaml": """\
name: acme_order_status
description: 按订单号查询订单状态
input_schema:
  type: object
  required: [order_id]
  additionalProperties: false
  properties:
    order_id: {type: string}
output_schema:
  type: object
  required: [order_id, status]
  properties:
    order_id: {type: string}
    status: {type: string}
""",
    "tests/conversations/greeting.yaml": """\
conversations:
  - name: 没有模板的问题不交给模型
    turns:
      - user: 你好
        expect:
          answered_by: template
          model_calls: 0
""",
}


def test_the_wheel_ships_every_file_of_the_bundled_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["new", "plugin", "acme", "--dir", str(tmp_path)]) == 0
    plugin = tmp_path / "charter-acme"
    pack = plugin / "charter_acme" / "packs" / "acme"
    for name, text in GROWN.items():
        (pack / name).parent.mkdir(parents=True, exist_ok=True)
        (pack / name).write_text(text, encoding="utf-8")
    # a real build, as `pip install charter-acme` from an index or an sdist gets it
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp_path / "dist",
         plugin],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = sorted(n for n in archive.namelist() if n.startswith("charter_acme/packs/"))
        archive.extractall(tmp_path / "site")
    assert shipped == [
        "charter_acme/packs/acme/pack.yaml",
        "charter_acme/packs/acme/rules.yaml",
        "charter_acme/packs/acme/skills/acme_order_status.yaml",
        "charter_acme/packs/acme/tests/conversations/greeting.yaml",
    ]
    on_disk = sorted(p.relative_to(plugin).as_posix() for p in pack.rglob("*") if p.is_file())
    assert shipped == on_disk

    # the pack as installed from the wheel: its own files only, nothing from the source tree
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(tmp_path / "site")
    try:
        module = importlib.import_module("charter_acme.plugin")
        assert Path(module.__file__ or "").is_relative_to(tmp_path / "site")
        registry = registry_from({"acme": module})
        registry = replace(registry, plugins={**registry.plugins, "charter-acme": "0.1.0"})
        (ref,) = module.charter_register_packs()
        compiled, diagnostics = compile_path(ref.path, registry, cache_dir=None)
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "charter_acme"]:
            del sys.modules[name]
    assert [d.headline() for d in diagnostics] == []
    assert compiled is not None
    assert sorted(compiled.files) == shipped  # relative to site/, the working directory
    assert compiled.skills is not None
    assert [c.name for c in compiled.skills.contracts] == ["acme_order_status"]
    played = run_conversations(compiled, registry)
    assert [(r.conversation.name, r.ok) for r in played] == [("没有模板的问题不交给模型", True)]


PROJECT_TESTED = (
    "conversation coverage: telecom: intents 1/1, events 2/17, templates 1/15\n"
    "rule coverage: 100.0% of 3 rules (each seen passing and failing)\n"
    "13 passed, 0 failed\n"
)


def test_the_project_installed_editable_validates_and_passes_its_tests(venv: Venv) -> None:
    for where in (venv.project, venv.work):
        r = venv.charter("validate", "--strict", "telecom", cwd=where)
        assert r == Run(0, "", ""), r.out
        r = venv.charter("test", "telecom", "--threshold", "100", cwd=where)
        assert r == Run(0, PROJECT_TESTED, ""), r.out + r.err
    listed = {p["name"]: p for p in _plugins(venv)}
    assert listed["telecom"]["hooks"] == {
        "charter_register_skills": ["telecom_order_status"],
        "charter_register_packs": ["telecom"],
    }
    r = venv.run(venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=venv.project)
    assert r.code == 0, r.out + r.err
    assert r.out.splitlines()[-1].startswith("3 passed")


def test_the_project_wheel_carries_the_pack_inside_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["new", "pack", "telecom", "--with-skills", "--dir", str(tmp_path)]) == 0
    project = tmp_path / "telecom"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp_path / "dist",
         project],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = sorted(n for n in archive.namelist() if n.startswith("charter_telecom/"))
        archive.extractall(tmp_path / "site")
    assert shipped == [
        "charter_telecom/__init__.py",
        "charter_telecom/pack/goals.yaml",
        "charter_telecom/pack/pack.yaml",
        "charter_telecom/pack/rules.yaml",
        "charter_telecom/pack/skills/telecom_order_status.yaml",
        "charter_telecom/pack/tests/conversations/order_status.yaml",
        "charter_telecom/plugin.py",
        "charter_telecom/py.typed",
    ]
    # the plugin as installed from the wheel: the pack it registers is the copy inside it
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(tmp_path / "site")
    try:
        module = importlib.import_module("charter_telecom.plugin")
        assert Path(module.__file__ or "").is_relative_to(tmp_path / "site")
        registry = registry_from({"telecom": module})
        registry = replace(registry, plugins={**registry.plugins, "charter-telecom": "0.1.0"})
        (ref,) = module.charter_register_packs()
        assert ref.path == (tmp_path / "site" / "charter_telecom" / "pack").resolve()
        compiled, diagnostics = compile_path(ref.path, registry, cache_dir=None)
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "charter_telecom"]:
            del sys.modules[name]
    assert [d.headline() for d in diagnostics] == []
    assert compiled is not None
    played = run_conversations(compiled, registry)
    assert [r.ok for r in played] == [True, True]


def test_after_uninstalling_the_plugin_and_its_pack_are_gone(venv: Venv) -> None:
    removed = venv.pip("uninstall", "--yes", "--quiet", "charter-acme")
    assert removed.code == 0, removed.out + removed.err
    left = _plugins(venv)
    assert [p for p in left if "acme" in (p["name"], p["distribution"])] == []
    assert [p["name"] for p in left] == [
        "charter.builtin",
        "charter.llm.backends",
        "charter.memory.embedders",
        "telecom",  # the project, still installed
    ]
    r = venv.charter("check", "--domain", "acme", "您的订单ACME-20240001已发货。")
    assert r.code == 1, r
    assert "unknown domain 'acme'" in r.out + r.err
    assert "Traceback" not in r.out + r.err
