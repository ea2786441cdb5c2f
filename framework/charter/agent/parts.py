"""Everything an agent turn uses, built once from a compiled pack: the checkers, the goal
tracker, the memory layers, the skill runner and the stores. Kept apart from the loop so the
loop reads as the turn it is (``charter.agent.loop``).

One database URL holds goals, facts, short-term turns, tickets, traces and breaker state (a
SQLite file by default; PostgreSQL by URL for several workers). An in-memory SQLite URL would
give each store its own empty database: refused, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex
import sqlalchemy as sa

from charter.compile.compiled import CompiledPack
from charter.compile.embedder_cache import embedder_for
from charter.compile.program import Program
from charter.compile.response_spec import ResponsesSpec, default_spec
from charter.compile.specs.goals import STAGE_SEP
from charter.compile.specs.learn import LearningSpec
from charter.compile.specs.memory import MemoryPolicy
from charter.compile.specs.slots import SLOT_REF, fill_slots
from charter.compile.teller import Teller
from charter.compose.composer import Composer
from charter.contracts.models import LLM, Embedder
from charter.contracts.registry import Registry
from charter.contracts.rules import Formatter
from charter.goals.alignment import AlignmentChecker
from charter.goals.store import GoalStore
from charter.goals.tracker import GoalTracker
from charter.goals.understand import Understander
from charter.learn.apply import PatchMatcher
from charter.learn.log import ReflectionLog
from charter.memory.facts import FactStore
from charter.memory.ladder import LayeredMemory
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.upkeep import UpkeepSettings
from charter.memory.pipeline import WritePipeline
from charter.memory.shared import SharedMemory, SharedSettings
from charter.memory.short_term import ShortTermMemory, SqlShortTermStore
from charter.memory.user_keys import UserKeys
from charter.reflect.engine import Engine
from charter.skills.breaker import BreakerRegistry
from charter.skills.breaker_sql import SqlBreakerState
from charter.skills.executions import ExecutionLedger
from charter.skills.runner import SkillRunner
from charter.skills.tickets import TicketStore
from charter.store.clock import Clock, utcnow
from charter.store.migrations import make_engine
from charter.store.privacy import PiiGoalPrivacy
from charter.traces.store import TraceStore

Notify = Callable[[str, object], object]


@dataclass
class AgentOptions:
    max_retries: int | None = None  # None: the pack's thresholds.max_retries
    max_tokens: int = 256
    temperature: float = 0.2
    use: str = "support"  # the domain use memories are read and written for
    trace: bool = True
    write_memory: bool = True
    self_reflection: bool = False  # the model also answers the three reflection lines
    # the components of seed 001 §5.4's ablation (``charter health --ablation``): without
    # memory nothing is recalled or written; without reflection the model's text is returned
    # unchecked, no trigger fires and no patch applies; without skills none is called
    memory: bool = True
    reflection: bool = True
    skills: bool = True
    # the composition mode for every intent, instead of the pack's (strict, assisted, rephrase)
    mode: str | None = None
    # the deployment's shared pool of global facts ([memory] shared_url): read by every turn,
    # written with the slots it declares shareable (charter.agent.shared); None: no pool
    shared: SharedSettings | None = None
    # when the narrative store compacts and writes its uses, on a thread of its own
    # ([memory] compact_every, usage_batch, usage_flush_after); None: at maintain and close only
    upkeep: UpkeepSettings | None = None


@dataclass
class Parts:
    pack: CompiledPack
    registry: Registry
    llm: LLM
    engine: Engine
    policy: MemoryPolicy
    tracker: GoalTracker | None
    alignment: AlignmentChecker | None
    goals: GoalStore
    facts: FactStore
    short_term: ShortTermMemory
    memory: LayeredMemory
    pipeline: WritePipeline
    runner: SkillRunner | None
    tickets: TicketStore
    traces: TraceStore | None
    clock: Clock
    notify: Notify | None
    responses: ResponsesSpec
    composer: Composer
    # intent -> its skill binding's done: condition, over {"result": ...}
    done: Program[str]
    learning: LearningSpec = field(default_factory=LearningSpec)
    log: ReflectionLog | None = None
    matcher: PatchMatcher = field(default_factory=lambda: PatchMatcher(LearningSpec(), {}))
    shared: SharedMemory | None = None  # the shared pool, when configured
    shared_keys: frozenset[str] = frozenset()  # the slots turns share (intent.slot or slot)
    database: sa.Engine | None = None  # the stores' one engine, disposed of after them
    # the users' data keys (charter.memory.user_keys): None when there is no memory key
    keys: UserKeys | None = None

    def close(self) -> None:
        if self.shared is not None:
            self.shared.close()
        if self.runner is not None:
            self.runner.close()
        if self.memory.narrative is not None:
            self.memory.narrative.close()
        for closing in (self.goals.close, self.facts.close, self.tickets.dispose):
            closing()
        store = self.short_term.store
        if isinstance(store, SqlShortTermStore):
            store.close()
        if self.traces is not None:
            self.traces.dispose()
        if self.log is not None:
            self.log.dispose()
        if self.database is not None:
            self.database.dispose()


def understander_for(
    pack: CompiledPack, registry: Registry, embedder: Embedder | None
) -> Understander | None:
    """The pack's examples on the agent's embedder (the one the pack compiled with, made once
    per process, when the agent was given none); None when the pack has no examples or the
    embedder cannot load (the compile stage warned, CH382)."""
    goals = pack.goals
    compiled = getattr(pack, "understanding", None)  # None in a pack cached before examples
    if goals is None or not any(i.examples for i in goals.intents):
        return None
    if embedder is not None:
        name = str(getattr(embedder, "name", type(embedder).__name__))
        return Understander.for_embedder(goals, compiled, embedder, name)
    name = compiled.embedder if compiled is not None else (pack.memory or MemoryPolicy()).embedder
    try:
        made = embedder_for(registry, name)
    except (KeyError, RuntimeError, OSError, ValueError):
        return None
    return Understander.for_embedder(goals, compiled, made, name)


def build(
    pack: CompiledPack,
    registry: Registry,
    llm: LLM,
    *,
    database_url: str,
    narrative_path: str | Path | None = None,
    embedder: Embedder | None = None,
    memory_key: str | bytes | None = None,
    environ: Mapping[str, str] | None = None,
    clock: Clock = utcnow,
    notify: Notify | None = None,
    options: AgentOptions | None = None,
) -> Parts:
    if (
        database_url.rstrip("/") in ("sqlite:", "sqlite:/", "sqlite://")
        or ":memory:" in database_url
    ):
        raise ValueError(
            "an agent needs one database for all its stores: give a SQLite file "
            "(sqlite:///charter.db) or a PostgreSQL URL, not an in-memory database"
        )
    opts = options or AgentOptions()
    policy = pack.memory or MemoryPolicy()

    def transition_hook(event: object) -> None:
        if notify is not None:
            notify("charter_on_goal_transition", event)

    pipeline = WritePipeline(policy, registry, key=memory_key, clock=clock, environ=environ)
    # one engine (one connection pool) for every store on the agent's database, disposed of by
    # Parts.close after the stores
    database = make_engine(database_url)
    keys = None
    if pipeline.cipher is not None:
        # every value the agent seals is sealed under its user's key, which forget destroys
        keys = UserKeys(database, pipeline.cipher.key, clock=clock)
        pipeline.cipher.user_keys = keys
    goals = GoalStore(
        database, clock=clock, on_transition=transition_hook, privacy=goal_privacy(pipeline)
    )
    facts = FactStore(database, policy, clock=clock)
    short_term = ShortTermMemory(
        SqlShortTermStore(database), policy, scrub=pipeline.scrub, clock=clock
    )
    narrative = None
    if narrative_path is not None:
        if embedder is None:
            factory = registry.embedders.get(policy.embedder)
            if factory is None:
                raise ValueError(f"no installed plugin registers the embedder {policy.embedder!r}")
            embedder = factory.create({})
        narrative = NarrativeStore(
            narrative_path,
            embedder,
            policy,
            audit=facts.record_audit,
            clock=clock,
            upkeep=opts.upkeep,
        )
    tickets = TicketStore(database, clock=clock, scrub=pipeline.scrub)
    runner = None
    if pack.skills is not None:
        runner = SkillRunner(
            pack.skills,
            registry,
            pack=pack.name,
            constants=pack.constants,
            tickets=tickets,
            breakers=BreakerRegistry(SqlBreakerState(database)),
            notify=notify,
            # an executing skill runs once per goal, whichever worker takes the confirmation
            ledger=ExecutionLedger(database, clock=clock, scrub=pipeline.scrub),
            clock=clock,
        )
    tracker = alignment = None
    if pack.goals is not None:
        tracker = GoalTracker(
            pack.goals,
            registry,
            goals,
            clock=clock,
            constants=pack.constants,
            scrub=pipeline.scrub,
            understander=understander_for(pack, registry, embedder),
        )
        alignment = AlignmentChecker(pack.goals, registry, pack.constants)
    learning = getattr(pack, "learning", None) or LearningSpec()
    responses = pack.responses or default_spec()
    composer = Composer(
        responses,
        Teller(responses, registry, pack.constants),
        pack.goals,
        pack.constants,
        faq=pack.skills.faq if pack.skills is not None else None,
    )
    intents = pack.goals.intents if pack.goals is not None else ()
    done: Program[str] = Program(
        [
            *((i.id, i.skill.done) for i in intents if i.skill is not None and i.skill.done),
            # a stage's verdict, keyed by its goal's intent (transfer.compliance)
            *(
                (f"{i.id}{STAGE_SEP}{st.id}", st.skill.done)
                for i in intents
                for st in i.stages
                if st.skill is not None and st.skill.done is not None
            ),
        ],
        registry,
        pack.constants,
        literals=pack.goals.literals if pack.goals is not None else (),
    )
    return Parts(
        pack=pack,
        registry=registry,
        llm=llm,
        engine=Engine(pack, registry),
        policy=policy,
        tracker=tracker,
        alignment=alignment,
        goals=goals,
        facts=facts,
        short_term=short_term,
        memory=LayeredMemory(facts, narrative, short_term),
        pipeline=pipeline,
        runner=runner,
        tickets=tickets,
        traces=TraceStore(database) if opts.trace else None,
        clock=clock,
        notify=notify,
        learning=learning,
        log=ReflectionLog(database),
        matcher=PatchMatcher(learning, registry.extractors),
        responses=responses,
        composer=composer,
        done=done,
        shared=shared_pool(opts.shared),
        shared_keys=opts.shared.keys if opts.shared is not None else frozenset(),
        database=database,
        keys=keys,
    )


def shared_pool(settings: SharedSettings | None) -> SharedMemory | None:
    """The configured shared pool, listening for other processes' writes (PostgreSQL: every
    worker's cache follows a write at once; SQLite: a cached fact is read again after
    ``max_age_s``)."""
    if settings is None:
        return None
    pool = SharedMemory(settings.url, namespace=settings.namespace, max_age_s=settings.max_age_s)
    try:
        pool.listen()
    except BaseException:
        pool.close()
        raise
    return pool


def goal_privacy(pipeline: WritePipeline) -> PiiGoalPrivacy:
    """Goal rows kept as free of personal data as memory: texts scrubbed by the pipeline, slot
    values holding personal data encrypted with the memory key (scrubbed without one)."""
    cipher = pipeline.cipher

    def personal(text: str) -> bool:
        return bool(pipeline.pii.scan(text, in_clear=True).kinds)

    if cipher is None:
        return PiiGoalPrivacy(pipeline.scrub, personal)

    def opened(token: str, user: str) -> str:
        # a sealed value is personal data: within a turn, found again wherever it is written
        # (a reply naming it), even when it holds nothing a recognizer reads alone (an ID
        # number with a typo, sealed after 身份证号 said what it was)
        value = cipher.decrypt(token, user_id=user, fact_key=GOAL_SLOT)
        kinds = pipeline.pii.scan(value, in_clear=True).kinds
        pipeline.pii.hear(kinds[0] if kinds else SEALED_KIND, value)
        return value

    return PiiGoalPrivacy(
        pipeline.scrub,
        personal,
        lambda text, user: cipher.encrypt(text, user_id=user, fact_key=GOAL_SLOT),
        opened,
    )


SEALED_KIND = "sealed"  # the kind of a sealed value no recognizer reads alone: redacted [SEALED]


GOAL_SLOT = (
    "charter:goal-slot"  # what a sealed slot value's ciphertext is bound to, besides the user
)


def slot_args(
    binding_args: Mapping[str, Any],
    slots: Mapping[str, Any],
    formatters: Mapping[str, Formatter] | None = None,
) -> dict[str, Any]:
    """A skill's arguments from a goal's slots: "{slot}" passes the value as it is; other
    strings are templates (a list joined by 、; "{date|date}" formatted: 2025-07-02); an
    argument whose slot has no value — or whose formatter cannot write it — is left out, so
    the contract's ``required`` decides whether the call can run."""
    out: dict[str, Any] = {}
    for arg, value in binding_args.items():
        if not isinstance(value, str):
            out[arg] = value
            continue
        refs = list(SLOT_REF.finditer(value))
        if any(slots.get(m.group(1)) in (None, "", []) for m in refs):
            continue
        if len(refs) == 1 and refs[0].group(0) == value and not refs[0].group(2):
            out[arg] = slots[refs[0].group(1)]
            continue
        if not all(_writes(m, slots, formatters or {}) for m in refs):
            continue
        out[arg] = fill_slots(value, slots, formatters)
    return out


def _writes(
    m: regex.Match[str], slots: Mapping[str, Any], formatters: Mapping[str, Formatter]
) -> bool:
    """Every formatter of the reference can write the slot's value (a date without a part
    of the day has no 上午/下午: the argument is missing, not a wrong one)."""
    value = slots.get(m.group(1))
    for name in (n for n in m.group(2).split("|") if n):
        formatter = formatters.get(name)
        written = formatter.format(value) if formatter is not None else None
        if written is None:
            return False
        value = written
    return True
