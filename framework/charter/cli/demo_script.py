"""What ``charter demo`` says to each pack, and how a turn's outcome is read back.

The conversations are fixed; the model is not. Everything the notes claim is read from the
``Reply`` and the turn's trace after the fact (who answered, the verdict, the attempts, the
planner's moves, the memories recalled, the fallback that ran, the ticket), so a base model
that answers differently gives different notes, never wrong ones.

The features that must not depend on the model are built into the script: the planner's
splits, corrections and cancels (inputs taken from the packs' ``goals.yaml`` tests), memory
across two sessions (facts written in the first are recalled in the second before any
generation), the simulated outage and its fallback (no generation), and the uncertainty
repair (a low-confidence guess about the user is written first, so the rules must mark the
answer whichever way it is produced).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from charter.agent.reply import Reply
    from charter.traces.model import Trace

FEATURES = ("memory", "split", "correct", "cancel", "repaired", "retry", "escalation", "fallback")


@dataclass(frozen=True)
class Guess:
    """An inferred fact about the user, written before a turn (a demo setup step)."""

    key: str
    value: str
    intent: str
    confidence: float = 0.6


@dataclass(frozen=True)
class Step:
    text: str
    session: str = "s1"
    outage: str | None = None  # a skill that raises during this turn only (simulated)
    guess: Guess | None = None


@dataclass(frozen=True)
class Conversation:
    domain: str
    user: str
    steps: tuple[Step, ...]


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "finance",
        "alice",
        (
            # two intents in one sentence: the planner splits them under a common root
            Step("查一下尾号1234的余额，然后给张三转账5000元"),
            Step("不对，金额改成3000元"),
            Step("转账不用了"),
            # no skill answers a wealth question: when the retries run out, a person takes over
            Step("我有5万元想买理财，有什么推荐"),
            Step("尾号1234的余额还有多少", session="s2"),
            Step(
                "尾号1234最近有哪些交易记录",
                session="s2",
                guess=Guess("preferred_card", "尾号1234的卡常用于还款", "account-query"),
            ),
        ),
    ),
    Conversation(
        "ecommerce",
        "bob",
        (
            Step("帮我查一下订单"),
            Step("订单号DD202405010001"),
            Step("订单DD202405010001的快递到哪了", outage="logistics_track"),
            Step("我的订单DD202405010001发货了吗", session="s2"),
            # the outage is over: the same skill answers again
            Step("订单DD202405010001的快递现在到哪了", session="s2"),
        ),
    ),
    Conversation(
        "medical",
        "carol",
        (
            # three intents: over the pack's confirm_split_over, so the split is confirmed first
            Step("头疼三天了，帮我挂个明天的神经内科号，顺便解读一下血常规报告"),
            Step("好的，继续"),
            Step("不对，时间改到后天下午"),
            Step("帮我取消预约"),
            Step("头疼还没好", session="s2"),
            Step("布洛芬一天吃几次", session="s2"),
        ),
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
    """One turn's note (short phrases joined by `` · ``) and the features it showed."""

    parts: list[str] = field(default_factory=list)
    features: dict[str, str] = field(default_factory=dict)  # feature -> detail ("" for none)

    @property
    def text(self) -> str:
        return " · ".join(self.parts)


def _outputs(trace: Trace | None, name: str) -> Mapping[str, Any]:
    if trace is None:
        return {}
    return next((s.outputs for s in trace.steps if s.name == name), {})


def _retries(reply: Reply) -> str:
    return f"retry×{reply.attempts - 1}" if reply.attempts > 1 else "first attempt"


def _answered(reply: Reply, planner: Mapping[str, Any], noted: Noted) -> str:
    by = reply.answered_by
    if reply.attempts > 1:
        noted.features["retry"] = ""
    if by == "planner":
        asks = "confirms the split" if planner.get("confirm") else "asks for a missing slot"
        return f"planner {asks} (no generation)"
    if by == "fallback":
        shown = []
        for s in reply.skills:
            if s.get("fallback"):
                noted.features["fallback"] = str(s["fallback"])
                shown.append(f"{s['skill']} failed ({s['failure']}) → fallback {s['fallback']}")
        return "; ".join(shown) + " (no generation)"
    if by == "template":
        used = ", ".join(str(s["skill"]) for s in reply.skills if s.get("status") == "ok")
        return f"model · {_retries(reply)} → template from {used}"
    if by == "escalation":
        return f"model · {_retries(reply)} → escalated"
    if by == "rules":
        return f"model · {_retries(reply)} → blocked: the pack's safe message"
    if by == "skill":
        return "the skill refused the arguments"
    return f"model · {_retries(reply)}"


