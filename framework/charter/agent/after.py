"""The steps of a turn after the answer: memory writes, goal transitions, the trace, the
hooks (the loop is ``charter.agent.loop``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from charter.agent import stages
from charter.agent.parts import AgentOptions, Parts
from charter.agent.reply import Reply
from charter.agent.steps import ID, Planned
from charter.agent.turn import Turn
from charter.compile.specs.goal_states import Status
from charter.compile.specs.goals import ROOT_INTENT
from charter.compile.specs.memory import Origin
from charter.contracts.events import MemoryWrite, Reflection
from charter.goals.tracker import MOVES, OUTCOME
from charter.learn.meaning import explains
from charter.memory.pipeline import Candidate
from charter.memory.records import PreparedFact, PreparedSummary
from charter.memory.statements import slot_candidate, statement_candidate, statements_of
from charter.store.privacy import scrub_json
from charter.traces.model import Trace

# ---- after the answer -------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "、".join(map(str, value)) if isinstance(value, list) else str(value)


@dataclass(frozen=True)
class _Given:
    """A slot value of this turn to remember: the goal's intent, its fact key, the value, and
    where it came from."""

    intent: str
    key: str
    value: Any
    origin: Origin


def _given(p: Parts, planned: Planned, reply: Reply, text: str) -> list[_Given]:
    """What this turn's goals were given: the values the user stated (new goals' slots, slot
    updates, slots the model read from what the input says), defaults they did not say and
    the model's guesses (inferred) and
    the fields a skill's result kept for a goal whose answer this reply told (verified).
    Values carried from the session or memory are not written again: they were remembered
    when they were given. Each key once, the user's word first."""
    spec = p.pack.goals
    if planned.turn is None or spec is None:
        return []
    out: list[_Given] = []
    for g in planned.turn.plan.goals:
        intent = spec.intent(g.intent)
        for name, value in g.slots.items():
            slot = intent.slot(name) if intent is not None else None
            default = slot is not None and slot.default is not None and value == slot.default
            said = not default or str(value) in text
            origin: Origin = "stated" if said else "inferred"
            out.append(_Given(g.intent, spec.fact_key(g.intent, name), value, origin))
    for u in planned.turn.plan.updates:  # a goal's intent never changes: planning's view
        goal = planned.goals.get(u.goal)
        owner = goal.intent if goal is not None else ""
        out.append(_Given(owner, spec.fact_key(owner, u.slot), u.value, "stated"))
    by_id = {g.id: g for g in planned.active}
    for gid, names in planned.model_read.items():
        goal = by_id.get(gid) or planned.goals.get(gid)
        intent = spec.intent(goal.intent) if goal is not None else None
        values = planned.slots.get(gid, {})
        for name in sorted(names):
            if goal is None or intent is None or name not in values:
                continue
            # the model's reading is the user's word when the input says it (前年 → 2024), a
            # guess otherwise (the year of 第1季度), as the reflection triggers judge it
            value = values[name]
            said = explains(p.registry.extractors, intent, name, value, text, p.clock())
            key = spec.fact_key(goal.intent, name)
            out.append(_Given(goal.intent, key, value, "stated" if said else "inferred"))
    delivered = list(dict.fromkeys(reply.extra.get("delivered", ())))
    # what the skills kept is in the goals' contexts now, not in planning's view
    held = p.goals.session(planned.user_id, planned.session_id) if delivered else planned.goals
    for gid in delivered:
        goal = held.get(gid)
        intent = spec.intent(goal.intent) if goal is not None else None
        if goal is None or intent is None:
            continue
        context = held.context(gid)
        bindings = [intent.skill, *(s.skill for s in intent.stages)]
        for name in dict.fromkeys(k for b in bindings if b is not None for k, _ in b.keep):
            if name in context:
                key = intent.fact_key(name)
                out.append(_Given(goal.intent, key, context[name], "verified"))
    rank = {"stated": 0, "verified": 1, "inferred": 2}
    first: dict[str, _Given] = {}
    for given in sorted(out, key=lambda x: rank[x.origin]):  # stable: plan order kept
        first.setdefault(given.key, given)
    return [g for g in out if first[g.key] is g]


