"""A compiled ``goals.yaml``: immutable, picklable (it travels inside the cached CompiledPack).

Triggers and deliverable checks are checked ASTs of the rule DSL; slot patterns are kept as
source text and compiled by the planner, like rules are bound by the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from charter.diagnostics import Location
from charter.dsl import ast as A

# 怎么取消 / 如何取消 asks how to cancel something (the FAQ's question), it cancels nothing
DEFAULT_CANCEL = (
    'input contains any ["取消", "不用了", "算了", "不要了", "不需要了"] '
    "and not input matches /(?:怎么|如何|怎样|在哪里?)取消/"
)
# a correction names the new value: 改成 / 换到 …, or 不对，是 … / 应该是 …
DEFAULT_CORRECT = (
    'input contains any ["改成", "改为", "换成", "改到", "换到", '
    '"应该是", "不对，是", "不对,是", "不对是"]'
)
DEFAULT_TIMEOUT_S = 30 * 60
DEFAULT_ROOT = "综合请求"
DEFAULT_AGGREGATE = "综合查询"
AGGREGATE_INTENT = "aggregate"
ROOT_INTENT = "root"
# a question the examples left open (您是想查询余额，还是转账？), kept as a goal of the session
# until the next input answers it
CLARIFY_INTENT = "clarify"
SLOT_TYPES = ("text", "number", "date", "time")


@dataclass(frozen=True)
class RoleSpec:
    """``role:`` of a slot: a value of a built-in ``kind`` (``name``: a personal name) found
    right after a ``before`` word (给李四) or right before an ``after`` word (李四那边), whichever
    side of the verb and the amount it stands on (``charter.compile.specs.roles``)."""

    kind: str = "name"
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


@dataclass(frozen=True)
class SlotSpec:
    name: str
    regex: str | None = None  # source of a pattern for the `regex` module
    extractor: str | None = None
    role: RoleSpec | None = None  # the third way to read a value: by the words around it
    type: str = "text"
    required: bool = False
    ask: str = ""
    default: Any = None
    multiple: bool = False
    model: bool = False  # the model may read it from the input when nothing else finds it
    label: str = ""  # what replies call it (转账金额)
    # where a value missing from the input may come from: "session" (the session's goals) or
    # "memory" (those, then the user's remembered facts); None: only the input
    carry: str | None = None
    # kinds of personal data a regex slot may take (tax_id: an individual's is the ID number);
    # any other kind its regex finds is passed over (charter.compile.specs.slots)
    personal: tuple[str, ...] = ()
    # the key its value is remembered under, shared by the intents that declare it (an order
    # number any order intent gives); None: ``<intent>.<slot>`` (transfer.amount is not
    # wealth-product.amount)
    memory_key: str | None = None
    ask_location: Location | None = field(default=None, compare=False)  # where ask: is written


@dataclass(frozen=True)
class Deliverable:
    """What an answer must cover: ``template`` (slots filled in) must appear in the output, or
    ``check`` must hold on it."""

    id: str
    describe: str
    template: str | None = None
    check: A.Expr | None = None


@dataclass(frozen=True)
class SkillBinding:
    """The skill an active goal calls: ``args`` maps each argument to a JSON value, in which
    a string "{slot}" stands for the slot's value and other strings are templates."""

    name: str
    args_json: str = "{}"
    location: Location | None = None
    # (slot name, path in the result): fields of a successful result kept as the goal's slots
    keep: tuple[tuple[str, str], ...] = ()
    # over ``result``: a successful result for which it does not hold refused the request
    done: A.Expr | None = None
    # kept slots a correction of the completed goal takes along (its booking number): the
    # action moves what it did instead of doing it twice, and the old goal ends ``moved``
    moves: tuple[str, ...] = ()

    @property
    def args(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.args_json)
        return value


@dataclass(frozen=True)
class StageSpec:
    """One step of an intent's staged flow, kept as a sub-goal of each goal of the intent with
    its own status (seed 000 §5.3: 症状采集 → 初步分诊 → 转专科; the regulatory check as its own
    sub-goal). Exactly one of ``slots``, ``skill`` or ``by`` says what completes it."""

    id: str
    describe: str
    slots: tuple[str, ...] = ()  # the goal's slots: the stage is done once they are all given
    skill: SkillBinding | None = None  # a query over the goal's slots; ``done:`` its verdict
    by: str | None = None  # an intent: done when a goal of it completes in the session
    passed: str = "completed"  # what the stage's status is called when it completes
    failed: str = "aborted"  # ... and when its skill refused (the goal is refused with it)
    quiet: bool = False  # a passing result is not told (a check that found nothing wrong)


STAGE_SEP = "."  # a stage goal's intent: "<intent>.<stage>"


def fact_key(intent_id: str, slot: SlotSpec | None, name: str) -> str:
    """``memory_key`` when the slot declares one, else ``<intent>.<name>``."""
    if slot is not None and slot.memory_key:
        return slot.memory_key
    return f"{intent_id}.{name}" if intent_id else name


