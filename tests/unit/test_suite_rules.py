"""The rules the suite keeps so that it stays fast and parallel (docs/testing.md, section 7):
every slow marker says what it costs, no test imports a conftest module or another test module,
the make targets run the tiers they promise, and CI holds the run to its budget."""

from __future__ import annotations

import ast
import re
import uuid
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.hypo import examples
from tests.support.once import once_per_run, shared_directory
from tests.support.paths import ROOT

TESTS = ROOT / "tests"


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_slow_marker_says_what_it_costs() -> None:
    """A ``slow`` marker is written with a comment on its line or the line above it."""
    silent = []
    for path in python_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if not re.search(r"\bmark\.slow\b", line) or line.lstrip().startswith("#"):
                continue
            above = lines[n - 1].strip() if n else ""
            if "#" not in line and not above.startswith("#") and path != Path(__file__):
                silent.append(f"{path.relative_to(ROOT)}:{n + 1}")
    assert silent == []


def imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


def test_no_test_imports_a_conftest_or_another_test_module() -> None:
    """What tests share besides fixtures lives in ``tests/support``: importing a conftest or a
    test module runs it a second time under another name."""
    wrong = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in python_files()
        for module in imported_modules(path)
        if module.startswith("tests.")
        and (module.endswith(".conftest") or module.rsplit(".", 1)[-1].startswith("test_"))
    ]
    assert wrong == []


def make_recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)*)", text, flags=re.M)
    assert found is not None, target
    return found.group(0)


def test_the_make_targets_run_the_tiers_they_promise() -> None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal" in text
    assert re.search(r"^PYTEST_WORKERS \?= auto$", text, flags=re.M)
    assert make_recipe("test").startswith("test: lint typecheck pytest\n")
    assert "\t$(PYTEST) --durations=30\n" in make_recipe("pytest")
    assert '\t$(PYTEST) -m "not slow" --hypothesis-profile=dev\n' in make_recipe("test-fast")
    assert "\t$(PYTEST) --durations=30 -q\n" in make_recipe("test-durations")


def test_ci_holds_the_run_to_the_budget_the_docs_state() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "budget=${CHARTER_TEST_BUDGET_S:-1500}" in run
    assert run.index("make install") < run.index("started=$(date +%s)") < run.index("make test")
    assert 'if [ "$took" -gt "$budget" ]; then' in run
    docs = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert "longer than 25 minutes" in docs  # 1500 s
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make test " in readme.split("\n\n")[1]  # the command CI runs is the README's


def test_the_hypothesis_profiles() -> None:
    """``ci`` (make test, a bare pytest) runs every example asked for, derandomized; ``dev``
    (make test-fast) a tenth, randomized; neither writes an example database."""
    ci, dev = settings.get_profile("ci"), settings.get_profile("dev")
    assert (ci.derandomize, ci.database, ci.deadline) == (True, None, None)
    assert (dev.derandomize, dev.database, dev.deadline, dev.max_examples) == (
        False,
        None,
        None,
        20,
    )
    current = settings.get_current_profile_name()
    assert current in ("ci", "dev")
    assert examples(300) == (300 if current == "ci" else 30)


def test_a_value_made_once_per_run_is_made_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    made: list[Path] = []

    def make(directory: Path) -> list[object]:
        made.append(directory)
        return ["stdout", {"figure": 1.5}]

    key = f"suite-rules-{uuid.uuid4().hex}"
    first = once_per_run(tmp_path_factory, key, make)
    assert once_per_run(tmp_path_factory, key, make) == first == ["stdout", {"figure": 1.5}]
    assert len(made) == 1 and made[0].is_dir()
    assert made[0].parent == shared_directory(tmp_path_factory)


def test_a_value_that_failed_is_made_again(tmp_path_factory: pytest.TempPathFactory) -> None:
    key = f"suite-rules-{uuid.uuid4().hex}"

    def broken(directory: Path) -> object:
        raise RuntimeError("the benchmark crashed")

    with pytest.raises(RuntimeError, match="the benchmark crashed"):
        once_per_run(tmp_path_factory, key, broken)
    assert once_per_run(tmp_path_factory, key, lambda d: 7) == 7