def _repairs(reply: Reply, noted: Noted) -> str | None:
    record = reply.reflection
    if reply.verdict == "fixed":
        fixed = [f.rule_id for f in reply.findings if f.fixed]
        noted.features["repaired"] = ", ".join(fixed)
        return "repaired: " + (", ".join(fixed) or "by the rules")
    if record is not None and record.verdict == "fixed":
        # a template or deterministic answer the rules repaired; the findings on the reply
        # are the model's last draft's, so they do not name what changed in this text
        noted.features["repaired"] = ""
        marked = " (uncertainty marker)" if record.uncertain else ""
        return f"{reply.answered_by} answer repaired by the rules{marked}"
    return None


def _intent(goal_id: str, intents: Mapping[str, str]) -> str:
    return intents.get(goal_id, goal_id)


def _goal_moves(
    reply: Reply,
    planner: Mapping[str, Any],
    moves: Sequence[Mapping[str, Any]],
    before: Mapping[str, Mapping[str, Any]],
    noted: Noted,
) -> list[str]:
    intents = {str(g["id"]): str(g["intent"]) for g in reply.goals}
    plan = planner.get("plan") or {}
    out = []
    made = [g for g in plan.get("goals") or [] if g.get("intent") != "root"]
    names = " + ".join(str(g["intent"]) for g in made)
    if len(made) >= 2:
        noted.features["split"] = names
        out.append(f"split: {names}" + (", to confirm" if planner.get("confirm") else ""))
    elif made:
        out.append(f"new goal {names} ({made[0].get('status')})")
    for update in plan.get("updates") or []:
        goal, slot, value = str(update["goal"]), str(update["slot"]), update["value"]
        old = before.get(goal, {}).get(slot)
        if old is not None and old != value:
            noted.features["correct"] = f"{slot}: {old} → {value}"
            out.append(f"corrected {_intent(goal, intents)}.{slot}: {old} → {value}")
        else:
            out.append(f"filled {_intent(goal, intents)}.{slot} = {value}")
    if plan.get("activate"):
        active = ", ".join(_intent(str(g), intents) for g in plan["activate"])
        out.append(f"activated {active}")
    aborted = [_intent(str(g), intents) for g in plan.get("aborts") or []]
    aborted = [name for name in aborted if name != "root"]
    if aborted:
        noted.features["cancel"] = ", ".join(aborted)
        out.append("cancelled " + ", ".join(aborted))
    done = [
        _intent(str(m["goal"]), intents)
        for m in moves
        if m.get("to") == "completed" and m.get("ok") and intents.get(str(m["goal"])) != "root"
    ]
    if done:
        out.append(", ".join(done) + " completed")
    return out


def _memory(
    reply: Reply, recall: Mapping[str, Any], session: str, seen: Mapping[str, str], noted: Noted
) -> str | None:
    texts = [str(t) for t in recall.get("facts") or []]
    if not texts:
        return None
    pairs = list(zip(reply.memories_used, texts, strict=False))
    earlier = [(seen[i], t) for i, t in pairs if seen.get(i) not in (None, session, "setup")]
    ladder = recall.get("step")
    if earlier:
        where = sorted({s for s, _ in earlier})
        noted.features["memory"] = ", ".join(where)
        shown = "; ".join(t for _, t in earlier)
        return f"memory from session {', '.join(where)}: {shown} (ladder: {ladder})"
    return f"memory: {len(texts)} fact(s) recalled (ladder: {ladder})"


def annotate(
    reply: Reply,
    trace: Trace | None,
    *,
    session: str,
    before: Mapping[str, Mapping[str, Any]],
    seen: Mapping[str, str],
) -> Noted:
    """What happened in a turn: ``before`` is each goal's slots before it, ``seen`` the
    session each of the user's fact ids was first seen in (``setup`` for a demo setup)."""
    noted = Noted()
    planner = _outputs(trace, "goals")
    noted.parts.append(_answered(reply, planner, noted))
    if reply.ticket:
        noted.features["escalation"] = reply.ticket
        noted.parts.append(f"ticket {reply.ticket}")
    repaired = _repairs(reply, noted)
    if repaired:
        noted.parts.append(repaired)
    if reply.reflection is not None and reply.reflection.uncertain:
        noted.parts.append("low-confidence memory → 【不确定性】高")
    moves = _outputs(trace, "goal_transitions").get("moves") or []
    goals = _goal_moves(reply, planner, moves, before, noted)
    if goals:
        noted.parts.append("goals: " + "; ".join(goals))
    memory = _memory(reply, _outputs(trace, "recall"), session, seen, noted)
    if memory:
        noted.parts.append(memory)
    return noted
