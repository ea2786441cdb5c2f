"""Compile stage ``conversations``: a pack's ``tests/conversations/*.yaml`` become frozen
``Conversation`` specs that ``charter test`` plays through a fresh agent
(``charter.conversations.runner``). The file shape is checked by its JSON Schema
(CH010-CH013); here, each at the place to fix: a conversation name used twice in the pack
(CH360), an intent goals.yaml does not declare (CH361), a slot its intent does not declare
(CH362), a skill no contract declares (CH363), an unknown verdict, answered_by or event kind
(CH364), a ``matches`` that is no regular expression (CH365, the caret at the problem), a time
that is no ISO date-time with a UTC offset (CH366), an expectation that cannot hold (CH367), an
``outage`` of a skill no contract declares (CH368) and a response template the pack does not
declare (CH369).

The specs themselves (``Conversation``, ``Turn``, ``Expect``, the verdicts and matching rules)
are in ``charter.compile.conversation_spec`` and importable from here too.

The files are read as their typed model (``charter.pack.typed.conversations``), imported when
the stage runs: the specs travel in the pickled ``CompiledPack`` and the runtime side (the
runner, ``charter.reflect.testing``) imports them from here without the pack layer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import regex

from charter.compile.conversation_spec import (
    ANSWERED_BY,
    DEFAULT_NOW,
    DEFAULT_SESSION,
    DEFAULT_USER,
    VERDICTS,
    Conversation,
    Expect,
    Turn,
    parse_time,
    template_matches,
)
from charter.compile.response_spec import EVENT_KINDS, reply_ids
from charter.compile.specs.goal_states import STATUSES
from charter.compile.specs.goals import STAGE_SEP
from charter.compile.specs.skills import SkillsSpec
from charter.diagnostics import Diagnostic, Location, did_you_mean, error
from charter.text.patterns import PatternTimeout, bounded

if TYPE_CHECKING:
    from charter.compile.specs.goals import GoalsSpec
    from charter.pack.typed import conversations as written
    from charter.pack.yamlsrc import LocatedDoc, Pointer

# the specs, read from here by the runner, the assertions, the reports and the tests
__all__ = [
    "ANSWERED_BY",
    "DEFAULT_NOW",
    "DEFAULT_SESSION",
    "DEFAULT_USER",
    "EVENT_KINDS",
    "VERDICTS",
    "Conversation",
    "Expect",
    "Turn",
    "compile_conversations",
    "parse_time",
    "template_matches",
]


class _Stage:
    def __init__(
        self,
        goals: GoalsSpec | None,
        skills: SkillsSpec | None,
        template_ids: frozenset[str] | None,
    ) -> None:
        self.intents = {i.id: i for i in goals.intents} if goals is not None else {}
        self.has_goals = goals is not None
        # a stage's goals and the names its status gives their ends
        self.stages = {
            f"{i.id}{STAGE_SEP}{st.id}": (st.passed, st.failed)
            for i in (goals.intents if goals else ())
            for st in i.stages
        }
        self.contracts = {c.name for c in skills.contracts} if skills is not None else set()
        self.reply_ids = None if template_ids is None else template_ids | reply_ids(skills)
        self.diagnostics: list[Diagnostic] = []
        self.names: dict[str, Location] = {}

    def err(self, code: str, message: str, loc: Location, hint: str = "") -> None:
        self.diagnostics.append(error(code, message, loc, hint))

    # ---- a file ------------------------------------------------------------------------------

    def file(self, doc: LocatedDoc, data: written.ConversationsFile) -> list[Conversation]:
        out = []
        for i, item in enumerate(data.conversations):
            conversation = self.conversation(doc, ("conversations", i), item)
            if conversation is not None:
                out.append(conversation)
        return out

    def conversation(
        self, doc: LocatedDoc, ptr: Pointer, item: written.Conversation | None
    ) -> Conversation | None:
        if item is None or not item.name:
            return None  # the schema reported it
        name = item.name
        first = self.names.get(name)
        if first is not None:
            self.err(
                "CH360",
                f"conversation '{name}' is defined twice (first at {first})",
                doc.loc((*ptr, "name")),
                "give each conversation of the pack its own name: reports and JUnit name them",
            )
        else:
            self.names[name] = doc.loc((*ptr, "name"))
        now = item.now or DEFAULT_NOW
        self.time(doc, (*ptr, "now"), now)
        turns = []
        for j, turn in enumerate(item.turns):
            built = self.turn(doc, (*ptr, "turns", j), turn)
            if built is not None:
                turns.append(built)
        return Conversation(
            name=name,
            location=doc.loc(ptr),
            user=item.user or DEFAULT_USER,
            session=item.session or DEFAULT_SESSION,
            now=now,
            model=item.model or (),
            turns=tuple(turns),
        )

    def time(self, doc: LocatedDoc, ptr: Pointer, text: str) -> None:
        if parse_time(text) is None:
            self.err(
                "CH366",
                f"'{text}' is not an ISO date-time with a UTC offset",
                doc.loc(ptr),
                "write a date, a time and the offset: 2024-05-01T10:00:00+08:00",
            )

    def turn(self, doc: LocatedDoc, ptr: Pointer, item: written.Turn | None) -> Turn | None:
        if item is None or item.user is None:
            return None  # the schema reported it
        at = item.at
        if at is not None:
            self.time(doc, (*ptr, "at"), at)
        outage = item.outage
        if outage is not None and outage not in self.contracts:
            self.err(
                "CH368",
                f"outage of unknown skill '{outage}'",
                doc.loc((*ptr, "outage")),
                self.skill_hint(outage),
            )
        return Turn(
            text=item.user,
            location=doc.loc(ptr),
            session=item.session,
            at=at,
            user_id=item.user_id,
            model=item.model,
            outage=outage,
            expect=self.expect(doc, (*ptr, "expect"), item.expect),
        )

    def skill_hint(self, name: str) -> str:
        if not self.contracts:
            return "the pack has no skill contracts (skills/*.yaml)"
        return did_you_mean(name, self.contracts)

    # ---- what a turn expects ----------------------------------------------------------------

    def expect(self, doc: LocatedDoc, ptr: Pointer, want: written.Expect) -> Expect:
        for key, value, allowed in (
            ("verdict", want.verdict, VERDICTS),
            ("answered_by", want.answered_by, ANSWERED_BY),
        ):
            if value is not None and value not in allowed:
                self.err(
                    "CH364",
                    f"unknown {key} '{value}'",
                    doc.loc((*ptr, key)),
                    did_you_mean(value, allowed),
                )
        for k, kind in enumerate(want.events or ()):
            if kind not in EVENT_KINDS:
                self.err(
                    "CH364",
                    f"unknown event kind '{kind}'",
                    doc.loc((*ptr, "events", k)),
                    did_you_mean(kind, EVENT_KINDS),
                )
        if want.matches is not None:
            self.pattern(doc, (*ptr, "matches"), want.matches)
        for key, named in (("skills", want.skills), ("replayed", want.replayed)):
            for k, skill in enumerate(named or ()):
                if skill not in self.contracts:
                    self.err(
                        "CH363",
                        f"unknown skill '{skill}'",
                        doc.loc((*ptr, key, k)),
                        self.skill_hint(skill),
                    )
        self.templates(doc, (*ptr, "responses"), want.responses or ())
        for intent, status in want.goals.items():  # a stage's goals too (transfer.compliance)
            if intent not in self.stages:
                self.intent(doc, (*ptr, "goals", intent), intent)
            statuses: list[str] = [*STATUSES, *self.stages.get(intent, ())]
            if status not in statuses:
                self.err(
                    "CH367",
                    f"goal '{intent}' can never be '{status}'",
                    doc.loc((*ptr, "goals", intent)),
                    did_you_mean(status, statuses) or "one of " + ", ".join(statuses),
                )
        for intent, values in want.slots.items():
            if self.intent(doc, (*ptr, "slots", intent), intent):
                self.slot_names(doc, (*ptr, "slots", intent), intent, values)
        expect = Expect(
            reply=want.reply,
            contains=want.contains or (),
            not_contains=want.not_contains or (),
            matches=want.matches,
            responses=want.responses,
            events=want.events,
            verdict=want.verdict,
            answered_by=want.answered_by,
            goals=tuple(want.goals.items()),
            slots=tuple(
                (intent, json.dumps(values, ensure_ascii=False, sort_keys=True))
                for intent, values in want.slots.items()
            ),
            skills=want.skills,
            replayed=want.replayed,
            ticket=want.ticket,
            memory=tuple(want.memory.items()),
            model_calls=want.model_calls,
        )
        self.cannot_hold(doc, ptr, expect)
        return expect

    def pattern(self, doc: LocatedDoc, ptr: Pointer, text: str) -> None:
        try:
            regex.compile(text)
        except (regex.error, ValueError, OverflowError) as exc:  # ValueError: clashing flags
            pos = getattr(exc, "pos", None)
            pos = pos if isinstance(pos, int) else 0
            self.err(
                "CH365",
                f"matches is not a valid regular expression: {getattr(exc, 'msg', exc)}",
                doc.offset_loc(ptr, pos, pos + 1),
                "the syntax of Python's regex module; escape a literal character with \\",
            )

    def templates(self, doc: LocatedDoc, ptr: Pointer, ids: Iterable[str]) -> None:
        if self.reply_ids is None:
            return  # the pack's responses are not compiled: nothing to check against
        known = self.reply_ids
        for k, want in enumerate(ids):
            if not any(template_matches(want, got) for got in known):
                self.err(
                    "CH369",
                    f"unknown response template '{want}'",
                    doc.loc((*ptr, k)),
                    did_you_mean(want, known | {i.split("#", 1)[0] for i in known}),
                )

    def intent(self, doc: LocatedDoc, ptr: Pointer, intent: str) -> bool:
        if intent in self.intents:
            return True
        self.err(
            "CH361",
            f"unknown intent '{intent}'",
            doc.key_loc(ptr),
            did_you_mean(intent, self.intents)
            if self.has_goals
            else "the pack has no goals.yaml: no goal is ever opened",
        )
        return False

    def slot_names(
        self, doc: LocatedDoc, ptr: Pointer, intent: str, values: Mapping[str, Any]
    ) -> None:
        declared = [*(s.name for s in self.intents[intent].slots), *self.intents[intent].kept]
        for name in values:
            if name not in declared:
                self.err(
                    "CH362",
                    f"intent '{intent}' has no slot '{name}'",
                    doc.key_loc((*ptr, name)),
                    did_you_mean(name, declared),
                )

    def cannot_hold(self, doc: LocatedDoc, ptr: Pointer, e: Expect) -> None:
        def bad(key: str, message: str, hint: str) -> None:
            self.err("CH367", message, doc.loc((*ptr, key)), hint)

        if e.model_calls is not None and e.model_calls < 0:
            bad("model_calls", f"model_calls is {e.model_calls}", "count the calls: 0 or more")
        both = [t for t in e.contains if t in e.not_contains]
        if both:
            bad(
                "not_contains",
                f"'{both[0]}' is both in contains and in not_contains",
                "keep it in one of the two",
            )
        if e.reply is None:
            return
        missing = next((t for t in e.contains if t not in e.reply), None)
        if missing is not None:
            bad("contains", f"the expected reply does not contain '{missing}'", "fix one of them")
        present = next((t for t in e.not_contains if t in e.reply), None)
        if present is not None:
            bad("not_contains", f"the expected reply contains '{present}'", "fix one of them")
        if e.matches is not None:
            try:
                found = bounded(e.matches).search(e.reply) is not None
            except (regex.error, ValueError, OverflowError):
                return  # CH365 said so
            except PatternTimeout:
                return  # cannot tell in time: CH112 warns about the pattern
            if not found:
                bad("matches", "the expected reply does not match matches", "fix one of them")


def compile_conversations(
    docs: Iterable[LocatedDoc],
    goals: GoalsSpec | None,
    skills: SkillsSpec | None,
    template_ids: frozenset[str] | None = None,
) -> tuple[tuple[Conversation, ...], list[Diagnostic]]:
    """The conversations of a pack's files (in file order), and every problem found.

    ``template_ids`` are the ids of the pack's response templates (with ``reply_ids``, what a
    reply's ``responses`` can name); None leaves the ``responses`` expectations unchecked."""
    from charter.pack.typed.conversations import ConversationsFile

    stage = _Stage(goals, skills, template_ids)
    out: list[Conversation] = []
    for doc in docs:
        out += stage.file(doc, ConversationsFile.read(doc.data))
    return tuple(out), stage.diagnostics