def remember(
    p: Parts, turn: Turn, reply: Reply, planned: Planned, options: AgentOptions
) -> dict[str, Any]:
    """The turn into short-term memory; what the user stated — this turn's slot values, under
    their intent's fact keys (``transfer.amount``) or a declared ``memory_key``, and the
    statements memory.yaml declares (我对青霉素过敏) — into the fact channel, through the write
    pipeline, as memory.yaml's ``slot_facts`` and ``statements`` govern them; the question
    into the narrative channel."""
    accessor, session_id, text = turn.accessor, turn.session_id, turn.text
    intent = planned.active[0].intent if planned.active else None
    turn.record(p.short_term.record(accessor.user_id, session_id, text, reply.text, intent=intent))
    if not options.write_memory:
        return {"facts": 0, "dropped": 0, "summaries": 0}
    candidates: list[Candidate] = []
    for given in _given(p, planned, reply, text):
        if given.value in (None, "", []):
            continue
        shown = _text(given.value)
        made = slot_candidate(
            p.policy,
            given.key,
            shown,
            given.origin,
            domain=options.use,
            intent_type=given.intent or intent,
            entity_ref=shown if ID.match(shown) else None,
        )
        if made is not None:
            candidates.append(made)
    # a statement the turn's slots already hold (抬头 of an invoice goal) is written once
    slotted = {c.key for c in candidates}
    candidates += [
        statement_candidate(said, domain=options.use, intent_type=intent)
        for said in statements_of(p.policy, text)
        if said.statement.key not in slotted
    ]
    written = dropped = 0
    for candidate in candidates:
        prepared = p.pipeline.prepare(accessor, candidate)
        if isinstance(prepared, PreparedFact):
            fact = p.facts.write(accessor, prepared)
            written += 1
            if p.notify is not None:
                p.notify(
                    "charter_on_memory_write",
                    MemoryWrite(
                        action="write",
                        layer="facts",
                        user_id=accessor.user_id,
                        key=fact.key,
                        value=fact.value,  # as stored: redacted, encrypted when the policy says
                        memory_type=fact.memory_type,
                        confidence=fact.confidence,
                        memory_id=fact.id,
                        at=fact.created_at,
                    ),
                )
        else:
            dropped += 1
    summaries = 0
    if p.memory.narrative is not None:
        made_summary = p.pipeline.prepare_summary(
            accessor,
            text,
            domain=options.use,
            kind="question",
            session_id=session_id,
            intent_type=intent,
        )
        if isinstance(made_summary, PreparedSummary):
            summaries = len(p.memory.narrative.add(accessor, [made_summary]))
    return {"facts": written, "dropped": dropped, "summaries": summaries}


