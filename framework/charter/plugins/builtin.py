"""Built-in repairs, formatters, the ``identifier`` extractor and the model-text predicates,
registered through the same hooks a third-party plugin uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from charter.compile.literals import fold_width
from charter.contracts.rules import Extractor, Formatter, Predicate, Repair, RepairArg, RepairInput
from charter.plugins.hookspecs import hookimpl
from charter.reflect.identifier import IdentifierExtractor
from charter.reflect.predicates import PREDICATES


def _one_string(args: Sequence[RepairArg]) -> str:
    if len(args) == 1 and args[0].kind == "string":
        return ""
    return 'expects one string, e.g. append "（请遵医嘱）"'


class Append:
    name = "append"

    def check_args(self, args: Sequence[RepairArg], extractors: Mapping[str, Extractor]) -> str:
        return _one_string(args)

    def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
        extra = str(args[0].value)
        return rin.text if rin.text.endswith(extra) else rin.text + extra


class Prepend:
    name = "prepend"

    def check_args(self, args: Sequence[RepairArg], extractors: Mapping[str, Extractor]) -> str:
        return _one_string(args).replace("append", "prepend")

    def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
        extra = str(args[0].value)
        return rin.text if rin.text.startswith(extra) else extra + rin.text


class Replace:
    """``replace "最低价" with "优惠价"`` or ``replace ["最便宜", "最低价"] with "实惠"``.

    Only the occurrences the failing rule reported are replaced, so an excused occurrence
    (``不能保证`` under ``unless preceded by``) survives.
    """

    name = "replace"

    def check_args(self, args: Sequence[RepairArg], extractors: Mapping[str, Extractor]) -> str:
        ok = (
            len(args) == 3
            and args[0].kind in ("string", "strings")
            and args[1] == RepairArg("name", "with")
            and args[2].kind == "string"
        )
        return "" if ok else 'expects: replace "term" with "text" or replace ["a", "b"] with "text"'

    def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
        value = args[0].value
        terms: tuple[str, ...] = value if isinstance(value, tuple) else (value,)
        new = str(args[2].value)
        # the scan reads full-width as ASCII: ＶＩＰ was reported for "VIP"
        folded = {fold_width(t) for t in terms}
        spans = [s for s in rin.spans if fold_width(rin.text[s[0] : s[1]]) in folded]
        if not spans:
            text = rin.text
            for term in sorted(terms, key=len, reverse=True):
                text = text.replace(term, new)
            return text
        out, last = [], 0
        for start, end in sorted(set(spans)):
            if start < last:
                continue
            out.append(rin.text[last:start])
            out.append(new)
            last = end
        out.append(rin.text[last:])
        return "".join(out)


class Reformat:
    """``reformat money``: rewrite the offending items in the extractor's canonical form."""

    name = "reformat"

    def check_args(self, args: Sequence[RepairArg], extractors: Mapping[str, Extractor]) -> str:
        if len(args) != 1 or args[0].kind != "name":
            return "expects one extractor name, e.g. reformat money"
        if args[0].value not in extractors:
            return f"unknown extractor '{args[0].value}'"
        return ""

    def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
        extractor = rin.extractors[str(args[0].value)]
        items = extractor.extract(fold_width(rin.text))  # as the rule read it: １２３元 is 123元
        blamed = {(i.start, i.end) for i in rin.items}
        if blamed:
            # only what the failing rule blamed: an amount already right keeps its spelling
            items = tuple(i for i in items if (i.start, i.end) in blamed)
        out, last = [], 0
        for item in sorted(items, key=lambda i: i.start):
            new = extractor.canonical(item)
            if new is None or item.start < last:
                continue
            out.append(rin.text[last : item.start])
            out.append(new)
            last = item.end
        out.append(rin.text[last:])
        return "".join(out)


class Annotate:
    """``annotate "（请自行核实）"``: insert the text right after each item the rule blamed."""

    name = "annotate"

    def check_args(self, args: Sequence[RepairArg], extractors: Mapping[str, Extractor]) -> str:
        return _one_string(args).replace("append", "annotate")

    def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
        note = str(args[0].value)
        text = rin.text
        for end in sorted({i.end for i in rin.items}, reverse=True):
            if not text.startswith(note, end):
                text = text[:end] + note + text[end:]
        return text


@hookimpl
def charter_register_repairs() -> Sequence[Repair]:
    return [Append(), Prepend(), Replace(), Reformat(), Annotate()]


class Join:
    """``{items|join}``: a list of strings joined by 、 (a string is written as it is).

    None for an empty list, which would leave a sentence without its object, and for items
    that are not strings: numbers and dates have formatters of their own.
    """

    name = "join"

    def format(self, value: Any) -> str | None:
        if isinstance(value, str):
            return value
        if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            return "、".join(value)
        return None


class Count:
    """``{items|count}``: how many items a list has (``"0"`` for an empty one)."""

    name = "count"

    def format(self, value: Any) -> str | None:
        return str(len(value)) if isinstance(value, list | tuple) else None


@hookimpl
def charter_register_formatters() -> Sequence[Formatter]:
    return [Join(), Count()]


@hookimpl
def charter_register_extractors() -> Sequence[Extractor]:
    """``identifier``: ASCII codes in any language (the model-text grounding check's)."""
    return [IdentifierExtractor()]


@hookimpl
def charter_register_predicates() -> Sequence[Predicate]:
    """``echoes``, ``repetitive``, ``off_language``, ``no_content``: degenerate model text."""
    return list(PREDICATES)
