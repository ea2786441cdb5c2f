"""How ``charter demo`` reads a turn back (``annotate``): everything a note says is read from
the ``Reply`` (its template ids, its goal events, the skills, the ticket) and the turn's trace
(the plan, the recall, each model draft and what the checks made of it, the stages moved)
after the fact, so a base model that writes something else gives other notes, never wrong
ones. Each note also marks which of ``demo_script.FEATURES`` the turn showed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from charter.agent.reply import Reply
    from charter.traces.model import Trace

QUOTE = 24  # characters of a model draft quoted in a note


@dataclass
class Noted:
    """One turn's note: short phrases joined by `` · `` on one line, then a line per model
    draft; and the features the turn showed."""

    parts: list[str] = field(default_factory=list)
    drafts: list[str] = field(default_factory=list)
    features: dict[str, str] = field(default_factory=dict)  # feature -> detail ("" for none)

    def text(self, *tail: str) -> str:
        return "\n".join([" · ".join([*self.parts, *tail]), *self.drafts])


def _outputs(trace: Trace | None, name: str) -> Mapping[str, Any]:
    if trace is None:
        return {}
    return next((s.outputs for s in trace.steps if s.name == name), {})


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f"“{flat[:QUOTE]}…”" if len(flat) > QUOTE else f"“{flat}”"


def _judged(decision: str) -> str:
    """A reflect step's decision as a word about the draft."""
    if decision == "accepted":
        return "accepted"
    if decision == "repaired by the rules":
        return "accepted, repaired by the rules"
    if decision == "blocked":
        return "blocked by the rules"
    if decision == "escalate":
        return "refused: the rules want a person"
    return "refused"


def _drafts(trace: Trace | None) -> list[str]:
    """One line per model draft: what it was judged, which checks failed, how it began."""
    if trace is None:
        return []
    written = [s for s in trace.steps if s.name == "generate" and not s.inputs.get("rephrase")]
    judged = [s for s in trace.steps if s.name == "reflect" and not s.inputs.get("rephrase")]
    lines = []
    for n, (gen, ref) in enumerate(zip(written, judged, strict=False), start=1):
        failed = ", ".join(str(r) for r in ref.outputs.get("failed") or [])
        why = f" ({failed})" if failed else ""
        raw = str(gen.outputs.get("text"))
        line = f"draft {n} {_judged(ref.decision or '')}{why}: {_quote(raw)}"
        final = str(ref.outputs.get("final_text"))
        if ref.decision == "accepted" and final != raw.strip():
            line += f" → sent as {_quote(final)}"  # lines echoing the prompt dropped
        lines.append(line)
    return lines


def _model(reply: Reply, trace: Trace | None, kinds: Sequence[str], noted: Noted) -> str:
    """Who wrote a turn the model was asked in: its accepted draft, or the plain reply."""
    noted.drafts = _drafts(trace)
    asked = (
        "open question (no intent, no FAQ entry) → the model (assisted)"
        if "unanswered" in kinds
        else "open goal → the model (assisted)"
    )
    n = reply.attempts
    if "model" in reply.responses:
        noted.features["model"] = "accepted"
        return f"{asked} · draft {n} accepted by the model-text checks and the rules"
    if reply.answered_by == "rules":
        noted.features["model"] = "blocked"
        return f"{asked} · blocked by the rules: the pack's safe message"
    if reply.answered_by == "escalation":
        noted.features["model"] = "escalated"
        return f"{asked} · the rules want a person"
    noted.features["model"] = "refused"
    plain = ", ".join(r for r in reply.responses if ".unanswered" in r)
    drafts = f"{n} draft{'s' * (n != 1)}"
    return f"{asked} · {drafts} refused → the plain reply {plain or 'unanswered'}, no ticket"


def _composed(reply: Reply, mode: str | None) -> str:
    ids = " + ".join(reply.responses) or "nothing"
    if reply.answered_by == "rules":
        return f"blocked by the rules: the pack's safe message ({ids})"
    why = "assisted, but templates cover it: the model is not asked" if mode else "no generation"
    return f"templates {ids} ({why})"


def _intents(events: Sequence[Mapping[str, Any]], kinds: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(str(e["intent"]) for e in events if e["kind"] in kinds))


