"""``charter new pack NAME --with-skills``: a pack and the Python of its skills as one project.

A domain expert writing a mobile operator's pack with its skills in a plugin ran ``charter new
pack telecom`` and ``charter new plugin telecom``: two packs named telecom (CH007 in any run that
saw both, and ``charter test telecom`` silently took the nearer one), an example extractor,
skill and tests to delete by hand, and the plugin's pack four folders deep. These tests pin
what replaced that:

* ``--with-skills`` writes one folder: the pack in ``pack/`` with one skill contract (its cases,
  a goal that calls it, two conversations), the skill's Python as a plugin beside it, its unit
  tests, and a pyproject.toml — ``pip install -e .`` installs both;
* installed (``tests.support.installed``: what pip leaves, without pip), the pack validates
  strictly and passes its tests at 100 % with no warning, by name from the project folder and
  from its parent, and ``charter fmt`` leaves every file as it is;
* a name another pack answers to is refused by ``charter new``, before anything is written.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from charter.scaffold import pack_scaffold, write
from tests.support.cli import Run, RunCharter
from tests.support.installed import Site
from tests.support.tools import dev_tool

FILES = [
    "README.md",
    "charter_telecom/__init__.py",
    "charter_telecom/plugin.py",
    "charter_telecom/py.typed",
    "pack/goals.yaml",
    "pack/pack.yaml",
    "pack/rules.yaml",
    "pack/skills/telecom_order_status.yaml",
    "pack/tests/conversations/order_status.yaml",
    "pyproject.toml",
    "tests/test_skills.py",
]
TESTED = (
    "conversation coverage: telecom: intents 1/1, events 2/17, templates 1/15\n"
    "rule coverage: 100.0% of 3 rules (each seen passing and failing)\n"
    "13 passed, 0 failed\n"
)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    return work


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_with_skills_writes_one_project_and_says_what_next(
    work: Path, site: Site, charter: RunCharter
) -> None:
    r = charter("new", "pack", "telecom", "--with-skills")
    assert r == Run(
        0,
        "created pack 'telecom' with its skills in telecom\n"
        "  telecom/pyproject.toml\n"
        "  telecom/README.md\n"
        "  telecom/pack/pack.yaml\n"
        "  telecom/pack/rules.yaml\n"
        "  telecom/pack/goals.yaml\n"
        "  telecom/pack/skills/telecom_order_status.yaml\n"
        "  telecom/pack/tests/conversations/order_status.yaml\n"
        "  telecom/charter_telecom/__init__.py\n"
        "  telecom/charter_telecom/plugin.py\n"
        "  telecom/charter_telecom/py.typed\n"
        "  telecom/tests/test_skills.py\n"
        "next steps:\n"
        "  cd telecom\n"
        "  pip install -e .\n"
        "  charter validate telecom\n"
        "  charter test telecom --threshold 100\n"
        "  python -m pytest\n"
        "  charter chat --domain telecom --user u1  # CHARTER_MEMORY_KEY: see README.md\n",
        "",
    )
    assert tree(work) == [f"telecom/{f}" for f in FILES]
    # no example to delete by hand: no extractor, one skill, and the pack two folders deep
    plugin = (work / "telecom" / "charter_telecom" / "plugin.py").read_text(encoding="utf-8")
    assert "charter_register_extractors" not in plugin
    assert plugin.count("\n@hookimpl\n") == 2
    pack_yaml = (work / "telecom" / "pack" / "pack.yaml").read_text(encoding="utf-8")
    assert "name: telecom\n" in pack_yaml
    assert "  plugins: [charter-telecom]" in pack_yaml


def test_installed_it_validates_and_passes_its_tests_with_no_warning(
    work: Path, site: Site, charter: RunCharter
) -> None:
    assert charter("new", "pack", "telecom", "--with-skills").code == 0
    project = work / "telecom"
    site.editable(project)  # pip install -e telecom
    assert charter("plugins").out.count("charter-telecom") == 1
    for where in (project, work):  # the project folder, and its parent
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(where)
            # the directory here (or the project below it) and the installed pack are one pack
            assert charter("validate", "--strict", "telecom") == Run(0, "", "")
            assert charter("test", "telecom", "--threshold", "100") == Run(0, TESTED, "")
            assert charter("fmt", "--check", "telecom") == Run(
                0, "5 files would be left unchanged\n", ""
            )
    assert charter("validate", "--all-installed") == Run(0, "", "")
    # the project folder itself: its one pack, and no copy of it counted twice (CH007)
    assert charter("validate", "--strict", "telecom") == Run(0, "", "")


def test_before_it_is_installed_validate_says_how_to_install_it(
    work: Path, site: Site, charter: RunCharter
) -> None:
    assert charter("new", "pack", "telecom", "--with-skills").code == 0
    r = charter("validate", "telecom")
    assert r.code == 1
    assert "CH025 required plugin 'charter-telecom' is not installed" in r.out
    assert "# this project's skills: `pip install -e .` in the project folder" in r.out


def test_the_plugin_finds_its_pack_in_the_project_and_in_a_wheel(
    work: Path, monkeypatch: pytest.MonkeyPatch, charter: RunCharter
) -> None:
    """pack/ beside the package in the project (a checkout, an editable install); the copy
    pyproject.toml maps into the package in a wheel (tests/acceptance builds one)."""
    assert charter("new", "pack", "telecom", "--with-skills").code == 0
    project = work / "telecom"
    wheel = work / "wheel"
    shutil.copytree(project / "charter_telecom", wheel / "charter_telecom")
    shutil.copytree(project / "pack", wheel / "charter_telecom" / "pack")
    for root, pack in ((project, project / "pack"), (wheel, wheel / "charter_telecom" / "pack")):
        monkeypatch.syspath_prepend(str(root))
        try:
            module = importlib.import_module("charter_telecom.plugin")
            assert module.charter_register_packs()[0].path == pack.resolve()
        finally:
            for name in [m for m in sys.modules if m.split(".")[0] == "charter_telecom"]:
                del sys.modules[name]
            sys.path.remove(str(root))


# ---- a name another pack answers to ------------------------------------------------------------


def test_a_plugin_named_like_a_pack_here_is_refused_not_left_to_collide(
    work: Path, site: Site, charter: RunCharter
) -> None:
    """What the expert did: a pack, then a plugin of the same name. The plugin's bundled pack
    and the pack collided (CH007) in every run that saw both; now the second is refused."""
    assert charter("new", "pack", "telecom").code == 0
    r = charter("new", "plugin", "telecom")
    assert r == Run(
        1,
        "",
        "charter new plugin: a pack named 'telecom' exists already: telecom (a directory); a "
        "second one would make the name ambiguous (CH009) and collide with it (CH007), so "
        "nothing was written (choose another name; for a pack with skills of its own, "
        "`charter new pack NAME --with-skills` writes the pack and its plugin as one project)\n",
    )
    assert tree(work) == ["telecom/pack.yaml", "telecom/rules.yaml"]
    assert charter("validate") == Run(0, "", "")


@pytest.mark.parametrize("with_skills", [False, True], ids=["pack", "with-skills"])
def test_a_pack_named_like_an_installed_one_is_refused(
    work: Path, site: Site, charter: RunCharter, with_skills: bool
) -> None:
    site.install("charter-names", {"names": "charter_names"}, sources={
        "charter_names/__init__.py": (
            "from pathlib import Path\n"
            "from charter.contracts.packs import PackRef\n"
            "def charter_register_packs():\n"
            "    return [PackRef('telecom', Path(__file__).parent / 'telecom')]\n"
        )
    })  # fmt: skip
    write(pack_scaffold("telecom"), site.root / "charter_names")
    installed = site.root / "charter_names" / "telecom"
    r = charter("new", "pack", "telecom", *(["--with-skills"] if with_skills else []))
    assert r == Run(
        1,
        "",
        f"charter new pack: a pack named 'telecom' exists already: {installed} (installed by a "
        "plugin); a second one would make the name ambiguous (CH009) and collide with it "
        "(CH007), so nothing was written (choose another name)\n",
    )
    assert tree(work) == []


def test_force_over_the_project_is_not_a_second_pack(
    work: Path, site: Site, charter: RunCharter
) -> None:
    assert charter("new", "pack", "telecom", "--with-skills").code == 0
    site.editable(work / "telecom")
    r = charter("new", "pack", "telecom", "--with-skills", "--force")
    assert (r.code, r.err) == (0, "")


# ---- the Python as its author checks it ---------------------------------------------------------


@pytest.mark.slow  # runs ruff and mypy on the project (about 10 s)
@pytest.mark.parametrize("name", ["telecom", "abcdefghij-klmnopqrst-uvwxyz-123"])
def test_the_project_python_is_ruff_and_mypy_clean(
    work: Path, charter: RunCharter, name: str
) -> None:
    assert charter("new", "pack", name, "--with-skills").code == 0
    root = work / name
    assert len(sorted(root.rglob("*.py"))) == 3
    # each tool reads the project's own pyproject.toml: what the pack's author will run
    for command in (
        [dev_tool("ruff"), "check", "--no-cache", "."],
        [dev_tool("ruff"), "format", "--check", "--no-cache", "."],
        [dev_tool("mypy"), "."],
    ):
        proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
