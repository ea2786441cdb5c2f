"""Reading the configuration file: which file, its ``charter`` table, and where each key is.

``tomllib`` keeps no positions, so a small line scan of the TOML text finds the line and column
of every table header and ``key =``; a diagnostic then points at the key it concerns (a key
inside an inline table or a multi-line array points at the nearest enclosing key instead).
The scan also redacts secrets from the text a renderer shows under a diagnostic, by their
shape (``charter.text.masking``): the value of a secret-looking key, every header value under a
``headers`` table but a harmless one, URL passwords and secret parameters, tokens.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from charter.diagnostics import Diagnostic, Location, error
from charter.text.masking import MASK, harmless_header, headers_name, mask_text, secret_name

KeyPath = tuple[str | int, ...]

_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*"
_HEADER = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_DOTTED})[ \t]*\]")
_ASSIGN = re.compile(rf"[ \t]*({_DOTTED})[ \t]*=")
_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\]|\\.)*"|\'[^\']*\'')
# ``name = "value"`` inside an inline table (``headers = { X-Api-Key = "..." }``)
_INLINE_PAIR = re.compile(rf"({_KEY})([ \t]*=[ \t]*)(\"(?:[^\"\\]|\\.)*\"|'[^']*')")


@dataclass(frozen=True)
class ConfigFile:
    """The file that configures Charter here, and its ``charter`` table."""

    path: str  # as shown in diagnostics: relative when it is in the working directory
    text: str
    data: Mapping[str, Any]  # the whole of charter.toml, or [tool.charter] of pyproject.toml
    prefix: KeyPath  # where ``data`` sits in the document
    positions: Mapping[KeyPath, tuple[int, int, int]] = field(repr=False)

    def locate(self, key: KeyPath) -> Location:
        """The key's line and column, else its nearest located ancestor's, else the file."""
        full = self.prefix + key
        while full:
            if full in self.positions:
                line, col, end = self.positions[full]
                return Location(self.path, line, col, line, end)
            full = full[:-1]
        return Location(self.path)


def _parts(dotted: str) -> tuple[str, ...]:
    out = []
    for part in re.findall(_KEY, dotted):
        if part[0] == '"':
            try:
                part = json.loads(part)
            except ValueError:  # a TOML escape JSON lacks (\UXXXXXXXX): good enough to locate
                part = part[1:-1]
        elif part[0] == "'":
            part = part[1:-1]
        out.append(part)
    return tuple(out)


def key_positions(text: str) -> dict[KeyPath, tuple[int, int, int]]:
    """``(line, col, end_col)`` of every header and ``key =`` in a TOML text, by key path;
    the n-th ``[[a.b]]`` table is ``("a", "b", n)``."""
    positions: dict[KeyPath, tuple[int, int, int]] = {}
    counts: dict[KeyPath, int] = {}  # array-of-tables paths and how many there are so far
    table: KeyPath = ()
    in_string = ""  # the open multi-line string's delimiter
    depth = 0  # open brackets of a multi-line array or inline table

    def resolve(path: tuple[str, ...]) -> KeyPath:
        # a key under an array of tables belongs to its last element
        out: list[str | int] = []
        for part in path:
            out.append(part)
            if tuple(out) in counts:
                out.append(counts[tuple(out)] - 1)
        return tuple(out)

    for n, line in enumerate(text.splitlines(), start=1):
        rest = line
        if in_string:
            if in_string not in line:
                continue
            rest, in_string = line.split(in_string, 1)[1], ""
        elif depth == 0 and (m := _HEADER.match(line)):
            parts = _parts(m[2])
            if m[1] == "[[":
                parent = resolve(parts[:-1]) + parts[-1:]
                index = counts.get(parent, 0)
                counts[parent] = index + 1
                table = (*parent, index)
                positions.setdefault(parent, (n, m.start(2) + 1, m.end(2) + 1))
            else:
                table = resolve(parts)
            positions[table] = (n, m.start(2) + 1, m.end(2) + 1)
            continue
        elif depth == 0 and (m := _ASSIGN.match(line)):
            parts = _parts(m[1])
            for i in range(1, len(parts) + 1):
                positions.setdefault(table + parts[:i], (n, m.start(1) + 1, m.end(1) + 1))
            rest = line[m.end() :]
        rest = _STRINGS.sub('""', rest)
        for delim in ('"""', "'''"):
            if delim in rest:
                in_string, rest = delim, rest.split(delim, 1)[0]
        rest = rest.split("#", 1)[0]
        depth = max(
            depth + rest.count("[") + rest.count("{") - rest.count("]") - rest.count("}"), 0
        )
    return positions


def _mask_inline_headers(rest: str) -> str:
    def one(m: re.Match[str]) -> str:
        parts = _parts(m[1])
        if parts and harmless_header(parts[-1]):
            return m[0]
        return f"{m[1]}{m[2]}{m[3][0]}{MASK}{m[3][0]}"

    return _INLINE_PAIR.sub(one, rest)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """The text with every known secret value, and every secret by its shape, replaced by
    ``***``: what may be shown under a diagnostic. The text need not be valid TOML."""
    text = mask_text(text, secrets) if secrets else text
    lines = []
    in_headers = False
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            parts = _parts(header[2])
            in_headers = bool(parts) and headers_name(parts[-1])
        m = _ASSIGN.match(line)
        if m and not header and (parts := _parts(m[1])):
            name, rest = parts[-1], line[m.end() :]
            header_value = in_headers or (len(parts) > 1 and headers_name(parts[-2]))
            if secret_name(name) or (header_value and not harmless_header(name)):
                line = line[: m.end()] + f' "{MASK}"'
            elif headers_name(name):
                line = line[: m.end()] + _mask_inline_headers(rest)
        lines.append(mask_text(line))
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def _shown(cwd: Path, name: str) -> str:
    # as settings.py does: messages say charter.toml:2:1 when the file is right here
    if cwd.resolve() == Path.cwd().resolve():
        return name
    return str(cwd / name)


def _parse(path: Path, shown: str) -> tuple[str, dict[str, Any]] | Diagnostic:
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        return error("CH400", f"cannot read {path.name}: {exc}", Location(shown))
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "... (at line 3, column 9)": move that into the location
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        loc = Location(shown, int(m[1]), int(m[2])) if m else Location(shown)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        return error("CH400", f"invalid TOML: {message}", loc)


def read_config_file(cwd: Path) -> tuple[ConfigFile | None, list[Diagnostic]]:
    """``charter.toml`` here, else ``[tool.charter]`` of ``pyproject.toml`` here, else None
    (the same choice as the plugin settings make)."""
    for name, prefix in (("charter.toml", ()), ("pyproject.toml", ("tool", "charter"))):
        path = cwd / name
        if not path.is_file():
            continue
        shown = _shown(cwd, name)
        parsed = _parse(path, shown)
        if isinstance(parsed, Diagnostic):
            return None, [parsed]
        text, doc = parsed
        data: Any = doc
        for part in prefix:
            data = data.get(part) if isinstance(data, Mapping) else None
        if data is None:
            continue
        if not isinstance(data, Mapping):
            where = ".".join(str(p) for p in prefix)
            diag = error("CH402", f"{where} must be a table", Location(shown))
            return None, [diag]
        return ConfigFile(shown, text, data, prefix, key_positions(text)), []
    return None, []