@dataclass(frozen=True)
class IntentSpec:
    id: str
    describe: str
    trigger: A.Expr | None  # None: recognised by its examples alone
    literals: tuple[str, ...]  # the trigger's own words: where in the input the intent is
    location: Location
    group: str | None = None
    parent: str | None = None
    slots: tuple[SlotSpec, ...] = ()
    description: str = ""  # template; {slot} is replaced by the slot's value
    deliverables: tuple[Deliverable, ...] = ()
    timeout_s: int = DEFAULT_TIMEOUT_S
    inherits: tuple[str, ...] = ()
    skill: SkillBinding | None = None
    # the goal waits for the user's yes once its slots are complete (an action); the question
    # is responses.yaml's confirmation_asked, or ``confirm_text`` written here
    confirm: bool = False
    confirm_text: str | None = None
    stages: tuple[StageSpec, ...] = ()
    # understanding (ARCHITECTURE §6a): utterances as customers say them, near misses that
    # must not open it, and a pinned ``open`` band (None: fitted)
    examples: tuple[str, ...] = ()
    not_examples: tuple[str, ...] = ()
    threshold: float | None = None
    # checked before every other intent, whatever is pending and despite negation; answered
    # by its own template, a person called when ``handoff``
    safety: bool = False
    handoff: bool = False

    def slot(self, name: str) -> SlotSpec | None:
        return next((s for s in self.slots if s.name == name), None)

    def fact_key(self, name: str) -> str:
        """The key a value of its slot (or kept result field) ``name`` is remembered under."""
        return fact_key(self.id, self.slot(name), name)

    @property
    def kept(self) -> tuple[str, ...]:
        """Fields its skill's and its stages' results keep in the goal, beyond its slots: a
        template may name them (原预约{booking_no})."""
        bindings = [self.skill, *(s.skill for s in self.stages)]
        names = [k for b in bindings if b is not None for k, _ in b.keep]
        own = {s.name for s in self.slots}
        return tuple(dict.fromkeys(n for n in names if n not in own))


@dataclass(frozen=True)
class GoalCase:
    """A planner test: an input (with the open goals before it) and the exact plan wanted."""

    name: str
    input: str
    location: Location
    now: str = "2026-01-07T09:00"
    goals_json: str = "[]"  # the open goals before the input
    plan_json: str = "{}"  # the plan wanted
    remembered_json: str = "{}"  # the user's remembered facts, by slot name

    @property
    def remembered(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.remembered_json)
        return value

    @property
    def goals(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = json.loads(self.goals_json)
        return value

    @property
    def plan(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.plan_json)
        return value


@dataclass(frozen=True)
class GoalsSpec:
    intents: tuple[IntentSpec, ...]
    cancel: A.Expr
    correct: A.Expr
    literals: tuple[str, ...]  # of every trigger, cancel and correct: one automaton
    max_depth: int = 2
    max_new_subgoals: int = 3
    confirm_split_over: int | None = None
    timeout_s: int = DEFAULT_TIMEOUT_S
    root: str = DEFAULT_ROOT
    aggregate: str = DEFAULT_AGGREGATE
    cases: tuple[GoalCase, ...] = ()
    # things customers say that no intent handles (the examples' counterweight)
    out_of_scope: tuple[str, ...] = ()
    # the pack's additions to the built-in dialogue-act lexicon (charter.goals.acts)
    affirm: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    cancel_words: tuple[str, ...] = ()
    margin: float | None = None  # the clarifying margin, pinned (None: fitted)
    # every input is embedded for the safety intents' examples, not only those the screen
    # lets through (a hospital's front desk: recall over the cost of one embedding per turn)
    safety_every_turn: bool = False

    def intent(self, intent_id: str) -> IntentSpec | None:
        return next((i for i in self.intents if i.id == intent_id), None)

    def stage(self, intent_id: str) -> tuple[IntentSpec, StageSpec] | None:
        """The intent and stage a stage goal's intent (``transfer.compliance``) names."""
        owner, sep, name = intent_id.rpartition(STAGE_SEP)
        intent = self.intent(owner) if sep else None
        stage = next((s for s in intent.stages if s.id == name), None) if intent else None
        return (intent, stage) if intent is not None and stage is not None else None

    @property
    def remembered_slots(self) -> frozenset[str]:
        """The slots some intent may take from the user's remembered facts (``carry: memory``)."""
        return frozenset(s.name for i in self.intents for s in i.slots if s.carry == "memory")

    @property
    def remembered_keys(self) -> dict[str, str]:
        """Slot name -> the fact key a ``carry: memory`` slot reads (the compile stage
        refuses one slot name carried under two keys, CH317)."""
        return {
            s.name: i.fact_key(s.name) for i in self.intents for s in i.slots if s.carry == "memory"
        }

    def fact_key(self, intent_id: str, name: str) -> str:
        """The key a value of slot ``name`` of a goal of ``intent_id`` is remembered under."""
        intent = self.intent(intent_id)
        return fact_key(intent_id, intent.slot(name) if intent is not None else None, name)

    @property
    def model_slots(self) -> bool:
        """Some slot may be read by the model (``model: true``)."""
        return any(s.model for i in self.intents for s in i.slots)
