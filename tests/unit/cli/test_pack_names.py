"""A pack given by name resolves the same way in every command that takes one
(``charter.pack.resolve``): a directory here, a pack under ``domains/`` or ``rulesets/``, a pack a
plugin installed. A name that two different packs answer to is an error that lists both (CH009),
in every command, never a silent pick of the nearer one; a path says which one is meant.

The plugin is installed for the test only (``tests.support.installed``): a .dist-info in a
site-packages directory of the test's own, whose entry point registers the pack ``telecom``.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest

from charter.scaffold import pack_scaffold, write
from tests.support.cli import Run, RunCharter
from tests.support.installed import Site

PLUGIN = """\
from pathlib import Path

from charter.contracts.packs import PackRef

PACK = Path(__file__).resolve().parent / "packs" / "telecom"


def charter_register_packs():
    return [PackRef("telecom", PACK)]
"""
SEVEN = "rule coverage: 100.0% of 3 rules (each seen passing and failing)\n7 passed, 0 failed\n"
REFUND = "退款将在3个工作日内原路退回。"
NOTHING_TESTED = (
    "rule coverage: 100.0% of 0 rules (each seen passing and failing)\n"
    "0 passed, 0 failed, 1 error in packs\n"
)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory (no domains/ above it), with a cache of its own."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    return work


@pytest.fixture
def installed(site: Site) -> Path:
    """The plugin charter-names, installing the pack 'telecom' from its site-packages."""
    site.install("charter-names", {"names": "charter_names"}, sources={
        "charter_names/__init__.py": PLUGIN
    })  # fmt: skip
    packs = site.root / "charter_names" / "packs"
    write(pack_scaffold("telecom"), packs)
    return packs / "telecom"


def pack_here(where: Path) -> Path:
    """A pack named 'telecom' written at ``where``/telecom (as ``charter new pack`` does)."""
    write(pack_scaffold("telecom"), where)
    return where / "telecom"


def every_command(charter: RunCharter, name: str) -> dict[str, Run]:
    """What each command that takes a pack does with ``name``."""
    return {
        "validate": charter("validate", name),
        "test": charter("test", name),
        "fmt": charter("fmt", "--check", name),
        "check": charter("check", "--domain", name, REFUND),
        "skills": charter("skills", "list", "--domain", name),
    }


# ---- one pack, wherever it is ------------------------------------------------------------------


def test_an_installed_pack_is_named_alike_in_every_command(
    work: Path, installed: Path, charter: RunCharter
) -> None:
    runs = every_command(charter, "telecom")
    assert runs["validate"] == Run(0, "", "")
    assert runs["test"] == Run(0, SEVEN, "")
    # `charter fmt` refused the name the other commands accept ("no such file or directory")
    assert runs["fmt"] == Run(0, "2 files would be left unchanged\n", "")
    assert runs["check"].code == 0
    assert runs["check"].out.startswith("telecom: fixed\n")
    assert runs["skills"] == Run(0, "no skills\n", "")


def test_a_pack_under_domains_is_named_alike_in_every_command(
    work: Path, charter: RunCharter
) -> None:
    pack_here(work / "domains")
    runs = every_command(charter, "telecom")
    # `charter validate telecom` and `charter test telecom` looked for ./telecom only
    assert runs["validate"] == Run(0, "", "")
    assert runs["test"] == Run(0, SEVEN, "")
    assert runs["fmt"] == Run(0, "2 files would be left unchanged\n", "")
    assert runs["check"].out.startswith("telecom: fixed\n")
    assert runs["skills"] == Run(0, "no skills\n", "")


# ---- two packs of one name -----------------------------------------------------------------


def ambiguous(first: str, second: str, paths: str) -> str:
    return (
        f"telecom: CH009 'telecom' names 2 different packs: {first}, {second}\n"
        f"    hint: give the one you mean by its path: {paths}; or give the packs different "
        "names (name: in pack.yaml)\n"
    )


def test_a_directory_here_and_an_installed_pack_of_one_name_is_an_error_listing_both(
    work: Path, installed: Path, charter: RunCharter, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack_here(work)
    shown = ambiguous(
        "telecom (a directory)",
        f"{installed} (installed by a plugin)",
        f"./telecom or {installed}",
    )
    runs = every_command(charter, "telecom")
    # validate and test took ./telecom and said nothing of the installed pack
    assert runs["validate"] == Run(1, shown + "1 error; 0 packs checked\n", "")
    assert runs["test"] == Run(1, shown + NOTHING_TESTED, "")
    assert runs["fmt"] == Run(2, "", shown)
    assert runs["check"] == Run(1, shown, "")
    assert runs["skills"] == Run(1, shown, "")
    # the runtime resolves the same way: charter chat (Agent.from_pack) does not start
    monkeypatch.setenv("CHARTER_MEMORY_KEY", base64.b64encode(bytes(range(32))).decode())
    monkeypatch.setattr("sys.stdin", io.StringIO("你好\n"))
    chat = charter("chat", "--domain", "telecom", "--user", "u1")
    assert chat == Run(
        1,
        "",
        "charter chat: cannot start: 'telecom' names 2 different packs: telecom (a directory), "
        f"{installed} (installed by a plugin): give the one you mean by its path: ./telecom or "
        f"{installed}; or give the packs different names (name: in pack.yaml)\n",
    )


def test_two_directories_of_one_name_are_an_error_listing_both(
    work: Path, charter: RunCharter
) -> None:
    pack_here(work)
    pack_here(work / "domains")
    shown = ambiguous(
        "telecom (a directory)", "domains/telecom (under domains/)", "./telecom or domains/telecom"
    )
    runs = every_command(charter, "telecom")
    assert runs["validate"] == Run(1, shown + "1 error; 0 packs checked\n", "")
    assert runs["test"] == Run(1, shown + NOTHING_TESTED, "")
    assert runs["fmt"] == Run(2, "", shown)
    assert runs["check"] == Run(1, shown, "")


def test_a_path_says_which_pack_is_meant(work: Path, installed: Path, charter: RunCharter) -> None:
    pack_here(work)
    for path in ("./telecom", "telecom/", str(installed)):
        assert charter("validate", path) == Run(0, "", ""), path
        assert charter("test", path) == Run(0, SEVEN, ""), path
        assert charter("fmt", "--check", path) == Run(0, "2 files would be left unchanged\n", ""), (
            path
        )
        assert charter("check", "--domain", path, REFUND).code == 0, path
    # a pack's file stands for the pack (fmt formats the file alone)
    assert charter("validate", "telecom/pack.yaml") == Run(0, "", "")
    assert charter("check", "--domain", "telecom/pack.yaml", REFUND).code == 0


def test_a_directory_of_packs_is_still_a_directory_of_packs(
    work: Path, charter: RunCharter
) -> None:
    pack_here(work / "domains")
    write(pack_scaffold("billing"), work / "domains")
    assert charter("validate", "domains") == Run(0, "", "")
    r = charter("test", "domains")
    assert (r.code, r.out.splitlines()[-1]) == (0, "14 passed, 0 failed")
    # where one pack is meant, a directory holding two is not one
    assert charter("check", "--domain", "domains", REFUND) == Run(
        1,
        "domains: CH009 'domains' holds 2 packs, not one: domains/billing (a directory), "
        "domains/telecom (a directory)\n"
        "    hint: give one of them: domains/billing or domains/telecom\n",
        "",
    )


def test_a_copy_in_a_build_directory_is_not_a_second_pack(work: Path, charter: RunCharter) -> None:
    """``pip wheel .`` leaves build/lib/<package>/... and *.egg-info beside the sources: a
    search below a directory does not take their copies of a pack for packs of their own."""
    pack_here(work / "project")
    pack_here(work / "project" / "build" / "lib" / "copy")
    pack_here(work / "project" / "x.egg-info")
    assert charter("validate", "project") == Run(0, "", "")
    assert charter("validate") == Run(0, "", "")
