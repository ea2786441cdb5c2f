"""Play a pack's conversation tests through the real agent and check every turn.

Each conversation gets a fresh agent (``Agent.from_pack``) on its own SQLite file, with the
pack's skills from the registry, no narrative memory, the fixed test memory key, a clock that
stands still at the conversation's ``now`` (a turn's ``at`` moves it) and a model that answers
only what the turn scripts (``charter.conversations.model``). A turn's ``outage`` makes its
skill raise for that turn only. A turn that raises ends its conversation: the turns after it
would start from a state nobody wrote down.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from charter.agent import Agent, Reply
from charter.compile.compiled import CompiledPack
from charter.compile.conversations import Conversation, Turn, parse_time
from charter.contracts.registry import Registry
from charter.contracts.skills import Skill
from charter.conversations.assertions import Observed, check
from charter.conversations.model import TurnModel
from charter.goals.tracker import OUTCOME
from charter.memory.records import Accessor
from charter.skills.outage import Outage

# Conversation tests encrypt what the pack says to encrypt, with this key: fixed so that runs
# are alike, public because the databases it protects are temporary and hold made-up words.
TEST_MEMORY_KEY: bytes = hashlib.sha256(b"charter conversation tests: not a secret").digest()


@dataclass(frozen=True)
class Failure:
    """One expectation that did not hold, or a turn that could not run."""

    turn: int  # from 1
    said: str  # the user's words
    line: int  # of the turn in its file
    key: str  # reply, verdict, goals transfer, ... ("error" when the turn raised)
    message: str

    def __str__(self) -> str:
        return f"turn {self.turn} “{self.said}” (line {self.line}): {self.key}: {self.message}"


@dataclass(frozen=True)
class TurnResult:
    number: int
    turn: Turn
    reply: Reply | None  # None: the turn raised or did not run
    model_calls: int = 0
    failures: tuple[Failure, ...] = ()


@dataclass(frozen=True)
class ConversationResult:
    pack: str
    conversation: Conversation
    turns: tuple[TurnResult, ...]
    seconds: float
    failures: tuple[Failure, ...]
    # what the conversation exercised, for coverage
    intents: frozenset[str] = frozenset()  # of the goals it opened
    events: frozenset[str] = frozenset()  # kinds of Reply.events
    templates: frozenset[str] = frozenset()  # ids of Reply.responses

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(str(f) for f in self.failures)


@dataclass
class _Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@dataclass
class _Where:
    """Who talks in which session, from the current turn on."""

    user: str
    session: str
    users: set[str] = field(default_factory=set)


def run_conversations(
    pack: CompiledPack,
    registry: Registry,
    *,
    workdir: Path | None = None,
    only: Callable[[Conversation], bool] | None = None,
) -> list[ConversationResult]:
    """Every conversation of ``pack`` (that ``only`` keeps), in file order. The databases go
    in ``workdir`` (kept, one ``conversation-<n>.db`` each, replaced when they exist), else in
    a temporary directory removed at the end."""
    conversations = getattr(pack, "conversations", ())  # () in a pack cached before them
    if only is not None:
        conversations = tuple(c for c in conversations if only(c))
    if not conversations:
        return []
    where = workdir if workdir is not None else Path(tempfile.mkdtemp(prefix="charter-conv-"))
    try:
        where.mkdir(parents=True, exist_ok=True)
        return [
            run_conversation(pack, registry, c, where / f"conversation-{n}.db")
            for n, c in enumerate(conversations, 1)
        ]
    finally:
        if workdir is None:
            shutil.rmtree(where, ignore_errors=True)


def fresh(skill: Skill) -> Skill:
    """The skill in its first state, when it can give one (``Skill.fresh``)."""
    make = getattr(skill, "fresh", None)
    return make() if callable(make) else skill


def run_conversation(
    pack: CompiledPack, registry: Registry, conversation: Conversation, database: Path
) -> ConversationResult:
    started = time.perf_counter()
    database.unlink(missing_ok=True)
    database.touch()
    # every conversation starts from the skills' first state (a demo ledger's numbering)
    skills = {n: fresh(s) for n, s in registry.skills.items()}
    names = sorted({t.outage for t in conversation.turns if t.outage is not None})
    outages = {n: Outage(skills[n], "a conversation test") for n in names if n in skills}
    registry = dataclasses.replace(registry, skills={**skills, **outages})
    model = TurnModel()
    start = parse_time(conversation.now)
    if start is None:  # the compile stage refuses it (CH366)
        raise ValueError(f"conversation {conversation.name!r}: bad now {conversation.now!r}")
    clock = _Clock(start)
    agent = Agent.from_pack(
        pack,
        llm=model,
        database_url=f"sqlite:///{database}",
        memory_key=TEST_MEMORY_KEY,
        registry=registry,
        environ={},
        clock=clock,
    )
    play = _Play(agent, conversation, model, clock, outages)
    with agent:
        results = play.run()
        intents = play.intents()
    failures = tuple(f for r in results for f in r.failures)
    replies = [r.reply for r in results if r.reply is not None]
    return ConversationResult(
        pack=pack.name,
        conversation=conversation,
        turns=tuple(results),
        seconds=time.perf_counter() - started,
        failures=failures,
        intents=intents,
        events=frozenset(str(e.get("kind")) for r in replies for e in r.events),
        templates=frozenset(t for r in replies for t in r.responses),
    )


class _Play:
    def __init__(
        self,
        agent: Agent,
        conversation: Conversation,
        model: TurnModel,
        clock: _Clock,
        outages: Mapping[str, Outage],
    ) -> None:
        self.agent = agent
        self.conversation = conversation
        self.model = model
        self.clock = clock
        self.outages = outages
        self.where = _Where(conversation.user, conversation.session)

    def run(self) -> list[TurnResult]:
        results: list[TurnResult] = []
        turns = self.conversation.turns
        for n, turn in enumerate(turns, 1):
            result = self.turn(n, turn)
            results.append(result)
            if result.reply is None and n < len(turns):
                nxt = turns[n]
                after = len(turns) - n - 1
                rest = f" and the {after} after it" if after else ""
                note = f"turn {n} did not finish, so this turn{rest} did not run"
                failure = Failure(n + 1, nxt.text, nxt.location.line, "not run", note)
                results.append(TurnResult(n + 1, nxt, None, failures=(failure,)))
                break
        return results

    def turn(self, n: int, turn: Turn) -> TurnResult:
        w = self.where
        w.user = turn.user_id or w.user
        w.session = turn.session or w.session
        w.users.add(w.user)
        if turn.at is not None:
            at = parse_time(turn.at)
            self.clock.now = at if at is not None else self.clock.now
        answers = turn.model if turn.model is not None else self.conversation.model
        self.model.begin(answers)

        def fail(key: str, message: str) -> Failure:
            return Failure(n, turn.text, turn.location.line, key, message)

        outage = self.outages.get(turn.outage or "")
        if turn.outage is not None and outage is None:
            why = f"no installed plugin implements the skill {turn.outage!r}"
            return TurnResult(n, turn, None, failures=(fail("outage", why),))
        written_before = self._facts() if turn.expect.memory else set()
        if outage is not None:
            outage.down = True
        try:
            reply = self.agent.turn(w.user, w.session, turn.text)
        except Exception as exc:
            refused = self.model.refused
            message = str(refused) if refused is not None else f"{type(exc).__name__}: {exc}"
            key = "model" if refused is not None else "error"
            return TurnResult(n, turn, None, self.model.calls, (fail(key, message),))
        finally:
            if outage is not None:
                outage.down = False
        problems: list[Failure] = []
        if self.model.refused is not None:  # asked too often, and the agent went on anyway
            problems.append(fail("model", str(self.model.refused)))
        seen = self._observe(reply, turn, written_before)
        problems += [fail(key, message) for key, message in check(turn.expect, seen)]
        return TurnResult(n, turn, reply, self.model.calls, tuple(problems))

    def _observe(self, reply: Reply, turn: Turn, before: set[tuple[str, str, str]]) -> Observed:
        p = self.agent.parts
        latest: dict[str, Any] = {}
        for goal in p.goals.tree(self.where.user, self.where.session):
            latest[goal.intent] = goal  # creation order: the last one wins
        wanted = {intent for intent, _ in turn.expect.slots}
        written = (
            [(k, v) for i, k, v in sorted(self._facts() - before)] if turn.expect.memory else []
        )
        return Observed(
            reply=reply,
            model_calls=self.model.calls,
            goals={intent: self._status(g) for intent, g in latest.items()},
            slots={i: p.goals.context(latest[i].id) for i in wanted if i in latest},
            written=written,
        )

    def _status(self, goal: Any) -> str:
        """A goal's status; a stage's by the name its pack gives it (compliant)."""
        p = self.agent.parts
        if p.pack.goals is None or p.pack.goals.stage(goal.intent) is None:
            return str(goal.status)
        outcome = p.goals.context(goal.id).get(OUTCOME)
        return outcome if isinstance(outcome, str) else str(goal.status)

    def _facts(self) -> set[tuple[str, str, str]]:
        """The user's active facts as (id, key, revealed value)."""
        p = self.agent.parts
        listed = p.facts.list_facts(Accessor(self.where.user, "charter test", role="admin"))
        return {(f.id, f.key, p.pipeline.reveal(f)) for f in listed}

    def intents(self) -> frozenset[str]:
        """The intents of every goal the conversation's users had, in any session."""
        p = self.agent.parts
        return frozenset(g.intent for u in self.where.users for g in p.goals.tree(u))
