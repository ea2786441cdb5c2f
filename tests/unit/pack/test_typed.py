"""The typed pack model reads any document: what the schema let through is kept, what it rejected
becomes a default, and validating a model never raises (the compile stages run on files the
schema rejected, to report every other problem in the same run)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field

import charter.pack.typed as typed
from charter.pack.typed._lenient import (
    DocModel,
    Entries,
    Flag,
    Items,
    MapOf,
    OptBool,
    OptInt,
    OptMap,
    OptNum,
    OptStr,
    RawList,
    RawMap,
    Str,
    Strs,
    Sub,
)
from tests.support.hypo import examples


def _models() -> list[type[DocModel]]:
    found: dict[str, type[DocModel]] = {}
    for info in pkgutil.iter_modules(typed.__path__):
        module = importlib.import_module(f"{typed.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, DocModel) and value is not DocModel:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


class Leaf(DocModel):
    name: Str = ""
    title: OptStr = None
    count: OptInt = None
    share: OptNum = None
    on: Flag = False
    tags: Strs = ()
    raw: RawList = ()
    more: RawMap = Field(default_factory=dict)


class Tree(DocModel):
    leaf: Sub[Leaf] = Leaf()
    items: Items[Leaf] = ()
    named: Entries[Leaf] = Field(default_factory=dict)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, Leaf()),
        (
            {"name": "a", "title": "t", "count": 3, "share": 0.5, "on": True, "tags": ["x"]},
            Leaf(name="a", title="t", count=3, share=0.5, on=True, tags=("x",)),
        ),
        # what the schema rejected becomes the default: never a bool for a number, never a
        # number for a string, never a truthy string for a flag
        (
            {"name": 1, "title": ["t"], "count": True, "share": False, "on": "yes", "tags": "x"},
            Leaf(),
        ),
        ({"count": 2.5, "share": 2, "tags": ["x", 1, None, "y"]}, Leaf(share=2.0, tags=("x", "y"))),
        ({"raw": {"a": 1}, "more": [1]}, Leaf()),
        ({"raw": [1, "a"], "more": {"k": [1]}}, Leaf(raw=(1, "a"), more={"k": [1]})),
    ],
)
def test_a_field_keeps_its_type_or_its_default(data: dict[str, Any], expected: Leaf) -> None:
    assert Leaf.read(data) == expected


def test_items_keep_the_files_indexes() -> None:
    tree = Tree.read({"items": [{"name": "a"}, "b", None, {"name": 3}], "leaf": "x"})
    assert tree.items == (Leaf(name="a"), None, None, Leaf())
    assert tree.leaf == Leaf()
    assert Tree.read({"named": {"a": {"name": "n"}, "b": []}}).named == {
        "a": Leaf(name="n"),
        "b": None,
    }
    assert Tree.read({"items": {"name": "a"}, "named": ["a"]}) == Tree()


class Either(DocModel):
    on: OptBool = None
    schema_: OptMap = Field(default=None, alias="schema")
    lists: MapOf[Strs] = Field(default_factory=dict)
    steps: MapOf[Items[Leaf]] = Field(default_factory=dict)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, (None, None, {}, {})),
        ({"on": False, "schema": {}}, (False, {}, {}, {})),
        ({"on": True, "schema": {"type": "object"}}, (True, {"type": "object"}, {}, {})),
        # false and absent differ, and so do {} and absent; a wrong value reads as absent
        ({"on": "no", "schema": ["type"]}, (None, None, {}, {})),
        (
            {"lists": {"a": ["x", 1], "b": "y"}, "steps": {"s": [{"name": "n"}, 2], "t": {}}},
            (None, None, {"a": ("x",), "b": ()}, {"s": (Leaf(name="n"), None), "t": ()}),
        ),
        ({"lists": ["a"], "steps": "s"}, (None, None, {}, {})),
    ],
)
def test_a_flag_a_mapping_or_none_and_a_mapping_of_fields(
    data: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    read = Either.read(data)
    assert (read.on, read.schema_, read.lists, read.steps) == expected


def test_a_document_that_is_no_mapping_reads_as_every_default() -> None:
    for value in (None, [], "text", 3):
        assert Tree.read(value) == Tree()


def test_every_pack_file_kind_has_a_model() -> None:
    assert _models(), "charter.pack.typed defines no model"


def _keys(model: type[DocModel]) -> list[str]:
    return sorted({f.alias or name for name, f in model.model_fields.items()})


@pytest.mark.parametrize("model", _models(), ids=lambda m: f"{m.__module__}.{m.__qualname__}")
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_document_validates(model: type[DocModel], data: st.DataObject) -> None:
    """Any JSON value, and any values under the keys the model knows, validate."""
    model.read(data.draw(json_values))
    doc = data.draw(st.fixed_dictionaries({}, optional=dict.fromkeys(_keys(model), json_values)))
    model.read(doc)
