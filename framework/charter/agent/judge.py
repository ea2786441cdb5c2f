"""Reflection on a generated answer, decided by the compiled checkers (seed 000 §3.2): the
pack's rules (with their deterministic repairs), goal alignment (the active goals'
deliverables), uncertainty (a memory below the threshold was used: the uncertainty ruleset
marks it) and the hallucination interceptor (claims about the user's past need a memory).

Then one of: accept (pass, or fixed by a repair; block gives the pack's safe message);
retry with the failed rules' messages and the missing deliverables as guidance; when the
retries run out, a template answer from the skills' results (checked like any answer), or
escalation to a person with a ticket; an ``escalate`` verdict escalates at once.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from charter.agent.reply import ReflectionRecord, Reply
from charter.goals.alignment import ActiveGoal, Alignment
from charter.reflect.engine import CheckResult

if TYPE_CHECKING:
    from charter.agent.parts import Parts
    from charter.agent.steps import Called, Planned, Recalled
    from charter.skills.fallback import CallContext


def alignment_of(p: Parts, planned: Planned, output: str) -> Alignment:
    if p.alignment is None or not planned.active:
        return Alignment()
    goals = [ActiveGoal(g.id, g.intent, planned.slots.get(g.id, {})) for g in planned.active]
    return p.alignment.check(goals, output)


def rule_context(
    p: Parts, planned: Planned, recalled: Recalled, called: Sequence[Called], output: str = ""
) -> dict[str, Any]:
    """What rules read besides the text: ``goal.*``, ``memory.*`` (the facts the turn
    recalled, their lowest confidence), ``skill.*`` and ``low_confidence``."""
    ctx: dict[str, Any] = {
        "goal": alignment_of(p, planned, output).subject(),
        # what the prompt showed of the user's past may be cited: recalled facts, summaries,
        # and this session's recent turns
        "memory": {"facts": [*recalled.fact_texts, *recalled.summaries, *recalled.recent]},
        "skill": {
            "called": len(called),
            "failed": sum(1 for c in called if c.status != "ok"),
            "results": [c.outcome.text for c in called if c.status == "ok"],
        },
        "low_confidence": recalled.uncertain,
    }
    if recalled.min_confidence is not None:
        ctx["memory"]["min_confidence"] = recalled.min_confidence
    return ctx


@dataclass(frozen=True)
class Judged:
    checked: CheckResult
    alignment: Alignment
    uncertain: bool

    @property
    def verdict(self) -> str:
        if not self.checked.text.strip():
            return "retry"  # nothing but the prompt echoed back: no answer at all
        v = self.checked.verdict
        if v in ("pass", "fixed") and not self.alignment.aligned:
            return "retry"  # the rules pass but a goal is not delivered: ask again
        return v

    @property
    def accept(self) -> bool:
        return self.verdict in ("pass", "fixed", "block")

    @property
    def guidance(self) -> tuple[str, ...]:
        notes = [f.message for f in self.checked.findings if not f.fixed]
        if not self.alignment.aligned:
            notes.append("回答必须包含：" + "、".join(d.describe for d in self.alignment.missing))
        return tuple(dict.fromkeys(notes))

    def record(self, attempts: int) -> ReflectionRecord:
        failed = tuple(f.rule_id for f in self.checked.findings if not f.fixed)
        return ReflectionRecord(
            goal_aligned=self.alignment.aligned,
            constraints_ok=not failed,
            uncertain=self.uncertain,
            missing=tuple(d.describe for d in self.alignment.missing),
            failed_rules=failed,
            attempts=attempts,
            verdict=self.verdict,
        )

    def trace(self) -> dict[str, Any]:
        return {
            "verdict": self.checked.verdict,
            "final_text": self.checked.final_text,
            "failed": list(self.checked.failed),
            "findings": [f.as_dict() for f in self.checked.findings],
            "aligned": self.alignment.aligned,
            "missing": [d.describe for d in self.alignment.missing],
            "lines": list(self.record(0).lines()),
        }

    def decision(self, attempt: int, max_retries: int) -> str:
        v = self.verdict
        if self.accept:
            return {"pass": "accepted", "fixed": "repaired by the rules", "block": "blocked"}[v]
        if v == "retry" and attempt <= max_retries:
            return f"retry {attempt} of {max_retries}: " + "；".join(self.guidance)
        return "retries exhausted" if v == "retry" else "escalate"

    def reply(self, attempts: int, recalled: Recalled, called: Sequence[Called]) -> Reply:
        from charter.agent.steps import outcome_dict

        return Reply(
            text=self.checked.final_text,
            verdict=self.checked.verdict,
            findings=self.checked.findings,
            reflection=self.record(attempts),
            memories_used=recalled.ids,
            attempts=attempts,
            skills=tuple(outcome_dict(c) for c in called),
            answered_by="rules" if self.checked.verdict == "block" else "model",
        )


_ECHO = re.compile(
    r"^\s*(【(用户画像|当前任务|关联记忆|技能结果|近期对话|修改要求)】|请基于以上信息回答).*$"
)


def open_ticket(
    p: Parts, ctx: CallContext, reason: str, answer: str, findings: Sequence[Any] = ()
) -> str:
    """A hand-off ticket for this turn, every text in it scrubbed like memory is."""
    scrub = p.pipeline.scrub
    ticket = p.tickets.open(
        user_id=ctx.user_id or "anonymous",
        session_id=ctx.session_id or "-",
        domain=p.pack.name,
        reason=scrub(reason),
        summary=scrub(ctx.query)[:200],
        context={
            "query": scrub(ctx.query),
            "answer": scrub(answer),
            "findings": [f.as_dict() for f in findings],
            "conversation": [scrub(t) for t in ctx.conversation],
        },
    )
    return str(ticket.id)


def escalation_text(p: Parts, ticket: str) -> str:
    message = p.pack.messages.get("escalate", "已为您转接人工客服，请稍候。")
    return f"{message}（工单号 {ticket}）"


def escalate_uncertain(p: Parts, reply: Reply, ctx: CallContext) -> Reply:
    ticket = open_ticket(
        p, ctx, "uncertain: an answer rests on a low-confidence memory", reply.text
    )
    text = f"{reply.text}\n{escalation_text(p, ticket)}"
    return dataclasses.replace(reply, text=text, verdict="escalate", ticket=ticket)


def without_echo(output: str) -> str:
    """A base model often repeats the prompt's labelled lines before (or instead of) its
    answer: those lines are the prompt, not an answer, and are dropped before judging."""
    kept = [line for line in output.splitlines() if not _ECHO.match(line)]
    return "\n".join(kept).strip()


def reflect(
    p: Parts,
    text: str,
    output: str,
    planned: Planned,
    recalled: Recalled,
    called: Sequence[Called],
) -> Judged:
    output = without_echo(output)
    ctx = rule_context(p, planned, recalled, called, output)
    checked = p.engine.check(output, text, ctx)
    final = checked.final_text
    aligned = alignment_of(p, planned, final)
    return Judged(checked, aligned, recalled.uncertain)


def give_up(
    p: Parts,
    text: str,
    judged: Judged,
    attempts: int,
    planned: Planned,
    recalled: Recalled,
    called: Sequence[Called],
    ctx: CallContext,
) -> Reply:
    """Retries ran out, or the rules said escalate: answer from the skills' results when
    there are any and the answer passes the rules; else hand the user to a person."""
    from charter.agent.steps import outcome_dict

    results = [c.outcome.text for c in called if c.status == "ok"]
    skills = tuple(outcome_dict(c) for c in called)
    if judged.verdict == "retry" and results:
        template = "；".join(results)
        checked = p.engine.check(
            template, text, rule_context(p, planned, recalled, called, template)
        )
        if checked.verdict in ("pass", "fixed"):
            # the template is judged as an answer of its own: its alignment decides whether
            # the goals are delivered, the model's failed attempts stay in the findings
            record = Judged(checked, alignment_of(p, planned, checked.final_text), judged.uncertain)
            return Reply(
                text=checked.final_text,
                verdict="retry",
                findings=checked.findings,  # of the text sent; the drafts are in the trace
                reflection=record.record(attempts),
                memories_used=recalled.ids,
                attempts=attempts,
                skills=skills,
                answered_by="template",
            )
    reason = f"{judged.verdict}: " + ("、".join(judged.checked.failed) or "goal not delivered")
    ticket = open_ticket(p, ctx, reason, judged.checked.text, judged.checked.findings)
    return Reply(
        text=escalation_text(p, ticket),
        verdict="escalate",
        findings=judged.checked.findings,
        reflection=judged.record(attempts),
        memories_used=recalled.ids,
        ticket=ticket,
        attempts=attempts,
        skills=skills,
        answered_by="escalation",
    )
