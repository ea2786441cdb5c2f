"""What ``charter demo`` says to each pack, and how a turn's outcome is read back.

The conversations are fixed; the model is not. Everything a note says is read from the
``Reply`` (its template ids, its goal events, the skills, the ticket) and the turn's trace (the
plan, the recall, each model draft and what the checks made of it) after the fact, so a base
model that writes something else gives other notes, never wrong ones.

The shipped packs are ``strict``: their replies are composed from templates and the model
never speaks in them. So what must not depend on the model is built into the script: journeys
that finish — a transfer corrected, confirmed and executed exactly once (a second 是 replays
it), another declined; an appointment booked from a triage, its department carried over and its
time moved before the yes; a price looked up and a coupon checked against it; follow-ups
without identifiers (那尾号9009呢, 快递到哪了) and a card remembered into a new session; FAQ
questions answered directly; a simulated skill outage and its fallback; the hand-off (转人工).
The summary table says, per conversation, which goals completed. The last conversation runs in
``assisted`` mode (``AgentOptions(mode="assisted")``): an input no intent claims and no FAQ
entry answers is given to the model, and its drafts are checked by the model-text checks and the
pack's rules — the note shows each draft and whether it was accepted or refused, and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from charter.agent.reply import Reply
    from charter.traces.model import Trace

FEATURES = (
    "several",
    "confirm",
    "once",
    "correct",
    "cancel",
    "carry",
    "faq",
    "handoff",
    "fallback",
    "memory",
    "model",
    "done",
)
QUOTE = 24  # characters of a model draft quoted in a note


@dataclass(frozen=True)
class Step:
    text: str
    session: str = "s1"
    outage: str | None = None  # a skill that raises during this turn only (simulated)


@dataclass(frozen=True)
class Conversation:
    domain: str
    user: str
    steps: tuple[Step, ...]
    mode: str | None = None  # AgentOptions.mode: None keeps the pack's own (strict)
    title: str = ""  # what the journey shows, in the header and the summary
    # the conversation's clock (ISO, local time): the demo data's calendar (the medical
    # schedule opens 2025-07-01..05); None: the clock the demo was given
    now: str | None = None

    @property
    def name(self) -> str:
        base = f"{self.domain} {self.title}" if self.title else self.domain
        return f"{base} ({self.mode})" if self.mode else base


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "finance",
        "alice",
        (
            # two intents in one sentence, one reply: the balance, then the transfer to confirm
            Step("查一下尾号1234的余额，然后给张三转账5000元"),
            Step("不对，金额改成3000元"),
            Step("是的"),  # executed: transfer (effect: execute), keyed by the goal's id
            Step("是的"),  # replayed: 已经办理过了, the same transaction number
            Step("再给王五转账800元"),
            Step("否"),
        ),
        title="transfer",
    ),
    Conversation(
        "finance",
        "erin",
        (
            Step("查一下尾号1234的余额"),
            Step("那尾号9009呢"),  # no intent: the last request again with the other card
            Step("上次查的那张卡现在余额多少", session="s2"),  # the card from memory
            Step("帮我转人工", session="s2"),
        ),
        title="follow-ups",
    ),
    Conversation(
        "ecommerce",
        "bob",
        (
            Step("帮我查一下订单DD202405010001"),
            Step("快递到哪了", outage="logistics_track"),  # the order carried; the fallback
            Step("无线蓝牙耳机现在多少钱"),
            Step("SAVE20这张优惠券还能用吗"),  # checked against the price just told
            Step("订单怎么取消？"),  # the FAQ, directly
            Step("我那个订单现在什么状态", session="s2"),  # the order from memory
        ),
        title="order & coupon",
    ),
    Conversation(
        "medical",
        "carol",
        (
            Step("头疼三天了"),  # triage: its department kept in the goal
            Step("帮我挂这个科明天上午的号"),  # the department carried into the booking
            Step("不对，时间改到后天下午"),
            Step("是"),  # booked: appointment_book runs once
            Step("预约后怎么取消？"),  # the FAQ, directly
        ),
        title="triage → booking",
        now="2025-06-30T10:00:00+08:00",
    ),
    Conversation(
        "finance",
        "dave",
        (
            # no intent claims it and no FAQ entry answers it: open, so the model is asked
            Step("你们周末营业吗"),
            # a template covers this one: the model is not asked, assisted or not
            Step("尾号1234的余额还有多少"),
        ),
        mode="assisted",
    ),
)

# outputs a small model might produce, for ``--rules-only``: the rules without a model
SAMPLES: dict[str, list[tuple[str, dict[str, object]]]] = {
    "finance": [
        ("合同金额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），请于2024-05-01前支付。", {}),
        ("合同金额为¥12,345.60（壹万贰仟元整），请在2025年3月8日前完成转账。", {}),
        ("该基金近一年收益率为5.2%，业绩稳健。", {}),
        ("这款产品保证年化收益8%，绝对安全。", {}),
        ("目前小微企业的增值税征收率为1%，依据财税〔2023〕1号。", {}),
        ("将使用您上次留下的对公账户办理。", {"memory": {"min_confidence": 0.6}}),
    ],
    "ecommerce": [
        ("这款耳机是全网最低价，现价199元。", {}),
        ("现在下单可领满300减50优惠券。", {}),
        ("满300减50优惠券，有效期至2024-06-18，详情见https://shop.example.com/coupon", {}),
        ("这件外套售价299.00元，七天无理由退换。", {}),
    ],
    "medical": [
        ("根据您的描述，你得了急性胃炎。", {}),
        ("发热时可以服用布洛芬缓解症状。", {}),
        ("您的症状可能与多种原因有关，建议尽快到医院就诊。", {}),
        ("可以考虑服用对乙酰氨基酚退烧，请遵医嘱。我们不能保证一定见效。", {}),
    ],
}


# ---- reading a turn back ------------------------------------------------------------------------


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
        if g.get("redoes"):
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


def _goal_moves(reply: Reply, moves: Sequence[Mapping[str, Any]], noted: Noted) -> list[str]:
    intents = {str(g["id"]): str(g["intent"]) for g in reply.goals}
    out = []
    for to in ("completed", "aborted"):
        moved = [
            intents.get(str(m["goal"]), str(m["goal"]))
            for m in moves
            if m.get("to") == to and m.get("ok") and intents.get(str(m["goal"])) != "root"
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
    noted.parts += _goal_moves(reply, _outputs(trace, "goal_transitions").get("moves") or [], noted)
    memory = _memory(reply, _outputs(trace, "recall"), session, seen, noted)
    if memory:
        noted.parts.append(memory)
    return noted
