"""Reading a docs page as a worked example: its fenced blocks, and the files and transcripts a
test plays in the page's order (a ``yaml`` block whose first line names a file of the example's
pack is written there; a ``console`` block is a command and the output it must print)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

_BLOCK = re.compile(r"```(yaml|console|python|text)\n(.*?)```", re.S)


def blocks(page: Path, section: str | None = None) -> list[tuple[str, str]]:
    """(info, text) of each fenced block of the page, or of its section whose heading starts
    with ``section`` (``"## 4."``: up to the next heading of that level or above)."""
    text = page.read_text(encoding="utf-8")
    if section is not None:
        text = section_text(text, section)
    return [(m[1], m[2]) for m in _BLOCK.finditer(text)]


def section_text(text: str, heading: str) -> str:
    """The section of a Markdown text whose heading line starts with ``heading``, up to the
    next heading of its level or above (lines inside fenced blocks are no headings)."""
    level = len(heading.split(" ")[0])
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        is_heading = not fenced and re.match(r"#+ ", line) is not None
        if out and is_heading and len(line.split(" ")[0]) <= level:
            break
        if out or (is_heading and line.startswith(heading)):
            out.append(line)
    assert out, f"no section {heading!r}"
    return "".join(out)


def steps(page: Path, pack: str, section: str | None = None) -> list[tuple[str, str, str]]:
    """("file", path, text) and ("run", command, expected output), in the page's order (or
    its ``section``'s); files are those whose first line is ``# <pack>/...yaml``."""
    named_file = re.compile(rf"# ({re.escape(pack)}/\S+\.yaml)\n")
    out: list[tuple[str, str, str]] = []
    for info, text in blocks(page, section):
        named = named_file.match(text)
        if info == "yaml" and named is not None:
            out.append(("file", named[1], text))
        elif info == "console":
            command, _, expected = text.partition("\n")
            out.append(("run", command.removeprefix("$ "), expected))
    return out


def play(steps: list[tuple[str, str, str]], root: Path, out: Callable[[], str]) -> list[int]:
    """Write each file under ``root`` and run each ``charter`` command there (the caller has
    made ``root`` the working directory), checking that it prints exactly the page's output
    (``out`` reads what was printed since the last call); the commands' exit codes."""
    from charter.cli.main import main

    codes = []
    for kind, what, text in steps:
        if kind == "file":
            path = root / what
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            continue
        argv = shlex.split(what)
        assert argv[0] == "charter"
        codes.append(main(argv[1:]))
        got = out()
        assert got.splitlines() == text.splitlines(), f"{what}\n{got}"
    return codes
