"""The JSON Schemas of a skill contract (``input_schema``, ``output_schema``): part of the
``skills`` stage (``charter.compile.skills``).

A schema must be valid JSON Schema 2020-12 (CH320, every problem at once, in document order,
with a hint), and a ``pattern`` in it must not backtrack catastrophically (CH112, a warning).
Checking a schema is its own idea, apart from what the contract says about its arguments,
limits and tests, and is all that needs the ``jsonschema`` libraries.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import jsonschema_rs

from charter.compile.redos import catastrophe, catastrophic
from charter.diagnostics import Diagnostic, did_you_mean, error, warning
from charter.pack.yamlsrc import LocatedDoc, Pointer


def contract_schema(
    doc: LocatedDoc,
    key: str,
    schema: dict[str, Any] | None,
    name: str,
    diagnostics: list[Diagnostic],
) -> dict[str, Any] | None:
    """``schema``, under ``key`` of skill ``name``'s contract; None when it is not valid. A
    missing one (the schema check reported it) counts as the empty schema."""
    raw = schema if schema is not None else {}
    if jsonschema_rs.meta.is_valid(raw):
        schema_patterns(doc, raw, (key,), diagnostics)
        return raw  # the usual case, fast; jsonschema explains the rest
    meta = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    # every problem at once (check_schema would stop at the first), in document order
    problems = sorted(meta.iter_errors(raw), key=lambda e: _path_key(e.absolute_path))
    for exc in problems:
        ptr: Pointer = (key, *exc.absolute_path)
        diagnostics.append(
            error(
                "CH320",
                f"the {key} of skill '{name}' is not valid JSON Schema: {exc.message}",
                doc.loc(ptr),
                _schema_hint(exc),
            )
        )
    return None if problems else raw


def schema_patterns(
    doc: LocatedDoc, schema: Any, ptr: Pointer, diagnostics: list[Diagnostic]
) -> None:
    """CH112 for a ``pattern`` (or ``patternProperties`` key) that can backtrack
    catastrophically: the guard bounds its search in time, the author should fix it."""
    if isinstance(schema, list):
        for n, item in enumerate(schema):
            schema_patterns(doc, item, (*ptr, n), diagnostics)
        return
    if not isinstance(schema, dict):
        return
    for k, v in schema.items():
        if k == "pattern" and isinstance(v, str):
            for found in catastrophic(v)[:1]:
                at = doc.loc((*ptr, k))
                diagnostics.append(warning("CH112", *catastrophe(found, at)))
        elif k == "patternProperties" and isinstance(v, dict):
            for prop in v:
                for found in catastrophic(str(prop))[:1]:
                    at = doc.loc((*ptr, k))
                    diagnostics.append(warning("CH112", *catastrophe(found, at)))
        if k not in ("const", "enum", "examples", "default"):
            schema_patterns(doc, v, (*ptr, k), diagnostics)


def _path_key(path: Any) -> tuple[tuple[int, int, str], ...]:
    """A JSON path as a sort key: list indexes in number order, before names."""
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in path)


_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


def _schema_hint(exc: Any) -> str:
    """An unknown type name gets the type names; any other problem the reference."""
    path = list(exc.absolute_path)
    if path and path[-1] == "type" and isinstance(exc.instance, str):
        return did_you_mean(exc.instance, _TYPES)
    return "see https://json-schema.org/draft/2020-12 for the keywords"
