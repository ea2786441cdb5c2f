"""The kinds of file a pack holds, their JSON Schemas, and schema errors as Diagnostics.

A new kind of pack file is one ``FileKind`` entry plus one schema in ``schemas/``. Messages are
written here rather than taken from jsonschema, whose texts are Python reprs; the schemas carry
a few ``x-`` annotations (ignored by validators) that make the messages specific.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from charter.diagnostics import Diagnostic, Severity, did_you_mean, error, sort_diagnostics, warning
from charter.pack.yamlsrc import LocatedDoc, Pointer


@dataclass(frozen=True)
class FileKind:
    name: str
    schema_file: str  # in charter/pack/schemas/
    pattern: str  # glob within a pack directory
    required: bool


KINDS: dict[str, FileKind] = {
    kind.name: kind
    for kind in (
        FileKind("pack", "pack.json", "pack.yaml", required=True),
        FileKind("rules", "rules.json", "rules.yaml", required=False),
        FileKind("goals", "goals.json", "goals.yaml", required=False),
        FileKind("memory", "memory.json", "memory.yaml", required=False),
        FileKind("skill", "skill.json", "skills/*.yaml", required=False),
        FileKind("fallbacks", "fallbacks.json", "fallbacks.yaml", required=False),
        FileKind("faq", "faq.json", "faq.yaml", required=False),
        FileKind("responses", "responses.json", "responses.yaml", required=False),
        FileKind("learning", "learning.json", "learning.yaml", required=False),
        FileKind("patches", "patches.json", "patches/*.yaml", required=False),
        FileKind(
            "conversations",
            "conversations.json",
            "tests/conversations/*.yaml",
            required=False,
        ),
        FileKind("intents", "intents.json", "tests/intents.yaml", required=False),
    )
}


@functools.cache
def schema_for(kind: str) -> dict[str, Any]:
    """The parsed JSON Schema of a file kind; shared, so do not mutate it."""
    resource = resources.files("charter.pack") / "schemas" / KINDS[kind].schema_file
    schema: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return schema


def _is_specifier(value: object) -> bool:
    if isinstance(value, str):
        SpecifierSet(value)
    return True


_FORMAT_HINTS = {"pep440-specifier": "use a PEP 440 specifier such as '>=0.1,<0.2'"}
_FORMAT_NAMES = {"pep440-specifier": "version specifier"}


@functools.cache
def _validator(kind: str) -> Any:
    # Imported on first use: jsonschema is slow to import and `charter check` never needs it.
    from jsonschema import Draft202012Validator, FormatChecker

    formats = FormatChecker()
    formats.checks("pep440-specifier", raises=InvalidSpecifier)(_is_specifier)
    return Draft202012Validator(schema_for(kind), format_checker=formats)


@functools.cache
def _fast(kind: str) -> Any:
    """jsonschema-rs for the common question, "any problem at all?" (well under a
    millisecond per file where jsonschema takes several); None for a kind whose schema has
    a format of Charter's own, which only the jsonschema validator knows."""
    schema = schema_for(kind)
    if '"format"' in json.dumps(schema):
        return None
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(schema)


def validate(doc: LocatedDoc, kind: str) -> list[Diagnostic]:
    """Every schema problem in ``doc``, each at the node it concerns."""
    fast = _fast(kind)
    try:
        if fast is not None and fast.is_valid(doc.data):
            return []
    except (TypeError, ValueError):  # a value JSON has no type for (a YAML date): the slow way
        pass
    return _diagnose(doc, _validator(kind))


def _diagnose(doc: LocatedDoc, validator: Any) -> list[Diagnostic]:
    seen: set[Pointer] = set()
    out: list[Diagnostic] = []
    for err in validator.iter_errors(doc.data):
        out.extend(_convert(doc, err, seen))
    return sort_diagnostics(out)


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "a mapping"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'" if len(value) <= 40 else f"'{value[:39]}…'"
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return _type_of(value)


def _subject(ptr: Pointer) -> str:
    if not ptr:
        return "the file"
    if isinstance(ptr[-1], int):
        return f"item {ptr[-1] + 1} of {_subject(ptr[:-1])}"
    return f"'{ptr[-1]}'"


# a string the schema describes as written in the rule DSL ("DSL condition; ...")
_DSL = re.compile(r"^(?:A )?DSL (condition|expression)")


def _dsl_hint(ptr: Pointer, value: Any, schema: dict[str, Any]) -> str:
    """For ``when: true``: quoting it would give the DSL the word 'true', which is no
    condition either. A field the schema says may be left out says so."""
    described = str(schema.get("description", ""))
    found = _DSL.match(described)
    if not found or not ptr:
        return ""
    got = "true or false" if isinstance(value, bool) else "a number"
    noun = "an expression" if found[1] == "expression" else "a condition"
    hint = f"'{ptr[-1]}' takes {noun} written in the DSL (docs/dsl.md), not {got}"
    if value is True and "Omit" in described:
        hint += f": to check the rule always, leave '{ptr[-1]}' out"
    return hint


