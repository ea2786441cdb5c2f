"""Response templates: ``尾号{account_tail}的余额为{balance|amount}。`` parsed once into a frozen
``Template`` (literal text and fields with their offsets), rendered many times.

A field is a dotted path into the template's scope (``payee``, ``args.account_tail``,
``results.0.balance``) followed by formatters (``|amount``, ``|date|...``) that plugins register
(``charter_register_formatters``). ``{{`` and ``}}`` are literal braces.

Rendering is total and never guesses: a field whose value is missing (None, "", [], {}) or that a
formatter cannot write (it returns None) makes the whole template *not eligible* — ``render``
returns None and the composer picks the next variant. Text values are used as they are, numbers
in plain decimal notation, lists joined by 、; a mapping needs a formatter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import regex

if TYPE_CHECKING:
    from charter.contracts.rules import Formatter

_NAME = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
MISSING = object()


@dataclass(frozen=True)
class Field:
    path: tuple[str, ...]
    formatters: tuple[str, ...]
    start: int  # offsets of "{...}" in the template's text
    end: int

    @property
    def dotted(self) -> str:
        return ".".join(self.path)

    @property
    def root(self) -> str:
        return self.path[0]


@dataclass(frozen=True)
class Template:
    text: str  # as written
    parts: tuple[str | Field, ...]

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(p for p in self.parts if isinstance(p, Field))

    def render(self, scope: Mapping[str, Any], formatters: Mapping[str, Formatter]) -> str | None:
        """The text with every field written, or None when one cannot be."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = lookup(scope, part.path)
            if not present(value):
                return None
            for name in part.formatters:
                value = formatters[name].format(value)
                if not present(value):
                    return None
            written = plain(value)
            if written is None:
                return None
            out.append(written)
        return "".join(out)


@dataclass(frozen=True)
class TemplateError(Exception):
    message: str
    start: int
    end: int
    hint: str = ""


def parse_template(text: str) -> Template:
    """The template's parts; ``TemplateError`` (with the offsets of the problem) otherwise."""
    parts: list[str | Field] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{" and text.startswith("{{", i):
            buf.append("{")
            i += 2
            continue
        if ch == "}" and text.startswith("}}", i):
            buf.append("}")
            i += 2
            continue
        if ch == "}":
            raise TemplateError("a '}' without its '{'", i, i + 1, "write '}}' for a brace")
        if ch != "{":
            buf.append(ch)
            i += 1
            continue
        close = text.find("}", i + 1)
        opened = text.find("{", i + 1)
        if close < 0 or (0 <= opened < close):
            raise TemplateError("a '{' without its '}'", i, i + 1, "write '{{' for a brace")
        if buf:
            parts.append("".join(buf))
            buf = []
        parts.append(_field(text[i + 1 : close], i, close + 1))
        i = close + 1
    if buf:
        parts.append("".join(buf))
    return Template(text, tuple(parts))


def _field(inner: str, start: int, end: int) -> Field:
    pieces = [p.strip() for p in inner.split("|")]
    path = pieces[0].split(".") if pieces[0] else []
    if not path or not all(_NAME.fullmatch(seg) for seg in path) or path[0].isdigit():
        raise TemplateError(
            f"'{{{inner}}}' does not name a field",
            start,
            end,
            "a field is a name or a dotted path, e.g. {payee} or {args.account_tail}",
        )
    formats = pieces[1:]
    for f in formats:
        if not f or not _NAME.fullmatch(f) or f.isdigit():
            raise TemplateError(
                f"'{{{inner}}}' has an empty or malformed formatter",
                start,
                end,
                "write {field|formatter}, e.g. {balance|amount}",
            )
    return Field(tuple(path), tuple(formats), start, end)


def lookup(scope: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` (mapping keys, list indices), or None."""
    cur = scope
    for seg in path:
        if isinstance(cur, Mapping):
            cur = cur.get(seg)
        elif isinstance(cur, Sequence) and not isinstance(cur, str) and seg.isdigit():
            k = int(seg)
            cur = cur[k] if k < len(cur) else None
        else:
            return None
        if cur is None:
            return None
    return cur


def present(value: Any) -> bool:
    if value is None or value is MISSING:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, Sequence | Mapping):
        return len(value) > 0
    return True


def plain(value: Any) -> str | None:
    """A value as a template writes it without a formatter; None for a mapping."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float | Decimal):
        # plain decimal notation: 0.1 stays 0.1 (not 0.1000000000000000055...), 1e6 is 1000000
        number = Decimal(str(value)) if isinstance(value, float) else value
        text = format(number.normalize(), "f")
        return text
    if isinstance(value, Sequence):
        items = [plain(v) for v in value]
        if any(i is None for i in items):
            return None
        return "、".join(i for i in items if i is not None)
    return None