def _told(
    reply: Reply,
    trace: Trace | None,
    before: Mapping[str, Mapping[str, Any]],
    noted: Noted,
) -> list[str]:
    """What the reply acknowledged and asked, read from its goal events."""
    events = [e for e in reply.events if e.get("intent")]
    out = []
    goals = _intents(events, ("result", "completed", "confirmation_asked", "slot_asked"))
    if len(goals) >= 2:
        noted.features["several"] = " + ".join(goals)
        out.append(f"one reply for {len(goals)} goals: {' + '.join(goals)}")
    updates = {
        (str(u["goal"]), str(u["slot"])): u["value"]
        for u in (_outputs(trace, "goals").get("plan") or {}).get("updates") or []
    }
    for e in events:
        if e["kind"] != "slot_corrected":
            continue
        goal, slot = str(e.get("goal")), str(e.get("slot"))
        old, new = before.get(goal, {}).get(slot), updates.get((goal, slot))
        change = f"{old} → {new}" if old is not None and new is not None else "changed"
        noted.features.setdefault("correct", f"{slot}: {change}")
        out.append(f"correction acknowledged: {e['intent']}.{slot} {change}")
    cancelled = _intents(events, ("cancelled", "confirmation_declined"))
    if cancelled:
        noted.features.setdefault("cancel", ", ".join(cancelled))
        out.append("cancellation acknowledged: " + ", ".join(cancelled))
    accepted = _intents(events, ("confirmation_accepted",))
    if accepted:
        out.append("confirmed: " + ", ".join(accepted) + " goes ahead")
    for e in events:
        if e["kind"] == "slot_asked":
            out.append(f"asks for {e['intent']}.{e.get('slot')}")
    asked = _intents(events, ("confirmation_asked",))
    if asked:
        noted.features.setdefault("confirm", ", ".join(asked))
        out.append(", ".join(asked) + " waits for 是 before anything is done")
    return out


def _skills(reply: Reply, noted: Noted) -> list[str]:
    out = []
    kinds = {str(e["kind"]) for e in reply.events}
    for s in reply.skills:
        if s.get("fallback"):
            noted.features.setdefault("fallback", str(s["fallback"]))
            out.append(f"{s['skill']} failed ({s['failure']}) → fallback {s['fallback']}")
        elif s.get("status") == "ok" and s.get("replayed"):
            noted.features["once"] = str(s["skill"])
            out.append(f"a yes again: {s['skill']} replayed from its ledger, not executed again")
        elif s.get("status") == "ok" and "confirmation_accepted" in kinds:
            noted.features.setdefault("once", str(s["skill"]))
            refused = " (it refused: the goal is aborted)" if s.get("refused") else ""
            out.append(f"{s['skill']} executed once, keyed by the goal's id{refused}")
    return out


def _carried(reply: Reply, trace: Trace | None, noted: Noted) -> list[str]:
    """Values the input did not give (carry:), follow-ups (no intent, the last request
    again), and FAQ answers given directly."""
    out = []
    plan = _outputs(trace, "goals").get("plan") or {}
    for g in plan.get("goals") or []:
        carried = dict(g.get("carried") or {})
        remembered = set(g.get("remembered") or ())
        for slot, value in carried.items():
            where = "memory" if slot in remembered else "the session"
            noted.features.setdefault("carry", f"{g['intent']}.{slot}")
            if slot in remembered:
                noted.features.setdefault("memory", "carry")
            out.append(f"{g['intent']}.{slot} = {value} carried from {where}")
        if g.get("inherited") and not g.get("redoes"):  # a sub-goal's context from its tree
            got = ", ".join(f"{k} = {v}" for k, v in dict(g["inherited"]).items())
            noted.features.setdefault("carry", f"{g['intent']} inherited")
            out.append(f"{g['intent']} inherits {got} from the goals above it")
        if g.get("redoes") and g.get("inherited"):  # moves: kept fields of a done action
            moved = ", ".join(f"{k} {v}" for k, v in dict(g["inherited"]).items())
            out.append(f"a done {g['intent']} corrected: a move of it ({moved} carried)")
        elif g.get("redoes"):
            noted.features.setdefault("carry", f"{g['intent']} again")
            out.append(f"follow-up: {g['intent']} again with the new value")
    if reply.answered_by == "faq":
        noted.features.setdefault("faq", ", ".join(reply.responses))
        out.append("FAQ " + ", ".join(reply.responses) + " answered directly (no goal, no model)")
    return out


