"""One composer builds every reply (ARCHITECTURE §5a): the turn's events told by the pack's
templates in their fixed order — what the user did, each goal's result, the next question —
as one text; the rules then check it like any answer (their repairs add the disclaimers they
require).

What no template can tell stays *open*: a goal of an intent without a skill and without a
``completed`` template, or an input no intent claims (when the FAQ has no answer either). The
agent's mode decides who answers an open event: in ``strict`` the ``unanswered`` template says
so plainly and offers the hand-off; in ``assisted`` the model answers it, and its text is
checked before it takes the event's place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charter.compile.response_spec import FAQ, INVALID, MODEL, Entry, ResponsesSpec
from charter.compile.specs.faq import FaqIndex
from charter.compile.specs.goals import GoalsSpec
from charter.compile.teller import Teller, Told
from charter.compose.events import Event

__all__ = ["MODEL", "Composed", "Composer", "Part"]


@dataclass(frozen=True)
class Part:
    event: Event
    id: str  # the template id (or MODEL)
    text: str


@dataclass(frozen=True)
class Composed:
    """The reply's pieces in order: told parts, and open events (Part is None) waiting for
    an answer the templates do not have."""

    pieces: tuple[tuple[Event, Part | None], ...]

    @property
    def parts(self) -> tuple[Part, ...]:
        return tuple(p for _, p in self.pieces if p is not None)

    @property
    def open(self) -> tuple[Event, ...]:
        return tuple(e for e, p in self.pieces if p is None)

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.parts)

    @property
    def responses(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.parts)

    @property
    def events(self) -> tuple[Event, ...]:
        """What the reply told, event by event (an open event answered plainly is the
        ``unanswered`` it became)."""
        return tuple(p.event if p is not None else e for e, p in self.pieces)

    @property
    def asks(self) -> bool:
        return any(p.event.asks for p in self.parts)

    @property
    def delivered(self) -> tuple[str, ...]:
        """The goals whose result this reply's templates tell (what the model wrote delivers
        a goal only when its deliverables were checked in it: the agent decides that)."""
        return tuple(
            dict.fromkeys(
                p.event.goal
                for p in self.parts
                if p.event.delivers and p.event.goal and p.id != MODEL
            )
        )

    def filled(self, answers: Mapping[int, Part]) -> Composed:
        """With the open events at these positions (of ``pieces``) answered."""
        return Composed(
            tuple(
                (e, answers.get(n, p)) if p is None else (e, p)
                for n, (e, p) in enumerate(self.pieces)
            )
        )

    def open_positions(self) -> list[int]:
        return [n for n, (_, p) in enumerate(self.pieces) if p is None]


class Composer:
    def __init__(
        self,
        spec: ResponsesSpec,
        teller: Teller,
        goals: GoalsSpec | None,
        constants: Mapping[str, Any],
        faq: FaqIndex | None = None,
    ) -> None:
        self.spec = spec
        self.teller = teller
        self.faq = faq
        # what the pack does for a customer: a safety intent is a reaction, not a service
        intents = goals.intents if goals is not None else ()
        self.abilities = [i.describe for i in intents if not i.safety]
        self.message = str((constants.get("messages") or {}).get("escalate", ""))

    def compose(self, events: Sequence[Event], *, turn: int, query: str) -> Composed:
        pieces: list[tuple[Event, Part | None]] = []
        delivered: set[str] = set()
        said: set[str] = set()
        for e in events:
            told = self.tell(e, turn)
            if told is not None and told.text in said:
                continue  # a fallback that tells another goal's result again: said once
            if told is not None:
                said.add(told.text)
                pieces.append((e, Part(e, told.id, told.text)))
                if e.delivers and e.goal:
                    delivered.add(e.goal)
            elif (e.kind == "completed" and e.goal not in delivered) or e.kind == "unanswered":
                # an intent without a skill and without a completed template: nothing of the
                # pack can give this goal's answer
                pieces.append((e, None))
        # a question told again is no answer to the input; unless it says what became of it
        # (personal data the slot would not take)
        if not pieces or all(e.kind == "resumed" and not e.scope.get("refused") for e, _ in pieces):
            pieces.insert(0, self.unclaimed(query, turn))
        return Composed(tuple(pieces))

    def unclaimed(self, query: str, turn: int) -> tuple[Event, Part | None]:
        """An input no intent claims: the FAQ's answer when one matches, else open."""
        hits = self.faq.lookup(query) if self.faq is not None and query.strip() else []
        if hits:
            entry = hits[0].entry
            e = Event(FAQ, text=entry.answer, text_id=f"{FAQ}.{entry.id}")
            return e, Part(e, e.text_id or FAQ, entry.answer)
        return Event("unanswered", scope={"abilities": self.abilities}), None

    def unanswered(self, e: Event, turn: int) -> Part:
        """The plain reply for an open event: nothing here can answer it (and a hand-off)."""
        scope = {**e.scope, "abilities": self.abilities}
        told = self._first(self.spec.chain("unanswered", e.intent), scope, (), turn)
        if told is None:  # the built-in's last alternative needs no field: never reached
            told = Told("builtin.unanswered", "抱歉，这个问题我暂时无法回答。")
        return Part(Event("unanswered", e.goal, e.intent, scope), told.id, told.text)

    def handed_off(self, ticket: str, reason: str, turn: int) -> Part:
        e = Event("handed_off", scope={"ticket": ticket, "reason": reason}, ticket=ticket)
        told = self.tell(e, turn)
        assert told is not None  # the built-in template has every field
        return Part(e, told.id, told.text)

    def tell(self, e: Event, turn: int) -> Told | None:
        if e.text is not None and e.kind in ("fallback", INVALID, FAQ):
            return Told(e.text_id or e.kind, e.text)
        if e.kind == "result" and e.skill is not None:
            told = self.teller.tell(self.spec.result(e.skill), e.scope, e.items, turn)
            if told is None and e.text:
                # a contract without reply: (or none that applies) tells its summary as it is
                told = Told(f"{e.skill}.summary", e.text)
            return told
        scope: Mapping[str, Any] = e.scope
        if e.kind == "resumed" and e.question is not None:
            asked = self.tell(e.question, turn)
            if asked is None:
                return None
            scope = {**scope, "question": asked.text}
        elif e.kind == "handed_off":
            scope = {**scope, "message": self.message}
        return self._first(self.spec.chain(e.kind, e.intent), scope, e.items, turn)

    def _first(
        self,
        chain: Sequence[Entry],
        scope: Mapping[str, Any],
        items: Sequence[Mapping[str, Any]],
        turn: int,
    ) -> Told | None:
        for entry in chain:
            told = self.teller.tell(entry, scope, items, turn)
            if told is not None:
                return told
        return None
