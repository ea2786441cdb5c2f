"""The steps of a turn after the answer: memory writes, goal transitions, the trace, the
hooks (the loop is ``charter.agent.loop``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from charter.agent import stages
from charter.agent.parts import AgentOptions, Parts
from charter.agent.reply import Reply
from charter.agent.steps import ID, Planned
from charter.events import MemoryWrite, Reflection
from charter.goals.privacy import scrub_json
from charter.goals.spec import ROOT_INTENT
from charter.goals.states import Status
from charter.goals.tracker import MOVES, OUTCOME
from charter.memory.pipeline import Candidate
from charter.memory.records import Accessor, PreparedFact, PreparedSummary
from charter.traces.model import Trace

# ---- after the answer -------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "、".join(map(str, value)) if isinstance(value, list) else str(value)


def remember(
    p: Parts,
    accessor: Accessor,
    session_id: str,
    text: str,
    reply: Reply,
    planned: Planned,
    options: AgentOptions,
) -> dict[str, Any]:
    """The turn into short-term memory; what the user stated (this turn's slot values) into
    the fact channel, through the write pipeline; the question into the narrative channel."""
    intent = planned.active[0].intent if planned.active else None
    p.short_term.record(accessor.user_id, session_id, text, reply.text, intent=intent)
    if not options.write_memory:
        return {"facts": 0, "dropped": 0, "summaries": 0}
    given: list[tuple[str, str, Any]] = []
    if planned.turn is not None:
        for g in planned.turn.plan.goals:
            given += [(g.intent, k, v) for k, v in g.slots.items()]
        given += [("", u.slot, u.value) for u in planned.turn.plan.updates]
    written = dropped = 0
    for intent_id, key, value in given:
        if value in (None, "", []):
            continue
        shown = _text(value)
        candidate = Candidate(
            key=key,
            value=shown,
            domain=options.use,
            entity_ref=shown if ID.match(shown) else None,
            intent_type=intent_id or intent,
        )
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
        made = p.pipeline.prepare_summary(
            accessor,
            text,
            domain=options.use,
            kind="question",
            session_id=session_id,
            intent_type=intent,
        )
        if isinstance(made, PreparedSummary):
            summaries = len(p.memory.narrative.add(accessor, [made]))
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
    if reply.verdict not in ("pass", "fixed") or not delivered or not planned.user_id:
        return []
    tree = {g.id: g for g in p.goals.tree(planned.user_id, planned.session_id)}
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
                    moves += _moved(p, goal_id)
            moves.append({"goal": goal_id, "to": to, "ok": done.ok})
            tree[goal_id] = dataclasses.replace(tree[goal_id], status=to)
            waiting.remove(goal_id)
    finished = {
        tree[m["goal"]].intent
        for m in moves
        if m["to"] == "completed" and m["ok"] and m["goal"] in tree
    }
    for gid in stages.completed_by(p, planned.user_id, planned.session_id, finished):
        moves.append({"goal": gid, "to": "completed", "ok": True})
    for root in [g for g in tree.values() if g.intent == ROOT_INTENT and g.status == "active"]:
        # the root of a split is done when its goals are: the last one delivered now
        kids = [g for g in tree.values() if g.parent_id == root.id]
        if moves and kids and all(g.status in ("completed", "aborted") for g in kids):
            done = p.goals.complete(root.id, {}, actor="agent", trigger="its goals are done")
            moves.append({"goal": root.id, "to": "completed", "ok": done.ok})
    return moves


def _moved(p: Parts, goal_id: str) -> list[dict[str, Any]]:
    """A goal that moved a done action (改约): the goal it moved ends, called ``moved``."""
    old = p.goals.context(goal_id).get(MOVES)
    if not isinstance(old, str):
        return []
    p.goals.set_slots(old, {OUTCOME: "moved"})
    done = p.goals.transition(old, "aborted", actor="agent", trigger=f"moved by {goal_id}")
    return [{"goal": old, "to": "aborted", "ok": done.ok}]


def goal_tree(p: Parts, user_id: str, session_id: str) -> tuple[dict[str, Any], ...]:
    if p.tracker is None:
        return ()
    return tuple(
        {
            "id": g.id,
            "intent": g.intent,
            "status": g.status,
            "parent": g.parent_id,
            "description": g.description,
            **_outcome(p, g.id),
        }
        for g in p.goals.tree(user_id, session_id)
    )


def _outcome(p: Parts, goal_id: str) -> dict[str, Any]:
    """How a goal ended, beyond its status: refused, moved, a stage's own name for it."""
    outcome = p.goals.context(goal_id).get(OUTCOME)
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