def _type_error(ptr: Pointer, expected: Any, value: Any, schema: dict[str, Any]) -> tuple[str, str]:
    names = [expected] if isinstance(expected, str) else list(expected)
    want = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
    got = "it is empty" if value is None else f"not {_type_of(value)}"
    verb = "contain" if not ptr else "be"
    hint = ""
    if "string" in names and isinstance(value, int | float):
        hint = _dsl_hint(ptr, value, schema) or "put the value in quotes to make it a string"
    elif "boolean" in names and isinstance(value, str):
        hint = "write true or false, without quotes"
    elif "array" in names and isinstance(value, str):
        hint = "write a list: [a, b] or one '- item' per line"
    joiner = ", but " if value is None else ", "
    return f"{_subject(ptr)} must {verb} {want}{joiner}{got}", hint


def _required(doc: LocatedDoc, err: Any, ptr: Pointer, seen: set[Pointer]) -> list[Diagnostic]:
    if ptr in seen:
        return []  # jsonschema reports each missing key; one pass names them all
    seen.add(ptr)
    schema, inst = err.schema, err.instance
    noun, ident = schema.get("x-noun", ""), inst.get(schema.get("x-id-key", "id"))
    suffix = ""
    if isinstance(ident, str) and ident:
        suffix = f" in {noun} '{ident}'" if noun else f" in '{ident}'"
    hint = "required keys: " + ", ".join(err.validator_value)
    return [
        error("CH011", f"missing required key '{key}'{suffix}", doc.loc(ptr), hint)
        for key in err.validator_value
        if key not in inst
    ]


def _unknown(doc: LocatedDoc, err: Any, ptr: Pointer) -> list[Diagnostic]:
    props = list(err.schema.get("properties", {}))
    patterns = list(err.schema.get("patternProperties", {}))
    return [
        warning("CH012", f"unknown key '{key}'", doc.key_loc((*ptr, key)), did_you_mean(key, props))
        for key in err.instance
        if key not in props and not any(re.search(p, key) for p in patterns)
    ]


def _convert(doc: LocatedDoc, err: Any, seen: set[Pointer]) -> list[Diagnostic]:
    ptr: Pointer = tuple(err.absolute_path)
    kw, arg, value, schema = err.validator, err.validator_value, err.instance, err.schema
    subject = _subject(ptr)
    if kw in ("oneOf", "anyOf"):
        from jsonschema.exceptions import best_match

        best = best_match([err])  # descends into the alternatives to the most specific error
        if best is err:
            message = f"{subject} does not match exactly one allowed form"
            return [error("CH013", message, doc.loc(ptr))]
        # The closest alternative's complaint is the useful one; the code stays "not allowed".
        inner = _convert(doc, best, seen)
        return [dataclasses.replace(d, code="CH013", severity=Severity.ERROR) for d in inner]
    if kw == "required":
        return _required(doc, err, ptr, seen)
    if kw == "additionalProperties" and arg is False:
        return _unknown(doc, err, ptr)
    if kw == "type":
        message, hint = _type_error(ptr, arg, value, schema)
        if not ptr and schema.get("required"):
            hint = "start with the keys " + ", ".join(schema["required"])
        return [error("CH010", message, doc.loc(ptr), hint)]
    message, hint, where = _constraint(kw, arg, value, schema, subject), "", doc.loc(ptr)
    if kw == "enum" and isinstance(value, str):
        close = did_you_mean(value, [str(option) for option in arg])
        hint = close if close.startswith("did you mean") else ""
    elif kw == "pattern" and isinstance(value, str):
        slug = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
        if slug and re.search(arg, slug):
            hint = f"try '{slug}'"
        elif not schema.get("x-pattern-help"):  # the message already says it in words
            hint = f"pattern: {arg}"
    elif kw == "format":
        hint = _FORMAT_HINTS.get(arg, "")
    elif kw == "uniqueItems":
        where = doc.loc((*ptr, _first_repeat(value)))
    return [error("CH013", message, where, hint)]


def _constraint(kw: str, arg: Any, value: Any, schema: dict[str, Any], subject: str) -> str:
    shown = _show(value)
    if kw == "enum":
        return f"{subject} must be one of {', '.join(_show(o) for o in arg)}, not {shown}"
    if kw == "const":
        return f"{subject} must be {_show(arg)}, not {shown}"
    if kw == "pattern":
        rule = schema.get("x-pattern-help", f"text matching the pattern {arg}")
        return f"{subject} must be {rule}, not {shown}"
    bounds = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "greater than",
        "exclusiveMaximum": "less than",
    }
    if kw in bounds:
        return f"{subject} must be {bounds[kw]} {_show(arg)}, not {shown}"
    if kw in ("minLength", "minItems", "minProperties") and arg == 1:
        return f"{subject} must not be empty"
    if kw in ("minLength", "maxLength", "minItems", "maxItems"):
        limit = "at least" if kw.startswith("min") else "at most"
        if kw.endswith("Length"):
            return f"{subject} must be {limit} {arg} characters long"
        return f"{subject} must have {limit} {arg} items"
    if kw == "uniqueItems":
        return f"{subject} lists {_show(value[_first_repeat(value)])} more than once"
    if kw == "format":
        return f"{subject} is not a valid {_FORMAT_NAMES.get(arg, arg)}: {shown}"
    return f"{subject} is not allowed here (schema keyword '{kw}')"


def _first_repeat(items: list[Any]) -> int:
    return next((i for i, item in enumerate(items) if item in items[:i]), 0)
