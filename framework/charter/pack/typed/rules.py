"""The typed model of a ``rules.yaml`` (schema ``rules.json``): its rules and the test cases
that pin them, read leniently (``_lenient``) after the schema has reported what is wrong.

A rule's ``id``, ``check`` and ``on_fail`` are None when absent or no string: the loader leaves
such a rule out (the schema said why), and needs to tell it from an empty string to do so.
"""

from __future__ import annotations

from pydantic import Field

from charter.pack.typed._lenient import DocModel, Flag, Items, OptStr, RawMap, Str, Strs


class Rule(DocModel):
    """One item of ``rules:``."""

    id: OptStr = None
    describe: Str = ""
    check: OptStr = None
    on_fail: OptStr = None
    when: OptStr = None
    message: Str = ""
    on_unfixed: OptStr = None
    override: Flag = False
    tags: Strs = ()


class Case(DocModel):
    """One item of ``tests:``: an answer and what the rules must make of it."""

    name: Str = ""
    output: OptStr = None
    input: Str = ""
    context: RawMap = Field(default_factory=dict)
    pass_: Strs = Field((), alias="pass")
    fail: Strs = ()
    verdict: OptStr = None
    fixed: OptStr = None


class RulesFile(DocModel):
    """A ``rules.yaml``; item ``i`` of ``rules`` and ``tests`` is item ``i`` of the file (None
    where that is no mapping), so that ``("rules", i)`` points at it."""

    rules: Items[Rule] = ()
    tests: Items[Case] = ()
