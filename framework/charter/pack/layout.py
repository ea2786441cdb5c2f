"""What a pack directory holds that the loader would not read: nothing is ignored silently.

A pack is read by file name (``rules.yaml``, ``goals.yaml``, ``skills/*.yaml``,
``tests/conversations/*.yaml`` ...). A misspelt or misplaced file (``rules.yml``, ``rule.yaml``,
``tests/rules_test.yaml``) would simply not be read, and the pack would validate and test green
with fewer rules than its author wrote. So every entry of the pack directory is accounted for:

* ``CH005`` (warning): an entry the loader does not read — with the closest pack file name as a
  hint. Documentation (``*.md``, ``*.txt``, ``README``, ``LICENSE``), hidden entries and
  ``__pycache__`` are expected and not reported. ``charter validate --strict`` fails on it.
* ``CH006`` (error): a pack file that is not a readable regular file — a directory named
  ``rules.yaml``, a dangling symbolic link or a link loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning

# the files a pack's root may hold, read by the loader
PACK_FILES = (
    "pack.yaml",
    "rules.yaml",
    "goals.yaml",
    "memory.yaml",
    "fallbacks.yaml",
    "faq.yaml",
    "learning.yaml",
    "responses.yaml",
)
SKILLS_DIR = "skills"
TESTS_DIR = "tests"
CONVERSATIONS_DIR = "conversations"
INTENTS_FILE = "intents.yaml"  # tests/intents.yaml: the intent test table
_DOC_SUFFIXES = frozenset({".md", ".txt", ".rst"})
_DOC_STEMS = ("readme", "license", "licence", "changelog", "notice", "authors")


def _expected(entry: Path) -> bool:
    """Entries a pack directory may hold without being read: docs, hidden, caches."""
    name = entry.name
    if name.startswith(".") or name == "__pycache__":
        return True
    return entry.is_file() and (
        entry.suffix.lower() in _DOC_SUFFIXES or name.lower().startswith(_DOC_STEMS)
    )


def _entries(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError:
        return []


def _not_regular(path: Path, shown: str) -> Diagnostic | None:
    """CH006 when ``path`` exists as a name but is not a readable regular file."""
    if path.is_symlink() and not path.exists():
        try:
            path.resolve(strict=True)
            why = "a symbolic link to nothing"
        except RuntimeError:  # the loop Python reports on resolving it
            why = "a symbolic link loop"
        except OSError as exc:
            why = "a symbolic link loop" if exc.errno == 40 else "a symbolic link to nothing"
        return error(
            "CH006",
            f"{path.name} is {why}: it is not read",
            Location(shown),
            "point the link at a file, or replace it with the file itself",
        )
    if path.exists() and not path.is_file():
        return error(
            "CH006",
            f"{path.name} is a directory, not a file: it is not read",
            Location(shown),
            f"a pack's {path.name} is one YAML file",
        )
    return None


def audit(root: Path, display: str, patches: str | None) -> list[Diagnostic]:
    """Every entry of the pack at ``root`` that the loader does not read, or cannot.

    ``display`` is the pack directory as diagnostics show it; ``patches`` the learning patches
    directory (relative to the pack), which is read when learning declares one."""
    out: list[Diagnostic] = []
    dirs = {SKILLS_DIR, TESTS_DIR}
    if patches:
        dirs.add(Path(patches).parts[0])
    for entry in _entries(root):
        shown = f"{display}/{entry.name}"
        if entry.name in PACK_FILES or entry.name in dirs:
            bad = _not_regular(entry, shown) if entry.name in PACK_FILES else None
            if bad is not None:
                out.append(bad)
            continue
        if _expected(entry):
            continue
        out.append(_unread(entry, shown, (*PACK_FILES, *(d + "/" for d in sorted(dirs)))))
    out += _audit_dir(root / SKILLS_DIR, f"{display}/{SKILLS_DIR}", "skill contracts")
    out += _audit_tests(root / TESTS_DIR, f"{display}/{TESTS_DIR}")
    return out


def _unread(entry: Path, shown: str, known: Iterable[str]) -> Diagnostic:
    kind = "directory" if entry.is_dir() else "file"
    hint = did_you_mean(entry.name + ("/" if entry.is_dir() else ""), known)
    if entry.suffix in (".yml", ".json") and entry.with_suffix(".yaml").name in PACK_FILES:
        hint = f"pack files end in .yaml: rename it to {entry.with_suffix('.yaml').name}"
    return warning(
        "CH005",
        f"{kind} {entry.name} is not a pack file: it is not read",
        Location(shown),
        hint
        if hint.startswith(("did you mean", "pack files"))
        else ("a pack reads " + ", ".join(known) + "; move it out of the pack or rename it"),
    )


def _audit_dir(directory: Path, display: str, what: str) -> list[Diagnostic]:
    """A directory of ``*.yaml`` files: anything else in it is not read."""
    out: list[Diagnostic] = []
    for entry in _entries(directory):
        shown = f"{display}/{entry.name}"
        if entry.suffix == ".yaml":
            bad = _not_regular(entry, shown)
            if bad is not None:
                out.append(bad)
            continue
        if _expected(entry):
            continue
        hint = (
            f"{what} end in .yaml: rename it to {entry.with_suffix('.yaml').name}"
            if entry.suffix in (".yml", ".json")
            else f"this directory holds {what}, one *.yaml file each"
        )
        kind = "directory" if entry.is_dir() else "file"
        out.append(
            warning(
                "CH005",
                f"{kind} {entry.name} is not read: only *.yaml files are",
                Location(shown),
                hint,
            )
        )
    return out


def _audit_tests(directory: Path, display: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for entry in _entries(directory):
        if entry.name == INTENTS_FILE:
            bad = _not_regular(entry, f"{display}/{entry.name}")
            out += [bad] if bad is not None else []
            continue
        if entry.name == CONVERSATIONS_DIR or _expected(entry):
            continue
        kind = "directory" if entry.is_dir() else "file"
        hint = did_you_mean(entry.name, (INTENTS_FILE, CONVERSATIONS_DIR + "/"))
        out.append(
            warning(
                "CH005",
                f"{kind} {entry.name} is not read: a pack's tests are the tests: of each file, "
                f"the conversations in {TESTS_DIR}/{CONVERSATIONS_DIR}/ and the intent table "
                f"{TESTS_DIR}/{INTENTS_FILE}",
                Location(f"{display}/{entry.name}"),
                hint
                if hint.startswith("did you mean")
                else "put rule cases under tests: in rules.yaml, conversations in "
                f"{TESTS_DIR}/{CONVERSATIONS_DIR}/*.yaml, intent phrases in "
                f"{TESTS_DIR}/{INTENTS_FILE}",
            )
        )
    return out + _audit_dir(
        directory / CONVERSATIONS_DIR, f"{display}/{CONVERSATIONS_DIR}", "conversations"
    )
