"""The typed model of ``goals.yaml`` (schema ``goals.json``): what the goals stage
(``charter.compile.goals``) reads, leniently (``_lenient``), after the schema has reported what
is wrong with the file.

Lists of mappings keep the file's indexes (an item that is no mapping is None), because the stage
points its diagnostics at ``("intents", i, "slots", j)``. What a checker of its own reads stays
as written: a skill's ``args`` and ``keep``, a slot's ``personal`` kinds and ``inherits`` (each
item is checked, and pointed at, by its index in the file), and a planner test's open goals, plan
and remembered facts, which the test runner reads back from JSON with every key the author wrote.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from charter.pack.typed._lenient import (
    DocModel,
    Flag,
    Items,
    OptInt,
    OptStr,
    Raw,
    RawList,
    RawMap,
    Str,
    Strs,
    Sub,
)


def _scalar(value: Any) -> Any:
    return value if isinstance(value, str | int | float) else None  # bool is an int


def _mapping_or_none(value: Any) -> Any:
    return value if isinstance(value, dict) else None


def _text_or_mapping_items(value: Any) -> list[Any]:
    if not isinstance(value, list):
        return []
    return [x if isinstance(x, str | dict) else None for x in value]


OptNumber = Annotated[
    float | None,
    BeforeValidator(
        lambda v: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
    ),
]
"""A number as written, or None."""

Scalar = Annotated[str | bool | int | float | None, BeforeValidator(_scalar)]
"""A string, number or boolean as written (a slot's default), or None."""

Confirm = Annotated[
    bool | str, BeforeValidator(lambda v: v if isinstance(v, bool | str) else False)
]
"""``confirm:``: true/false, or the question itself; False when it is neither."""


class Limits(DocModel):
    """``limits:``; None or "" where the file gives no usable value, so that the defaults
    (depth 2, three sub-goals, 30m) are put in by the goals stage alone."""

    max_depth: OptInt = None
    max_new_subgoals: OptInt = None
    confirm_split_over: OptInt = None
    timeout: Str = ""
    root: Str = ""
    aggregate: Str = ""


class Role(DocModel):
    """A slot's ``role:``: the words before and after its value, and the value's kind. The
    words stay as written (each is checked, and pointed at, by its index in the file)."""

    kind: Str = "name"
    before: RawList = ()
    after: RawList = ()


OptRole = Annotated[Role | None, BeforeValidator(_mapping_or_none)]
"""A ``role:`` mapping, or None when the slot has none."""


class Slot(DocModel):
    # None, not "": a slot named "" is still compiled (and its name reported), one without a
    # name is not
    name: OptStr = None
    regex: Str = ""
    extractor: Str = ""
    role: OptRole = None
    type: Str = ""
    required: Flag = False
    ask: Str = ""
    label: Str = ""
    carry: Str = ""
    personal: RawList = ()  # each kind is checked, and pointed at, by the PII check
    memory_key: Str = ""
    default: Scalar = None
    multiple: Flag = False
    model: Flag = False


class SkillBinding(DocModel):
    """An intent's or a stage's ``skill:``. ``args`` and ``keep`` are free-form: the binding is
    compiled with them as written (``args`` as JSON), the skills stage checks them."""

    name: OptStr = None
    args: RawMap = Field(default_factory=dict)
    keep: RawMap = Field(default_factory=dict)
    done: OptStr = None
    moves: Strs = ()


OptSkill = Annotated[SkillBinding | None, BeforeValidator(_mapping_or_none)]
"""A ``skill:`` mapping, or None when there is none (a stage tells its kinds apart by it)."""


class StageStatus(DocModel):
    completed: Str = ""
    aborted: Str = ""


class Stage(DocModel):
    id: OptStr = None
    describe: Str = ""
    slots: Strs = ()
    skill: OptSkill = None
    by: OptStr = None
    status: Sub[StageStatus] = StageStatus()
    quiet: Flag = False


class Deliverable(DocModel):
    """The long form of a deliverable: a DSL check on the output."""

    id: Str = ""
    describe: Str = ""
    check: OptStr = None


Deliverables = Annotated[
    tuple[str | Deliverable | None, ...], BeforeValidator(_text_or_mapping_items)
]
"""A deliverable is a template (a string) or a :class:`Deliverable`; any other item is None, so
that item ``i`` is the file's."""


class Intent(DocModel):
    id: OptStr = None
    describe: Str = ""
    trigger: OptStr = None
    group: Str = ""
    parent: Str = ""
    slots: Items[Slot] = ()
    description: Str = ""
    deliverables: Deliverables = ()
    timeout: Str = ""
    inherits: RawList = ()  # CH300 points at each name by its index in the file
    skill: OptSkill = None
    confirm: Confirm = False
    stages: Items[Stage] = ()
    examples: Strs = ()
    not_examples: Strs = ()
    threshold: OptNumber = None
    safety: Flag = False
    handoff: Flag = False


class OpenGoal(DocModel):
    """An open goal of a planner test, as the stage reads it (it checks the intent)."""

    id: Str = ""
    intent: OptStr = None
    status: Str = ""
    parent: OptStr = None
    slots: RawMap = Field(default_factory=dict)
    missing: Strs = ()
    awaiting: Flag = False


class SlotUpdate(DocModel):
    goal: Str = ""
    slot: Str = ""
    value: Raw = None


class PlannedGoal(DocModel):
    ref: Str = ""
    intent: OptStr = None
    parent: OptStr = None
    status: Str = ""
    description: Str = ""
    slots: RawMap = Field(default_factory=dict)
    inherited: RawMap = Field(default_factory=dict)
    carried: RawMap = Field(default_factory=dict)
    remembered: Strs = ()
    missing: Strs = ()
    members: Strs = ()
    awaiting: Flag = False
    redoes: OptStr = None


class Plan(DocModel):
    """The plan a planner test expects."""

    goals: Items[PlannedGoal] = ()
    updates: Items[SlotUpdate] = ()
    activate: Strs = ()
    awaits: Strs = ()
    aborts: Strs = ()
    questions: Strs = ()
    confirm: OptStr = None


class PlannerTest(DocModel):
    """A case of ``tests:``. ``goals``, ``plan`` and ``remembered`` are kept as written: the
    compiled case carries them as JSON for the planner test runner, every key included;
    ``open_goals`` and ``expected`` are their readings for the stage's own checks."""

    # None, not "": the stage names a case without a usable name as 'None', as it always has
    name: OptStr = None
    input: OptStr = None
    now: Str = ""
    goals: RawList = ()
    remembered: RawMap = Field(default_factory=dict)
    plan: RawMap = Field(default_factory=dict)

    @property
    def written_goals(self) -> list[dict[str, Any]]:
        """The open goals that are mappings, as written (the schema reported the others)."""
        return [g for g in self.goals if isinstance(g, dict)]

    @property
    def open_goals(self) -> tuple[OpenGoal, ...]:
        """``written_goals`` read as models: item ``j`` of one is item ``j`` of the other."""
        return tuple(OpenGoal.read(g) for g in self.written_goals)

    @property
    def expected(self) -> Plan:
        return Plan.read(self.plan)


class Acts(DocModel):
    """``acts:``: the pack's words for yes, no and stop."""

    affirm: Strs = ()
    deny: Strs = ()
    cancel: Strs = ()


class Understanding(DocModel):
    margin: OptNumber = None
    safety_every_turn: Flag = False


class GoalsFile(DocModel):
    limits: Sub[Limits] = Limits()
    cancel: Str = ""
    correct: Str = ""
    out_of_scope: Strs = ()
    acts: Sub[Acts] = Acts()
    understanding: Sub[Understanding] = Understanding()
    intents: Items[Intent] = ()
    tests: Items[PlannerTest] = ()
