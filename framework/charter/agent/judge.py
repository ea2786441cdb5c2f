"""Reflection on a generated answer, decided by the compiled checkers (seed 000 §3.2): the
built-in model-text checks (every amount, date, identifier and status grounded in what the
turn gave the model; no echo of the prompt, no repetition, the pack's language, some content:
``charter.reflect.modeltext``), the pack's rules (with their deterministic repairs), goal
alignment (the deliverables of the goal it answers), uncertainty (a memory below the threshold
was used: the uncertainty ruleset marks it) and the hallucination interceptor (claims about the
user's past need a memory).

Then one of: accept (pass, or fixed by a repair; block gives the pack's safe message); retry
with the failed checks' messages and the missing deliverables as guidance; when the retries run
out the composer's plain ``unanswered`` reply takes the answer's place (no ticket for a weak
answer); an ``escalate`` verdict of the rules hands the user to a person at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from charter.agent.reply import ReflectionRecord
from charter.goals.alignment import ActiveGoal, Alignment
from charter.reflect.engine import CheckResult, Finding
from charter.reflect.modeltext import check_model_text

if TYPE_CHECKING:
    from charter.agent.calls import Called
    from charter.agent.parts import Parts
    from charter.agent.steps import Planned, Recalled
    from charter.skills.fallback import CallContext


def alignment_of(
    p: Parts, planned: Planned, output: str, only: Sequence[str] | None = None
) -> Alignment:
    """The deliverables of the active goals (of ``only`` these, when given) in ``output``."""
    if p.alignment is None or not planned.active:
        return Alignment()
    goals = [
        ActiveGoal(g.id, g.intent, planned.slots.get(g.id, {}))
        for g in planned.active
        if only is None or g.id in only
    ]
    return p.alignment.check(goals, output) if goals else Alignment()


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
    model: tuple[Finding, ...] = ()  # of the built-in model-text checks

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (*self.model, *self.checked.findings)

    @property
    def verdict(self) -> str:
        if not self.checked.text.strip():
            return "retry"  # nothing but the prompt echoed back: no answer at all
        v = self.checked.verdict
        if v in ("pass", "fixed") and self.model:
            return "retry"  # ungrounded, an echo, repeated lines, another language
        if v in ("pass", "fixed") and not self.alignment.aligned:
            return "retry"  # the rules pass but a goal is not delivered: ask again
        return v

    @property
    def accept(self) -> bool:
        return self.verdict in ("pass", "fixed", "block")

    @property
    def guidance(self) -> tuple[str, ...]:
        notes = [f.message for f in self.findings if not f.fixed]
        if not self.alignment.aligned:
            notes.append("回答必须包含：" + "、".join(d.describe for d in self.alignment.missing))
        return tuple(dict.fromkeys(notes))

    def record(self, attempts: int) -> ReflectionRecord:
        failed = tuple(f.rule_id for f in self.findings if not f.fixed)
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
            "failed": [*(f.rule_id for f in self.model), *self.checked.failed],
            "findings": [f.as_dict() for f in self.findings],
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


# a line that starts with a 【label】 is the prompt's format, echoed or imitated (the bundled base
# model invents labels: 【回答时】, 【工作要求】, or stops inside one: 【回答时), and so is the
# prompt's closing line
_ECHO = re.compile(r"^\s*(【|请基于以上信息回答).*$")


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


def without_echo(output: str) -> str:
    """A base model often repeats the prompt's labelled lines before (or instead of) its
    answer, or writes lines in their form: those lines are the prompt, not an answer, and are
    dropped before judging (a draft of nothing else is empty, and refused)."""
    kept = [line for line in output.splitlines() if not _ECHO.match(line)]
    return "\n".join(kept).strip()


def grounds(
    p: Parts, text: str, recalled: Recalled, called: Sequence[Called], told: Sequence[str]
) -> list[str]:
    """What a model answer may take its amounts, dates, identifiers and statuses from: the
    skills' results, the memories recalled, the user's words, what the reply's templates told
    this turn, and the pack's own texts."""
    out = [text, *told, *recalled.fact_texts, *recalled.summaries, *recalled.recent]
    out += recalled.replies
    for c in called:
        if c.status == "ok":
            out.append(c.outcome.text)
            if c.outcome.result is not None:
                out.append(json.dumps(c.outcome.result, ensure_ascii=False))
    out += [v for v in p.pack.messages.values() if isinstance(v, str)]
    return out


def reflect(
    p: Parts,
    text: str,
    output: str,
    planned: Planned,
    recalled: Recalled,
    called: Sequence[Called],
    *,
    prompt: Sequence[str] = (),
    told: Sequence[str] = (),
    goal: str | None = None,
) -> Judged:
    """``output`` judged as the answer to ``text`` (of ``goal``: its deliverables)."""
    output = without_echo(output)
    ctx = rule_context(p, planned, recalled, called, output)
    checked = p.engine.check(output, text, ctx)
    final = checked.final_text
    aligned = alignment_of(p, planned, final, [goal] if goal is not None else [])
    model = check_model_text(
        final,
        grounds=grounds(p, text, recalled, called, told),
        prompt=prompt,
        locale=p.pack.constants.get("locale", "zh-CN"),
        extractors=p.registry.extractors,
        statuses=p.responses.statuses,
    )
    return Judged(checked, aligned, recalled.uncertain, model)
