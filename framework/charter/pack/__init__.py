"""Reading pack files: YAML with source locations, and their JSON Schemas."""

from __future__ import annotations

from charter.pack.schema import KINDS, FileKind, schema_for, validate
from charter.pack.yamlsrc import LocatedDoc, Pointer, load_yaml

__all__ = ["KINDS", "FileKind", "LocatedDoc", "Pointer", "load_yaml", "schema_for", "validate"]