def settle_goals(
    p: Parts, planned: Planned, reply: Reply, refused: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The goals whose result the reply told (a skill's result, a completed template, an
    accepted model answer that met the intent's deliverables) complete when the reply passed
    the rules — never by a reply that was refused, blocked or handed over, and never a goal
    whose sub-goals are still open. A goal whose skill answered but ``refused`` the request
    (余额不足) is aborted once its answer is told."""
    delivered = list(reply.extra.get("delivered", ()))
    if reply.verdict == "escalate":  # only safety goals whose template handed the user over
        alarms = set(reply.extra.get("alarms", ()))
        delivered = [g for g in delivered if g in alarms]
    elif reply.verdict not in ("pass", "fixed"):
        return []
    if not delivered or not planned.user_id:
        return []
    held = p.goals.session(planned.user_id, planned.session_id)
    tree = {g.id: g for g in held.goals}
    # an action refused by a stage before its confirmation is still pending
    waiting = [
        gid
        for gid in delivered
        if gid in tree
        and (tree[gid].status == "active" or (gid in refused and tree[gid].status == "pending"))
    ]
    spec = p.pack.goals
    moves = []
    while waiting:  # children first: a parent delivered with its last child completes too
        busy = {
            g.parent_id
            for g in tree.values()
            if g.status in ("pending", "active") and not (spec and spec.stage(g.intent))
        }
        ready = [gid for gid in waiting if gid not in busy]
        if not ready:
            break
        for goal_id in ready:
            if goal_id in refused:
                # kept so a follow-up (那就周四上午) can ask for it again with another value
                p.goals.set_slots(goal_id, {OUTCOME: "refused"})
                done = p.goals.transition(
                    goal_id, "aborted", actor="agent", trigger="the skill refused the request"
                )
                if p.tracker is not None:
                    p.tracker.end_stages(goal_id, trigger="the skill refused the request")
                to: Status = "aborted"
            else:
                done = p.goals.complete(
                    goal_id,
                    {"answer": p.pipeline.scrub(reply.text)[:200]},
                    actor="agent",
                    trigger="result delivered",
                )
                to = "completed"
                if done.ok:
                    moves += _moved(p, goal_id, held.context(goal_id))
            moves.append({"goal": goal_id, "to": to, "ok": done.ok})
            tree[goal_id] = dataclasses.replace(tree[goal_id], status=to)
            waiting.remove(goal_id)
    finished = {
        tree[m["goal"]].intent
        for m in moves
        if m["to"] == "completed" and m["ok"] and m["goal"] in tree
    }
    # the stages waiting for them, read again only when there are some: the moves above may
    # have ended stages (a refusal ends its goal's stages)
    waits = spec is not None and any(
        (found := spec.stage(g.intent)) is not None and found[1].by in finished
        for g in tree.values()
    )
    now = p.goals.session(planned.user_id, planned.session_id).goals if waits else ()
    for gid in stages.completed_by(p, now, finished):
        moves.append({"goal": gid, "to": "completed", "ok": True})
    for root in [g for g in tree.values() if g.intent == ROOT_INTENT and g.status == "active"]:
        # the root of a split is done when its goals are: the last one delivered now
        kids = [g for g in tree.values() if g.parent_id == root.id]
        if moves and kids and all(g.status in ("completed", "aborted") for g in kids):
            done = p.goals.complete(root.id, {}, actor="agent", trigger="its goals are done")
            moves.append({"goal": root.id, "to": "completed", "ok": done.ok})
    return moves


def _moved(p: Parts, goal_id: str, context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A goal that moved a done action (改约): the goal it moved ends, called ``moved``."""
    old = context.get(MOVES)
    if not isinstance(old, str):
        return []
    p.goals.set_slots(old, {OUTCOME: "moved"})
    done = p.goals.transition(old, "aborted", actor="agent", trigger=f"moved by {goal_id}")
    return [{"goal": old, "to": "aborted", "ok": done.ok}]


def goal_tree(p: Parts, user_id: str, session_id: str) -> tuple[dict[str, Any], ...]:
    if p.tracker is None:
        return ()
    held = p.goals.session(user_id, session_id)  # as the turn leaves them
    return tuple(
        {
            "id": g.id,
            "intent": g.intent,
            "status": g.status,
            "parent": g.parent_id,
            "description": g.description,
            **_outcome(held.context(g.id)),
        }
        for g in held.goals
    )


def _outcome(context: Mapping[str, Any]) -> dict[str, Any]:
    """How a goal ended, beyond its status: refused, moved, a stage's own name for it."""
    outcome = context.get(OUTCOME)
    return {"outcome": outcome} if isinstance(outcome, str) else {}


def scrubbed(trace: Trace, scrub: Callable[[str], str]) -> Trace:
    """The trace with every text run through the write pipeline's scrubber."""
    return dataclasses.replace(
        trace,
        reply=scrub(trace.reply),
        steps=tuple(
            dataclasses.replace(
                s,
                inputs=scrub_json(s.inputs, scrub),
                outputs=scrub_json(s.outputs, scrub),
                decision=scrub(s.decision),
            )
            for s in trace.steps
        ),
    )


def with_trace(reply: Reply, trace_id: str, goals: tuple[dict[str, Any], ...]) -> Reply:
    return dataclasses.replace(reply, trace_id=trace_id, goals=goals)


def after_reflection(p: Parts, reply: Reply, trace_id: str, user_id: str, session_id: str) -> None:
    if p.notify is None or reply.reflection is None:
        return
    r = reply.reflection
    p.notify(
        "charter_after_reflection",
        Reflection(
            pack=p.pack.name,
            verdict=reply.verdict,
            text=reply.text,
            final_text=reply.text,
            failed_rules=r.failed_rules,
            goal_aligned=r.goal_aligned,
            constraints_ok=r.constraints_ok,
            uncertain=r.uncertain,
            attempt=max(reply.attempts, 1),
            trace_id=trace_id,
            user_id=user_id,
            session_id=session_id,
        ),
    )