def _handoff(reply: Reply, trace: Trace | None, noted: Noted) -> str | None:
    if not reply.ticket:
        return None
    asked = trace is not None and any(s.name == "handoff" for s in trace.steps)
    if asked:
        noted.features.setdefault("handoff", reply.ticket)
        return f"the user asked for a person → ticket {reply.ticket}"
    return f"ticket {reply.ticket}"


def _stages(reply: Reply, trace: Trace | None, noted: Noted) -> list[str]:
    """The stages a turn moved (a staged flow's sub-goals, by their own status names), and an
    action that moved an earlier one (改约)."""
    by_id = {str(g["id"]): g for g in reply.goals}
    moved = [
        by_id[str(m["goal"])]
        for m in _outputs(trace, "goal_transitions").get("moves") or []
        if m.get("ok") and str(m.get("goal")) in by_id
    ]
    shown = [
        f"{e['stage']} {e['to']}"
        for e in _outputs(trace, "skills").get("stages") or []
        if e.get("ok") and e.get("to") not in ("active", "pending")
    ]
    shown += [
        f"{g['intent']} {g.get('outcome') or g['status']}" for g in moved if "." in g["intent"]
    ]
    out = []
    if shown:
        noted.features.setdefault("stage", shown[0])
        out.append("stages: " + ", ".join(shown))
    for g in moved:
        if g.get("outcome") == "moved":
            noted.features.setdefault("move", str(g["intent"]))
            out.append(f"{g['intent']} moved: the earlier one's goal ends (outcome moved)")
    return out


def _goal_moves(reply: Reply, moves: Sequence[Mapping[str, Any]], noted: Noted) -> list[str]:
    intents = {str(g["id"]): str(g["intent"]) for g in reply.goals}
    moved_goals = {str(g["id"]) for g in reply.goals if g.get("outcome") == "moved"}
    out = []
    for to in ("completed", "aborted"):
        moved = [
            intents.get(str(m["goal"]), str(m["goal"]))
            for m in moves
            if m.get("to") == to
            and m.get("ok")
            and intents.get(str(m["goal"])) != "root"
            and "." not in intents.get(str(m["goal"]), "")  # a stage: told by _stages
            and str(m["goal"]) not in moved_goals
        ]
        if moved:
            names = list(dict.fromkeys(moved))
            out.append(", ".join(names) + f" {to}")
            if to == "completed":
                noted.features["done"] = ", ".join(names)
    return out


def _memory(
    reply: Reply, recall: Mapping[str, Any], session: str, seen: Mapping[str, str], noted: Noted
) -> str | None:
    texts = [str(t) for t in recall.get("facts") or []]
    if not texts:
        return None
    pairs = list(zip(reply.memories_used, texts, strict=False))
    earlier = [(seen[i], t) for i, t in pairs if seen.get(i) not in (None, session)]
    if earlier:
        ladder = recall.get("step")
        where = sorted({s for s, _ in earlier})
        noted.features.setdefault("memory", ", ".join(where))
        shown = "; ".join(t for _, t in earlier)
        return f"memory from session {', '.join(where)}: {shown} (ladder: {ladder})"
    return None  # facts of this session: nothing the demo needs to point at


def annotate(
    reply: Reply,
    trace: Trace | None,
    *,
    session: str,
    before: Mapping[str, Mapping[str, Any]],
    seen: Mapping[str, str],
    mode: str | None = None,
) -> Noted:
    """What happened in a turn: ``before`` is each goal's slots before it, ``seen`` the
    session each of the user's fact ids was first seen in, ``mode`` the conversation's."""
    noted = Noted()
    kinds = [str(e["kind"]) for e in reply.events]
    if reply.attempts > 0:
        noted.parts.append(_model(reply, trace, kinds, noted))
    else:
        noted.parts.append(_composed(reply, mode))
    noted.parts += _carried(reply, trace, noted)
    noted.parts += _told(reply, trace, before, noted)
    noted.parts += _skills(reply, noted)
    handoff = _handoff(reply, trace, noted)
    if handoff:
        noted.parts.append(handoff)
    noted.parts += _stages(reply, trace, noted)
    noted.parts += _goal_moves(reply, _outputs(trace, "goal_transitions").get("moves") or [], noted)
    memory = _memory(reply, _outputs(trace, "recall"), session, seen, noted)
    if memory:
        noted.parts.append(memory)
    return noted
